"""The token budget's pieces without an editor: the estimate against cl100k, the cut of a
long answer and the request it offers, the text format's header lines and its choice of
diagnostics within a budget. The budget on real servers: tests/integration/test_budget.py."""

from __future__ import annotations

import contextvars
import json
import re
from pathlib import Path

import pytest

from benchmarks.cl100k import tokens
from lsap_bridge.capabilities.hover import HoverRequest
from lsap_bridge.diagnostics import Diagnostic, labelled
from lsap_bridge.errors import LsapError
from lsap_bridge.lsreq.fit import respond
from lsap_bridge.lsreq.parser import parse
from lsap_bridge.lsreq.printer import Echo, Entry, FileSection, Tag
from lsap_bridge.models import Locate
from lsap_bridge.report.budget import cut, cut_json, estimate, over
from lsap_bridge.surface import SURFACE

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


@pytest.mark.parametrize("path", sorted(GOLDEN.rglob("*.md")), ids=lambda p: p.name)
def test_the_estimate_is_above_cl100k_and_not_far_above(path: Path) -> None:
    text = path.read_text()
    assert tokens(text) <= estimate(text) <= 1.6 * tokens(text) + 5


def test_numbers_and_punctuation_are_not_taken_for_cheap_text() -> None:
    # 1.7 bytes a token: an estimate from the size alone would be half the count.
    sites = "at big/user_00.py:" + ",".join(str(n) for n in range(6, 900))
    schema = json.dumps(HoverRequest.model_json_schema(), separators=(",", ":"))
    for text in (sites, schema, "→ · – …" * 200):
        assert estimate(text) >= tokens(text)


def test_a_text_of_no_more_bytes_than_the_budget_is_not_over_it() -> None:
    assert not over("x" * 800, 800)
    assert over("x, " * 800, 800)


HOVER = HoverRequest(locate=Locate(file_path="shop/models.py", find="class <|>Product"))
LONG = "# Hover: `Product`\n\n```python\n" + "\n".join(f"field_{i}: int = {i}" for i in range(3000)) + "\n```\n"


def test_a_cut_answer_closes_its_fence_and_gives_the_budget_that_holds_it() -> None:
    text = cut(LONG, 1000, HOVER)
    assert tokens(text) <= 1000
    body, note = text.rstrip("\n").rsplit("\n\n", 1)
    assert body.endswith("\n```") and body.count("```") % 2 == 0
    left = int(re.search(r"(\d+) more lines", note).group(1))
    assert left == LONG.rstrip("\n").count("\n") + 1 - body.count("\n")  # the closing fence is added
    asked = json.loads(re.search(r"`(\{.*\})`", note).group(1))
    assert asked["max_tokens"] >= estimate(LONG)
    assert HoverRequest.model_validate(asked).locate == HOVER.locate


def test_a_cut_answer_in_neovim_offers_an_ex_command() -> None:
    def run() -> str:
        SURFACE.set("nvim")
        return cut(LONG, 1000, HOVER)

    note = contextvars.copy_context().run(run).rsplit("\n", 2)[-2]
    assert re.search(r"`:Lsap hover shop/models.py@class <\|>Product max_tokens=\d+000`", note), note


def test_past_the_largest_budget_the_cut_says_to_narrow_the_request() -> None:
    huge = "word " * 120_000
    note = cut(huge, 1000, HOVER).rsplit("\n", 2)[-2]
    assert "narrow the request" in note and "max_tokens" not in note


def tree(depth: int, width: int) -> list[dict[str, object]]:
    """A call tree as `calls` answers it: each item with its children."""
    return [{"name": f"f{depth}_{i}", "path": f"pkg/m{i}.py", "line": i,
             "children": tree(depth - 1, width) if depth else []} for i in range(width)]


def test_a_json_answer_is_cut_to_its_budget_and_stays_json_of_its_shape() -> None:
    answer = {"mode": "calls", "symbol": "root", "calls": tree(3, 5)}
    text = json.dumps(answer, indent=1)
    assert tokens(text) > 10_000
    shown = cut_json(text, 2000, HOVER)
    assert tokens(shown) <= 2000
    data = json.loads(shown)
    assert data["symbol"] == "root" and data["calls"] and set(data["calls"][0]) == set(answer["calls"][0])
    note = data["budget_cut"]
    kept = json.dumps(data["calls"]).count('"name"')
    # Every item dropped is counted under its list's path, and nothing else was dropped.
    assert kept + sum(note["left_out"].values()) <= json.dumps(answer["calls"]).count('"name"')
    assert note["left_out"] and all(path.startswith("calls") for path in note["left_out"])
    asked = json.loads(note["next"])
    assert asked["max_tokens"] >= estimate(text) and HoverRequest.model_validate(asked).locate == HOVER.locate


def test_a_json_map_of_objects_loses_entries_and_a_lone_long_text_stays_whole() -> None:
    schemas = {"schemas": {f"mode{i}": {"type": "object", "text": "x " * 800} for i in range(12)}}
    data = json.loads(cut_json(json.dumps(schemas), 1000, HOVER))
    assert 0 < len(data["schemas"]) < 12 and data["budget_cut"]["left_out"] == {"schemas": 12 - len(data["schemas"])}
    lone = {"hover": "word " * 5000}
    kept = json.loads(cut_json(json.dumps(lone), 1000, HOVER))
    assert kept["hover"] == lone["hover"] and kept["budget_cut"]["left_out"] == {}


def block(*lines: str) -> str:
    return "\n".join(["*** Begin Language Server Request", *lines, "*** End Language Server Request"])


def test_the_text_format_takes_a_choice_of_diagnostics_and_a_budget_once() -> None:
    request = parse(block("*** Diagnostics: all from 41", "*** File: a.py", "@@ x = 1", "*** Max Tokens: 20000"))
    assert (request.diagnostics, request.diagnostics_from, request.max_tokens) == ("all", 41, 20000)
    plain = parse(block("*** File: a.py", "@@ x = 1"))
    assert (plain.diagnostics, plain.diagnostics_from, plain.max_tokens) == ("default", 1, None)
    for wrong, says in (("*** Diagnostics: some", "not a choice"), ("*** Diagnostics: all from 0", "not a choice"),
                        ("*** Max Tokens: 10", "in range"), ("*** Max Tokens: lots", "in range")):
        with pytest.raises(LsapError) as caught:
            parse(block(wrong, "*** File: a.py", "@@ x = 1"))
        assert says in caught.value.message and "line 2" in caught.value.message
    with pytest.raises(LsapError) as twice:
        parse(block("*** Diagnostics: all", "*** File: a.py", "@@ x = 1", "*** Diagnostics: none"))
    assert "second" in twice.value.message and "line 2" in twice.value.message


LINES = [f"value_{i} = compute({i})" for i in range(400)]


def diag(line: int, severity: str, message: str = "something is off") -> Diagnostic:
    return Diagnostic(line, 0, line, 5, severity, f"{message} on {line}", "code", "basedpyright")


def section(diagnostics: list[Diagnostic]) -> FileSection:
    anchored = Entry(5, "@@", LINES[5], echoes=[Echo("^ value_5", [Tag("hover:value_5", "```python\nint\n```")])])
    return FileSection("a.py", entries=[anchored], lines=LINES, diagnostics=diagnostics)


def test_by_default_errors_and_the_anchored_lines_are_shown_and_the_rest_counted() -> None:
    diagnostics = [diag(2, "error"), diag(5, "warning"), diag(9, "warning"), diag(12, "hint"), diag(30, "information")]
    text = respond([section(diagnostics)], parse(block("*** File: a.py", "@@ x")), 8000)
    assert "on 2 · basedpyright(code)" in text and "on 5 · basedpyright" in text
    assert "on 9 " not in text and "on 12" not in text and "on 30" not in text
    header = text.split("\n")[1]
    assert header == ("*** Diagnostics: 2 shown, 2 not shown (1 warning, 1 information); "
                      "for all 4 `*** Diagnostics: all`")
    everything = respond([section(diagnostics)], parse(block("*** Diagnostics: all", "*** File: a.py", "@@ x")), 8000)
    assert "*** Diagnostics:" not in everything and "on 9 " in everything and "on 12" not in everything


def test_all_diagnostics_page_through_the_budget_without_losing_one() -> None:
    diagnostics = [diag(i, "warning", "a rather long message about what is wrong here") for i in range(300)]
    seen, line, pages = [], "*** Diagnostics: all", 0
    while True:
        text = respond([section(diagnostics)], parse(block(line, "*** File: a.py", "@@ x")), 1500)
        assert tokens(text) <= 1500 and "/*<hover:value_5>" in text
        seen += [int(n) for n in re.findall(r"what is wrong here on (\d+)", text)]
        pages += 1
        following = re.search(r"`(\*\*\* Diagnostics: all from \d+)`", text)
        if following is None:
            break
        line = following.group(1)
    assert seen == list(range(300)) and pages > 3


def test_when_the_answers_leave_no_room_the_header_asks_for_a_larger_budget() -> None:
    hovers = [Tag(f"hover:value_{i}", "```python\nint\n```") for i in range(60)]
    entry = Entry(5, "@@", LINES[5], echoes=[Echo("^ " + " ".join(f"value_{i}" for i in range(60)), hovers)])
    sections = [FileSection("a.py", entries=[entry], lines=LINES, diagnostics=[diag(i, "error") for i in range(9)])]
    text = respond(sections, parse(block("*** File: a.py", "@@ x")), 800)
    assert text.count("/*<hover:") == 60  # too short to cut
    header = text.split("\n")[1]
    assert header.startswith("*** Diagnostics: none of 9 shown") and "from 1`" not in header
    bigger = int(re.search(r"`\*\*\* Max Tokens: (\d+)` to the request", header).group(1))
    assert "on 8 " in respond(sections, parse(block(f"*** Max Tokens: {bigger}", "*** File: a.py", "@@ x")), bigger)


def test_answers_over_the_budget_are_cut_the_longest_first() -> None:
    docs = "\n".join(f"Line {i} of a very long documentation text." for i in range(2000))
    short = Tag("hover:value_5", "```python\nint\n```")
    long_docs = Tag("docs:value_5", docs)
    entry = Entry(5, "@@", LINES[5], echoes=[Echo("^ value_5 value_5[docs]", [short, long_docs])])
    text = respond([FileSection("a.py", entries=[entry], lines=LINES)], parse(block("*** File: a.py", "@@ x")), 1000)
    assert tokens(text) <= 1000
    assert "```python\nint\n```" in text  # the short answer whole
    assert re.search(r"… \d+ more lines \(about \d+ tokens\) cut for the response's budget; "
                     r"`\*\*\* Max Tokens: \d+` in the request shows all", text)


def test_a_diagnostic_keeps_a_separator_before_its_source() -> None:
    assert labelled("Use X instead", "basedpyright", "reportDeprecated") == (
        "Use X instead · basedpyright(reportDeprecated)")
    assert labelled("Type 'number' is not assignable to type 'string'.", "typescript", "2322") == (
        "Type 'number' is not assignable to type 'string'.ts(2322)")
    assert labelled("unused", "pylsp", None) == "unused · pylsp"


def test_a_diagnostics_paths_are_relative_to_the_workspace(tmp_path: Path) -> None:
    """basedpyright's import cycles name absolute paths: reports show them in the workspace."""
    from lsap_bridge.diagnostics import diagnostic_of, from_lsp, from_vim

    cycle = {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 6}},
             "severity": 1, "code": "reportImportCycles",
             "message": f"Cycle detected in import chain\n  {tmp_path}/pkg/a.py\n  {tmp_path}/pkg/b.py"}
    seen = from_lsp(diagnostic_of(cycle), ["import b"], "utf-16", "basedpyright", roots=[tmp_path])
    assert seen.message == "Cycle detected in import chain\n  pkg/a.py\n  pkg/b.py"
    elsewhere = {**cycle, "message": "see /usr/lib/python3/os.py"}  # outside the workspace: kept
    seen_elsewhere = from_lsp(diagnostic_of(elsewhere), ["import b"], "utf-16", "basedpyright", roots=[tmp_path])
    assert seen_elsewhere.message == elsewhere["message"]
    pushed = {"lnum": 0, "col": 0, "severity": 1, "message": cycle["message"]}
    assert from_vim(pushed, ["import b"], [tmp_path]).message == seen.message
