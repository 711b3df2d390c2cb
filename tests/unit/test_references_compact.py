"""How the compact references report tells an import, an `__all__` entry and an
annotation-only use from the line's text (issue 32), a test from other code, joins a
statement on its use's line and cuts a long line around the use (issue 50)."""

from __future__ import annotations

import pytest

from lsap_bridge.capabilities.references import WIDE, _in_import_list, _is_test, _joined, _listed_kind, cut, use_kind
from lsap_bridge.models import Line


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


def test_an_entry_of_all_is_an_export() -> None:
    """A Python `__all__`'s string of the name, on its first line or on a line of names
    below it; a string elsewhere, or a name in a list that is no `__all__`, is a use."""
    lines = ['__all__ = ["Limits", "create_ssl_context"]', "__all__ = [", '    "Proxy",', '    "create_ssl_context",',
             "]", 'names = [', '    "create_ssl_context",', "]", 'x = f("create_ssl_context")']

    assert [_listed_kind(lines, n, lines[n].index("create")) for n in (0, 3, 6, 8)] == ["export", "export", None, None]


@pytest.mark.parametrize(("path", "symbol", "test"), [
    ("tests/test_config.py", "test_load_ssl_config", True),
    ("tests/client/test_client.py", "TestClient.test_get", True),
    ("pkg/test_x.py", "test_a.inner", True),
    ("src/query.test.ts", "describe('query') callback.it('runs') callback", True),
    ("tests/test_config.py", "make_client", False),  # a helper: its name says what it is
    ("tests/test_config.py", None, False),
    ("httpx/_client.py", "test_connection", False),  # not a test file
    ("src/latest.py", "test_x", False),
])
def test_a_test_is_a_test_symbol_in_a_test_file(path: str, symbol: str | None, test: bool) -> None:
    assert _is_test(path, symbol) == test


def test_a_statement_is_joined_on_its_use_line() -> None:
    """Brackets close up, a brace block keeps a space, comments are left out (a `#` in a
    string is kept), a line that is a use itself starts its own line, the bound's `…` stays."""
    texts = ["    f(a,  # first", "      # alone", '      "#b",', "    )", "    g(x => {", "      h()", "    }, f(1,",
             "      2, …"]
    lines = [Line(number=n, text=text) for n, text in enumerate(texts, 1)]
    assert _joined(lines, {1: 4, 5: 4, 7: 7}, "#") == [
        Line(number=1, text='f(a, "#b",)'), Line(number=5, text="g(x => { h()"),
        Line(number=7, text="}, f(1, 2, …")]
