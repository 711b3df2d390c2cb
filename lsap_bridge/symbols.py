"""Document symbols as one tree, whatever shape the server sends.

Servers answer `textDocument/documentSymbol` with nested `DocumentSymbol`s (basedpyright,
typescript-language-server) or flat `SymbolInformation`s (pylsp); both become `Symbol`
trees with code-point columns, so Locate and reports never care which server answered.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple, TypeAlias, cast

from lsprotocol import types
from rapidfuzz import fuzz, process

from .jsonvalue import Json
from .lsp import json_list, json_object, optional_text, range_of
from .position import Encoding, column_at, line_at

# LSP SymbolKind values that hold code worth naming as "where a use is".
_SCOPES = {2, 3, 4, 5, 6, 9, 10, 11, 12, 23}
_CONTAINERS = {2, 3, 4}  # module, namespace, package: a server may wrap a file in one
KIND_NAMES = {
    1: "file", 2: "module", 3: "namespace", 4: "package", 5: "class", 6: "method",
    7: "property", 8: "field", 9: "constructor", 10: "enum", 11: "interface", 12: "function",
    13: "variable", 14: "constant", 15: "string", 16: "number", 17: "boolean", 18: "array",
    19: "object", 20: "key", 21: "null", 22: "enum_member", 23: "struct", 24: "event",
    25: "operator", 26: "type_parameter",
}


class Span(NamedTuple):
    """0-based lines, code-point columns, end exclusive. (A tuple: a 20,000-line file has
    40,000 of them, each built in half the time of a frozen dataclass.)"""

    start_line: int
    start_col: int
    end_line: int
    end_col: int

    def contains(self, line: int, col: int) -> bool:
        if line < self.start_line or line > self.end_line:
            return False
        if line == self.start_line and col < self.start_col:
            return False
        return not (line == self.end_line and col > self.end_col)


Units = tuple[int, int, int, int]  # an LSP range: start line, character, end line, character
Converter = Callable[[Units], Span]
_UNSET = Span(0, 0, 0, 0)


class Symbol:
    """A document symbol. From a server's answer its spans are converted when first read
    (`lazy`): an outline of a 20,000-line file sorts and names its 10,000 symbols, but
    shows the places of a page of them (doc/architecture.md, Costs)."""

    __slots__ = ("_convert", "_selection", "_span", "_units", "children", "detail", "kind", "name")

    def __init__(self, name: str, kind: int, span: Span, selection: Span,
                 detail: str = "", children: list[Symbol] | None = None) -> None:
        self.name, self.kind, self.detail = name, kind, detail
        self.children: list[Symbol] = children if children is not None else []
        self._span: Span | None = span
        self._selection: Span | None = selection
        self._units: tuple[Units, Units] | None = None
        self._convert: Converter | None = None

    @classmethod
    def lazy(cls, name: str, kind: int, detail: str, children: list[Symbol],
             units: tuple[Units, Units], convert: Converter) -> Symbol:
        """A symbol whose range and selection range, in the server's units, become spans
        through `convert` on first use."""
        symbol = cls(name, kind, _UNSET, _UNSET, detail, children)
        symbol._span = symbol._selection = None
        symbol._units, symbol._convert = units, convert
        return symbol

    @property
    def span(self) -> Span:
        if self._span is None:
            self._span = self._converted(0)
        return self._span

    @property
    def selection(self) -> Span:
        if self._selection is None:
            self._selection = self._converted(1)
        return self._selection

    def __reduce__(self) -> tuple[type[Symbol], tuple[object, ...]]:
        """Pickled with its spans converted: a worker process (lsap_bridge/cpu.py) gets no
        converter, which holds the file's lines."""
        return (type(self), (self.name, self.kind, self.span, self.selection, self.detail, self.children))

    def _converted(self, which: int) -> Span:
        assert self._units is not None and self._convert is not None, "only a lazy symbol lacks spans"
        return self._convert(self._units[which])

    @property
    def order(self) -> tuple[int, int]:
        """Where the name starts, for sorting siblings: the server's units while the spans
        are not converted (their order is the code points' order)."""
        if self._selection is None and self._units is not None:
            return self._units[1][0], self._units[1][1]
        return self.selection.start_line, self.selection.start_col

    @property
    def bare_name(self) -> str:
        return bare_name(self.name)

    @property
    def kind_name(self) -> str:
        return KIND_NAMES.get(self.kind, "symbol")

    def __repr__(self) -> str:
        return f"Symbol({self.name!r}, {self.kind}, {self.span}, {self.selection})"


@lru_cache(maxsize=4096)
def bare_name(name: str) -> str:
    """`validate(self)` -> `validate`, `(*T).M` -> `M`: the name an agent would write.
    (Memoised: a pure function of the name, and a large file repeats its names, `__init__`,
    `method_0`, thousands of times.)"""
    receiver = re.match(r"^\(\*?[\w.]+\)\.(\w+)", name)
    if receiver:
        return receiver.group(1)
    return re.sub(r"\s*\(.*\)\s*$", "", name).strip()


@dataclass
class SymbolTree:
    roots: list[Symbol]

    def walk(self) -> Iterator[tuple[tuple[str, ...], Symbol]]:
        def visit(nodes: list[Symbol], prefix: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Symbol]]:
            for node in nodes:
                path = (*prefix, node.bare_name)
                yield path, node
                yield from visit(node.children, path)

        yield from visit(self.roots, ())

    def find(self, names: Sequence[str]) -> list[Symbol]:
        """Symbols at a path from the root, tolerating a module container around the file."""
        parts = [p for name in names for p in name.split(".") if p]

        def match(nodes: list[Symbol], rest: list[str]) -> list[Symbol]:
            found: list[Symbol] = []
            for node in nodes:
                if node.bare_name == rest[0] or node.name == rest[0]:
                    found.extend([node] if len(rest) == 1 else match(node.children, rest[1:]))
            return found

        found = match(self.roots, parts)
        if not found:
            for root in self.roots:
                if root.kind in _CONTAINERS:
                    found.extend(match(root.children, parts))
        return found

    def top_level(self) -> list[Symbol]:
        """The file's own top-level symbols, inside the module container a server may wrap
        the file in."""
        return [child for root in self.roots
                for child in (root.children if root.kind in _CONTAINERS else [root])]

    def suggest(self, names: Sequence[str], limit: int = 3) -> list[str]:
        """Did-you-mean: the existing symbol paths closest to what was asked."""
        paths = sorted({".".join(path) for path, _ in self.walk()})
        wanted = ".".join(names)
        scored = process.extract(wanted, paths, scorer=fuzz.WRatio, limit=limit, score_cutoff=50)
        return [choice for choice, _score, _index in scored]

    def enclosing(self, line: int, col: int = 0) -> list[Symbol]:
        """The chain of scopes (classes, functions, …) that contain a position, outermost first."""
        chain: list[Symbol] = []
        nodes = self.roots
        depth = 0
        while True:
            inner = [
                n for n in nodes
                if n.span.contains(line, col) and (n.kind in _SCOPES or depth == 0)
            ]
            if not inner:
                return chain
            # The tightest one, should siblings overlap (flat servers sometimes do).
            node = min(inner, key=lambda n: (n.span.end_line - n.span.start_line, n.span.end_col))
            chain.append(node)
            nodes = node.children
            depth += 1

    def enclosing_path(self, line: int, col: int = 0) -> str | None:
        chain = self.enclosing(line, col)
        return ".".join(s.bare_name for s in chain) or None


class PackedSymbols(NamedTuple):
    """A `DocumentSymbol[]` answer as lua/lsap/transport/packing.lua sends it for an
    `LspCall` with `packed` (`pack_symbols`, which checked every range): names, details and
    ten numbers per symbol, depth first (the parent's place, 1-based, or 0; the kind; the
    range's four; the selection range's four), server units."""

    names: list[str]
    details: list[str]
    nums: list[int]


#: A `textDocument/documentSymbol` answer decoded (`document_symbols`).
DocumentSymbols: TypeAlias = PackedSymbols | list[types.DocumentSymbol] | list[types.SymbolInformation]

_SYMBOL_KINDS = {int(kind): kind for kind in types.SymbolKind}


def _kind(value: Json) -> types.SymbolKind:
    """A symbol's kind; one LSP does not list is kept as its number (LSP asks clients to bear
    unknown kinds), none is 0 (as packing.lua reads it)."""
    number = value if isinstance(value, int) else 0
    return _SYMBOL_KINDS.get(number) or cast(types.SymbolKind, number)


def _document_symbol(raw: Json) -> types.DocumentSymbol:
    item = json_object(raw)
    rng = range_of(item["range"])
    selection = item.get("selectionRange")
    return types.DocumentSymbol(
        cast(str, item["name"]), _kind(item.get("kind")), rng, rng if selection is None else range_of(selection),
        detail=optional_text(item.get("detail")),
        children=[_document_symbol(child) for child in json_list(item.get("children"))])


def _symbol_information(raw: Json) -> types.SymbolInformation:
    item = json_object(raw)
    location = json_object(item["location"])
    return types.SymbolInformation(types.Location(cast(str, location["uri"]), range_of(location["range"])),
                                   cast(str, item["name"]), _kind(item.get("kind")))


def document_symbols(raw: Json) -> DocumentSymbols:
    """A `textDocument/documentSymbol` answer, in any of its shapes: packed (`PackedSymbols`,
    its lists checked at C speed by `_tree_from_packed`), or lsprotocol's `DocumentSymbol`s
    or flat `SymbolInformation`s made directly (what packing.lua sends as it is: an entry
    it could not pack, or a flat answer), ranges in the server's units."""
    if isinstance(raw, dict) and "symbols" in raw:
        names, details, nums = json_list(raw["symbols"])
        return PackedSymbols(cast(list[str], json_list(names)), cast(list[str], json_list(details)),
                             cast(list[int], json_list(nums)))
    entries = json_list(raw)
    if entries and "location" in json_object(entries[0]):
        return [_symbol_information(entry) for entry in entries]
    return [_document_symbol(entry) for entry in entries]


def units(rng: types.Range) -> Units:
    """An LSP range's numbers (kept instead of its objects: a fifth of their memory)."""
    return rng.start.line, rng.start.character, rng.end.line, rng.end.character


def build_tree(answer: DocumentSymbols, lines: Sequence[str], encoding: Encoding) -> SymbolTree:
    """A `SymbolTree` from a `textDocument/documentSymbol` answer (`document_symbols`), its
    columns code points (converted when first read: `Symbol.lazy`)."""

    def span(units: Units) -> Span:
        first, start, last, end = units
        return Span(first, column_at(lines, first, start, encoding), last, column_at(lines, last, end, encoding))

    if isinstance(answer, PackedSymbols):
        return _tree_from_packed(answer.names, answer.details, answer.nums, span)
    if answer and isinstance(answer[0], types.SymbolInformation):
        return _tree_from_flat(answer, lines, span)

    def convert(symbol: types.DocumentSymbol) -> Symbol:
        return Symbol.lazy(symbol.name, int(symbol.kind), symbol.detail or "",
                           [convert(c) for c in symbol.children or []],
                           (units(symbol.range), units(symbol.selection_range)), span)

    return SymbolTree([convert(symbol) for symbol in cast(list[types.DocumentSymbol], answer)])


def _tree_from_packed(names: list[str], details: list[str], nums: list[int], span: Converter) -> SymbolTree:
    """Nested symbols from their names, details and ten numbers each, depth first (each
    symbol's parent comes before it); the numbers are read at C speed."""
    ranges = zip(nums[2::10], nums[3::10], nums[4::10], nums[5::10], strict=True)
    selections = zip(nums[6::10], nums[7::10], nums[8::10], nums[9::10], strict=True)
    made: list[Symbol] = []
    roots: list[Symbol] = []
    for name, detail, parent, kind, rng, selection in zip(
            names, details, nums[0::10], nums[1::10], ranges, selections, strict=True):
        symbol = Symbol.lazy(name, kind, detail, [], (rng, selection), span)
        (made[parent - 1].children if parent else roots).append(symbol)
        made.append(symbol)
    return SymbolTree(roots)


def _tree_from_flat(answer: list[types.SymbolInformation], lines: Sequence[str], span: Converter) -> SymbolTree:
    """Nest flat `SymbolInformation`s by range containment."""
    flat = []
    for information in answer:
        whole = span(units(information.location.range))
        selection = _name_span(information.name, whole, lines)
        flat.append(Symbol(information.name, int(information.kind), whole, selection))
    flat.sort(key=lambda s: (s.span.start_line, s.span.start_col, -s.span.end_line, -s.span.end_col))
    roots: list[Symbol] = []
    stack: list[Symbol] = []
    for sym in flat:
        while stack and not _encloses(stack[-1].span, sym.span):
            stack.pop()
        (stack[-1].children if stack else roots).append(sym)
        stack.append(sym)
    return SymbolTree(roots)


def _encloses(outer: Span, inner: Span) -> bool:
    return (outer.start_line, outer.start_col) <= (inner.start_line, inner.start_col) and (
        inner.end_line, inner.end_col) <= (outer.end_line, outer.end_col) and outer != inner


def _name_span(name: str, span: Span, lines: Sequence[str]) -> Span:
    """Flat symbols carry no selection range: find the name in the symbol's first line."""
    text = line_at(lines, span.start_line)
    at = text.find(bare_name(name), span.start_col)
    if at < 0:
        return Span(span.start_line, span.start_col, span.start_line, span.start_col)
    return Span(span.start_line, at, span.start_line, at + len(bare_name(name)))
