"""What every capability needs, as small objects by concern (`Texts`, `Servers`, `Symbols`,
`Diagnostics`, `Kept`, composed by `Session`): text, servers, symbols and positions over
the editor, and the one warm path a capability runs on (`Session.run`).

It keeps the caches that make reports cheap (doc/architecture.md, Costs): symbol trees per
file version, readiness per server, so that per-item work happens once and only for items
shown; and the state of the answers given (pages, previewed renames, parsed anchors), each
bounded and keyed by what makes it valid (doc/architecture.md, Where state lives).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable, Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast

from cachetools import LRUCache, TTLCache

from .decode import location_units
from .diagnostics import SETTLE_LIMIT, DiagnosticMap, budget_of, from_lsp, from_vim, settled
from .diskwatch import CREATED, Basis, DiskWatch, fs_now_ns
from .errors import ErrorCode, LsapError, StaleText, invalid
from .filestate import DiskStamp
from .gateway import Attached, Client, Editor, LspAnswer, LspCall, ServerRequests
from .jsonvalue import Json, Jsonable, JsonObject, Params
from .locate.matcher import Match, Tier
from .lsp import FileEventData, Locations, Response, result_of
from .models import Locate, Request, Wait
from .modes import Answer, Capability, fallback
from .position import Document, Encoding, column_at
from .servers import registry, tsserver
from .surface import CLIENT, formatter_help, servers_help
from .symbols import SymbolTree, Units, build_tree
from .workspace import Workspace, language_of, path_of, remembered, uri_of

T = TypeVar("T")
S = TypeVar("S")


@dataclass(frozen=True)
class Target:
    """A file with its buffer and the server chosen to answer about it."""

    path: Path
    bufnr: int
    client: Client
    clients: tuple[Client, ...]
    partial: bool  # the server was still indexing when we gave up waiting
    # Set on a target taken from the cache: the text held for the file, which requests
    # computed from it are guarded by (`Servers.call` raises `StaleText` if it changed).
    doc: Document | None = field(default=None, compare=False)

    def client_for(self, method: str) -> Client | None:
        """The chosen server if it has `method`, else the attached server best for it."""
        if self.client.supports(method):
            return self.client
        return next(iter(ranked(self.clients, method)), None)


EVERY_SERVER = "*"  # `wait_for_clients`: every server the enabled configs attach to the file
OPEN_CREATED = 20  # code files created on disk since the last sync opened for their servers
# What a language's main analysis server answers: the more of these a server has, the more
# it knows of the code (basedpyright before `ruff server`, whose hover explains its codes).
ANALYSIS = frozenset({
    "textDocument/definition", "textDocument/references", "textDocument/documentSymbol",
    "textDocument/hover", "textDocument/rename", "textDocument/completion",
    "textDocument/typeDefinition", "textDocument/implementation", "textDocument/signatureHelp",
    "textDocument/prepareCallHierarchy", "workspace/symbol",
})
# What a dedicated tool answers best: the formatter, the server with the fewest of the above.
TOOLING = frozenset({"textDocument/formatting", "textDocument/rangeFormatting"})
# Seconds after which the servers attached are taken to be all that come, when nothing says
# which to expect (`Attached.known`) or an expected one did not come (its root did not
# match, it failed to start): the choice is then kept, not asked again at each request.
ATTACH_GRACE = 10.0


def ranked(clients: Sequence[Client], method: str) -> list[Client]:
    """The servers that have `method`, best first, by what the request needs: formatting
    from the formatter, everything else from the main analysis server; in attach order
    among equals. Decided per request from the servers attached now."""
    def analysis(client: Client) -> int:
        return len(ANALYSIS & client.methods)

    able = [c for c in clients if c.supports(method)]
    return sorted(able, key=analysis if method in TOOLING else (lambda c: -analysis(c)))


def all_came(clients: Sequence[Client]) -> bool:
    """Whether these are all the servers that will attach (a choice between them may be
    kept): every expected one came, or each has been attached for `ATTACH_GRACE`."""
    if not isinstance(clients, Attached) or clients.complete:
        return True
    return all((c.age() or ATTACH_GRACE) >= ATTACH_GRACE for c in clients)


@dataclass(frozen=True)
class Resolved:
    """Where an anchor points, with what the report needs to say about it."""

    target: Target
    doc: Document
    line: int  # 0-based
    column: int  # code points
    symbol_path: str | None  # enclosing symbol, dotted
    match: Match | None
    anchor: str  # the string form of what was asked
    note: str | None = None  # how a pasted line number was used ("line 17 is now line 19")
    overloads: str | None = None  # a symbol's overloads, when its implementation was taken

    @property
    def path(self) -> Path:
        return self.target.path

    @property
    def line_text(self) -> str:
        return self.doc.line(self.line)

    @property
    def approximate(self) -> bool:
        return self.match is not None and self.match.tier is not Tier.EXACT


@dataclass(frozen=True)
class Location:
    path: Path
    line: int  # 0-based
    col: int  # code points
    end_line: int
    end_col: int


@dataclass(frozen=True)
class Doubt:
    """Why an edit needs a human's yes, whatever the edit policy (a rename whose edits miss
    uses its server's own `references` finds): `note` is shown with the question under
    `edit_policy = 'ask'`; `refusal` is the error when no human is asked (`allow`, or no
    editor): the edit is not applied."""

    note: str
    refusal: LsapError


# Set by the approval hook when a human was asked about the edit and said yes (an `allow`
# policy asks nobody): `lsap hook` answers the harness's permission with it.
HUMAN_APPROVED: ContextVar[bool] = ContextVar("lsap_human_approved", default=False)


class EditApproval(Protocol):
    """Asked before an agent's edit is applied (summary, preview); True: apply it. A `doubt`
    is passed only when there is one (hooks that never see one take two arguments)."""

    def __call__(self, summary: str, preview: str, doubt: Doubt | None = None, /) -> Awaitable[bool]: ...


PULL = "textDocument/diagnostic"
SYMBOLS = "textDocument/documentSymbol"


#: Seconds without an answer after which a diagnostics pull is asked again, and how many
#: asks at most (`Session._pulled`).
PULL_REASK = 0.5
PULL_ASKS = 3


def pulled(client: Client) -> bool:
    """Whether a client's diagnostics are asked for (LSP pull, or tsserver's for vtsls)
    rather than waited for."""
    return client.supports(PULL) or tsserver.pulls(client)


async def allow_all(_summary: str, _preview: str, doubt: Doubt | None = None) -> bool:
    """No editor policy (the embedded daemon): every edit, except one in doubt, which no
    human is there to confirm."""
    if doubt is not None:
        raise doubt.refusal
    return True


# The notes of the request being answered about texts that differ from the disk, by path.
_NOTES: ContextVar[dict[Path, str] | None] = ContextVar("lsap_disk_notes", default=None)
# Inside `Session.run`: the held texts a warm request answered from that no guarded LSP
# call has confirmed yet, by path (None outside a run: nothing is taken on trust).
_HELD: ContextVar[dict[Path, Document] | None] = ContextVar("lsap_held_texts", default=None)
# Inside `Session.run`: what the files on disk were when the request began (edits.py proves
# the files a server's edit touches against it).
_BASIS: ContextVar[Basis | None] = ContextVar("lsap_basis", default=None)
# Inside `Session.run`: a server configuration file changed just before this answer, whose
# diagnostics are then only those published after the servers read it.
_RECONFIGURED: ContextVar[bool] = ContextVar("lsap_reconfigured", default=False)
# Inside `Diagnostics.deferred`: the diagnostics after an edit are the caller's to read.
_DEFERRED: ContextVar[bool] = ContextVar("lsap_diagnostics_deferred", default=False)


@contextmanager
def disk_notes() -> Iterator[dict[Path, str]]:
    """Collect, while one request runs, a note for each buffer it answered from whose file
    differs on disk (`Document.disk_differs`): the answer is the buffer's, and says so."""
    notes: dict[Path, str] = {}
    token = _NOTES.set(notes)
    try:
        yield notes
    finally:
        _NOTES.reset(token)


def disk_note(display: str, disk_differs: str) -> str:
    how = "was deleted" if disk_differs == "deleted" else "differs"
    return f"the buffer of {display} has unsaved changes and the file on disk {how}"


# Configuration files of the servers, at a root: a change reconfigures them (`reconfigure`).
CONFIG_FILES = registry.config_files()
PAGES = 64  # result lists kept for paging
ANCHORS = 1000  # anchor strings parsed, trusted as long as the file checks they rest on



@dataclass
class Texts:
    """Files' texts (the buffers', else the disk's), the notes an answer carries about them,
    and what the request being run holds and proves them against."""

    gateway: Editor
    workspace: Workspace

    async def documents(self, paths: Sequence[Path],
                        have: dict[Path, Document] | None = None) -> dict[Path, Document]:
        """Texts of files in one round trip; `have`: ones this request already read (kept)."""
        have = have or {}
        unique = [p for p in dict.fromkeys(paths) if p not in have]
        read = await self.gateway.read(unique) if unique else {}
        for doc in read.values():
            self.noted(doc)
        return {p: have[p] if p in have else read[p] for p in dict.fromkeys(paths)}

    def note(self, key: Path, text: str | None) -> None:
        """A note on the answer of the request being run (one per key), if any."""
        notes = _NOTES.get()
        if notes is not None and text:
            notes[key] = text

    def noted(self, doc: Document) -> None:
        """The note on the answer when `doc` is a buffer whose file differs on disk."""
        notes = _NOTES.get()
        if notes is not None and doc.disk_differs:
            notes[doc.path] = disk_note(self.workspace.display(doc.path), doc.disk_differs)

    async def document(self, path: Path) -> Document:
        return (await self.documents([path]))[path]

    @contextmanager
    def proving(self, basis: Basis) -> Iterator[None]:
        """Run a request that is not a mode's (the text format) against `basis`."""
        token = _BASIS.set(basis)
        try:
            yield
        finally:
            _BASIS.reset(token)

    def basis(self) -> Basis | None:
        """What the files on disk were when this request began (see `diskwatch.Basis`);
        None outside a request (nothing to prove against)."""
        return _BASIS.get()

    def changed_by_bridge(self, paths: Sequence[Path]) -> None:
        """The bridge itself just changed these texts (an edit applied, or rolled back): a held
        text of them is no reason to run the capability again, which would repeat the edit."""
        held = _HELD.get()
        if held is not None:
            for path in paths:
                held.pop(path, None)

    @property
    def warm(self) -> bool:
        """Whether held texts may be answered from (inside `run`, where they are checked)."""
        return _HELD.get() is not None

    async def locations(self, answer: Locations, client: Client,
                        texts: dict[Path, Document] | None = None) -> list[Location]:
        """A location answer (lsp.Locations) as Locations with code-point columns, in
        the server's order (a short answer: every file is read; a long one pages
        `decode.location_files` and converts the page with `located`).

        `texts`, if given: documents this request already read (reused), and it receives
        the ones read on the way, for `documents(have=)`.
        """
        found = location_units(answer)
        paths = dict.fromkeys(path for path, _ in found)
        docs = await self.documents([p for p in paths if self.workspace.contains(p)], have=texts)
        if texts is not None:
            texts.update(docs)
        return self.located(found, client, docs)

    def located(self, found: Sequence[tuple[Path, Units]], client: Client,
                docs: dict[Path, Document]) -> list[Location]:
        """Ranges in the server's units as Locations in code points, from the texts in `docs`
        (a file not read, outside the workspace: column 0)."""
        encoding = Servers.encoding(client)
        out = []
        for path, (first, start, last, end) in found:
            doc = docs.get(path)
            lines = doc.lines if doc else []
            out.append(Location(path, first, column_at(lines, first, start, encoding),
                                last, column_at(lines, last, end, encoding)))
        return out


@dataclass
class Servers:
    """The language servers: the one chosen per file and method (`target`), their
    readiness, what they were told of the disk and their configuration, and the LSP calls
    made to them (guarded by the texts held)."""

    gateway: Editor
    workspace: Workspace
    texts: Texts
    _ready: set[int] = field(default_factory=set)
    # Servers whose answers were seen to hold when asked twice (see references.settled).
    settled: set[int] = field(default_factory=set)
    _targets: LRUCache[tuple[Path, str, str | None], Target] = field(default_factory=lambda: LRUCache(1024))
    # What the servers were last told about the files on disk (see `sync_disk`).
    watch: DiskWatch = field(init=False)
    # The loaded file buffers at the last `sync_disk` call into Neovim (None: not known).
    _loaded: list[str] | None = field(default=None, init=False)
    # The servers' configuration files at the roots as last seen (`reconfigure`).
    _configs: dict[Path, DiskStamp | None] | None = None

    def __post_init__(self) -> None:
        self.watch = DiskWatch(self.workspace, lambda: self.gateway.max_file_size)
        self.watch.changes()  # the baseline: the files as the servers are reading them now

    async def reconfigure(self) -> bool:
        """Before every answer: when a configuration file of the servers at a root changed
        on disk (`CONFIG_FILES`; a few stats), every server is told (`workspace/
        didChangeWatchedFiles` of it and `workspace/didChangeConfiguration`), and this
        answer says so. The first call takes the baseline. Whether any had changed."""
        now = {path: DiskStamp.of(path) for root in self.workspace.roots for path in
               (root / name for name in CONFIG_FILES)}
        before, self._configs = self._configs, now
        if before is None:
            return False
        changed = {path: stamp for path, stamp in now.items() if stamp != before.get(path)}
        if not changed:
            return False
        events: list[FileEventData] = [
            {"uri": uri_of(path), "type": 3 if stamp is None else 1 if before.get(path) is None else 2}
            for path, stamp in changed.items()]
        told = await self.gateway.reconfigure(events)
        self._targets.clear()  # a server restarted for it would be another client
        notes = _NOTES.get()
        if notes is not None:
            servers = ", ".join(told) or "no server"
            for path in changed:
                notes[path] = (f"{self.workspace.display(path)} changed on disk: {servers} reconfigured "
                               "(workspace/didChangeConfiguration); this answer is after it")
        return True

    async def sync_disk(self, at_ns: int | None = None) -> Basis:
        """Before an answer that spans the workspace: the servers hear of every code file
        created, changed or deleted on disk since the last time, and every loaded buffer
        nobody is editing is brought up to date with its file (one call into Neovim). No
        call while the watcher saw nothing change and every buffer loaded at the last call
        is in a directory it watches (those outside its trees are added: a library's source
        a server pointed to); the answer says when changes are found by a scan. Returns what
        the servers were told (taken before any other request's look)."""
        changes = self.watch.changes()
        basis = self.watch.basis(fs_now_ns() if at_ns is None else at_ns)
        if (reason := self.watch.scanning) and (notes := _NOTES.get()) is not None:
            notes[self.workspace.root] = (
                f"disk changes are found by a scan of up to {self.watch.limit:,} code files per root "
                f"({reason}): a file past them changed on disk is not seen")
        if not changes and self.watch.quiet and self._loaded is not None and all(
                self.watch.covers(name) for name in self._loaded):
            return basis
        self._loaded = await self.gateway.sync(changes)
        for name in self._loaded or ():
            self.watch.cover(name)  # a buffer outside the watched trees: watched from now on
        # Code files created since: opened for their servers, so that the rename, move or
        # references asked next covers them (basedpyright adds a created file to the files
        # it renames in only on a timer, seconds later: a rename missed its new importer).
        created = [path for e in changes if e["type"] == CREATED and (path := path_of(e["uri"])).is_file()]
        if created:
            await self.attach(created[:OPEN_CREATED])
        return basis

    async def target(self, path: Path, method: str, server: str | None = None) -> Target:
        """Open the file for the servers (hidden buffer) and pick the server best for
        `method` among all those that attach to it (`ranked`), or the one named `server`.

        The choice is kept for the file only once every server expected has come (a choice
        made while they were still attaching would answer a hover from ruff for the
        daemon's whole life). Warm (inside `run`): when this file and method were answered
        before and its text is held, return at once with that text as `Target.doc`,
        costing no round trip; the calls computed from it are then guarded (a warm request
        in one round trip instead of four).
        """
        key = (path, method, server)
        held_texts = _HELD.get()
        cached = self._targets.get(key) if held_texts is not None else None
        held = self.gateway.held(path) if cached else None
        alive = cached is not None and cached.client.id not in self.gateway.gone
        if cached and held and held.bufnr == cached.bufnr and alive and held_texts is not None:
            self.texts.noted(held)
            held_texts.setdefault(path, held)
            if (basis := _BASIS.get()) is not None:
                basis.opened.add(str(path))
            return replace(cached, doc=held)
        if not path.is_file() and not await self._unsaved(path):
            raise LsapError(
                ErrorCode.NOT_FOUND,
                f"no such file: {self.workspace.display(path)}",
                hint="paths are relative to the workspace root " + str(self.workspace.root),
            )
        bufnr = await self.gateway.open(path)
        if (basis := _BASIS.get()) is not None:
            basis.opened.add(str(path))  # the servers compute on this buffer (edits.py)
        clients = await self.gateway.wait_for_clients(bufnr, EVERY_SERVER)
        keep = all_came(clients)
        if clients and not ranked(clients, method):
            # A method registered dynamically arrives just after attach: waited for (bounded).
            clients, keep = await self.gateway.wait_for_clients(bufnr, method), False
        able = self.named(ranked(clients, method), server, method, path)
        if not able:
            raise self.unsupported(method, clients, path)
        client = able[0]
        partial = not await self.ready([client])
        target = Target(path, bufnr, client, tuple(clients), partial)
        if keep and not partial:
            self._targets[key] = target
        return target

    def named(self, able: list[Client], server: str | None, method: str, path: Path) -> list[Client]:
        """The servers of `able` named `server` (all when None); none: a `not_found` that
        lists those that could answer."""
        if server is None:
            return able
        named = [c for c in able if c.name == server]
        if not named:
            names = ", ".join(c.name for c in able) or "none"
            raise LsapError(
                ErrorCode.NOT_FOUND,
                f"no server named {server!r} offers {method} for "
                f"{self.workspace.display(path)} (those that do: {names})",
                hint="name one of those servers in `server`, or leave `server` out for all",
            )
        return named

    async def ready(self, clients: Sequence[Client]) -> bool:
        """Wait (bounded) until these servers have finished their start-up work, once per
        server; False when some were still busy when the wait ended (answers may be partial)."""
        waiting = [c.id for c in clients if c.id not in self._ready]
        if not waiting:
            return True
        idle = await self.gateway.wait_until_idle(waiting)
        if idle:
            self._ready.update(waiting)
        return idle

    async def _unsaved(self, path: Path) -> bool:
        """Whether a buffer with unsaved changes holds a file that is not on disk (the
        human's text: it is answered from, with a note)."""
        try:
            return (await self.texts.document(path)).bufnr is not None
        except LsapError:
            return False

    async def reader(self, path: Path, method: str) -> Client:
        """A server for `path` that has `method`, without opening the file when one already
        answers for another file of its language: a file nobody has open is then read from
        disk by the server, and a 20,000-line file costs a parse, not a full analysis."""
        for (known, _, server), target in self._targets.items():
            client = target.client_for(method)
            if client is not None and server is None and client.id not in self.gateway.gone and (
                    language_of(known) == language_of(path)):
                return client
        return (await self.target(path, method)).client

    async def open_workspace(self, files: int = 2000) -> list[str]:
        """Start the servers before anyone asks (the embedded daemon does at its start): the
        first code file of each language under the root is opened for them, and they are
        waited for (bounded) until their indexing is over, so that the first request finds
        them ready. Returns the names of the servers that were."""
        firsts: dict[str, Path] = {}
        for path in self.workspace.walk(self.workspace.root, limit=files).files:
            firsts.setdefault(language_of(path), path)
        clients = await self.attach(list(firsts.values()))
        if not clients or not await self.gateway.wait_until_idle(list(clients)):
            return []
        self._ready.update(clients)
        return sorted({c.name for c in clients.values()})

    async def attach(self, paths: Sequence[Path]) -> dict[int, Client]:
        """Open files for their servers (hidden buffers; one over the size limit is left
        out) and wait (bounded) until every server their enabled configs attach has come
        (each has been sent the file's `didOpen`). The clients, by id."""
        opened: list[int] = []
        for path in paths:
            with contextlib.suppress(LsapError):
                opened.append(await self.gateway.open(path))
        expected = await self.gateway.servers_expected(opened) if opened else []
        found = await asyncio.gather(*(self.gateway.wait_for_clients(bufnr, EVERY_SERVER)
                                       for bufnr, server in zip(opened, expected, strict=True) if server))
        return {c.id: c for attached in found for c in attached}

    def unsupported(self, method: str, clients: Sequence[Client], path: Path) -> LsapError:
        name = self.workspace.display(path)
        if not clients:
            return LsapError(
                ErrorCode.UNSUPPORTED,
                f"no language server is attached to {name}",
                hint=f"start a server for this file type ({servers_help()})",
            )
        lacking = ", ".join(f"{c.name} lacks {method}" for c in clients)
        formatting = method in ("textDocument/formatting", "textDocument/rangeFormatting")
        return LsapError(
            ErrorCode.UNSUPPORTED,
            f"no attached server supports {method} for {name}: {lacking}",
            hint=formatter_help() if formatting else f"try the `{fallback(method, clients)}` mode instead",
        )

    async def call(self, target: Target, method: str, params: Mapping[str, Jsonable],
                   answer: type[Response[T]]) -> T:
        """One LSP request about the target's file (see `lsp`), its answer as lsprotocol types
        it: `answer` is the method's response message (`types.DefinitionResponse`, …; lsp.py),
        an answer of another shape the server's error. Its error is a `server_error`."""
        return result_of(await self.call_json(target, method, params), answer, target.client.name, method)

    async def call_json(self, target: Target, method: str, params: Mapping[str, Jsonable],
                        packed: bool = False) -> Json:
        """`call`, its answer left as JSON: for answers of thousands of items read through the
        TypedDicts and checks of `decode.py` (lsp.py says what structuring them costs), and
        WorkspaceEdits the edit engine checks itself. `packed`: a location list, answered
        packed (see `decode.location_files`)."""
        found: Json = (await self.answer(target, method, params, packed)).result
        return found

    async def answer(self, target: Target, method: str, params: Mapping[str, Jsonable],
                     packed: bool = False) -> LspAnswer:
        """`call_json`'s answer whole: its JSON result and what the server told the human
        meanwhile (`said`: a refusal's reason). Its error is a `server_error` naming both."""
        answer = (await self.lsp([LspCall(target.client.id, method, params, target.bufnr, packed)], target))[0]
        if answer.error:
            raise LsapError(
                ErrorCode.SERVER_ERROR,
                f"{target.client.name} failed {method}: {answer.error.get('message', answer.error)}"
                + "".join(f"; it said: {s.strip()}" for s in answer.said),
            )
        return answer

    async def lsp(self, calls: list[LspCall], target: Target | None = None,
                  taking: ServerRequests | None = None) -> list[LspAnswer]:
        """Several LSP requests in one round trip, answers in order. Computed from `target`'s
        held text (a warm request): guarded by it, so a changed buffer sends nothing.
        `taking`: the commands among them are the bridge's, and it answers what their servers
        ask back meanwhile (see `EditorGateway.lsp`)."""
        guard = target.doc if target is not None else None
        answers = await self.gateway.lsp(calls, guard=guard, taking=taking)
        held = _HELD.get()
        if guard is not None and held is not None and held.get(guard.path) == guard:
            del held[guard.path]  # confirmed current by the guard
        return answers

    @staticmethod
    def encoding(client: Client) -> Encoding:
        return cast(Encoding, client.offset_encoding if client.offset_encoding in
                    ("utf-8", "utf-16", "utf-32") else "utf-16")

    def position_params(self, target: Target, doc: Document, line: int, col: int) -> Params:
        character = doc.character(line, col, self.encoding(target.client))
        return {
            "textDocument": {"uri": uri_of(target.path)},
            "position": {"line": line, "character": character},
        }


@dataclass
class Kept:
    """What the answers given left for the requests after them (pages, previewed renames,
    listed code actions, parsed anchors, check records), each bounded and keyed by what
    makes it valid (doc/architecture.md, Where state lives)."""

    workspace: Workspace
    # Anchors resolved on held texts, for warm requests (see `locate.resolve.resolve`).
    resolved: TTLCache[tuple[Hashable, ...], Resolved] = field(default_factory=lambda: remembered(256))
    # Result lists by `pagination_id`, with the mode and fields that made them (see
    # `report.paging`).
    pages: LRUCache[str, tuple[str, JsonObject, list[Any]]] = field(default_factory=lambda: LRUCache(PAGES))
    # Anchor strings as parsed: agents send one anchor to several modes in a row.
    anchors: TTLCache[str, Locate] = field(default_factory=lambda: remembered(ANCHORS))
    # The state a capability keeps, by the type it declares, which this layer cannot name:
    # previewed renames (capabilities/rename.Renames), listed code actions (actions.Actions),
    # what the last `check` saw per agent (capabilities/check.Checks).
    _owned: dict[type, object] = field(default_factory=dict)

    def owned(self, kind: type[S]) -> S:
        """The capability state of type `kind`, made empty on first use."""
        found = self._owned.get(kind)
        if not isinstance(found, kind):
            found = self._owned[kind] = kind()
        return found

    def page(self, request: Request) -> list[Any] | None:
        """The whole result list a `pagination_id` names, kept when its first page was
        shown; None when it is unknown or forgotten (the answer is computed again). An id
        of another mode's answer is an `invalid_request`."""
        page_id = request.pagination_id
        kept = self.pages.get(page_id) if page_id else None
        if kept is None:
            return None
        mode, fields, items = kept
        if mode != request.mode:
            raise invalid(
                f"pagination_id {page_id!r} is of a {mode} answer, not of {request.mode}",
                hint=f"send it with the {mode} request it came from, or leave `pagination_id` out",
            )
        now = request.result_fields()
        same = self._same_place
        differ = [name for name in dict.fromkeys([*fields, *now]) if not same(fields.get(name), now.get(name))]
        if differ:
            shown = "; ".join(f"{name}: {json.dumps(fields.get(name))} there, {json.dumps(now.get(name))} here"
                              for name in differ)
            raise invalid(
                f"pagination_id {page_id!r} continues another {mode} request: {shown}",
                hint="send it with the same fields as the request it came from (only start_index, "
                     "max_items and the format may change), or leave `pagination_id` out",
            )
        return items

    def _same_place(self, there: object, here: object) -> bool:
        """Two values of a request field alike, paths compared as the files they name
        (`big/` and `big`, as the CLI and `:Lsap` write one path)."""
        if isinstance(there, dict) and isinstance(here, dict):
            return there.keys() == here.keys() and all(self._same_place(there[k], here[k]) for k in there)
        if isinstance(there, str) and isinstance(here, str) and there != here and "/" in there + here:
            with contextlib.suppress(LsapError):
                return self.workspace.resolve(there) == self.workspace.resolve(here)
        return bool(there == here)


@dataclass
class Symbols:
    """Files' symbol trees, cached per file version."""

    gateway: Editor
    texts: Texts
    servers: Servers
    _trees: LRUCache[Path, tuple[str, SymbolTree]] = field(default_factory=lambda: LRUCache(4096))

    async def of(
        self, paths: Sequence[Path], client: Client, docs: dict[Path, Document]
    ) -> dict[Path, SymbolTree]:
        """Symbol trees of many files, cached per file version: the servers are asked about
        all of them in one round trip (and once more, together, about files they did not
        know, after opening those one by one)."""
        out: dict[Path, SymbolTree] = {}
        missing = []
        for path in dict.fromkeys(paths):
            cached = self._trees.get(path)
            if cached and cached[0] == docs[path].version:
                out[path] = cached[1]
            elif docs[path].bufnr is None and self.gateway.oversized(path) is not None:
                out[path] = SymbolTree([])  # a server would read all of it: not asked
            else:
                missing.append(path)
        if not missing:
            return out
        calls = [
            LspCall(client.id, "textDocument/documentSymbol",
                    {"textDocument": {"uri": uri_of(p)}}, docs[p].bufnr, packed=True)
            for p in missing
        ]
        answers = await self.servers.lsp(calls)
        retry = []
        for path, answer in zip(missing, answers, strict=True):
            # An error, or nothing for a file not loaded: the server does not know the file
            # (it needs didOpen, or the file appeared after the server started).
            if answer.error or (not answer.result and docs[path].bufnr is None):
                retry.append(path)
                continue
            out[path] = self._cache(path, docs[path], answer.result, client)
        if retry:
            # Open them as hidden buffers (a call each), then ask about all of them at once.
            bufnrs = [await self.gateway.open(path) for path in retry]
            fresh = await self.texts.documents(retry)
            method = "textDocument/documentSymbol"
            answers = await self.servers.lsp([
                LspCall(client.id, method, {"textDocument": {"uri": uri_of(path)}}, bufnr, packed=True)
                for path, bufnr in zip(retry, bufnrs, strict=True)
            ])
            for path, answer in zip(retry, answers, strict=True):
                result = None if answer.error else answer.result
                out[path] = self._cache(path, fresh[path], result, client)
        return out

    def _cache(self, path: Path, doc: Document, result: object, client: Client) -> SymbolTree:
        tree = build_tree(result, doc.lines, Servers.encoding(client))
        self._trees[path] = (doc.version, tree)
        return tree

    async def tree(self, target: Target, doc: Document) -> SymbolTree:
        """The file's symbols from the server best for them, whichever answers the request
        (a format of `messy.py:f` is ruff's, its symbol `f` basedpyright's); none: empty."""
        client = target.client_for(SYMBOLS)
        if client is None:
            return SymbolTree([])
        return (await self.of([target.path], client, {target.path: doc}))[target.path]


EDITED_LIMIT = 1000  # files `Edited` keeps per asker (the oldest noted go first)


@dataclass
class Edited:
    """The files each asker's edits touched since its last answered `check`: written by the
    bridge's edits (rename, move, code actions, format, undo, the text format's commands:
    `edits.apply_workspace_edit`) and the harness's edits the hooks recorded, and the files
    an edit's answer named pending (`Diagnostics.after_edit`). `check` compares them always,
    also when it is the asker's first, which records the baseline of everything else: else
    the breaks of an edit made before it would be recorded as the baseline, never reported
    (issue 44). Per asker (its connection's name, as `check`'s records), in memory: the
    session's edits."""

    _by: dict[str | None, dict[Path, int]] = field(default_factory=dict)
    _count: int = 0

    def note(self, paths: Iterable[Path]) -> None:
        """The asking agent's edit touched these files (written, or its answer left them pending)."""
        files = self._by.setdefault(CLIENT.get(), {})
        for path in paths:
            self._count += 1
            files.pop(path, None)  # the newest note last, and its number: see `compared`
            files[path] = self._count
        while len(files) > EDITED_LIMIT:
            del files[next(iter(files))]

    def since(self, who: str | None) -> tuple[int, list[Path]]:
        """`who`'s files noted since its last answered check, and the mark to pass `compared`."""
        return self._count, list(self._by.get(who, {}))

    def compared(self, who: str | None, mark: int, paths: Iterable[Path]) -> None:
        """An answered check of `who`'s, begun at `mark`, compared these files: forgotten,
        unless an edit touched them again since it began."""
        files = self._by.get(who, {})
        for path in paths:
            if files.get(path, mark + 1) <= mark:
                del files[path]


@dataclass
class Diagnostics:
    """Files' diagnostics as they are now, pulled or waited for."""

    gateway: Editor
    workspace: Workspace
    texts: Texts
    servers: Servers
    edited: Edited = field(default_factory=Edited)

    @contextmanager
    def deferred(self) -> Iterator[None]:
        """Inside, an edit's diagnostics after are the caller's: it reads them once, after
        all its edits (the text format after its commands), so a mode's edit report
        (`actions.applied`) waits for none and shows none."""
        token = _DEFERRED.set(True)
        try:
            yield
        finally:
            _DEFERRED.reset(token)

    @property
    def is_deferred(self) -> bool:
        return _DEFERRED.get()

    async def _pulled(self, calls: list[LspCall], until: float | None = None) -> list[LspAnswer]:
        """The answers to diagnostics pulls, asked again beside the first ask when it has no
        answer within `PULL_REASK` (up to `PULL_ASKS` asks; the first answer counts, the
        others are cancelled): a pull a server lost (ruff, once in 83 calls on a file being
        typed in) costs half a second, not the whole timeout, while a slow one keeps its
        first ask running. `until` (an edit's `diagnostics_wait`, a `time.monotonic()`
        deadline): no answer by then is an error answer for each call, and the asks go."""
        if not calls:
            return []
        asks: list[asyncio.Task[list[LspAnswer]]] = []
        try:
            while True:
                if len(asks) < PULL_ASKS:
                    asks.append(asyncio.ensure_future(self.gateway.lsp(calls)))
                pending = [a for a in asks if not a.done()]
                if not pending:  # every ask failed: the first one's error
                    return asks[0].result()
                bound = PULL_REASK if len(asks) < PULL_ASKS else None
                if until is not None:
                    left = until - time.monotonic()
                    if left <= 0:
                        return [LspAnswer(error={"message": "no answer within the edit's diagnostics_wait"})
                                for _ in calls]
                    bound = left if bound is None else min(bound, left)
                done, _ = await asyncio.wait(pending, timeout=bound, return_when=asyncio.FIRST_COMPLETED)
                for ask in done:
                    if ask.exception() is None:
                        return ask.result()
        finally:
            for ask in asks:
                if ask.done() and not ask.cancelled():
                    ask.exception()  # seen: an ask that failed beside one that answered
                ask.cancel()

    async def after_edit(self, paths: Sequence[Path], structural: bool = False,
                         wait: Wait | None = None) -> DiagnosticMap:
        """The diagnostics after the bridge's own edit, once it is written and journalled: the
        one wait of every edit's "Diagnostics after" (rename, move, code actions, format, the
        text format's commands). Each server's analysis of the text written (`of(after_sync=True)`),
        after files came or went (`structural`) until they hold (`settled`), for at most
        `wait` seconds (the request's `diagnostics_wait`, else the session's; "settled": every
        bound of the look). A file not confirmed by then is `pending`, with the reason: the
        edit's answer names it and the `check` that compares it, which it is noted for
        (`Edited`: also the asker's first check, a baseline, compares it)."""
        budget = budget_of(self.gateway.diagnostics_wait if wait is None else wait)
        start = time.monotonic()
        until = None if budget is None else start + budget
        found, held = await settled(lambda: self.of(paths, after_sync=True, until=until), structural, until)
        if not held and until is not None and until < start + SETTLE_LIMIT:  # the wait, not the look, ended it
            for path in found:
                found.pending.setdefault(path, "its diagnostics had not held yet after files were created or "
                                         f"deleted (the edit waits {budget:g} s for them)")
        self.edited.note(found.pending)
        return found

    async def of(self, paths: Sequence[Path], after_sync: bool = False, until: float | None = None) -> DiagnosticMap:
        """Diagnostics of files as they are now (unsaved changes included).

        Pulled (`textDocument/diagnostic`) from servers that offer it; otherwise the pushed
        ones, once the server has published for the buffer's latest change (bounded wait).
        `after_sync`: a file counts as analysed only once each pushing server's pass over
        the files is over (no work in progress, nothing published for 2 s) and, after files
        changed on disk (`sync_disk`), it published for the file after it had read the
        change (see `when_diagnosed`). Files no server has analysed in time are in
        `.pending` with the reason, not hidden. `until`: an edit's deadline (`after_edit`).
        """
        out = DiagnosticMap()
        opened: dict[Path, int] = {}
        for path in dict.fromkeys(paths):
            try:
                opened[path] = await self.gateway.open(path)
            except LsapError as refused:  # over the size limit: named, not opened
                out[path] = []
                out.pending[path] = refused.message
        wanted, bufnrs = list(opened), list(opened.values())
        if not wanted:
            return out
        expected = await self.gateway.servers_expected(bufnrs)

        async def attach(bufnr: int, server: bool) -> tuple[int, list[Client]]:
            # A file no server is configured for is not worth the attach timeout.
            # Every server that will attach (not the first there: ruff before basedpyright
            # on a cold start, whose diagnostics a baseline would then lack).
            return bufnr, await self.gateway.wait_for_clients(bufnr, EVERY_SERVER) if server else []

        found = await asyncio.gather(*(attach(b, e) for b, e in zip(bufnrs, expected, strict=True)))
        attached = dict(zip(wanted, found, strict=True))
        docs = await self.texts.documents(wanted)
        pulls: list[tuple[Path, Client]] = []
        waits: list[Path] = []
        for path, (_bufnr, clients) in attached.items():
            out[path] = []
            if not clients:
                out.pending[path] = "no language server is attached"
            pulls += [(path, c) for c in clients if pulled(c)]
            if any(not pulled(c) for c in clients):
                waits.append(path)
        calls = [
            tsserver.calls(c, p, attached[p][0]) if tsserver.pulls(c)
            else [LspCall(c.id, PULL, {"textDocument": {"uri": uri_of(p)}}, attached[p][0])]
            for p, c in pulls
        ]
        flat, pushed = await asyncio.gather(
            self._pulled([call for each in calls for call in each], until),
            self.gateway.pushed_diagnostics(
                [attached[p][0] for p in waits], list({c.id for _, c in pulls}),
                after_sync or _RECONFIGURED.get(), until),
        )
        answers = []
        for (_path, client), each in zip(pulls, calls, strict=True):
            mine, flat = flat[:len(each)], flat[len(each):]
            answers.append(tsserver.report(mine) if tsserver.pulls(client) else mine[0])
        for (path, client), answer in zip(pulls, answers, strict=True):
            result = answer.result if isinstance(answer.result, dict) else {}
            if answer.error or result.get("kind") not in ("full", None):
                reason = (answer.error or {}).get("message") or "no full report"
                out.pending[path] = f"{client.name} did not report diagnostics ({reason})"
                continue
            lines, encoding = docs[path].lines, Servers.encoding(client)
            items = result.get("items") or []
            out[path] += [from_lsp(item, lines, encoding, client.name, client.id, self.workspace.roots)
                          for item in items]
        for path in waits:
            entry = pushed.get(attached[path][0]) or {}
            out[path] += [from_vim(item, docs[path].lines, self.workspace.roots)
                          for item in entry.get("items") or []]
            names = ", ".join(c.name for c in attached[path][1] if not pulled(c))
            if entry.get("quiet"):
                out.quiet[path] = f"{names} published nothing new since the file changed"
            elif not entry.get("analysed"):
                out.pending[path] = f"{names} had not published diagnostics for this text yet" + (
                    " (nor re-analysed it since the files changed)" if after_sync else "")
        for items in out.values():
            items.sort(key=lambda d: (d.line, d.col))
        return out


@dataclass
class Session:
    """What every capability needs, by concern: `texts`, `servers` (and their targets),
    `symbols`, `diagnostics`, and what earlier answers `kept`; and the one warm path a
    capability runs on (`run`)."""

    gateway: Editor
    workspace: Workspace
    # Asked before an agent's edit is applied (summary, preview); the edit policy lives behind it.
    approve_edit: EditApproval = allow_all
    texts: Texts = field(init=False)
    servers: Servers = field(init=False)
    symbols: Symbols = field(init=False)
    diagnostics: Diagnostics = field(init=False)
    kept: Kept = field(init=False)
    # The files each asker's edits touched since its last answered check (`check` compares them).
    edited: Edited = field(init=False)

    def __post_init__(self) -> None:
        # The gateway confines every path it opens or reads to this session's roots.
        self.gateway.workspace = self.workspace
        self.texts = Texts(self.gateway, self.workspace)
        self.servers = Servers(self.gateway, self.workspace, self.texts)
        self.symbols = Symbols(self.gateway, self.texts, self.servers)
        self.edited = Edited()
        self.diagnostics = Diagnostics(self.gateway, self.workspace, self.texts, self.servers, self.edited)
        self.kept = Kept(self.workspace)

    async def run(self, capability: Capability, request: Request) -> Answer:
        """Answer a request with its capability: the one way every mode runs.

        Inside a run the session answers warm: a file and method answered before, whose
        text it holds, costs no round trip (`target`), and every LSP call computed from a
        held text is guarded by its changedtick (`call`, `lsp`); a held text no call
        confirmed is checked once at the end. If the human edited that buffer meanwhile,
        its file changed on disk, or its server exited, nothing was sent and the capability
        runs once more, on fresh text and a live (restarted) server; a second stale text
        is a `conflict` (see `failures.as_error`). Per capability, so a batch never repeats
        others. A mode that spans the workspace has the servers hear of the disk first
        (unless the request says the disk is as the bridge's edits left it, `Request.syncs_disk`).
        """
        return await self.run_warm(lambda: capability.run(self, request),
                                   capability.workspace and request.syncs_disk)

    async def run_warm(self, work: Callable[[], Awaitable[T]], workspace: bool = False) -> T:
        """Run `work` on the warm path, as `run` runs a mode: for what the text format does
        that no mode does (open a File block, follow its anchored lines through a command's
        step) and the cursor of a `:Lsap` command. `workspace`: the servers
        hear of the disk first."""
        if await self.servers.reconfigure():
            _RECONFIGURED.set(True)  # this answer's diagnostics: after the servers re-read it
        at = fs_now_ns()
        basis = await self.servers.sync_disk(at) if workspace else Basis(at)
        token = _BASIS.set(basis)
        try:
            try:
                return await self._held_run(work)
            except StaleText:
                pass
            return await self._held_run(work)
        finally:
            _BASIS.reset(token)

    async def _held_run(self, work: Callable[[], Awaitable[T]]) -> T:
        held: dict[Path, Document] = {}
        token = _HELD.set(held)
        try:
            try:
                answer = await work()
            except StaleText:
                raise
            except Exception:  # an error found on a held text (an anchor gone) may be stale too
                await self._confirm(held)
                raise
            await self._confirm(held)
            return answer
        finally:
            _HELD.reset(token)

    async def _confirm(self, held: dict[Path, Document]) -> None:
        """Whether the held texts an answer came from, that no guarded call confirmed, are
        still the buffers' (text and disk state, as the guard checks): else `StaleText`."""
        if not held:
            return
        now = await self.gateway.read(list(held))
        changed = [path for path, doc in held.items()
                   if (now[path].version, now[path].disk_differs) != (doc.version, doc.disk_differs)]
        if changed:
            raise StaleText(f"{', '.join(map(str, changed))} changed while the request ran")
