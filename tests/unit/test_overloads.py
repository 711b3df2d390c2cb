"""Issue 33: overload signatures and the implementation of one symbol are one place."""

from __future__ import annotations

from lsap_bridge.resolve import _one_symbol
from lsap_bridge.symbols import Span, Symbol

METHOD = 6

PYTHON = [
    "class Reader:",  # 0
    "    @overload",
    "    def read(self, n: int) -> bytes: ...",
    "    @overload",
    "    def read(self) -> str: ...",
    "    def read(self, n=None):",  # 5
    "        return self._read(n)",
    "    @property",
    "    def size(self) -> int:",
    "        return self._size",
    "    @size.setter",  # 10
    "    def size(self, value: int) -> None:",
    "        self._size = value",
]


def method(name: str, first: int, last: int, lines: list[str], decorated: bool = False) -> Symbol:
    line = first + decorated
    column = lines[line].index(name)
    return Symbol(name, METHOD, Span(first, 4, last, len(lines[last])), Span(line, column, line, column + len(name)))


def test_python_overloads_are_their_implementation() -> None:
    symbols = [method("read", 1, 2, PYTHON, True), method("read", 3, 4, PYTHON, True), method("read", 5, 6, PYTHON)]
    one, note = _one_symbol(symbols, PYTHON)
    assert one is symbols[2]
    assert note == "3 signatures of read: the implementation at line 6; the others at lines 3, 5"


def test_a_getter_and_a_setter_are_two_places() -> None:
    symbols = [method("size", 7, 9, PYTHON, True), method("size", 10, 12, PYTHON, True)]
    assert _one_symbol(symbols, PYTHON) == (None, None)


def test_declarations_alone_are_one_place_at_the_first() -> None:
    lines = ["interface Source {", "  pipe(): Source;", "  pipe<A>(op: A): Source;", "}"]
    symbols = [method("pipe", 1, 1, lines), method("pipe", 2, 2, lines)]
    one, note = _one_symbol(symbols, lines)
    assert one is symbols[0] and note is not None and note.startswith("2 signatures of pipe: the first at line 2")
