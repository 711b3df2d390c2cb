"""How the compact references report tells an import and an annotation-only use from the
line's text (issue 32), and cuts a long line around the use."""

from __future__ import annotations

import pytest

from lsap_bridge.capabilities.references import WIDE, _in_import_list, cut, use_kind


@pytest.mark.parametrize(("text", "name", "kind"), [
    ("from .console import Console", "Console", "import"),
    ("    from rich.console import Console, Group", "Console", "import"),
    ('import { Observable } from "./Observable";', "Observable", "import"),
    ("    def f(self, console: Console, x: int) -> None:", "Console", "annotation"),
    ('def get_console() -> "Console":', "Console", "annotation"),
    ('_console: Optional["Console"] = None', "Console", "annotation"),
    ("def find(products: list[Product]) -> Product | None:", "Product", "annotation"),
    ("    cheapest: Product | None = None", "Product", "annotation"),
    ("    console = Console()", "Console", None),
    ("    c: Console = Console(record=True)", "Console", "annotation"),
    ("    isinstance(renderable, Console)", "Console", None),
    ("class Console:", "Console", None),
    ("    x: int = Console.size", "Console", None),
    ("    key = {'a': Console}", "Console", None),
    ("    f = lambda x: Console", "Console", None),
    ("RenderResult = Iterable[Union[RenderableType, Segment]]", "Segment", "annotation"),
    ('def split_cells(self, cut: int) -> Tuple["Segment", "Segment"]:', 'Segment"]', "annotation"),
    ('    Callable[["Console", "ConsoleOptions"], "Measurement"]', 'Console"', "annotation"),
    ('    Callable[["Console", "ConsoleOptions"], "Measurement"]', 'ConsoleOptions', "annotation"),
    ("    segments = Tuple[int, int](Segment)", "Segment", None),
    ("    x = List[int] + [Segment.line()]", "Segment", None),
    ("    error: ((options && options.serializeError) || miniSerializeError)(", "miniSerializeError", None),
    ("    const f = a || miniSerializeError", "miniSerializeError", None),
])
def test_the_kind_of_a_use(text: str, name: str, kind: str | None) -> None:
    assert use_kind(text, text.index(name)) == kind


def test_a_name_alone_in_a_parenthesised_import_is_an_import() -> None:
    lines = ["from .console import (", "    Console,", "    Group as G,", ")", "x = (", "    Console,", ")"]
    assert [_in_import_list(lines, n) for n in range(len(lines))] == [False, True, True, False, False, False, False]


def test_a_name_alone_in_a_braced_import_or_export_list_is_an_import() -> None:
    lines = ["export {", "  // js", "  createReducer,", "  type Builder,", "} from './createReducer'",
             "const x = {", "  createReducer,", "}", "import {", "  a as b, // the first", "} from './a'"]
    assert [_in_import_list(lines, n) for n in range(len(lines))] == [
        False, False, True, True, False, False, False, False, False, True, False]


def test_a_long_line_is_cut_around_the_use() -> None:
    line = "a" * 150 + "Console" + "b" * 150
    shown = cut(line, 150)
    assert "Console" in shown and shown.startswith("…") and shown.endswith("…")
    assert len(shown) == WIDE + 2
    assert cut("short Console", 6) == "short Console"
    assert cut("Console" + "x" * 200, 0).startswith("Console") and not cut("Console" + "x" * 200, 0).startswith("…")
