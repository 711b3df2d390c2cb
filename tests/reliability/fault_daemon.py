"""The embedded daemon with the fault-injecting server (fault_server.py) enabled for
`*.fault` files beside its usual servers, for exit tests:

    python fault_daemon.py <pid file> --root … --servers … --idle-timeout …
"""

from __future__ import annotations

import sys
from pathlib import Path

from lsap_bridge import daemon, embedded, watchdog
from lsap_bridge.gateway import Timeouts

SERVER = Path(__file__).with_name("fault_server.py")
PID_FILE = sys.argv[1]


async def start_with_fault(root: Path, servers: list[str] | None = None,
                           timeouts: Timeouts | None = None) -> embedded.Embedded:
    started = await embedded.start_embedded(root, servers, timeouts)
    await started.gateway.exec_lua(
        "local python, server, pidfile, root, watchdog = ...;"
        "vim.filetype.add({extension = {fault = 'faulty'}});"
        "local cmd = require('lsap.servers').watched({python, server, pidfile, 'ok'}, watchdog);"
        "vim.lsp.config('fault', {cmd = cmd, filetypes = {'faulty'}, root_dir = root, detached = true});"
        "vim.lsp.enable('fault')",
        sys.executable, str(SERVER), PID_FILE, str(root), watchdog.command(),
    )
    return started


daemon.start_embedded = start_with_fault  # type: ignore[assignment]
daemon.main(sys.argv[2:])
