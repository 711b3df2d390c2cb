"""The agents' outline (issue 50): a member under its parent by its own name, indented;
members with none of their own, and symbols of one kind in a row with nothing inside, on
one `kind: name line, …` line; a member whose parent is not on the page by its dotted path.
Neovim's report window keeps one `- N| kind `dotted`` row per symbol."""

from __future__ import annotations

from pathlib import Path

from lsap_bridge.capabilities.outline import Entry, FileSymbols, OutlineReport, exported
from lsap_bridge.render import render_report
from lsap_bridge.surface import SURFACE
from lsap_bridge.symbols import Span, Symbol


def entry(symbol: str, line: int, kind: str, children: int = 0) -> Entry:
    return Entry(path="m.py", line=line, column=1, kind=kind, symbol=symbol, detail="", children=children)


SYMBOLS = [
    entry("Shop.items", 3, "variable"),  # its class is on the page before: dotted
    entry("Shop.sell", 5, "method"),
    entry("Order", 10, "class"),
    entry("Order.lines", 11, "variable"),
    entry("Order.add", 13, "method"),
    entry("Order.total", 15, "method"),
    entry("Order.Line", 17, "class"),
    entry("Order.Line.qty", 18, "variable"),
    entry("TAX", 30, "constant"),
    entry("FEE", 31, "constant"),
    entry("main", 33, "function"),
]


def rendered(surface: str) -> str:
    report = OutlineReport(target="m.py", scope=None, many=False, files=1, more_files=False, limit=500,
                           outside=0, too_large=0, max_file_size=1, lacking=[],
                           groups=[FileSymbols(path="m.py", symbols=SYMBOLS)], total=11, start=1, end=11)
    token = SURFACE.set(surface)  # type: ignore[arg-type]
    try:
        return render_report("outline", report)
    finally:
        SURFACE.reset(token)


def test_members_and_runs_share_a_line_per_kind() -> None:
    assert rendered("agent") == (
        "# Outline: m.py · 11 symbols\n\n"
        "3| variable Shop.items\n"  # its parent is not on the page; a run needs two of a kind
        "5| method Shop.sell\n"
        "10| class Order\n"
        "  variable: lines\n"  # by name: anchored as `m.py:Order.lines`
        "  method: add, total\n"
        "  17| class Line\n"
        "    variable: qty\n"
        "constant: TAX, FEE\n"
        "33| function main\n")


def test_neovim_keeps_a_row_per_symbol() -> None:
    text = rendered("nvim")
    assert "- 13| method `Order.add`" in text and "- 18| variable `Order.Line.qty`" in text


def symbol(name: str, line: int, kind: int = 12) -> Symbol:
    return Symbol(name, kind, Span(line, 0, line, 1), Span(line, 0, line, len(name)))


def exported_names(path: str, text: str, *names: tuple[str, int]) -> list[str]:
    return [s.name for s in exported(Path(path), text.splitlines(), [symbol(n, line) for n, line in names])]


def test_what_a_file_exports() -> None:
    """Issue 50: the compact outline's top level. TypeScript: declared `export`, named in
    `export { … }` (by its local name) or `export default`; a file without `export` is a
    script (all of it). Python: a literal `__all__`, else the names without `_`."""
    ts = "export function a() {}\nfunction b() {}\nconst c = 1\nconst d = 2\nexport { c as see, type d }\n"
    assert exported_names("m.ts", ts, ("a", 0), ("b", 1), ("c", 2), ("d", 3)) == ["a", "c", "d"]
    assert exported_names("m.ts", "function b() {}\nexport default b\n", ("b", 0)) == ["b"]
    # A list spanning lines, as formatters write long ones.
    spread = "function a() {}\nfunction b() {}\nconst c = 1\nexport {\n  a,\n  c as see,\n}\n"
    assert exported_names("m.ts", spread, ("a", 0), ("b", 1), ("c", 2)) == ["a", "c"]
    assert exported_names("m.js", "function b() {}\nconst x = 1\n", ("b", 0), ("x", 1)) == ["b", "x"]
    assert exported_names("m.ts", "export * from './x'\nfunction b() {}\n", ("b", 1)) == []
    py = "__all__ = ['A', 'helper']\nclass A: pass\nclass B: pass\ndef helper(): pass\n"
    assert exported_names("m.py", py, ("__all__", 0), ("A", 1), ("B", 2), ("helper", 3)) == ["A", "helper"]
    assert exported_names("m.py", "X = 1\n_y = 2\n__v__ = 3\n", ("X", 0), ("_y", 1), ("__v__", 2)) == ["X"]
    assert exported_names("m.py", "__all__ = names()\nX = 1\n_y = 2\n", ("X", 1), ("_y", 2)) == ["X"]
    assert exported_names("m.go", "func a() {}\n", ("a", 0)) == ["a"]
