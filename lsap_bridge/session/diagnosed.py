"""Files' diagnostics as they are now: pulled from the servers that offer it (asked again
when a pull goes unanswered), else waited for until the servers published for the text.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..diagnostics import SETTLE_LIMIT, DiagnosticMap, budget_of, from_lsp, from_vim, pulled_report, settled
from ..editor import Client, Editor
from ..errors import LsapError
from ..gateway import LspAnswer, LspCall
from ..lsp import decoded
from ..models import Wait
from ..position import Document
from ..servers import tsserver
from ..surface import CLIENT
from ..workspace import Workspace, uri_of
from .calls import Servers
from .targets import EVERY_SERVER, encoding_of
from .texts import Texts

PULL = "textDocument/diagnostic"


#: Seconds without an answer after which a diagnostics pull is asked again, and how many
#: asks at most (`Session._pulled`).
PULL_REASK = 0.5
PULL_ASKS = 3


def pulled(client: Client) -> bool:
    """Whether a client's diagnostics are asked for (LSP pull, or tsserver's for vtsls)
    rather than waited for."""
    return client.supports(PULL) or tsserver.pulls(client)


# Inside `Diagnostics.deferred`: the diagnostics after an edit are the caller's to read.
_DEFERRED: ContextVar[bool] = ContextVar("lsap_diagnostics_deferred", default=False)


EDITED_LIMIT = 1000  # files `Edited` keeps per asker (the oldest noted go first)


@dataclass
class Edited:
    """The files each asker's edits touched since its last answered `check`: written by the
    bridge's edits (rename, move, code actions, format, undo, the text format's commands:
    `edits.apply.apply_workspace_edit`), written by the harness's edits the hooks recorded,
    and named pending by an edit's answer (`Diagnostics.after_edit`). `check` compares them
    always, also when it is the asker's first, which records the baseline of everything
    else: else the breaks of an edit made before it would go into the baseline, never
    reported (issue 44). Per asker (its connection's name, as `check`'s records), in
    memory: the session's edits."""

    _by: dict[str | None, dict[Path, int]] = field(default_factory=dict)
    _count: int = 0

    def note(self, paths: Iterable[Path]) -> None:
        """The asking agent's edit touched these files (written, or its answer left them pending)."""
        files = self._by.setdefault(CLIENT.get(), {})
        for path in paths:
            self._count += 1
            files.pop(path, None)  # the newest note last, with its number: see `compared`
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
        (`actions.applied.applied`) waits for none and shows none."""
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
        opened = await self._opened(paths, out)
        if not opened:
            return out
        attached = await self._attached(opened)
        docs = await self.texts.documents(list(attached))
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
                after_sync or self.servers.reconfigured, until),
        )
        answers = []
        for (_path, client), each in zip(pulls, calls, strict=True):
            mine, flat = flat[:len(each)], flat[len(each):]
            answers.append(tsserver.report(mine) if tsserver.pulls(client) else mine[0])
        self._add_pulled(out, docs, pulls, answers)
        self._add_pushed(out, docs, {p: attached[p] for p in waits}, pushed, after_sync)
        for found in out.values():
            found.sort(key=lambda d: (d.line, d.col))
        return out

    async def _opened(self, paths: Sequence[Path], out: DiagnosticMap) -> dict[Path, int]:
        """The files opened for their servers, with their buffers; one over the size limit
        is named pending, not opened."""
        opened: dict[Path, int] = {}
        for path in dict.fromkeys(paths):
            try:
                opened[path] = await self.gateway.open(path)
            except LsapError as refused:  # over the size limit: named, not opened
                out[path] = []
                out.pending[path] = refused.message
        return opened

    async def _attached(self, opened: dict[Path, int]) -> dict[Path, tuple[int, list[Client]]]:
        """Each file's buffer and every server that will attach to it (not the first there:
        ruff before basedpyright on a cold start, whose diagnostics a baseline would then
        lack); a file no server is configured for is not worth the attach timeout."""
        bufnrs = list(opened.values())
        expected = await self.gateway.servers_expected(bufnrs)

        async def attach(bufnr: int, server: bool) -> tuple[int, list[Client]]:
            return bufnr, await self.gateway.wait_for_clients(bufnr, EVERY_SERVER) if server else []

        found = await asyncio.gather(*(attach(b, e) for b, e in zip(bufnrs, expected, strict=True)))
        return dict(zip(opened, found, strict=True))

    def _add_pulled(self, out: DiagnosticMap, docs: dict[Path, Document], pulls: list[tuple[Path, Client]],
                    answers: list[LspAnswer]) -> None:
        """The pulled diagnostics, in code points; a pull not answered with a full report
        leaves its file pending."""
        for (path, client), answer in zip(pulls, answers, strict=True):
            try:
                found = None if answer.error else decoded(pulled_report, answer.result, client.name, PULL)
                reason = (answer.error or {}).get("message") or "no full report"
            except LsapError as malformed:  # said as the file's reason, the others answered
                found, reason = None, malformed.message
            if found is None:
                out.pending[path] = f"{client.name} did not report diagnostics ({reason})"
                continue
            lines, encoding = docs[path].lines, encoding_of(client)
            out[path] += [from_lsp(item, lines, encoding, client.name, client.id, self.workspace.roots, raw)
                          for item, raw in found]

    def _add_pushed(self, out: DiagnosticMap, docs: dict[Path, Document],
                    waits: dict[Path, tuple[int, list[Client]]], pushed: dict[int, Any],
                    after_sync: bool) -> None:
        """The published diagnostics of the files waited for: a file whose servers published
        nothing new since it changed is quiet, one they had not published for yet pending."""
        for path, (bufnr, clients) in waits.items():
            entry = pushed.get(bufnr) or {}
            out[path] += [from_vim(item, docs[path].lines, self.workspace.roots)
                          for item in entry.get("items") or []]
            names = ", ".join(c.name for c in clients if not pulled(c))
            if entry.get("quiet"):
                out.quiet[path] = f"{names} published nothing new since the file changed"
            elif not entry.get("analysed"):
                out.pending[path] = f"{names} had not published diagnostics for this text yet" + (
                    " (nor re-analysed it since the files changed)" if after_sync else "")
