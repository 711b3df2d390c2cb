"""The editor gateway: the service's one way to Neovim (doc/architecture.md, Layers).

The session and capabilities ask it, through the `Editor` protocol, for text, clients and
LSP answers; it turns those into calls by name of `lua/lsap/rpc.lua` (the transport,
`lua/lsap/transport/`), which answers asynchronously through `vim.rpcnotify`, so that
Neovim's main loop is never held while a language server thinks. (The hosts' start-up
code, host.py and embedded.py, use the RPC connection directly before a service exists.)
Unit tests implement `Editor` with fakes.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypedDict, cast

from cachetools import LRUCache

from .editor import DECISIONS, Applied, Attached, Client, Decision, EditorState, Pushed, ServerRequests
from .errors import ClientGone, ErrorCode, LsapError, StaleText
from .filestate import DiskStamp, read_disk
from .jsonvalue import Json, Jsonable, JsonObject, Packable, Params, items, obj, to_float, to_int
from .lsp import FileEventData
from .lspcall import LspAnswer as LspAnswer
from .lspcall import LspCall as LspCall
from .lspcall import response_error
from .models import DEFAULT_MAX_TOKENS, DIAGNOSTICS_WAIT, Wait
from .nvim_rpc import NvimConnection, NvimDisconnected, NvimRpcError
from .position import Document, EditorLocation
from .surface import restart_help
from .workspace import Workspace, path_of, too_large

# A command typed by the human (`:Lsap …`): the notification's parameters, as the Lua sent them.
CommandHandler = Callable[[list[Json]], Awaitable[None]]
LOG = logging.getLogger("lsap.gateway")
TEXT_CACHE = 512  # documents whose text the gateway keeps, by changedtick or disk stamp
MAX_FILE_SIZE = 4 * 1024 * 1024  # until Neovim says otherwise (`max_file_size`)
# Seconds a command's server stays taken after its reply: an applyEdit sent just after it is
# still the command's (collected, or refused with the rest), never Neovim's own.
TAKE_GRACE = 0.3
# The one Lua snippet the service sends: a call of the dispatch table by name (lua/lsap/rpc.lua).
RPC = "return require('lsap.rpc').call(...)"


class Loaded(TypedDict, total=False):
    """A file's entry in the transport's answer to `read` (lua/lsap/transport/disk.lua): its
    buffer, or why it was not read."""

    bufnr: int
    changedtick: int
    lines: list[str] | None  # None: unchanged since the tick the gateway holds
    modified: bool
    disk: str | None  # "changed" or "deleted" under unsaved changes
    sent: int | None
    too_large: int  # the file's size, over `max_file_size`


@dataclass
class Timeouts:
    request: float = 30.0
    attach: float = 20.0
    index: float = 60.0
    settle: float = 0.3
    diagnostics: float = 15.0  # how long to wait for a server to publish a file's diagnostics
    # Silence after which a file diagnosed before keeps its diagnostics (servers that only
    # publish changes).
    diagnostics_quiet: float = 2.0


@dataclass
class EditorGateway:
    conn: NvimConnection
    timeouts: Timeouts = field(default_factory=Timeouts)
    channel: int = 0
    nvim_pid: int = 0
    max_file_size: int = MAX_FILE_SIZE  # Neovim's `max_file_size` when the service started
    max_tokens: int = DEFAULT_MAX_TOKENS  # an answer's budget unless the request sets one (`max_tokens`)
    # An edit's wait for its diagnostics after unless the request sets one (`diagnostics_wait`).
    diagnostics_wait: Wait = DIAGNOSTICS_WAIT
    embedded: bool = False  # the Neovim is lsap's own (the daemon's), not the human's
    # The roots every path opened or read must be inside (the session's; None: no check).
    workspace: Workspace | None = None
    _tokens: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _waiting: dict[int, asyncio.Future[Json]] = field(default_factory=dict)
    # Per token of a request that runs the bridge's commands: what answers the requests
    # their servers send back meanwhile (`lua/lsap/transport/takeover.lua`).
    _taking: dict[int, ServerRequests] = field(default_factory=dict)
    _command_handler: CommandHandler | None = None
    _texts: LRUCache[Path, Document] = field(default_factory=lambda: LRUCache(TEXT_CACHE))
    _tasks: set[asyncio.Task[object]] = field(default_factory=set)
    # Clients that exited (crashed, killed, stopped): never picked again from a cache.
    gone: set[int] = field(default_factory=set)
    # What the service asked of Neovim since it started, read by `info` and the benchmarks:
    # `nvim_calls` into Neovim (each a round trip), `lsp_requests` sent to servers, and
    # `cancelled`: waits on Neovim (and the servers' requests behind them) given up because
    # their caller went away.
    stats: Counter[str] = field(default_factory=Counter)

    async def start(self) -> None:
        """Register this channel with the Lua transport so replies find their way back."""
        self.conn.on_notification(self._on_notification)
        self.channel = to_int(items(await self.conn.request("nvim_get_api_info"))[0])
        started = obj(await self.call("register", self.channel))
        self.nvim_pid, self.max_file_size = to_int(started["pid"]), to_int(started["max_file_size"])
        self.max_tokens = to_int(started.get("max_tokens") or DEFAULT_MAX_TOKENS)
        wait = started.get("diagnostics_wait", DIAGNOSTICS_WAIT)
        self.diagnostics_wait = "settled" if wait == "settled" else to_float(wait)

    def on_command(self, handler: CommandHandler) -> None:
        """Commands typed by the human (`:Lsap …`) arrive as `lsap_command` notifications."""
        self._command_handler = handler

    def _on_notification(self, method: str, params: list[Json]) -> None:
        if method == "lsap_reply" and len(params) == 2:
            future = self._waiting.pop(to_int(params[0]), None)
            if future is not None and not future.done():
                future.set_result(params[1])
        elif method == "lsap_server_request" and len(params) == 4:
            token, ident, name, body = params
            handler = self._taking.get(to_int(token))
            # Answered at once whatever happens: the server waits for it, and so does its command.
            # One for a command no longer taken (its grace window is over) is refused.
            result: Jsonable = handler(str(name), body) if handler is not None else (
                {"applied": False, "failureReason": "the command that sent this edit has ended"}
                if name == "workspace/applyEdit" else None)
            self._background(self.call("server_answered", ident, result))
        elif method == "lsap_command" and self._command_handler is not None:
            self._background(self._command_handler(params))
        elif method == "lsap_client_exit" and params:
            self.gone.add(to_int(params[0]))

    async def call(self, name: str, *args: Packable) -> Json:
        """Run the Lua function `name` of the dispatch table (lua/lsap/rpc.lua) with `args`:
        the one way the service calls into Neovim's Lua, by name, never by sending source."""
        return await self._lua(RPC, name, *args)

    async def _lua(self, code: str, *args: Packable) -> Json:
        self.stats["nvim_calls"] += 1
        try:
            return await self.conn.request("nvim_exec_lua", code, list(args))
        except NvimDisconnected as exc:
            raise LsapError(ErrorCode.SESSION_GONE, "Neovim is gone: " + str(exc),
                            hint="send the request again: lsap finds, or starts, a session for it") from exc
        except NvimRpcError as exc:
            raise LsapError(ErrorCode.SERVER_ERROR, f"Neovim refused a call: {exc}") from exc

    async def _ask(self, function: str, *args: Packable, timeout: float, on_timeout: Json = None,
                   servers: tuple[int, ...] = (), taking: ServerRequests | None = None) -> Json:
        """Call a transport function that answers later with `lsap_reply`. `servers`: the
        language servers whose answers it waits for, whom a timeout is about; `taking`: what
        answers the requests those servers send back while it runs."""
        token = next(self._tokens)
        future: asyncio.Future[Json] = asyncio.get_running_loop().create_future()
        self._waiting[token] = future
        if taking is not None:
            self._taking[token] = taking
        try:
            await self.call(function, token, *args)
            answer = await asyncio.wait_for(future, timeout)
            if taking is not None:
                # A server may send its edit just after its reply to the command: still the
                # command's, for a moment (`TAKE_GRACE`), then no longer taken (refused).
                await asyncio.sleep(TAKE_GRACE)
                self._taking.pop(token, None)
                await self.call("release_taken", token)
            return answer
        except asyncio.CancelledError:
            # The asker went away (an agent disconnected): stop the servers' work too.
            self.stats["cancelled"] += 1
            self._background(self.call("cancel", token))
            raise
        except asyncio.TimeoutError:
            if on_timeout is not None:
                return on_timeout
            await self.call("cancel", token)
            if not servers:  # the transport answers its own waits at their deadline
                raise LsapError(
                    ErrorCode.TIMEOUT, f"Neovim did not answer within {timeout:g} s",
                    hint="its main loop is held (a long command or a prompt): send the request again "
                    "once it is free") from None
            health = await self.call("health", list(servers))
            raise server_timeout([obj(server) for server in items(health)], timeout, self.embedded) from None
        finally:
            self._waiting.pop(token, None)
            self._taking.pop(token, None)

    def _background(self, coro: Awaitable[object]) -> None:
        """Fire and forget a call into Neovim, keeping the task referenced until it ends; its
        failure is logged here (Neovim gone as it quits: no "exception never retrieved")."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Future[object]) -> None:
        self._tasks.discard(task)
        if task.cancelled() or (error := task.exception()) is None:
            return
        if isinstance(error, LsapError):  # Neovim gone (it quits) or refusing: nothing to do
            LOG.debug("a call into Neovim in the background failed: %s", error.message)
        else:
            LOG.error("a background task failed", exc_info=error)

    # -- text -------------------------------------------------------------------------

    def confine(self, path: Path) -> None:
        """The check every path the gateway opens or reads goes through: inside the roots."""
        if self.workspace is not None and not self.workspace.contains(path):
            raise LsapError(
                ErrorCode.OUTSIDE_WORKSPACE, f"{path} is outside the workspace",
                hint="use a path inside " + ", ".join(str(r) for r in self.workspace.roots))

    def _display(self, path: Path) -> str:
        return self.workspace.display(path) if self.workspace is not None else str(path)

    async def read(self, paths: list[Path]) -> dict[Path, Document]:
        """Read many files in one round trip: buffers where loaded, the disk otherwise.

        A loaded buffer nobody is editing is brought up to date with its file first (see
        `fresh` in lua/lsap/transport/disk.lua); a file whose buffer is gone with it is read from disk,
        and so found missing. Texts are kept per buffer `changedtick` (and disk stamp): a
        buffer that has not changed since the last read costs its tick, not its lines.
        """
        for path in paths:
            self.confine(path)
        known = {str(p): [doc.bufnr, int(doc.version[5:])] for p in paths
                 if (doc := self._texts.get(p)) is not None and doc.version.startswith("tick:")}
        loaded = cast(dict[str, Loaded], obj(await self.call("read", [str(p) for p in paths], known or None)))
        out: dict[Path, Document] = {}
        for path in paths:
            entry = loaded.get(str(path))
            cached = self._texts.get(path)
            if entry and "too_large" in entry:
                raise too_large(self._display(path), int(entry["too_large"]), self.max_file_size)
            if entry:
                version = f"tick:{entry['changedtick']}"
                lines = entry.get("lines")
                if lines is None and cached is not None:  # unchanged: the transport said so
                    lines = cached.lines
                out[path] = Document(path, list(lines or [""]), version, bufnr=entry["bufnr"],
                                     modified=bool(entry["modified"]),
                                     disk_differs=_disk_differs(entry.get("disk")),
                                     sent=entry.get("sent") or None)
            else:
                out[path] = read_disk(path, cached)
            self._remember(out[path])
        return out

    def held(self, path: Path) -> Document | None:
        """The last text read of a loaded buffer, without asking Neovim: for requests that are
        then guarded by its changedtick (see `lsp`)."""
        doc = self._texts.get(path)
        if doc is None or doc.bufnr is None or not doc.version.startswith("tick:"):
            return None
        return doc

    def _remember(self, doc: Document) -> None:
        self._texts[doc.path] = doc

    # -- buffers and clients ---------------------------------------------------------

    async def open(self, path: Path) -> int:
        """A hidden buffer for a file, loaded so that servers attach; no window changes.

        Only inside the roots, and never a file over `max_file_size` (servers would chew on
        it for minutes, for every client): that is an `invalid_request`.
        """
        self.confine(path)
        size = self.oversized(path)
        if size is not None:
            raise too_large(self._display(path), size, self.max_file_size)
        return to_int(await self.call("open", str(path)))

    def oversized(self, path: Path) -> int | None:
        """The size of a file over `max_file_size`, None for any other path."""
        stamp = DiskStamp.of(path)
        return stamp.size if stamp is not None and stamp.size > self.max_file_size else None

    async def sync(self, changes: list[FileEventData]) -> list[str] | None:
        """Tell the servers about files changed on disk (LSP `FileEvent`s) and bring every
        loaded buffer up to date with its file, in one call (see `sync` in lua/lsap/transport/disk.lua);
        returns the loaded file buffers' names. The texts held of those files are
        forgotten: their buffers were just brought up to date, so a warm request from one
        would only be turned away by its guard and run again."""
        names = await self.call("sync", cast(list[Params], changes))
        for change in changes:
            self._texts.pop(path_of(change["uri"]), None)
        return [str(n) for n in names] if isinstance(names, list) else None

    async def reconfigure(self, changes: list[FileEventData]) -> list[str]:
        """Tell every server that its configuration files changed (`changes`: FileEvents)
        and to read its configuration again; the names of the servers told."""
        names = await self.call("reconfigure", cast(list[Params], changes))
        return [str(n) for n in items(names)]

    async def clients(self, bufnr: int) -> list[Client]:
        return [_client(c) for c in items(await self.call("clients", bufnr))]

    async def wait_for_clients(self, bufnr: int, method: str | None) -> list[Client]:
        """Clients on the buffer, waiting (bounded) for one that supports `method` (`"*"`: for
        every server the enabled configs would attach); at once an `unsupported` error when
        no server is attached and no enabled config covers the buffer's filetype (none
        would come)."""
        raw = await self._ask(
            "when_attached", bufnr, method, int(self.timeouts.attach * 1000),
            timeout=self.timeouts.attach + 5,
        )
        if isinstance(raw, dict) and raw.get("uncovered"):
            raise uncovered(obj(raw["uncovered"]))
        if isinstance(raw, dict):  # `"*"`: some expected servers had not come, or unknown
            return Attached((_client(c) for c in items(raw.get("clients"))),
                            complete=False, known=not raw.get("unknown"))
        return Attached(_client(c) for c in items(raw))

    async def working(self, client_ids: list[int]) -> list[int]:
        """The servers of these that report work in progress now (`$/progress`), at once."""
        busy = await self.call("working", client_ids,
                               int(self.timeouts.settle * 1000))
        return [to_int(i) for i in items(busy)]

    async def wait_until_idle(self, client_ids: list[int]) -> bool:
        """Wait (bounded) until the servers report no indexing work; False if they still do."""
        index_ms = int(self.timeouts.index * 1000)
        settle_ms = int(self.timeouts.settle * 1000)
        result = await self._ask(
            "when_idle", client_ids, settle_ms, index_ms,
            timeout=self.timeouts.index + 5, on_timeout=False,
        )
        return bool(result)

    # -- language servers -------------------------------------------------------------

    async def lsp(self, calls: list[LspCall], timeout: float | None = None,
                  guard: Document | None = None,
                  taking: ServerRequests | None = None) -> list[LspAnswer]:
        """Send several LSP requests in one round trip; answers come back in order.

        `guard`: the text the requests were computed from; its buffer is brought up to date
        with the disk first, and if it has changed since (or its file did, under unsaved
        changes), nothing is sent and `StaleText` is raised (that text is no longer held).
        `taking`: the `workspace/executeCommand` calls are the bridge's own, and the requests
        their servers send back while they run (`workspace/applyEdit`, …) are answered by it
        (`method, params -> result`) instead of Neovim's handlers.
        """
        payload = [
            {"client_id": c.client_id, "method": c.method, "params": c.params, "bufnr": c.bufnr,
             **({"pack": True} if c.packed else {})}
            for c in calls
        ]
        self.stats["lsp_requests"] += len(calls)
        held = guard is not None and guard.bufnr is not None and guard.version.startswith("tick:")
        check = ([guard.bufnr, int(guard.version[5:]), guard.disk_differs or ""]
                 if guard is not None and held else None)
        raw = await self._ask("request", payload, check, taking is not None,
                              timeout=timeout or self.timeouts.request,
                              servers=tuple(dict.fromkeys(c.client_id for c in calls)), taking=taking)
        if isinstance(raw, dict) and raw.get("stale") and guard is not None:
            self._texts.pop(guard.path, None)
            raise StaleText(f"{guard.path} changed while the request was prepared")
        answers = []
        for call, each in zip(calls, items(raw) or [{} for _ in calls], strict=False):
            item = obj(each)
            if item.get("gone"):
                self.gone.add(call.client_id)
                raise ClientGone(f"language server {call.client_id} is not running")
            error = item.get("error")
            answers.append(LspAnswer(item.get("result"), response_error(error) if isinstance(error, dict) else None,
                                     tuple(str(s) for s in items(item.get("said")))))
        while len(answers) < len(calls):
            answers.append(LspAnswer())
        return answers

    # -- the human's editor -----------------------------------------------------------

    async def editor(self) -> EditorState:
        """The human's view: file, cursor, visible lines, unsaved state, visual selection."""
        return cast(EditorState, obj(await self.call("editor")))

    async def show_report(self, text: str, locations: list[EditorLocation], options: Mapping[str, Jsonable]) -> None:
        await self.call("show_report", text, cast(list[Params], locations), options)

    async def symbols_for_completion(self, path: str, paths: list[str], cmdline: str) -> None:
        """A file's symbol paths, for the anchor completion that asked (`path:<Tab>`)."""
        await self.call("symbols_arrived", path, paths, cmdline)

    async def notify(self, message: str, level: str = "error") -> None:
        await self.call("notify", message, level)

    async def all_clients(self) -> list[Client]:
        """Every language server running in this Neovim, whatever buffer it serves."""
        return [_client(c) for c in items(await self.call("all_clients"))]

    async def nvim_version(self) -> str:
        return str(await self.call("version"))

    async def log_activity(self, entries: list[Params]) -> None:
        """Append agents' requests and answers to `:Lsap log`."""
        await self.call("log_append", entries)

    async def edit_decision(self, client: str, summary: str, preview: str, timeout: float,
                            must_ask: bool = False) -> Decision:
        """The human's answer to an agent's edit, with why it was not applied. Neovim's
        `edit_policy` and `approval.timeout` decide; `timeout` bounds the wait here.
        `must_ask`: an edit in doubt, which `edit_policy = 'allow'` does not apply unasked
        (`withheld`)."""
        answer = await self._ask("confirm", client, summary, preview, int(timeout * 1000), must_ask,
                                 timeout=timeout + 5, on_timeout=None)
        if isinstance(answer, dict) and answer.get("decision") in DECISIONS:
            return Decision(str(answer["decision"]), to_float(answer.get("waited") or 0))
        return Decision("timeout", timeout) if answer is None else Decision("apply" if answer is True else "refuse")

    async def remove_on_exit(self, paths: list[str]) -> None:
        """Have Neovim delete these files when it quits (the socket and discovery file)."""
        await self.call("remove_on_exit", paths)

    # -- edits and diagnostics --------------------------------------------------------

    async def apply_edits(self, plan: Mapping[str, Packable]) -> Applied:
        """Switch files and buffers to a planned edit in one call (see lua/lsap/edits.lua)."""
        return cast(Applied, obj(await self.call("apply_edits", plan)))

    async def servers_expected(self, bufnrs: list[int]) -> list[bool]:
        """Per buffer: whether a server is attached or about to be (worth waiting for)."""
        return [bool(x) for x in items(await self.call("servers_expected", bufnrs))]

    async def pushed_diagnostics(
        self, bufnrs: list[int], exclude_clients: list[int], after_sync: bool = False,
        until: float | None = None,
    ) -> dict[int, Pushed]:
        """`vim.diagnostic` items per buffer, once servers have published for its latest change.

        Bounded by `timeouts.diagnostics`, not counting the time a server reports work in
        progress (up to `timeouts.index` more); each answer says whether the buffer was analysed,
        or was `quiet`: diagnosed before, with nothing new published (see `when_diagnosed`).
        Diagnostics of `exclude_clients` (pulled separately) are left out. `after_sync`:
        files changed on disk (`sync`), and a buffer is analysed only once each of its
        servers has published for it after it had read the change. `until` (a
        `time.monotonic()` deadline: an edit's `diagnostics_wait`): the answer then, whatever
        the servers are doing.
        """
        if not bufnrs:
            return {}
        settle_ms = int(self.timeouts.settle * 1000)
        quiet_ms = int(self.timeouts.diagnostics_quiet * 1000)
        bound, work = self.timeouts.diagnostics, self.timeouts.index  # a server's reported work does not count
        if until is not None:
            bound, work = min(bound, max(0.0, until - time.monotonic())), 0.0
        raw = await self._ask("when_diagnosed", bufnrs, exclude_clients, settle_ms, quiet_ms,
                              int(bound * 1000), after_sync, int(work * 1000), timeout=bound + work + 5)
        return {to_int(entry["bufnr"]): entry for entry in cast(list[Pushed], items(raw))}

    async def server_commands(self, client_id: int) -> list[str]:
        """The commands a server offers through `workspace/executeCommand`."""
        commands = await self.call("server_commands", client_id)
        return [str(c) for c in items(commands)]

    async def exec_lua(self, code: str, *args: Packable) -> Json:
        """Lua source run in Neovim: for tests and benchmarks that set a scene up; the service
        itself calls by name (`call`)."""
        return await self._lua(code, *args)


def uncovered(coverage: JsonObject) -> LsapError:
    """The error for a buffer no language server will attach to: which configs exist, and
    which would cover it."""
    filetype = str(coverage.get("filetype") or "")
    name = str(coverage.get("name") or "this buffer")
    what = f"{filetype} files" if filetype else "files without a filetype"
    enabled = "; ".join(
        f"{c.get('name')} ({', '.join(str(f) for f in items(c.get('filetypes'))) or 'any filetype'})"
        for c in map(obj, items(coverage.get("enabled"))))
    candidates = items(coverage.get("candidates"))
    if candidates:
        hint = " or ".join(f"`vim.lsp.enable('{c}')`" for c in candidates) + \
            f" would cover {filetype} (configured, not enabled)"
    else:
        hint = (f"enabled configs: {enabled or 'none'}; configure a server for {filetype or 'it'} "
                "with vim.lsp.config() and vim.lsp.enable() (:help lsp-config)")
    return LsapError(ErrorCode.UNSUPPORTED, f"no language server is attached to {name}: none is configured for {what}",
                     hint=hint)


# Work in progress a server has not reported on for this long is stalled, not indexing (a
# server may report only the begin and the end of minutes of start-up work).
STALLED_MS = 120_000


def server_timeout(health: list[JsonObject], timeout: float, embedded: bool) -> LsapError:
    """The error for language servers that did not answer in time, with one hint per cause,
    told apart by what Neovim saw of each during the wait (`health` in lua/lsap/transport/seen.lua):
    indexing (work in progress reported, not stalled), busy with this request (it answered
    others meanwhile), or busy or hung (no progress, and no answer for the whole wait), which
    takes a restart."""
    waited = timeout * 1000
    causes: list[str] = []
    for server in health:
        name, work = str(server.get("name")), server.get("work")
        progress, answer = _ms(server.get("progress_ms")), _ms(server.get("answer_ms"))
        if work is not None and progress is not None and progress < max(waited, STALLED_MS):
            cause = (f"{name} is still indexing ({work or 'work in progress'}, reported {_ago(progress)}): "
                     "send the request again once it has finished")
        elif answer is not None and answer < waited:
            cause = (f"{name} answered other requests meanwhile (the last {_ago(answer)}) but not this "
                     "one: it is slow here; send it again, or narrow it (a smaller scope or file)")
        else:
            age = _ms(server.get("age_ms"))
            last = (f"its last answer was {_ago(answer)}" if answer is not None
                    else f"no answer since it attached {_ago(age)}" if age is not None
                    else "no answer from it since lsap started")
            stalled = f", and its last progress report ({work}) {_ago(progress)}" if (
                work is not None and progress is not None) else ""
            cause = (f"{name} is busy or hung: no progress and no answer for the {timeout:g} s wait "
                     f"({last}{stalled}); " + restart_help(name, to_int(server.get("id") or 0), embedded))
        causes.append(cause)
    names = ", ".join(dict.fromkeys(str(s.get("name")) for s in health)) or "the language server"
    return LsapError(ErrorCode.TIMEOUT, f"{names} did not answer within {timeout:g} s",
                     hint="; ".join(dict.fromkeys(causes)) or None)


def _ms(value: Json) -> float | None:
    """A number of milliseconds the transport sent, None when it sent none."""
    return to_float(value) if value is not None else None


def _ago(ms: float) -> str:
    seconds = float(ms) / 1000
    return "just now" if seconds < 1 else f"{seconds:.0f} s ago"


def _client(value: Json) -> Client:
    raw = obj(value)
    age = _ms(raw.get("age_ms"))
    return Client(
        id=to_int(raw["id"]),
        name=str(raw["name"]),
        offset_encoding=str(raw.get("offset_encoding") or "utf-16"),
        methods=frozenset(str(m) for m in items(raw.get("methods"))),
        root_dir=str(raw.get("root_dir") or "") or None,
        filetypes=frozenset(str(f) for f in items(raw.get("filetypes"))),
        started=time.monotonic() - age / 1000 if age is not None else None,
    )


def _disk_differs(state: object) -> Literal["changed", "deleted"] | None:
    return "changed" if state == "changed" else "deleted" if state == "deleted" else None
