"""The `Session` a capability runs on: the concerns composed (`texts`, `servers`, `symbols`,
`diagnostics`, `kept`) and the one warm path (`Session.run`): answered from held texts
without a round trip, checked at the end, run once more on fresh text when one changed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from ..diskwatch import Basis, fs_now_ns
from ..editor import Editor
from ..errors import StaleText
from ..models import Request
from ..modes import Answer, Capability
from ..position import Document
from ..workspace import Workspace
from .approval import EditApproval, allow_all
from .calls import Servers
from .diagnosed import Diagnostics, Edited
from .kept import Kept
from .texts import Texts
from .trees import Symbols

T = TypeVar("T")


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
        await self.servers.reconfigure()  # this answer's diagnostics: after the servers re-read it
        at = fs_now_ns()
        basis = await self.servers.sync_disk(at) if workspace else Basis(at)
        with self.texts.proving(basis):
            try:
                return await self._held_run(work)
            except StaleText:
                pass
            return await self._held_run(work)

    async def _held_run(self, work: Callable[[], Awaitable[T]]) -> T:
        with self.texts.holding() as held:
            try:
                answer = await work()
            except StaleText:
                raise
            except Exception:  # an error found on a held text (an anchor gone) may be stale too
                await self._confirm(held)
                raise
            await self._confirm(held)
            return answer

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
