"""The service inside the human's Neovim, started by the remote plugin.

The remote plugin's host runs pynvim's own loop; the bridge runs its asyncio loop in a
thread of its own with a separate channel to Neovim (`v:servername`), so that agents and
slow language servers never hold the host, and the host never holds them. Here the agent
socket is published, agents' activity goes to `:Lsap log`, and the edit policy is applied.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .connection import Limits, Scheduler
from .discovery import SessionInfo, runtime_dir
from .edits import recover_edits
from .errors import ErrorCode, LsapError
from .gateway import EditorGateway
from .logfile import log_to_file
from .nvim_rpc import NvimConnection
from .server import SocketServer, current_client
from .service import Service
from .session import EditApproval
from .workspace import Workspace

_started: threading.Thread | None = None

# The longest an `ask` prompt may wait (Neovim's `approval.timeout`, default 300 s, is the
# real limit; this bounds it should Neovim never answer).
ASK_LIMIT = 3600.0
LOG_FLUSH = 0.1  # seconds between batches sent to `:Lsap log`


class ActivityLog:
    """Collects socket events and sends them to Neovim in batches, so a busy agent costs
    the editor one small call per tenth of a second rather than two per request."""

    def __init__(self, gateway: EditorGateway) -> None:
        self.gateway = gateway
        self.pending: list[dict[str, Any]] = []
        self.flushing: asyncio.Task[None] | None = None

    def add(self, event: dict[str, Any]) -> None:
        self.pending.append({**event, "time": int(time.time())})
        if self.flushing is None or self.flushing.done():
            self.flushing = asyncio.get_running_loop().create_task(self._flush())

    async def _flush(self) -> None:
        await asyncio.sleep(LOG_FLUSH)
        entries, self.pending = self.pending, []
        with contextlib.suppress(Exception):
            await self.gateway.log_activity(entries)


def edit_policy(gateway: EditorGateway, timeout: float = ASK_LIMIT) -> EditApproval:
    """The session's approval hook: agents' edits go to Neovim, where the `edit_policy`
    option (read at each edit, so `setup()` changes it live) allows, denies or asks.

    An edit the human started with a command (no agent client in the context) always goes
    ahead without a round trip. An edit not applied is a `denied` error that tells the agent
    why: the human refused, the policy denies, or nobody answered in time.
    """

    async def approve(summary: str, preview: str) -> bool:
        client = current_client.get()
        if client is None:
            return True
        decision = await gateway.edit_decision(client, summary, preview, timeout)
        if decision.applied:
            return True
        raise LsapError(ErrorCode.DENIED, *REFUSALS[decision.decision](summary, decision.waited))

    return approve


# Why an agent's edit was not applied: the message and the hint of its `denied` error.
REFUSALS: dict[str, Callable[[str, float], tuple[str, str]]] = {
    "refuse": lambda summary, _: (
        f"the human refused the edit ({summary})",
        "nothing was changed; ask the human what they want instead"),
    "deny": lambda summary, _: (
        f"the editor's edit_policy denies agents' edits ({summary})",
        "nothing was changed; the human can set edit_policy to 'ask' or 'allow'"),
    "timeout": lambda summary, waited: (
        f"no answer from the human within {waited:g} s: the edit was refused ({summary})",
        "nothing was changed; the human may be away, ask again later"),
}


def parse_tcp(value: str) -> tuple[str, int]:
    """`"127.0.0.1:7777"`, `"[::1]:0"` or a bare port."""
    host, _, port = value.rpartition(":")
    return (host.strip("[]") or "127.0.0.1"), int(port or 0)


async def serve_editor(address: str, options: dict[str, Any]) -> None:
    conn = await NvimConnection.connect(address)
    gateway = EditorGateway(conn)
    service = Service(gateway, Workspace.of(options.get("cwd") or os.getcwd()))
    config = options.get("config") or {}
    limits = Limits.of(config.get("agent_limits"))
    scheduler = Scheduler(limits.running)
    gateway.on_command(scheduler.ahead(service.handle_command))  # the human goes first
    await gateway.start()
    for recovery in await recover_edits(gateway):
        await gateway.notify("lsap: " + recovery.message, "warn")
    service.session.approve_edit = edit_policy(gateway)
    server = info = None
    if config.get("socket", True):
        name = f"nvim-{gateway.nvim_pid}"
        log = ActivityLog(gateway)
        server = SocketServer(service, runtime_dir() / f"{name}.sock", on_event=log.add,
                              limits=limits, scheduler=scheduler)
        await server.start()
        nvim_version = await gateway.nvim_version()
        tcp = token = ""
        if config.get("tcp"):
            try:
                token = await server.start_tcp(*parse_tcp(str(config["tcp"])),
                                               force=bool(config.get("tcp_force")))
            except (LsapError, OSError, ValueError) as exc:
                await gateway.notify(f"lsap: no TCP listener: {exc}", "warn")
            else:
                assert server.tcp_address is not None
                tcp = "{}:{}".format(*server.tcp_address)
        info = SessionInfo(name, "editor", os.getpid(), str(server.path),
                           [str(r) for r in service.workspace.roots], nvim_pid=gateway.nvim_pid,
                           nvim_version=nvim_version, tcp=tcp, token=token)
        server.info_extra = {"nvim_pid": gateway.nvim_pid, "nvim_version": nvim_version,
                             "session": name}
        info.publish()
        await gateway.remove_on_exit([str(info.file), str(Path(info.socket))])
    try:
        while not conn.closed:
            await asyncio.sleep(0.5)
    finally:
        if info is not None:
            info.withdraw()
        if server is not None:
            await server.close("Neovim exited")


def start_in_editor(options: dict[str, Any]) -> None:
    """Start the service thread once per host; later calls are no-ops."""
    global _started
    if _started is not None and _started.is_alive():
        return
    address = str(options["address"])

    def run() -> None:
        try:
            asyncio.run(serve_editor(address, options))
        except Exception:
            logging.getLogger(__name__).exception("the lsap service stopped")

    config = options.get("config") or {}
    log_to_file(options.get("log_file"), str(config.get("log_level", "warn")))

    _started = threading.Thread(target=run, name="lsap-bridge", daemon=True)
    _started.start()
