"""Issue 50, item 6: what a find's edges and a dropped keyword say about where it is.

Copied indentation is no evidence of what precedes the text (`   style = sty` is the one line
holding `style = sty`, after `self.`); a keyword argument dropped at the marker
(`deque(<|>1000)` for `deque(maxlen=1000)`) still finds its long line among short ones that
share a word of it.
"""

from __future__ import annotations

from lsap_bridge.locate.matcher import Decision, decide, find_matches, parse_find
from lsap_bridge.locate.matches import Tier

RULE = """\
class Rule:
    def __init__(self, style: str) -> None:
        self.style = style

    def render(self, style: str):
        yield Segment(
            style=style,
        )
""".splitlines()

PROGRESS = [
    "from collections import deque",
    "",
    "",
    *[f"    {n}," for n in ("1000", "2000", "1000", "3000", "1000")],
    *[f"task{n} = progress.add_task('work', total=1000)" for n in range(6)],
    "@dataclass",
    "class Task:",
    "    _progress: Deque[ProgressSample] = field(",
    "        default_factory=lambda: deque(maxlen=1000), init=False, repr=False",
    "    )",
]


def _decide(lines: list[str], find: str) -> Decision:
    return decide([find_matches(lines, parse_find(find))])


def test_indentation_copied_before_a_qualified_name() -> None:
    decision = _decide(RULE, "   <|>style = sty")
    assert decision.match is not None, decision.candidates
    assert (decision.match.line, decision.match.column, decision.tier) == (2, 13, Tier.WHITESPACE)
    marked = _decide(RULE, "   style = <|>sty\t")
    assert marked.match is not None and (marked.match.line, marked.match.column) == (2, 21)


def test_trimmed_text_found_twice_stays_ambiguous() -> None:
    lines = [*RULE, "        self.style = style"]
    decision = _decide(lines, "  <|>style = sty")
    assert decision.match is None and {(c.line, c.column) for c in decision.candidates} == {(2, 13), (8, 13)}


def test_keyword_dropped_at_the_marker_in_a_long_line() -> None:
    decision = _decide(PROGRESS, "deque(<|>1000)")
    assert decision.match is not None, [(c.line, c.matched_text) for c in decision.candidates]
    line = PROGRESS[decision.match.line]
    assert decision.match.line == 17 and line[decision.match.column:].startswith("1000), init")
    assert decision.match.gap is not None and "`maxlen=`" in decision.match.gap


def test_marked_punctuation_is_not_another_character() -> None:
    """`= (<|>{` for `= (_: {`: the marker's `{` is not read as the `(` before the gap."""
    lines = ["export type Serialize<Args, Out = string> = (_: {", "  args: Args", "}) => Out"]
    decision = _decide(lines, "export type Serialize<Args, Out = string> = (<|>{")
    assert decision.match is not None, decision.candidates
    assert (decision.match.line, decision.match.column) == (0, lines[0].index("{"))
    assert decision.match.gap is not None and "`_:`" in decision.match.gap
