"""A use in a multi-line call shows the call's statement (issue 50, item 2): the arguments
an agent asks about are on the lines after the name (httpx's `create_ssl_context(` in
tests/test_config.py), up to `STATEMENT_LINES` lines, the last marked `…` when it goes on."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from lsap_bridge.capabilities import REGISTRY
from lsap_bridge.gateway import LspAnswer, LspCall
from lsap_bridge.render import render_report
from lsap_bridge.report.pieces import STATEMENT_LINES, statement_end, statement_span
from lsap_bridge.workspace import uri_of
from tests.fakes import fake_session
from tests.golden import assert_golden

USER = '''import ssl_config


def test_load() -> None:
    context = ssl_config.create_ssl_context(
        cert=("cert.pem", "key.pem", "password1"),  # a comment's ( is no bracket
        verify=")",
    )
    assert context


def test_long() -> None:
    ssl_config.create_ssl_context(
        1,
        2,
        3,
        4,
        5,
        6,
    )
'''


NESTED = '''import ssl_config


def test_nested() -> None:
    ssl_config.create_ssl_context()
    if True:
        context = ssl_config.create_ssl_context(
            cert="c.pem",
        )
'''


REPEATED = '''import ssl_config


def test_a() -> None:
    ssl_config.create_ssl_context(cert="c.pem",
                                  verify=True)
    ssl_config.create_ssl_context()


def test_b() -> None:
    ssl_config.create_ssl_context(cert="c.pem", verify=True)
'''


LONG = '''import ssl_config


def test_a() -> None:
    ssl_config.create_ssl_context(
        1,
        2,
        3,
        4,
        5,
        6,
    )
    ssl_config.create_ssl_context(
        1,
        2,
        3,
        4,
        5,
        7,
    )
    ssl_config.create_ssl_context(
        1,
        2,
        3,
        4,
        5,
        6,
    )
'''


def references(root: Path, compact: bool, user_text: str = USER,
               functions: tuple[tuple[str, int, int], ...] = (("test_load", 3, 8), ("test_long", 11, 19)),
               uses: tuple[tuple[int, int], ...] = ((4, 25), (12, 15))) -> str:
    (root / "ssl_config.py").write_text("def create_ssl_context(cert=None, verify=True):\n    return cert\n")
    (root / "test_config.py").write_text(user_text)
    user = uri_of(root / "test_config.py")

    def function(name: str, first: int, last: int) -> dict[str, object]:
        return {"name": name, "kind": 12, "range": {"start": {"line": first, "character": 0},
                                                   "end": {"line": last, "character": 5}},
                "selectionRange": {"start": {"line": first, "character": 4}, "end": {"line": first, "character": 13}}}

    def answer(call: LspCall) -> LspAnswer:
        if call.method == "textDocument/documentSymbol" and call.params["textDocument"]["uri"] == user:
            return LspAnswer(result=[function(*f) for f in functions])
        if call.method != "textDocument/references":
            return LspAnswer(result=[])
        return LspAnswer(result=[{"uri": user, "range": {"start": {"line": line, "character": column},
                                                         "end": {"line": line, "character": column + 18}}}
                                 for line, column in uses])

    session = fake_session(root, answer)
    capability = REGISTRY["references"]
    request = capability.model.model_validate({"mode": "references", "compact": compact, "locate": {
        "file_path": "ssl_config.py", "find": "def <|>create_ssl_context"}})
    return render_report("references", asyncio.run(session.run(capability, request)).report)


def test_a_multi_line_call_shows_its_arguments(tmp_path: Path) -> None:
    """Neovim's form: the statement's lines, numbered (each a jump target)."""
    text = references(tmp_path, False)
    shown = {int(n): code.strip() for n, code in re.findall(r"^(\d+)\| ?(.*)$", text, re.M)}
    assert shown[6] == 'cert=("cert.pem", "key.pem", "password1"),  # a comment\'s ( is no bracket', text
    assert shown[7] == 'verify=")",' and shown[8] == ")", text
    assert 9 not in shown  # the statement ended
    # A call longer than the bound: its first lines, the last marked as going on.
    last = 13 + STATEMENT_LINES - 1
    assert shown[last] == f"{STATEMENT_LINES - 1}, …" and last + 1 not in shown, text


def test_compact_joins_a_statement_on_its_use_line(tmp_path: Path) -> None:
    """For agents: the statement's arguments on the use's line, joined without indents and
    comments (a `#` in a string stays), up to the bound, then `…`; the file's tests under
    one `(tests)` header (issue 50)."""
    text = references(tmp_path, True)
    shown = dict(re.findall(r"^(\d+)\| (.*)$", text, re.M))
    assert shown == {
        "5": 'context = ssl_config.create_ssl_context(cert=("cert.pem", "key.pem", "password1"), verify=")",)',
        "13": "ssl_config.create_ssl_context(1, 2, 3, 4, 5, …"}, text
    assert text.count("### test_config.py > (tests)\n") == 1, text
    assert_golden("references_statement.md", text)


def test_a_statement_read_again_in_its_file_is_same_as(tmp_path: Path) -> None:
    """Compact: a use whose statement reads as one shown above in its file is `same as N`;
    a short one is printed again (reading it costs less than looking it up)."""
    text = references(tmp_path, True, REPEATED, (("test_a", 3, 7), ("test_b", 9, 11)), ((4, 15), (6, 15), (10, 15)))
    assert "5| ssl_config.create_ssl_context(cert=\"c.pem\", verify=True)\n7| ssl_config.create_ssl_context()\n" \
        "11| same as 5\n" in text, text


def test_statements_cut_short_are_same_as_only_if_whole_they_read_the_same(tmp_path: Path) -> None:
    """Two calls whose first lines read the same but not their last are both printed; a
    third the same as the first to its end is `same as` it."""
    text = references(tmp_path, True, LONG, (("test_a", 3, 27),), ((4, 15), (12, 15), (20, 15)))
    assert "5| ssl_config.create_ssl_context(1, 2, 3, 4, 5, …\n13| ssl_config.create_ssl_context(1, 2, 3, 4, 5, …\n" \
        "21| same as 5\n" in text, text


def test_each_use_without_its_indent_a_statement_keeps_its_own(tmp_path: Path) -> None:
    """Compact: a use's line starts at its code, whatever its depth in the group (an `if`'s
    body)."""
    text = references(tmp_path, True, NESTED, (("test_nested", 3, 8),), ((4, 15), (6, 29)))
    assert '5| ssl_config.create_ssl_context()\n' \
        '7| context = ssl_config.create_ssl_context(cert="c.pem",)\n' in text, text


@pytest.mark.parametrize(("lines", "end"), [
    (["f(x)", "g()"], 0),
    (["f(x,", "  y)", "g()"], 1),
    (["x = [", "  1,", "]", "y"], 2),
    (["s = '(' + f(", "  ')')", "z"], 1),
    (["a = 1 + \\", "  2", "b"], 1),
    (["class A {", "  x = 1", "}"], 0),  # a block is not a statement's arguments
    (["f("] + ["  1,"] * 10, STATEMENT_LINES),
])
def test_where_a_statement_ends(lines: list[str], end: int) -> None:
    assert statement_end(lines, 0, "//") == end


@pytest.mark.parametrize(("lines", "span"), [
    (["return f(s, (b) => {", "  b.x()", "})"], (0, True)),  # a callback's body is not the call
    (["f(a, function (b) {", "  x", "})"], (0, True)),
    (["f(", "  a,", "  (b) => {", "    b()", "  })"], (2, True)),
    (["f(a, {", "  k: 1,", "})"], (2, False)),  # an object literal is an argument
    (["f(a, (b) => ({", "  k: b,", "}))"], (2, False)),
])
def test_a_statement_stops_at_a_block_its_arguments_open(lines: list[str], span: tuple[int, bool]) -> None:
    assert statement_span(lines, 0, "//") == span


CALLBACK = '''import ssl_config


def test_callback() -> None:
    return ssl_config.create_ssl_context(state, (builder) => {
        for (let key in reducers) {
            builder.addCase(key, reducers[key])
        }
    })
'''


def test_compact_joins_a_call_up_to_its_callbacks_body(tmp_path: Path) -> None:
    """For agents: a call whose argument is a callback is shown to the brace that opens the
    callback's body, marked as going on (`createReducer(s, (builder) => { …`), not joined
    into its code (@reduxjs/toolkit's createSlice.ts:696)."""
    text = references(tmp_path, True, CALLBACK, (("test_callback", 3, 8),), ((4, 22),))
    assert "5| return ssl_config.create_ssl_context(state, (builder) => { …\n" in text, text
