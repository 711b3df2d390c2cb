"""`references`: every use of a symbol, grouped by file and enclosing symbol.

Compact by default (issue 32): the uses that are an import of the symbol, an entry of a
Python `__all__` (an export), and those that only name it as a type (an annotation), told
apart by their line's text, are listed as `path:line` per file on one line each instead of
printed; the anchor's own use is the title's place; each enclosing symbol is a
`### path > Symbol.path` header (the seed's flattened form, issue 50; the tests of a test
file share one, `path > (tests)`) over its uses, each one line without its indent and
without fences: a multi-line statement joined (its arguments, up to `STATEMENT_LINES`
lines), a long one cut around the use, and one that reads as a line shown above in its
file as `same as N`. Nothing is lost: every
use keeps its place in `groups[].uses` (with its `kind`) and in the locations, and every
file and line is in the Markdown. `compact: false` prints every line as before, and so
does Neovim's report window unless asked (each line there is a jump target).
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass, field, replace
from itertools import chain, groupby, repeat
from operator import itemgetter
from pathlib import Path
from typing import Literal

from ..decode import PackedLocations, location_count, location_files, packed_locations
from ..jsonvalue import Params
from ..models import Anchored, Line, LocateRequest, Paged, Row, absent
from ..modes import Answer, Offer, mode
from ..position import Document, EditorLocation, line_at
from ..report.paging import PagingInfo, paged
from ..report.pieces import (
    anchor_fields,
    editor_location,
    fence_language,
    statement_end,
    use_lines,
    without_comment,
    word_at,
)
from ..resolve import Resolved, resolve
from ..session.targets import Location, Target
from ..session.warm import Session
from ..surface import SURFACE
from ..symbols import SymbolTree, Units
from ..workspace import Workspace

METHOD = "textDocument/references"


class ReferencesRequest(LocateRequest):
    mode: Literal["references"] = "references"
    include_declaration: bool = True
    # False: the uses in test files (`_TEST_FILE`) are counted, not listed, as an IDE's
    # "production files" scope; for an agent asking who calls a function in the code itself.
    include_tests: bool = True
    # Imports and annotation-only uses as `path:line` lists, long lines cut (see above);
    # None: compact for agents, the full form in Neovim's report window (`:Lsap
    # references`), where every printed line is a jump target.
    compact: bool | None = None


class Use(Row):
    line: int
    column: int
    # How the line uses it (compact): an import, a type annotation, or the anchor's own use
    # (the title names its place; its line is not printed again).
    kind: Literal["import", "export", "annotation", "anchor"] | None = absent()


class Collapsed(Row):
    """The lines of one file whose uses are all of one kind (`rich/__init__.py:11,32`)."""

    path: str
    lines: list[int]


class Group(Row):
    """The uses in one file inside one enclosing symbol."""

    path: str
    symbol: str | None
    language: str
    lines: list[Line]
    uses: list[Use]
    # Compact: the symbol is a test (a `test…` function or class, a `describe`/`it` callback)
    # in a test file; a file's tests share one `### path > (tests)` header.
    test: bool | None = absent()


class ReferencesReport(Anchored, Paged):
    name: str
    files: int
    external: int  # results outside the workspace: counted, not shown
    tests_left_out: int | None = absent()  # `include_tests: false`: uses in test files, counted
    test_files_left_out: int | None = absent()
    groups: list[Group]  # in compact form, a group's `lines` leave out its collapsed uses
    compact: bool | None = absent()  # True: imports, exports, annotations collapsed (the template's form)
    imports: list[Collapsed] | None = absent()
    exports: list[Collapsed] | None = absent()  # a Python `__all__`'s entries
    annotations: list[Collapsed] | None = absent()


# A server that has just started may answer from a partial index (typescript-language-server
# gave 21 of 420 references for seconds while loading the project; doc/architecture.md, Costs): while it is
# young, ask again until the count holds, for a bounded time, and say so if it never did.
YOUNG = 30.0
RECHECK = 0.7
SETTLE_LIMIT = 10.0


async def settled(session: Session, target: Target, params: Params) -> tuple[PackedLocations, bool]:
    """References (packed: see `decode.packed_locations`), asked again while a young server's
    count still changes; True if it never held. Once a server's count has held, it is
    trusted for the rest of the session."""
    raw = await session.servers.read(target, METHOD, params, packed_locations, packed=True)
    age = target.client.age()
    if age is None or age > YOUNG or target.client.id in session.servers.settled:
        return raw, False
    deadline = time.monotonic() + SETTLE_LIMIT
    while time.monotonic() < deadline:
        await asyncio.sleep(RECHECK)
        again = await session.servers.read(target, METHOD, params, packed_locations, packed=True)
        if location_count(again) == location_count(raw):
            session.servers.settled.add(target.client.id)
            return again, False
        raw = again
    return raw, True


@mode("references", request=ReferencesRequest, report=ReferencesReport,
      summary="all uses of a symbol, grouped by file and enclosing symbol", method=METHOD,
      fallback="search", workspace=True,
      offer=Offer(command="LsapReferences", picker=1, view="refs", mcp=True, plug=True))
async def references(session: Session, request: ReferencesRequest) -> Answer:
    # The whole answer is a flat list of (path, range in the server's units), sorted and
    # unique, built at C speed; only the page shown is read, converted to code points and
    # given its enclosing symbols (doc/architecture.md, Costs).
    compact = request.compact if request.compact is not None else SURFACE.get() != "nvim"
    kept: list[_Scope] | None = session.kept.page(request)
    resolved = await resolve(session, request.locate, METHOD)
    target = resolved.target
    growing = False
    if kept:
        scope = kept[0]
    else:
        params = session.servers.position_params(target, resolved.doc, resolved.line, resolved.column)
        params["context"] = {"includeDeclaration": request.include_declaration}
        raw, growing = await settled(session, target, params)
        items = list(chain.from_iterable(zip(repeat(path), ranges) for path, ranges in location_files(raw)))
        scope = _confined(session.workspace, items)
        if not request.include_tests:
            scope = _without_tests(session.workspace, scope)
    pages = _Pages(session, resolved, compact, growing, scope)
    return await paged(session, request, scope.items, pages.build, whole=[scope])  # later pages: same counts


@dataclass(frozen=True)
class _Scope:
    """The uses an answer lists, in path order, and those it counts without listing; kept
    whole for the later pages of its `pagination_id`, which say the same counts."""

    items: list[tuple[Path, Units]]
    files: int
    external: int = 0  # outside the workspace
    tests: int = 0  # in test files, left out by `include_tests: false`
    test_files: int = 0


def _confined(workspace: Workspace, items: list[tuple[Path, Units]]) -> _Scope:
    """The uses inside the workspace, each file by its real path (`Workspace.local`: a server
    rooted at a symlinked path names files by it), in path order, with the count of files and
    of the uses outside (counted, never dropped silently)."""
    kept: dict[Path, list[tuple[Path, Units]]] = {}
    external, renamed = 0, False
    for path, run in groupby(items, key=itemgetter(0)):
        real = workspace.local(path)
        if real is None:
            external += sum(1 for _ in run)
        elif real == path and real not in kept:  # nearly always: the server's list as it is
            kept[real] = list(run)
        else:  # named through a link (and maybe directly too): once, by its real path
            renamed = True
            kept[real] = sorted({*kept.get(real, []), *((real, units) for _, units in run)})
    ordered = sorted(kept) if renamed else kept  # real paths sort elsewhere than the names given
    return _Scope(list(chain.from_iterable(kept[path] for path in ordered)), len(kept), external)


def _without_tests(workspace: Workspace, scope: _Scope) -> _Scope:
    """The scope without the uses in test files, counted. Told from the path only (a test
    file's helpers are left out too): the code an agent means, not its tests."""
    kept: list[tuple[Path, Units]] = []
    uses = files = 0
    for path, run in groupby(scope.items, key=itemgetter(0)):
        if _TEST_FILE.search(workspace.display(path)):
            uses += sum(1 for _ in run)
            files += 1
        else:
            kept += run
    return replace(scope, items=kept, files=scope.files - files, tests=uses, test_files=files)


@dataclass(frozen=True)
class _Pages:
    """What every page of one references answer shares; `build` makes one page's report."""

    session: Session
    resolved: Resolved
    compact: bool
    growing: bool  # the server's answer was still growing (an index being built)
    scope: _Scope

    async def build(self, request: ReferencesRequest, page_items: list[tuple[Path, Units]],
                    paging: PagingInfo) -> Answer:
        # Per-item work only for the page shown: one read and one symbol call per file.
        session, resolved, target, scope = self.session, self.resolved, self.resolved.target, self.scope
        paths = [path for path, _ in page_items]
        docs = await session.texts.documents(paths)
        shown = session.texts.located(page_items, target.client, docs)
        trees = await session.symbols.of(paths, target.client, docs) if target.client.supports(
            "textDocument/documentSymbol") else {}
        page = _Page(self.compact, request.context_lines)
        for path, file_uses in groupby(shown, key=lambda loc: loc.path):
            anchor = (resolved.line, resolved.column) if path == resolved.path else None
            page.add(session.workspace.display(path), docs[path], trees.get(path), list(file_uses), anchor)
        compact = self.compact
        report = ReferencesReport(
            **anchor_fields(resolved, session, partial=resolved.target.partial or self.growing),
            name=word_at(resolved.line_text, resolved.column),
            files=scope.files,
            external=scope.external,
            tests_left_out=scope.tests or None,
            test_files_left_out=scope.test_files or None,
            groups=page.groups,
            compact=compact or None,
            imports=_listed(page.collapsed["import"]) if compact else None,
            exports=_listed(page.collapsed["export"]) if compact else None,
            annotations=_listed(page.collapsed["annotation"]) if compact else None,
            **paging,
        )
        return Answer(report, page.locations)


@dataclass
class _Page:
    """One page's uses, grouped by file and enclosing symbol; in compact form, an import's
    or an annotation's line is collapsed into a list of line numbers (`collapsed`)."""

    compact: bool
    context_lines: int
    groups: list[Group] = field(default_factory=list)
    locations: list[EditorLocation] = field(default_factory=list)
    collapsed: dict[str, dict[str, list[int]]] = field(
        default_factory=lambda: {"import": {}, "export": {}, "annotation": {}})
    # Compact: the first line of each long text shown, by file; a later use whose
    # statement reads the same is printed as `same as N`.
    seen: dict[tuple[str, str], int] = field(default_factory=dict)

    def add(self, display: str, doc: Document, tree: SymbolTree | None, in_file: list[Location],
            anchor: tuple[int, int] | None) -> None:
        """A file's uses on the page (`anchor`: the position asked about, in this file)."""
        kinds, printed = _kinds(doc.lines, in_file, anchor) if self.compact else ({}, set())

        def enclosing(loc: Location) -> str | None:
            return tree.enclosing_path(loc.line, loc.col) if tree else None

        for symbol, uses in groupby(in_file, key=enclosing):
            positions: list[Use] = []
            printing: list[Location] = []
            for loc in uses:
                kind = kinds.get((loc.line, loc.col))
                positions.append(Use(line=loc.line + 1, column=loc.col + 1, kind=kind))
                self.locations.append(editor_location(display, doc, loc.line, loc.col))
                if kind is None or loc.line in printed:
                    printing.append(loc)
                elif kind != "anchor" and loc.line + 1 not in (
                        listed := self.collapsed[kind].setdefault(display, [])):
                    listed.append(loc.line + 1)
            lines = _shown(doc, printing, self.context_lines, self.compact)
            if self.compact:
                lines = [self._same(display, doc, line) for line in lines]
            self.groups.append(Group(path=display, symbol=symbol, language=fence_language(doc), lines=lines,
                                     uses=positions, test=(self.compact and _is_test(display, symbol)) or None))

    def _same(self, display: str, doc: Document, line: Line) -> Line:
        """A line whose long text was shown already in this file, as `same as N`; one cut
        short (`…`) only if the whole statements read the same."""
        if len(line.text) < SAME_MIN:
            return line
        text = _statement(doc, line.number - 1) if line.text.endswith("…") else line.text
        first = self.seen.setdefault((display, text), line.number)
        return line if first == line.number else Line(number=line.number, text=f"same as {first}")


_IMPORT = re.compile(r"\s*(?:from\s+\S+\s+import\b|import\b|export\s+(?:type\s+)?\{[^}]*\}\s*from\b|#include\b)")
# What comes right before a name used as a type only: `x: T` (a parameter or a variable,
# not a dict display's key nor a lambda's body), `) : T` and `-> T` (a return type),
# `Optional[T`, `list[T`, `T | U`.
_GENERICS = (r"\b(?:list|dict|set|frozenset|tuple|type|Optional|Union|List|Sequence|Iterable|Iterator|Type|Dict|"
             r"Mapping|Tuple|Callable|ClassVar|Final|Annotated|Awaitable|Generator)\[")
_BEFORE_TYPE = re.compile(
    r"(?:(?:^|[(,;])\s*\*{0,2}(?:self\.)?[\w$]+\??\s*:|\)\s*:|->|(?<!\|)\|"
    r"|" + _GENERICS + r")\s*[\"']?$")
# Further in a generic's brackets, with only names, strings, commas and brackets between:
# `Union[RenderableType, Segment]`, `Tuple["Segment", "Segment"]`, `Callable[["A", "B"], "C"]`.
_IN_GENERIC = re.compile(_GENERICS + r"""[\w\s"'.,|\[\]]*$""")
WIDE = 100  # characters of a line shown around a use in compact form
STATEMENT_WIDE = 160  # characters of a multi-line statement joined on one line (compact)
SAME_MIN = 30  # characters from which a text shown again in a file is `same as N`
SAME_LINES = 50  # lines of a statement compared, when the one shown was cut
# A test file (`tests/…`, `test_x.py`, `x_test.go`, `x.test.ts`, `x.spec.js`) and a test
# in it: a `test…`/`Test…` function or class, a `describe(…)`/`it(…)`/`test(…)` callback.
_TEST_FILE = re.compile(r"(?:^|/)(?:tests?|__tests__|specs?)/|(?:^|/)test_[^/]*$|_test\.\w+$|\.(?:test|spec)\.\w+$")
_TEST_SYMBOL = re.compile(r"(?:[Tt]est|(?:describe|it|test)\b)")


Kind = Literal["import", "export", "annotation"]


def use_kind(text: str, column: int) -> Kind | None:
    """Whether the line only imports the symbol, or names it as a type (an annotation and
    no call or attribute of it): told from the line's text, the server does not say."""
    if _IMPORT.match(text):
        return "import"
    after = text[column:]
    name = re.match(r"[\w$]+", after)
    rest = after[name.end():] if name else after
    if rest.lstrip()[:1] in ("(", ".") or not (_BEFORE_TYPE.search(text[:column]) or _IN_GENERIC.search(text[:column])):
        return None
    return "annotation"


def _kinds(lines: list[str], uses: list[Location], anchor: tuple[int, int] | None,
           ) -> tuple[dict[tuple[int, int], Kind | Literal["anchor"] | None], set[int]]:
    """The kind of each use by (line, column), and the lines shown anyway (a use on them
    is neither an import, an annotation nor the anchor's): their other uses stay in them."""
    kinds: dict[tuple[int, int], Kind | Literal["anchor"] | None] = {}
    printed: set[int] = set()
    for loc in uses:
        text = line_at(lines, loc.line)
        kind = "anchor" if (loc.line, loc.col) == anchor else (
            use_kind(text, loc.col) or _listed_kind(lines, loc.line, loc.col))
        kinds[(loc.line, loc.col)] = kind
        if kind is None:
            printed.add(loc.line)
    return kinds, printed


_NAMES_ONLY = re.compile(r"\s*(?:type\s+)?[\w$]+(?:\s+as\s+[\w$]+)?\s*,?\s*(?:[)}]\s*)?(?:(?:#|//).*)?$")
_LISTED = re.compile(_NAMES_ONLY.pattern + r"|\s*(?:#|//).*$")  # a name, or a comment alone
_IMPORT_OPEN = re.compile(r"\s*(?:from\s+\S+\s+import\s*\(|(?:import|export)\s+(?:type\s+)?\{)")
IMPORT_LIST = 100  # lines looked back for the `from … import (` of a name alone on its line


def _in_import_list(lines: list[str], line: int) -> bool:
    """A name alone on its line inside a parenthesised `from … import (…)` of Python, or a
    braced `import {…}` / `export {…}` list of TypeScript (a re-export is an import too)."""
    if line >= len(lines) or not _NAMES_ONLY.match(lines[line]):
        return False
    for above in range(line - 1, max(-1, line - IMPORT_LIST), -1):
        text = lines[above]
        if _IMPORT_OPEN.match(text):
            return ")" not in text and "}" not in text
        if not _LISTED.match(text) or ")" in text or "}" in text:
            return False
    return False


def _is_test(path: str, symbol: str | None) -> bool:
    return symbol is not None and bool(_TEST_SYMBOL.match(symbol)) and bool(_TEST_FILE.search(path))


_ALL_OPEN = re.compile(r"\s*__all__\s*(?::[^=]*)?\+?=")
_ALL_NAMES = re.compile(r"""\s*(?:(?:"[\w.]*"|'[\w.]*')\s*,?\s*)+[\])]?\s*(?:#.*)?$""")


def _listed_kind(lines: list[str], line: int, column: int) -> Kind | None:
    """A use collapsed for where it stands: in an import list, or in `__all__`."""
    if _in_import_list(lines, line):
        return "import"
    return "export" if _in_all(lines, line, column) else None


def _in_all(lines: list[str], line: int, column: int) -> bool:
    """A name's string in a Python `__all__` (an export): on the `__all__ = [` line, or on
    a line of only names in its list below it."""
    if line_at(lines, line)[column - 1:column] not in ("'", '"'):
        return False
    for above in range(line, max(-1, line - IMPORT_LIST), -1):
        if _ALL_OPEN.match(lines[above]):
            return True
        if not _ALL_NAMES.match(lines[above]):
            return False
    return False


def cut(text: str, column: int, wide: int = WIDE) -> str:
    """A line of at most `wide` characters around `column`, cut with `…` where it was."""
    if len(text) <= wide:
        return text
    start = max(0, min(column - wide // 3, len(text) - wide))
    stop = start + wide
    return ("…" if start else "") + text[start:stop] + ("…" if stop < len(text) else "")


def _shown(doc: Document, uses: list[Location], context: int, compact: bool) -> list[Line]:
    """The lines that show one group's `uses`, each once, in order; compact: without their
    indent (see below), long lines cut around the use."""
    lines: list[Line] = []
    at: dict[int, int] = {}
    for loc in uses:
        at.setdefault(loc.line + 1, loc.col)
        lines += [line for line in use_lines(doc, loc.line, context) if not lines or line.number > lines[-1].number]
    if not compact:
        return lines
    if not context:
        return _joined(lines, at, _comment(doc))
    # A use's line without its indent, a statement's next lines without the indent of its
    # first (their own deeper indent kept); context above the first use without the least.
    indent = min((_indent(line.text) for line in lines if line.text.strip()), default=0)
    out = []
    for line in lines:
        if line.number in at or line.text.strip():
            indent = _indent(line.text) if line.number in at else min(indent, _indent(line.text))
        out.append(Line(number=line.number, text=cut(line.text[indent:], at.get(line.number, indent) - indent)))
    return out


def _joined(lines: list[Line], at: dict[int, int], comment: str) -> list[Line]:
    """Compact, without context: each use's line and the rest of its statement joined on
    one line (`f(a, b)` for `f(` `a,` `b)`), their indents and comments left out, cut to
    `STATEMENT_WIDE` characters around the use (a single line to `WIDE`)."""
    runs: list[tuple[int, int, list[str]]] = []  # (number, column in the first line, texts)
    for line in lines:
        if line.number in at or not runs:
            runs.append((line.number, at.get(line.number, 0) - _indent(line.text), [line.text.strip()]))
        else:
            runs[-1][2].append(line.text.strip())
    out = []
    for number, column, texts in runs:
        if len(texts) == 1:
            out.append(Line(number=number, text=cut(texts[0], column)))
            continue
        going_on = texts[-1].endswith(" …")
        parts = [without_comment(text.removesuffix(" …") if going_on else text, comment) for text in texts]
        text = parts[0]
        for part in filter(None, parts[1:]):  # a comment's own line leaves nothing
            text += part if text.endswith(("(", "[")) or part.startswith((")", "]")) else " " + part
        out.append(Line(number=number, text=cut(text + (" …" if going_on else ""), column, STATEMENT_WIDE)))
    return out


def _statement(doc: Document, line: int) -> str:
    """The whole statement that starts at `line` (0-based), its lines stripped, as one text
    (up to `SAME_LINES` lines): what `same as` compares when the shown one was cut."""
    comment = _comment(doc)
    last = statement_end(doc.lines, line, comment, SAME_LINES)
    return " ".join(without_comment(text, comment).strip() for text in doc.lines[line:last + 1])


def _comment(doc: Document) -> str:
    return "#" if fence_language(doc) == "python" else "//"


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def _listed(by_file: dict[str, list[int]]) -> list[Collapsed] | None:
    return [Collapsed(path=path, lines=lines) for path, lines in by_file.items()] or None
