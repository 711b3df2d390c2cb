"""Near misses (issue 19): the marker carried through a token alignment, close runner-ups
reported as ambiguous, lines pasted from reports, and case or identifier-style slips."""

from __future__ import annotations

import pytest

from lsap_bridge.errors import ErrorCode, LsapError
from lsap_bridge.locate.matcher import Decision, decide, find_matches, parse_find, unpaste
from lsap_bridge.locate.matches import Tier
from lsap_bridge.lsreq.executor import find_line
from lsap_bridge.symbols import SymbolTree


def locate(lines: list[str], find: str) -> Decision:
    needle = parse_find(find)
    return decide([find_matches(lines, needle)], needle.line)


def place(lines: list[str], find: str) -> tuple[int, int]:
    decision = locate(lines, find)
    assert decision.match is not None, decision
    return decision.match.line, decision.match.column


def marked(line: str) -> tuple[str, int]:
    """The line with its `<|>` taken out, and the marker's column."""
    return line.replace("<|>", ""), line.index("<|>")


# --- the marker lands on the token it stood before ---------------------------------------


@pytest.mark.parametrize(
    ("code", "find"),
    [
        # the example: `self.` dropped, the find cut short inside `right`
        ("        extra_width = self.<|>left + self.right", "extra_width = <|>left + self.rig"),
        # a qualifier dropped right before the marked name
        ("        if not self.<|>case_sensitive:", "if not <|>case_sensitive:"),
        # a token added that the code does not have
        ("    return <|>result + offset", "return self.<|>result + offset"),
        ("    value = <|>compute(items)", "value = await <|>compute(items)"),
        # neighbouring arguments swapped: the marker goes with its name
        ("    total = combine(<|>first, second)", "total = combine(second, <|>first)"),
        ("    total = combine(first, <|>second)", "total = combine(<|>second, first)"),
        # a typo inside the marked word, and one before it
        ("    result = self.<|>validate(record, strict=True)", "result = self.<|>valdiate(record, strict=True)"),
        ("    result = self.validate(<|>record, strict=True)", "result = self.vaildate(<|>record, strict=True)"),
        # an argument dropped between the marker and the end
        ("    send(<|>message, retries, timeout=5)", "send(<|>message, timeout=5)"),
    ],
)
def test_the_marker_is_carried_through_the_alignment(code: str, find: str) -> None:
    line, column = marked(code)
    lines = ["import os", "", line, "", "def other():", "    pass"]
    assert place(lines, find) == (2, column)
    assert locate(lines, find).tier is Tier.FUZZY


def test_a_dropped_token_beats_a_high_scoring_wrong_line() -> None:
    """The issue's second example: `class=` dropped from an f-string; another line is more
    alike character by character, but needs more tokens changed."""
    lines = [
        "        text = f'<span style=\"{rule}\">{text}</span>'",
        "        html = f'<span class=\"r{style_index}\">{body}</span>'",
    ]
    assert place(lines, "= f'<<|>span \"r{st") == (1, lines[1].index("span"))


def test_a_changed_word_is_weaker_than_a_dropped_one() -> None:
    lines = ["def area(self) -> float:", "    return self.width * self.height"]
    assert place(lines, "return <|>width * self.height") == (1, lines[1].index("width"))


# --- close runner-ups are ambiguous, never a guess ----------------------------------------


def test_two_lines_one_slip_away_are_ambiguous_with_both() -> None:
    lines = ["from rich import box", "from rich.color import Color", "x = 1"]
    decision = locate(lines, "from <|>rich import Color")
    assert decision.match is None and decision.tier is Tier.FUZZY
    assert sorted(m.line for m in decision.candidates) == [0, 1]


def test_the_same_line_with_the_marker_on_either_token_is_ambiguous() -> None:
    lines = ["def wrap(help):", "    help = help[:paragraph_end]"]
    decision = locate(lines, "<|>help =[:paragraph_end]")
    assert decision.match is None
    assert sorted((m.line, m.column) for m in decision.candidates) == [(1, 4), (1, 11)]


def test_a_typo_is_told_apart_from_a_changed_word() -> None:
    lines = ["    self.characters = characters", "    self.sentences = characters"]
    assert place(lines, "self.<|>charaters = characters") == (0, 9)


def test_a_typo_and_a_changed_punctuation_are_one_slip_each() -> None:
    lines = ["    self.characters = characters", "    print(self.characters!r)"]
    assert len(locate(lines, "self.<|>charaters =").candidates) == 2


def test_a_runner_up_far_behind_does_not_make_it_ambiguous() -> None:
    lines = ["    term.erase_start_of_line()", "    term.erase_end_of_line()"]
    assert place(lines, "term.<|>errase_start_of_line()") == (0, 9)


def test_across_regions_the_runner_up_rule_holds() -> None:
    lines = ["    x = load(path_a)", "    y = 2", "    x = load(path_b)"]
    needle = parse_find("x = load(<|>path_c)")
    decision = decide([find_matches(lines, needle, 0, 2), find_matches(lines, needle, 2, 3)])
    assert decision.match is None and len(decision.candidates) == 2


def test_a_line_sharing_only_the_punctuation_is_not_a_match() -> None:
    lines = ["    def get_level_text(self, record: LogRecord) -> Text:"]
    decision = locate(lines, "def <|>get_windows_console_features() -> WindowsConsoleFeatures:")
    assert decision.match is None and decision.tier is None


# --- lines pasted from the bridge's own reports ---------------------------------------------

MODEL = [
    "class Order:",  # 1
    "    def total(self):",  # 2
    "        result = 0",  # 3
    "        return result",  # 4
    "",  # 5
    "    def check(self):",  # 6
    "        result = True",  # 7
    "        return result",  # 8
]


def test_a_pasted_report_line_is_matched_without_its_number() -> None:
    assert unpaste("8|         return result") == ("        return result", [7])
    assert parse_find("8|         return <|>result").line == 7
    decision = locate(MODEL, "8|         return <|>result")
    assert decision.match is not None
    assert (decision.match.line, decision.match.column, decision.note) == (7, 15, None)


def test_the_number_settles_a_tie_and_says_when_the_file_moved() -> None:
    assert place(MODEL, "4|         return <|>result") == (3, 15)
    moved = ["import os", "", *MODEL]
    decision = locate(moved, "4|         return <|>result")
    assert decision.match is not None and decision.match.line == 5
    assert decision.note == "line 4 is now line 6"
    # Without a number the same text stays ambiguous.
    assert locate(MODEL, "return <|>result").match is None


def test_a_number_halfway_between_candidates_settles_nothing() -> None:
    decision = locate(MODEL, "6|         return <|>result")
    assert decision.match is None and len(decision.candidates) == 2


def test_a_fenced_block_of_pasted_lines() -> None:
    block = "```python\n6|     def check(self):\n7|         result = True\n8|         return <|>result\n```"
    assert place(MODEL, block) == (7, 15)
    assert parse_find(block).line == 7


def test_text_that_is_not_all_numbered_lines_is_kept() -> None:
    assert unpaste("x = a | b") == ("x = a | b", [])
    assert unpaste("1| x\ny = 2") == ("1| x\ny = 2", [])


def test_a_pasted_line_in_the_text_format_settles_its_tie() -> None:
    tree = SymbolTree([])
    assert find_line(MODEL, tree, "m.py", "8|         return result", None) == (7, None)
    moved = ["import os", *MODEL]
    assert find_line(moved, tree, "m.py", "4|         return result", None) == (4, "line 4 is now line 5")
    with pytest.raises(LsapError) as caught:
        find_line(MODEL, tree, "m.py", "return result", None)
    assert caught.value.code is ErrorCode.AMBIGUOUS


# --- case and identifier-style slips --------------------------------------------------------


@pytest.mark.parametrize(
    ("find", "line", "column"),
    [
        ("def <|>VALIDATE(self)", 1, 8),
        ("user = <|>get_user(user_id)", 4, 11),
        ("<|>GET_USER(user_id)", 4, 11),
    ],
)
def test_a_case_slip_is_a_last_tier_flagged(find: str, line: int, column: int) -> None:
    lines = ["class User:", "    def validate(self):", "        return True", "", "    user = getUser(user_id)"]
    decision = locate(lines, find)
    assert decision.match is not None and decision.tier is Tier.CASE
    assert (decision.match.line, decision.match.column) == (line, column)


def test_a_case_slip_matching_twice_is_not_taken() -> None:
    lines = ["def validate(self):", "    pass", "def Validate(self):", "    pass"]
    decision = locate(lines, "def <|>VALIDATE(self)")
    assert decision.match is None and decision.tier is None
    assert sorted(m.line for m in decision.candidates[:2]) == [0, 2]


# --- issue 33: commit when the text allows one place ------------------------------------

#: rich 13.9.4, rich/console.py (MIT): the three `def print…` lines, as they stand there.
RICH_PRINTS = [
    "class Console:",
    "    def print(",
    "        self,",
    "        *objects: Any,",
    "    def print_json(",
    "        self,",
    "        json: Optional[str] = None,",
    "    def print_exception(",
    "        self,",
    "        *,",
]


def test_a_whole_identifier_beats_the_prefix_of_a_longer_one() -> None:
    assert place(RICH_PRINTS, "def <|>print") == (1, 8)
    assert locate(RICH_PRINTS, "def <|>print").tier is Tier.EXACT
    # cut inside every candidate alike, the find names none of them
    assert locate(RICH_PRINTS, "def <|>prin").match is None


def test_text_that_really_is_on_many_lines_stays_ambiguous() -> None:
    lines = ["def f(", *["    None," for _ in range(20)], ")"]
    decision = locate(lines, "<|>None,")
    assert decision.match is None and len(decision.candidates) == 20


def test_a_one_line_find_prefers_the_line_over_text_spread_over_lines() -> None:
    lines = ["call(first,", "     second)", "x = call(first, second)"]
    assert place(lines, "call(<|>first,second)") == (2, 9)


def test_a_dropped_keyword_argument_keeps_the_marked_token() -> None:
    """jinja2 3.1.4, environment.py: `source: str,` dropped; the cheapest alignment read
    `self,` as `str,`, which lost the marker's own token (and was not_found)."""
    lines = [
        "    def _parse(",
        "        self, source: str, name: t.Optional[str], filename: t.Optional[str]",
        "    ) -> nodes.Template:",
    ]
    assert place(lines, "<|>self, name: t.Optional[str], filename: t.Optional[str]") == (1, 8)


def test_a_marker_at_a_gap_says_which_reading_it_took() -> None:
    lines = ["import os", "", "    run(flag=True)", ""]
    decision = locate(lines, "run(<|>True)")
    assert decision.match is not None and (decision.match.line, decision.match.column) == (2, 13)
    assert decision.match.gap is not None
    assert "`flag=`" in decision.match.gap and "line 3 column 9" in decision.match.gap


def test_a_marker_between_two_like_tokens_stays_ambiguous() -> None:
    lines = ["x = 1", "    LocalFree = WINFUNCTYPE(c_void_p, c_void_p)(('LocalFree', k))"]
    decision = locate(lines, "= WINFUNCTYPE(<|>c_void_p)(('LocalFree',")
    assert decision.match is None and {m.line for m in decision.candidates} == {1}


def test_a_dollar_is_part_of_a_name() -> None:
    lines = ["const source$ = of(1);", "const source = of(2);"]
    assert place(lines, "const <|>source") == (1, 6)
