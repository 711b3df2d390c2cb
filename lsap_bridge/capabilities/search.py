"""`search`: workspace symbols by name, filtered by kind, paged.

Every running server that answers `workspace/symbol` is asked in one round trip (a
Python and a TypeScript server both contribute). With none running yet (a fresh embedded
Neovim), one file per language is opened so that the servers start.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, TypeAlias

from lsprotocol import types
from pydantic import Field, field_validator

from ..editor import Client
from ..errors import ErrorCode, LsapError
from ..gateway import LspCall
from ..lsp import result_of
from ..models import Paged, Request, Row
from ..modes import Answer, Offer, mode
from ..position import EditorLocation
from ..report.files import one_per_language
from ..report.paging import PagingInfo, paged
from ..resolve import incomplete
from ..session.targets import encoding_of
from ..session.warm import Session
from ..symbols import KIND_NAMES
from ..workspace import language_of, path_of

METHOD = "workspace/symbol"
KINDS = set(KIND_NAMES.values())


class SearchRequest(Request):
    positional: ClassVar[str] = "query"
    mode: Literal["search"] = "search"
    query: Annotated[str, Field(min_length=1)]
    kinds: list[str] | None = None

    @field_validator("kinds", mode="before")
    @classmethod
    def _comma_separated(cls, kinds: object) -> object:
        """`kinds=class,function` from a command line is a list too."""
        if isinstance(kinds, str):
            return [k.strip() for k in kinds.split(",") if k.strip()]
        return kinds

    @field_validator("kinds")
    @classmethod
    def _known_kinds(cls, kinds: list[str] | None) -> list[str] | None:
        unknown = sorted(set(kinds or ()) - KINDS)
        if unknown:
            raise ValueError(f"unknown kinds {unknown}: use {', '.join(sorted(KINDS))}")
        return kinds


class Found(Row):
    name: str
    kind: str
    container: str | None
    path: str
    line: int | None


class SearchReport(Paged):
    query: str
    kinds: list[str] | None
    servers: list[str]
    lacking: list[str]  # what could not be searched, by language
    incomplete: list[str]  # servers whose index may not hold every symbol yet, and why
    external: int
    symbols: list[Found]


# Fence languages whose Neovim filetype is named differently.
_FILETYPES = {"tsx": "typescriptreact", "jsx": "javascriptreact"}


EDITOR = "_editor"  # a result's key for what only the editor's locations need


def filetype_of(path: Path) -> str:
    language = language_of(path)
    return _FILETYPES.get(language, language)


async def symbol_clients(session: Session) -> tuple[list[Client], list[str]]:
    """Servers that answer `workspace/symbol`, and what cannot be searched, by language.

    With nothing running yet, one file per language is opened so that servers start;
    otherwise a language no running server handles is named, not silently skipped.
    """
    running = await session.gateway.all_clients()
    clients = [c for c in running if c.supports(METHOD)]
    lacking: list[str] = []
    seeds = one_per_language(session.workspace, session.gateway.max_file_size)
    if not clients:
        for seed in seeds:
            try:
                clients.append((await session.servers.target(seed, METHOD)).client)
            except LsapError as error:
                lacking.append(error.message)
    elif all(c.filetypes for c in running):
        for seed in seeds:
            filetype = filetype_of(seed)
            serving = [c for c in running if filetype in c.filetypes]
            if not serving:
                lacking.append(
                    f"{filetype} files: no language server runs for them "
                    f"(open one, e.g. {session.workspace.display(seed)}, or use `outline`)"
                )
            elif not any(c.supports(METHOD) for c in serving):
                names = ", ".join(c.name for c in serving)
                lacking.append(f"{filetype} files: {names} lacks {METHOD} (use `outline`)")
    unique = {c.id: c for c in clients}
    return list(unique.values()), lacking


# Declarations an agent looks for before the variables that merely share the name.
_MINOR = {"variable", "field", "property", "constant", "key", "type_parameter"}


def rank(query: str, name: str, kind: str) -> tuple[int, bool]:
    """Exact names first (same case first), then prefixes, then names containing the query."""
    low, wanted = name.lower(), query.lower()
    if name == query:
        closeness = 0
    elif low == wanted:
        closeness = 1
    elif low.startswith(wanted):
        closeness = 2
    else:
        closeness = 3 if wanted in low else 4
    return closeness, kind in _MINOR


# A symbol as the report lists it (`_row`).
_Row: TypeAlias = dict[str, Any]


@mode("search", request=SearchRequest, report=SearchReport,
      summary="workspace symbols by name, with kind filters", method=METHOD, fallback="outline",
      workspace=True, offer=Offer(command="LsapSearch", picker=6, plug=True, values={"kinds": (
          "class", "function", "method", "interface", "variable", "constant", "enum", "module")}))
async def search(session: Session, request: SearchRequest) -> Answer:
    items: list[_Row] | None = session.kept.page(request)
    pages = _Pages()  # a later page of a kept list: no servers asked
    if items is None:
        items, pages = await _searched(session, request)
    return await paged(session, request, items, pages.build)


@dataclass
class _Pages:
    """What every page of one search shares: the servers asked, those lacking workspace
    symbols or still indexing, and the symbols outside the workspace (counted only)."""

    servers: list[str] = field(default_factory=list)
    lacking: list[str] = field(default_factory=list)
    unsure: list[str] = field(default_factory=list)
    external: int = 0

    async def build(self, request: SearchRequest, shown: list[_Row], paging: PagingInfo) -> Answer:
        report = SearchReport(query=request.query, kinds=request.kinds, servers=self.servers,
                              lacking=self.lacking, incomplete=self.unsure, external=self.external,
                              symbols=[Found(**{k: v for k, v in r.items() if k != EDITOR}) for r in shown],
                              **paging)
        locations: list[EditorLocation] = [
            {"path": r["path"], "line": r["line"] or 1, "character": r[EDITOR]["character"],
             "encoding": r[EDITOR]["encoding"], "text": f"{r['kind']} {r['name']}"}
            for r in shown
        ]
        return Answer(report, locations)


async def _searched(session: Session, request: SearchRequest) -> tuple[list[_Row], _Pages]:
    """Every server's workspace symbols for the query, of the kinds asked, inside the
    workspace, one row per (file, line, name), best ranked first."""
    clients, lacking = await symbol_clients(session)
    if not clients:
        raise LsapError(
            ErrorCode.UNSUPPORTED,
            "no attached server supports workspace/symbol"
            + (": " + "; ".join(lacking) if lacking else ""),
            hint="try `outline` on a directory, e.g. "
            '{"mode": "outline", "file_path": ".", "recursive": true}',
        )
    pages = _Pages([c.name for c in clients], lacking, await incomplete(session, clients))
    answers = await session.servers.lsp([LspCall(c.id, METHOD, {"query": request.query}) for c in clients])
    found: dict[tuple[str, int, str], _Row] = {}
    for client, answer in zip(clients, answers, strict=True):
        symbols = result_of(None if answer.error else answer.result, types.WorkspaceSymbolResponse, client.name, METHOD)
        for symbol in symbols or []:
            kind = KIND_NAMES.get(int(symbol.kind), "symbol")
            path = path_of(symbol.location.uri)
            if request.kinds and kind not in request.kinds:
                continue
            if not session.workspace.contains(path):
                pages.external += 1
                continue
            row = _row(session, client, symbol, kind, path)
            found[(row["path"], row["line"] or 0, symbol.name)] = row
    items = sorted(
        found.values(),
        key=lambda i: (rank(request.query, i["name"], i["kind"]), i["path"], i["line"] or 0),
    )
    return items, pages


def _row(session: Session, client: Client, symbol: types.SymbolInformation | types.WorkspaceSymbol, kind: str,
         path: Path) -> _Row:
    """A symbol as the report lists it, with where on its line it is, for the editor only (a
    `WorkspaceSymbol` may name its file alone: no line then)."""
    start = symbol.location.range.start if isinstance(symbol.location, types.Location) else None
    return {
        "name": symbol.name,
        "kind": kind,
        "container": symbol.container_name or None,
        "path": session.workspace.display(path),
        "line": start.line + 1 if start is not None else None,
        # Where on the line, for the editor only (in the server's encoding).
        EDITOR: {"character": start.character if start is not None else 0,
                 "encoding": encoding_of(client)},
    }
