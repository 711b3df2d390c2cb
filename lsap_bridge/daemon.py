"""The embedded daemon: a warm headless Neovim serving the agent socket for one root.

`lsap` starts it when no editor session covers the current directory; it exits after
`--idle-timeout` seconds without a request, or on `lsap daemon stop`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import time
from pathlib import Path
from typing import Any

from .discovery import SessionInfo, daemon_name, runtime_dir
from .embedded import start_embedded
from .server import SocketServer
from .service import Service
from .workspace import Workspace


async def serve(root: Path, servers: list[str], idle_timeout: float) -> None:
    embedded = await start_embedded(root, servers)
    service = Service(embedded.gateway, Workspace.of(root))
    stop = asyncio.Event()
    why = ["idle timeout"]  # what ended it: said to the clients whose calls it cut off
    last = time.monotonic()

    def touch() -> None:
        nonlocal last
        last = time.monotonic()

    def ask_stop(reason: str) -> None:
        why[0] = reason
        stop.set()

    async def shutdown(_params: Any) -> str:
        asyncio.get_running_loop().call_soon(ask_stop, "`lsap daemon stop`")
        return "stopping"

    name = daemon_name(root)
    socket_path = runtime_dir() / f"{name}.sock"
    server = SocketServer(service, socket_path, on_activity=touch,
                          extra_methods={"shutdown": shutdown})
    await server.start()
    nvim_version = await embedded.gateway.nvim_version()
    info = SessionInfo(name, "daemon", os.getpid(), str(socket_path), [str(root)],
                       nvim_pid=embedded.gateway.nvim_pid, nvim_version=nvim_version)
    server.info_extra = {"nvim_pid": info.nvim_pid, "nvim_version": nvim_version, "session": name}
    info.publish()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.add_signal_handler(sig, ask_stop, f"signal {sig.name}")
    try:
        while not stop.is_set() and not embedded.conn.closed:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), 1.0)
            await embedded.track()  # the servers running now, should Neovim crash
            if time.monotonic() - last > idle_timeout and not server.busy:
                break
        if embedded.conn.closed:
            why[0] = "its Neovim exited"
    finally:
        info.withdraw()
        await server.close(why[0])
        await embedded.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="lsap-daemon")
    parser.add_argument("--root", required=True)
    parser.add_argument("--servers", default="")
    parser.add_argument("--idle-timeout", type=float, default=900.0)
    args = parser.parse_args(argv)
    servers = [s for s in args.servers.split(",") if s]
    asyncio.run(serve(Path(args.root).resolve(), servers, args.idle_timeout))


if __name__ == "__main__":
    main()
