""":qa! while an agent's call waits on a language server (a server that holds its hovers): the
Python host that runs the service exits at once and cleanly, status 0, and lsap.log holds no
traceback (no "Task exception was never retrieved") after the quit (doc/lsap.txt, lsap-exit).

The host's status is read through a wrapper set as `python3_host_prog`: it runs the real
Python as its child and writes the child's exit status down (Neovim reaps only the wrapper).
"""

from __future__ import annotations

import contextlib
import sys
import threading
from pathlib import Path

import pytest

from lsap_bridge.client import ClientError, Connection
from tests.reliability.processes import running

from .human import HumanNvim, register_remote_plugin, user_init
from .nvim_home import wait_for

pytestmark = pytest.mark.integration

HELD = Path(__file__).resolve().parents[1] / "reliability" / "held_server.py"
WRAPPER = """\
#!{python}
import signal, subprocess, sys
from pathlib import Path

signal.signal(signal.SIGTERM, lambda *_: None)  # the host gets the SIGTERM of its group too
host = subprocess.Popen([{python!r}, *sys.argv[1:]])
status = host.wait()
Path({status!r}).write_text(str(status))
sys.exit(0)
"""


def test_quitting_during_an_agents_call_ends_the_host_cleanly(tmp_path: Path) -> None:
    status = tmp_path / "host.status"
    wrapper = tmp_path / "python3"
    wrapper.write_text(WRAPPER.format(python=sys.executable, status=str(status)))
    wrapper.chmod(0o755)
    env = register_remote_plugin(tmp_path)
    init = user_init(tmp_path)
    init.write_text(init.read_text().replace(repr(sys.executable), repr(str(wrapper))))
    state = tmp_path / "state"
    env = {**env, "XDG_STATE_HOME": str(state)}  # a log of its own
    root = tmp_path / "ws"
    root.mkdir()
    notes, held = root / "held.slow", tmp_path / "held.log"
    notes.write_text("alpha beta\n")
    human = HumanNvim(root, env, [])
    try:
        host = int(human.session.pid)
        human.lua("local path, python, held, log, root = ...;"
                  "local buf = require('lsap.transport.disk').open(path);"
                  "vim.lsp.start({name = 'held', cmd = {python, held, log}, root_dir = root}, {bufnr = buf})",
                  str(notes), sys.executable, str(HELD), str(held), str(root))

        def agent() -> None:
            with contextlib.suppress(ClientError, OSError), Connection(human.session.socket, timeout=60) as conn:
                conn.call("request", {"mode": "hover", "locate": "held.slow@beta"})

        asking = threading.Thread(target=agent)
        asking.start()
        wait_for(lambda: held.exists() and "hover" in held.read_text(), what="the agent's hover at the server")
        with contextlib.suppress(Exception):  # Neovim quits before it can answer
            human.nvim.command("qa!")
        human.process.wait(30)
        asking.join(30)
    finally:
        human.close()
    wait_for(lambda: not running(host), what="the host's exit")
    assert status.read_text() == "0"
    log = path.read_text() if (path := state / "nvim" / "lsap.log").exists() else ""
    assert "Traceback" not in log and "never retrieved" not in log, log
