"""The response printer and the line helpers of the text format, without an editor."""

from __future__ import annotations

import pytest

from lsap_bridge.diagnostics import Diagnostic
from lsap_bridge.errors import Candidate, ErrorCode, LsapError
from lsap_bridge.lsreq.lines import identifiers, name_column, split_hover, symbol_column
from lsap_bridge.lsreq.printer import (
    Echo,
    Entry,
    FileSection,
    Tag,
    diagnostic_symbol,
    error_tag,
    print_response,
)

LINES = ["const a = 1", "const b: string = 2", "const c = a", "let d = 4"]


def diag(
    line: int,
    col: int,
    message: str,
    code: str | None = "2322",
    source: str = "typescript",
    severity: str = "error",
) -> Diagnostic:
    return Diagnostic(line, col, line, col + 1, severity, message, code, source)


def test_tags_wrap_code_inline_and_prose_on_lines() -> None:
    assert (
        Tag("hover:V", "```ts\ntype V = 1\n```").render()
        == "/*<hover:V>```ts\ntype V = 1\n```</hover:V>*/"
    )
    assert Tag("docs:m", "\nSome docs.\n").render() == "/*<docs:m>\nSome docs.\n</docs:m>*/"


def test_diagnostics_are_injected_in_line_order_with_their_own_anchor_lines() -> None:
    section = FileSection(
        "a.ts",
        entries=[
            Entry(
                2,
                "@@",
                "const c = a",
                echoes=[Echo("^ c", [Tag("hover:c", "```ts\nconst c: 1\n```")])],
            )
        ],
        lines=LINES,
        diagnostics=[
            diag(3, 4, "d is odd", None, "eslint", "warning"),
            diag(1, 6, "Type mismatch."),
            diag(2, 10, "a is deprecated", "6385"),
        ],
    )
    assert (
        print_response([section])
        == "\n".join(
            [
                "*** Begin Language Server Response",
                "*** File: a.ts",
                "@@ const b: string = 2",
                "/*<diagnostics:error:b:ts>\nType mismatch.ts(2322)\n</diagnostics:error:b:ts>*/",
                "@@ const c = a",
                "^ c",
                "/*<hover:c>```ts\nconst c: 1\n```</hover:c>*/",
                "/*<diagnostics:error:a:ts>\na is deprecated · ts(6385)\n</diagnostics:error:a:ts>*/",
                "@@ let d = 4",
                "/*<diagnostics:warning:d:eslint>\nd is odd · eslint\n</diagnostics:warning:d:eslint>*/",
                "*** End Language Server Response",
            ]
        )
        + "\n"
    )


def test_an_anchor_not_found_keeps_its_place_after_the_previous_one() -> None:
    missing = Entry(None, "@@", "const z = 9", [Tag("error:not_found", "not there")])
    section = FileSection(
        "a.ts",
        entries=[Entry(0, "@@", "const a = 1"), missing, Entry(3, "@@", "let d = 4")],
        lines=LINES,
        diagnostics=[diag(1, 6, "x")],
    )
    out = print_response([section]).split("\n")
    assert out.index("@@ const z = 9") == out.index("@@ const a = 1") + 1
    assert (
        out.index("@@ const z = 9")
        < out.index("@@ const b: string = 2")
        < out.index("@@ let d = 4")
    )


def test_error_tags_list_candidates_and_the_next_step() -> None:
    error = LsapError(
        ErrorCode.AMBIGUOUS,
        "'return x' matches 2 lines",
        hint="add a `@@` line",
        candidates=[Candidate(3, "return x", "A.f"), Candidate(9, "return x", None, 88.0)],
    )
    assert error_tag(error).render() == (
        "/*<error:ambiguous>\n'return x' matches 2 lines\n  3 in A.f: return x\n"
        "  9 (score 88.0): return x\nNext: add a `@@` line\n</error:ambiguous>*/"
    )


def test_line_helpers() -> None:
    assert symbol_column("const res = eq.evaluate(res2)", "res") == 6
    assert symbol_column("foo_bar", "bar") == 4  # not a whole word: any occurrence
    assert symbol_column("x", "y") is None
    # An edit's name is a whole token, outside a string when it can be (issue 36).
    assert name_column("def f(x):", "f") == 4 and name_column("fetch = f", "f") == 8
    assert name_column('log("f", f)', "f") == 9 and name_column('x = "f"', "f") == 5
    assert name_column("class Client:", "cl") is None and name_column("@lru_cache", "cache") is None
    assert name_column("def g(de=1):", "de") == 6 and name_column("x = d(de)", "d") == 4
    assert identifiers("order = Order(order)") == [(0, "order"), (8, "Order")]
    signature, docs = split_hover("```python\nclass Order\n```\n---\nProducts a customer buys.")
    assert signature == "```python\nclass Order\n```" and docs == "Products a customer buys."


@pytest.mark.parametrize(
    ("line", "col", "end", "symbol"),
    [
        ("const wrong: string = 42", 6, 11, "wrong"),
        ("WRONG: str = 42", 13, 15, "WRONG"),  # a literal: the name declared before it
        ("from .lookup import find", 5, 12, "lookup"),
        ("  42", 2, 4, "42"),
        ("  ", 0, 1, "_"),
    ],
)
def test_diagnostics_are_named_by_the_symbol_they_are_about(
    line: str, col: int, end: int, symbol: str
) -> None:
    assert diagnostic_symbol(Diagnostic(0, col, 0, end, "error", "m"), [line]) == symbol
