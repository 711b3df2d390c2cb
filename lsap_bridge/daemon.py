"""The embedded daemon: a warm headless Neovim serving the agent socket for one root.

`lsap` starts it when no editor session covers the current directory; at its start it opens
the workspace for its servers in the background (`Plan.warm`); it exits after
`--idle-timeout` seconds without a request, on `lsap daemon stop` or a signal, or when its
Neovim dies, ending Neovim's language servers too (the session's life: `lifecycle.py`).
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from .discovery import daemon_name
from .embedded import start_embedded
from .lifecycle import Lifecycle, Plan
from .logfile import log_to_file
from .service import Service
from .workspace import Workspace


async def serve(root: Path, servers: list[str], idle_timeout: float) -> None:
    embedded = await start_embedded(root, servers)
    plan = Plan("daemon", daemon_name(root), idle_timeout=idle_timeout, signals=True, tick=1.0, warm=True)
    gateway = embedded.gateway
    await Lifecycle(Service(gateway, Workspace.of(root)), gateway, plan, owned=embedded).run()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="lsap-daemon")
    parser.add_argument("--root", required=True)
    parser.add_argument("--servers", default="")
    parser.add_argument("--idle-timeout", type=float, default=900.0)
    parser.add_argument("--log", help="the file its output goes to, where error hints point")
    args = parser.parse_args(argv)
    log_to_file(args.log)
    servers = [s for s in args.servers.split(",") if s]
    asyncio.run(serve(Path(args.root).resolve(), servers, args.idle_timeout))


if __name__ == "__main__":
    main()
