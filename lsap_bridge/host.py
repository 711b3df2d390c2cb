"""The service inside the human's Neovim, started by the remote plugin.

The remote plugin's host runs pynvim's own loop; the bridge runs its asyncio loop in a
thread of its own with a separate channel to Neovim (`v:servername`), so that agents and
slow language servers never hold the host, and the host never holds them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from typing import Any

from .discovery import SessionInfo, runtime_dir
from .gateway import EditorGateway
from .nvim_rpc import NvimConnection
from .server import SocketServer
from .service import Service
from .workspace import Workspace

_started: threading.Thread | None = None


async def serve_editor(address: str, options: dict[str, Any]) -> None:
    conn = await NvimConnection.connect(address)
    gateway = EditorGateway(conn)
    service = Service(gateway, Workspace.of(options.get("cwd") or os.getcwd()))
    gateway.on_command(service.handle_command)
    await gateway.start()
    server = None
    info = None
    if (options.get("config") or {}).get("socket", True):
        name = f"nvim-{gateway.nvim_pid}"
        server = SocketServer(service, runtime_dir() / f"{name}.sock")
        await server.start()
        info = SessionInfo(name, "editor", os.getpid(), str(server.path),
                           [str(r) for r in service.workspace.roots], nvim_pid=gateway.nvim_pid)
        info.publish()
    try:
        while not conn.closed:
            await asyncio.sleep(0.5)
    finally:
        if info is not None:
            info.withdraw()
        if server is not None:
            await server.close()


def start_in_editor(options: dict[str, Any]) -> None:
    """Start the service thread once per host; later calls are no-ops."""
    global _started
    if _started is not None and _started.is_alive():
        return
    address = str(options["address"])

    def run() -> None:
        with contextlib.suppress(Exception):
            asyncio.run(serve_editor(address, options))

    _started = threading.Thread(target=run, name="lsap-bridge", daemon=True)
    _started.start()


