"""The language servers as a request uses them: the one chosen per file and method
(`Servers.target`), their readiness, what they were told of the disk and of their
configuration files, and the LSP calls made to them (guarded by the texts held).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from cachetools import LRUCache

from ..diskwatch import CREATED, Basis, DiskWatch, fs_now_ns
from ..editor import Client, Editor, ServerRequests
from ..errors import ErrorCode, LsapError
from ..filestate import DiskStamp
from ..gateway import LspAnswer, LspCall
from ..jsonvalue import Json, Jsonable, Params
from ..lsp import FileEventData, Response, decoded, result_of
from ..modes import fallback
from ..position import Document
from ..servers import registry
from ..surface import formatter_help, servers_help
from ..workspace import Workspace, language_of, linked_root_note, path_of, uri_of
from .targets import EVERY_SERVER, Target, all_came, encoding_of, ranked
from .texts import Texts

OPEN_CREATED = 20  # code files created on disk since the last sync opened for their servers


# Inside `Session.run`: a server configuration file changed just before this answer, whose
# diagnostics are then only those published after the servers read it.
_RECONFIGURED: ContextVar[bool] = ContextVar("lsap_reconfigured", default=False)


# Configuration files of the servers, at a root: a change reconfigures them (`reconfigure`).
CONFIG_FILES = registry.config_files()

T = TypeVar("T")


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
    # The servers' configuration files at the roots (`CONFIG_FILES`), and their stamps as
    # last seen, in that order (`reconfigure`).
    _config_paths: tuple[Path, ...] = field(init=False)
    _configs: tuple[DiskStamp | None, ...] | None = None

    def __post_init__(self) -> None:
        self.watch = DiskWatch(self.workspace, lambda: self.gateway.max_file_size)
        self.watch.changes()  # the baseline: the files as the servers are reading them now
        self._config_paths = tuple(root / name for root in self.workspace.roots for name in CONFIG_FILES)

    async def reconfigure(self) -> bool:
        """Before every answer: when a configuration file of the servers at a root changed
        on disk (`CONFIG_FILES`; a few stats), every server is told (`workspace/
        didChangeWatchedFiles` of it and `workspace/didChangeConfiguration`), and this
        answer says so. The first call takes the baseline. Whether any had changed.

        Every request pays for it: the paths are made once, and the stamps compared as one
        tuple (doc/architecture.md, Costs)."""
        now = tuple(map(DiskStamp.of, self._config_paths))
        before, self._configs = self._configs, now
        if before is None or now == before:
            return False
        changed = {path: (was, stamp) for path, was, stamp in zip(self._config_paths, before, now, strict=True)
                   if stamp != was}
        events: list[FileEventData] = [
            {"uri": uri_of(path), "type": 3 if stamp is None else 1 if was is None else 2}
            for path, (was, stamp) in changed.items()]
        told = await self.gateway.reconfigure(events)
        self._targets.clear()  # a server restarted for it would be another client
        servers = ", ".join(told) or "no server"
        for path in changed:
            self.texts.note(path, f"{self.workspace.display(path)} changed on disk: {servers} reconfigured "
                            "(workspace/didChangeConfiguration); this answer is after it")
        _RECONFIGURED.set(True)  # this answer's diagnostics: after the servers re-read it
        return True

    @property
    def reconfigured(self) -> bool:
        """Whether a configuration file changed just before the answer being run
        (`reconfigure`): its diagnostics are then only those published after the servers
        read it."""
        return _RECONFIGURED.get()

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
        if reason := self.watch.scanning:
            self.texts.note(self.workspace.root, (
                f"disk changes are found by a scan of up to {self.watch.limit:,} code files per root "
                f"({reason}): a file past them changed on disk is not seen"))
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
        warm = self.texts.warm
        cached = self._targets.get(key) if warm else None
        held = self.gateway.held(path) if cached else None
        alive = cached is not None and cached.client.id not in self.gateway.gone
        if cached and held and held.bufnr == cached.bufnr and alive and warm:
            self.texts.noted(held)
            self.texts.note(Path(cached.client.name), linked_root_note(cached.client.name, cached.client.root_dir))
            self.texts.hold(path, held)
            if (basis := self.texts.basis()) is not None:
                basis.opened.add(str(path))
            return replace(cached, doc=held)
        if not path.is_file() and not await self._unsaved(path):
            raise LsapError(
                ErrorCode.NOT_FOUND,
                f"no such file: {self.workspace.display(path)}",
                hint="paths are relative to the workspace root " + str(self.workspace.root),
            )
        bufnr = await self.gateway.open(path)
        if (basis := self.texts.basis()) is not None:
            basis.opened.add(str(path))  # the servers compute on this buffer (edits/files.py)
        clients = await self.gateway.wait_for_clients(bufnr, EVERY_SERVER)
        keep = all_came(clients)
        if clients and not ranked(clients, method):
            # A method registered dynamically arrives just after attach: waited for (bounded).
            clients, keep = await self.gateway.wait_for_clients(bufnr, method), False
        able = self.named(ranked(clients, method), server, method, path)
        if not able:
            raise self.unsupported(method, clients, path)
        client = able[0]
        self.texts.note(Path(client.name), linked_root_note(client.name, client.root_dir))
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

    async def read(self, target: Target, method: str, params: Mapping[str, Jsonable],
                   read: Callable[[Json], T], packed: bool = False) -> T:
        """`call` for answers of many items: decoded by `read`, a hand-written decoder of
        decode.py that makes lsprotocol's classes directly (lsp.py says what cattrs would
        cost), an answer of another shape the server's error. `packed`: see `LspCall`."""
        return decoded(read, await self.call_json(target, method, params, packed), target.client.name, method)

    async def call_json(self, target: Target, method: str, params: Mapping[str, Jsonable],
                        packed: bool = False) -> Json:
        """`call`, its answer left as JSON: for `read`'s decoders, and WorkspaceEdits the edit
        engine checks itself. `packed`: a location list or document symbols, answered packed
        (see `LspCall`)."""
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
        if guard is not None:
            self.texts.confirmed(guard)  # current, as the guard checked
        return answers


    def position_params(self, target: Target, doc: Document, line: int, col: int) -> Params:
        character = doc.character(line, col, encoding_of(target.client))
        return {
            "textDocument": {"uri": uri_of(target.path)},
            "position": {"line": line, "character": character},
        }
