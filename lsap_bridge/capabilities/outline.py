"""`outline`: the symbol tree of a file, a directory or a glob, as flattened dotted paths.

One file shows every symbol (locals inside functions left out); a directory or a glob
shows each file's top-level symbols. Symbols of all files come in one round trip per
language server, cached per file version by the session.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Annotated, ClassVar, Literal

from cachetools import LRUCache
from pydantic import Field

from ..errors import ErrorCode, LsapError
from ..models import MAX_ITEMS_LIMIT, Paged, Request, Row, absent
from ..modes import Answer, Offer, mode
from ..position import Document, EditorLocation, line_at
from ..report.files import expand, is_glob
from ..report.paging import PagingInfo, paged
from ..session.warm import Session
from ..surface import SURFACE
from ..symbols import Symbol, SymbolTree
from ..workspace import Walk, language_of

METHOD = "textDocument/documentSymbol"
MAX_FILES = 500
# Function-like symbols: their children are locals, not part of the file's structure.
_FUNCTIONS = {6, 9, 12}
# A variable or constant holds an object (its properties and methods are structure) or a
# function (an arrow function's: its other children are that function's locals).
_VARIABLES = {13, 14}
_MEMBERS = {6, 7, 8}
_BY_START = attrgetter("order")  # no column converted for sorting: 10,000 symbols


class OutlineRequest(Request):
    positional: ClassVar[str] = "file_path"
    mode: Literal["outline"] = "outline"
    file_path: str
    symbol_path: list[str] | str | None = None
    recursive: bool = False
    max_items: Annotated[int, Field(ge=1, le=MAX_ITEMS_LIMIT)] = 200
    # One file's public surface (`public`): its exported top-level symbols, a class's
    # members listed, other symbols' counted; None: compact for agents, every symbol in
    # Neovim's report window; false: every symbol.
    compact: bool | None = None


class Entry(Row):
    path: str
    line: int
    column: int
    kind: str
    symbol: str  # dotted
    detail: str
    children: int  # members, for a top-level symbol of a directory's outline


@dataclass(frozen=True)
class Shown:
    """A row of the agents' outline (`outline.md.j2`): a symbol, by its own name under its
    parent shown above it (`depth` levels in), by its dotted path otherwise; its members
    that have none of their own, on one line per kind (`members`: kind, then name and line);
    `run`: two or more symbols in a row of one kind with nothing inside, on one line."""

    depth: int
    entry: Entry
    name: str
    members: tuple[tuple[str, tuple[tuple[str, int], ...]], ...] = ()
    run: tuple[tuple[str, int], ...] = ()


class FileSymbols(Row):
    path: str
    symbols: list[Entry]

    @property
    def shown(self) -> list[Shown]:
        """The rows of the agents' form: a member with no members of its own is a `name line`
        on its parent's line of its kind, and so are symbols of one kind in a row with none
        (what `line| kind name` costs per symbol, a kind's line costs once)."""
        paths = {e.symbol for e in self.symbols}
        parents = {e.symbol.rpartition(".")[0] for e in self.symbols}
        leaves: dict[str, dict[str, list[tuple[str, int]]]] = {}
        depths: dict[str, int] = {}
        rows: list[tuple[Entry, str]] = []
        for entry in self.symbols:
            parent, _, name = entry.symbol.rpartition(".")
            bare = entry.symbol not in parents and not entry.detail and not entry.children
            if parent in paths and bare:
                leaves.setdefault(parent, {}).setdefault(entry.kind, []).append((name, entry.line))
            else:
                depths[entry.symbol] = depths[parent] + 1 if parent in depths else 0
                rows.append((entry, name if parent in depths else entry.symbol))
        shown = [Shown(depths[entry.symbol], entry, name,
                       tuple((kind, tuple(m)) for kind, m in leaves.get(entry.symbol, {}).items()))
                 for entry, name in rows]
        return _runs(shown, parents)


def _runs(rows: list[Shown], parents: set[str]) -> list[Shown]:
    """Rows of one kind at one depth in a row, with nothing inside, merged into one."""
    def alone(row: Shown) -> bool:
        return not row.members and row.entry.symbol not in parents and not row.entry.detail and not row.entry.children

    out: list[Shown] = []
    for row in rows:
        last = out[-1] if out else None
        if last is not None and alone(row) and (last.run or alone(last)) and (
                (last.depth, last.entry.kind) == (row.depth, row.entry.kind)):
            first = last.run or ((last.name, last.entry.line),)
            out[-1] = Shown(last.depth, last.entry, last.name, run=(*first, (row.name, row.entry.line)))
        else:
            out.append(row)
    return out


class OutlineReport(Paged):
    target: str
    hidden: int | None = absent()  # one file's symbols the compact form left out (not exported, members counted)
    scope: str | None
    many: bool  # a directory or a glob: each file's top level
    files: int
    more_files: bool  # the walk stopped at `limit` files
    limit: int
    outside: int
    too_large: int
    max_file_size: int
    lacking: list[str]  # files no server outlines
    groups: list[FileSymbols]


def structure(
    nodes: Sequence[Symbol],
    prefix: tuple[str, ...] = (),
    depth: int | None = None,
    local: bool = False,
) -> Iterator[tuple[tuple[str, ...], Symbol]]:
    """Symbols with their dotted paths; `depth` 1 = top level only.

    Locals of functions are left out unless `local` (the function itself was asked for).
    """
    # Servers may sort by name (typescript-language-server does): the file's order reads better.
    for node in sorted(nodes, key=_BY_START):
        path = (*prefix, node.bare_name)
        yield path, node
        if depth is None or depth > 1:
            inside = node.children if local else _structural(node)
            yield from structure(inside, path, None if depth is None else depth - 1, local)


def _structural(node: Symbol) -> Sequence[Symbol]:
    """The children of a symbol that are part of the file's structure, not locals."""
    if node.kind in _FUNCTIONS:
        return []
    if node.kind in _VARIABLES:
        return [c for c in node.children if c.kind in _MEMBERS]
    return node.children


# Kinds whose members a compact outline lists (a class's methods are its surface); the
# members of any other symbol (an interface's properties, an object's) are counted.
_LISTED = {5, 23}
# `export { a, b as c }` (not `… from`) and `export default name`: names declared without `export`.
_EXPORT_LIST = re.compile(r"^\s*export\s*(?:type\s*)?\{([^}]*)\}\s*;?\s*$"
                          r"|^\s*export\s+default\s+([\w$]+)\s*;?\s*$", re.M)
_EXPORTED = re.compile(r"\s*export\b")


def exported(path: Path, lines: list[str], roots: Sequence[Symbol]) -> list[Symbol]:
    """A file's top-level symbols another module is meant to use. TypeScript and JavaScript:
    those declared `export …` or named in an `export { … }` (not `… from`) or `export
    default name`; a file with no `export` is a script, all of it. Python: those named in a
    literal `__all__`, else those without a leading `_`. Other languages: all."""
    language = language_of(path)
    if language == "python":
        listed = _dunder_all("\n".join(lines))
        return [r for r in roots if r.bare_name in listed] if listed is not None else [
            r for r in roots if not r.bare_name.startswith("_")]
    exports = list(_export_statements(lines))
    if language not in ("typescript", "tsx", "javascript", "jsx") or not exports:
        return list(roots)
    named = {re.sub(r"^type\s+", "", m.strip()).split(" as ")[0].strip()  # the local name
             for line in exports if (found := _EXPORT_LIST.match(line))
             for m in (found[1] or found[2] or "").split(",")}
    return [r for r in roots if r.bare_name in named
            or _EXPORTED.match(line_at(lines, r.span.start_line))]


def _export_statements(lines: list[str]) -> Iterator[str]:
    """The statements that start with `export`, an `export { … }` list spanning lines joined
    into one. Only those lines are read: a warm outline takes a fraction of a millisecond,
    and a regex search of the whole text was a third of it."""
    for number, line in enumerate(lines):
        if "export" in line and _EXPORTED.match(line):
            end = number
            if "{" in line and "}" not in line:
                end = next((n for n in range(number + 1, min(len(lines), number + 200)) if "}" in lines[n]), number)
            yield " ".join(lines[number:end + 1])


def _dunder_all(text: str) -> set[str] | None:
    """The names of a module's `__all__` when it is a literal list or tuple of strings."""
    if "__all__" not in text:
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                return None
            return {v for v in value if isinstance(v, str)} if isinstance(value, (list, tuple)) else None
    return None


def public(path: Path, lines: list[str], tree: SymbolTree) -> Iterator[tuple[tuple[str, ...], Symbol]]:
    """A compact outline's symbols of one file: the exported top level (`exported`), and
    the members of its classes."""
    for node in exported(path, lines, sorted(tree.roots, key=_BY_START)):
        yield (node.bare_name,), node
        if node.kind in _LISTED:
            for child in sorted(_structural(node), key=_BY_START):
                yield (node.bare_name, child.bare_name), child


def _scope(
    tree: SymbolTree, names: list[str], display: str
) -> list[tuple[tuple[str, ...], Symbol]]:
    """The symbol at `names` and everything inside it (its locals too: it was asked for)."""
    found = tree.find(names)
    if not found:
        suggestions = tree.suggest(names)
        raise LsapError(
            ErrorCode.NOT_FOUND,
            f"no symbol {'.'.join(names)} in {display}",
            hint="ask for the outline without `symbol_path` to see every symbol",
            suggestions=suggestions,
        )
    out: list[tuple[tuple[str, ...], Symbol]] = []
    for symbol in found:
        prefix = tuple(names[:-1])
        out.append(((*prefix, symbol.bare_name), symbol))
        out += structure(symbol.children, (*prefix, symbol.bare_name), local=True)
    return out


async def _trees(session: Session, files: list[Path]
                 ) -> tuple[dict[Path, SymbolTree], list[str], dict[Path, Document]]:
    """Symbol trees per file, one batch per language; files no server reads are named; the
    texts the trees were read with (a compact outline reads its exports from them)."""
    trees: dict[Path, SymbolTree] = {}
    texts: dict[Path, Document] = {}
    lacking: list[str] = []
    by_language = groupby(sorted(files, key=lambda p: (language_of(p), str(p))), key=language_of)
    for _language, group in by_language:
        paths = list(group)
        try:
            client = await session.servers.reader(paths[0], METHOD)
        except LsapError as error:
            if len(files) == 1:
                raise
            lacking.append(f"{len(paths)} {language_of(paths[0])} file(s): {error.message}")
            continue
        docs = await session.texts.documents(paths)
        trees.update(await session.symbols.of(paths, client, docs))
        texts.update(docs)
    return trees, lacking, texts


async def symbol_paths(session: Session, path: Path) -> list[str]:
    """The dotted paths the outline of one file lists, for completing anchors (`path:<Tab>`)."""
    trees, _, _ = await _trees(session, [path])
    tree = trees.get(path)
    return list(dict.fromkeys(".".join(dotted) for dotted, _ in structure(tree.roots))) if tree else []


@mode("outline", request=OutlineRequest, report=OutlineReport,
      summary="symbols of a file, a directory or a glob, as dotted paths", method=METHOD,
      fallback="locate with a line scope", offer=Offer(command="LsapOutline", picker=5, plug=True))
async def outline(session: Session, request: OutlineRequest) -> Answer:
    max_size = session.gateway.max_file_size
    found = expand(session.workspace, request.file_path, request.recursive, MAX_FILES, max_size)
    files = found.files
    many = len(files) > 1 or is_glob(request.file_path) or files[0].is_dir()
    names = _scope_names(request, many)
    # Every symbol is walked (the total, the pages), but a row is made for the page shown
    # only: a 20,000-line file has 10,000 symbols (doc/architecture.md, Costs).
    items: list[_Item] | None = session.kept.page(request)
    lacking: list[str] = []
    hidden = 0  # a later page's count: its first page said it
    compact = not many and not names and (request.compact if request.compact is not None
                                          else SURFACE.get() != "nvim")
    if items is None:
        items, lacking, hidden = await _walked(session, files, names, many, compact)
    pages = _Pages(found, names, many, items, lacking, max_size, hidden, compact)
    return await paged(session, request, items, pages.build)


_Item = tuple[str, tuple[str, ...], Symbol]  # a symbol's file (display path), dotted path, symbol


def _scope_names(request: OutlineRequest, many: bool) -> list[str]:
    """The parts of `symbol_path` (one file's outline below that symbol)."""
    given = (
        [request.symbol_path] if isinstance(request.symbol_path, str) else request.symbol_path or []
    )
    names = [part for name in given for part in name.split(".") if part]
    if names and many:
        raise LsapError(
            ErrorCode.INVALID_REQUEST,
            "`symbol_path` needs `file_path` to name one file",
            hint="drop `symbol_path`, or give the file that holds the symbol",
        )
    return names


async def _walked(session: Session, files: list[Path], names: list[str],
                  many: bool, compact: bool) -> tuple[list[_Item], list[str], int]:
    """Every symbol shown of the files, in order (of many files, the top level; of one
    file `compact`, its `public` symbols), the files no server gave symbols for, and how
    many symbols the compact form left out."""
    trees, lacking, texts = await _trees(session, files)
    items: list[_Item] = []
    hidden = 0
    for path in files:
        tree = trees.get(path)
        if tree is None:
            continue
        display = session.workspace.display(path)
        if compact:
            walked, left_out = session.kept.owned(CompactWalks).of(path, texts[path], tree)
            hidden += left_out
        else:
            walked = list(_scope(tree, names, display) if names else structure(tree.roots, depth=1 if many else None))
        items += ((display, dotted, symbol) for dotted, symbol in walked)
    return items, lacking, hidden


_Walked = list[tuple[tuple[str, ...], Symbol]]


@dataclass
class CompactWalks:
    """One file's compact outline (`public`) and how many symbols it leaves out, by the
    text it was read from, kept with the tree it walked (`Kept.owned`): trees are kept per
    text version (`Symbols`), so a warm outline of an unchanged file walks nothing again
    (doc/architecture.md, Costs)."""

    kept: LRUCache[tuple[Path, str], tuple[SymbolTree, _Walked, int]] = field(default_factory=lambda: LRUCache(64))

    def of(self, path: Path, doc: Document, tree: SymbolTree) -> tuple[_Walked, int]:
        """`public(path, doc.lines, tree)` and the symbols it leaves out, walked once per tree."""
        found = self.kept.get((path, doc.version))
        if found is not None and found[0] is tree:
            return found[1], found[2]
        walked = list(public(path, doc.lines, tree))
        left_out = sum(1 for _ in structure(tree.roots)) - len(walked)
        self.kept[path, doc.version] = (tree, walked, left_out)
        return walked, left_out


@dataclass(frozen=True)
class _Pages:
    """What every page of one outline shares; `build` makes the report of one page."""

    found: Walk
    names: list[str]
    many: bool
    items: list[_Item]
    lacking: list[str]
    max_size: int
    hidden: int
    compact: bool  # one file's `public` symbols

    async def build(self, request: OutlineRequest, page_items: list[_Item], paging: PagingInfo) -> Answer:
        many = self.many
        shown = [
            Entry(
                path=display,
                line=symbol.selection.start_line + 1,
                column=symbol.selection.start_col + 1,
                kind=symbol.kind_name,
                symbol=".".join(dotted),
                detail=symbol.detail,
                children=len(_structural(symbol)) if many or (
                    self.compact and len(dotted) == 1 and symbol.kind not in _LISTED) else 0,
            )
            for display, dotted, symbol in page_items
        ]
        groups = [FileSymbols(path=path, symbols=list(rows)) for path, rows in groupby(shown, key=lambda r: r.path)]
        report = OutlineReport(
            # One file's outline has no `### path` header: its title names it as the workspace does.
            target=groups[0].path if not many and len(groups) == 1 else request.file_path,
            scope=".".join(self.names) if self.names else None,
            many=many,
            files=sum(1 for _ in groupby(self.items, key=itemgetter(0))),
            more_files=self.found.more,
            limit=MAX_FILES,
            outside=self.found.outside,
            too_large=self.found.too_large,
            max_file_size=self.max_size,
            lacking=self.lacking,
            groups=groups,
            hidden=self.hidden or None,
            **paging,
        )
        locations: list[EditorLocation] = [
            {"path": r.path, "line": r.line, "character": r.column - 1, "encoding": "utf-32",
             "text": f"{r.kind} {r.symbol}"}
            for r in shown
        ]
        return Answer(report, locations)
