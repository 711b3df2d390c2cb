""":qa! while an agent's call waits on a language server (a server that holds its hovers), and
:qa! while the Python host is still loading pynvim: Neovim quits at once, the host exits
cleanly, status 0, and lsap.log holds no traceback (no "Task exception was never retrieved")
after the quit (doc/lsap.txt, lsap-exit).

The host's status is read through a wrapper set as `python3_host_prog`: it runs the real
Python as its child and writes the child's exit status down (Neovim reaps only the wrapper).
"""

from __future__ import annotations

import contextlib
import subprocess
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
# Neovim quits within a second of a :qa!, loaded machine included: a hang bound 20 times that.
QUIT_BOUND = 20
WRAPPER = """\
#!{python}
import os, signal, subprocess, sys
from pathlib import Path

signal.signal(signal.SIGTERM, lambda *_: None)  # the host gets the SIGTERM of its group too
host = subprocess.Popen([{python!r}, *sys.argv[1:]], env={{**os.environ, **{extra!r}}})
status = host.wait()
Path({status!r}).write_text(str(status))
sys.exit(0)
"""
# In the host only (on its PYTHONPATH): `import pynvim` waits for the file GATE, as if Python
# took that long to load it on a loaded machine; LOADING says the host got there.
HELD_IMPORT = """\
import sys, time
from pathlib import Path


class HeldImport:
    def find_spec(self, name, path=None, target=None):
        if name == "pynvim":
            Path({loading!r}).write_text("pynvim")
            deadline = time.monotonic() + 120
            while not Path({gate!r}).exists() and time.monotonic() < deadline:
                time.sleep(0.01)
        return None


sys.meta_path.insert(0, HeldImport())
"""


def host_wrapper(tmp_path: Path, extra: dict[str, str] | None = None) -> tuple[dict[str, str], Path]:
    """The remote plugin registered, the host run through WRAPPER (`extra` added to its
    environment): the environment of Neovim, and the file the host's exit status goes to."""
    status = tmp_path / "host.status"
    wrapper = tmp_path / "python3"
    wrapper.write_text(WRAPPER.format(python=sys.executable, status=str(status), extra=extra or {}))
    wrapper.chmod(0o755)
    nvim_env = register_remote_plugin(tmp_path)
    init = user_init(tmp_path)
    init.write_text(init.read_text().replace(repr(sys.executable), repr(str(wrapper))))
    return {**nvim_env, "XDG_STATE_HOME": str(tmp_path / "state")}, status  # a log of its own


def logged(tmp_path: Path) -> str:
    return path.read_text() if (path := tmp_path / "state" / "nvim" / "lsap.log").exists() else ""


def test_quitting_during_an_agents_call_ends_the_host_cleanly(tmp_path: Path) -> None:
    env, status = host_wrapper(tmp_path)
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
    log = logged(tmp_path)
    assert "Traceback" not in log and "never retrieved" not in log, log


def test_quitting_while_the_host_loads_pynvim_is_not_held(tmp_path: Path) -> None:
    # Neovim's own start of its Python host waits for the host to answer a request, which it
    # can only once pynvim has loaded; a :qa! meanwhile was held as long (issue 47: up to 2 s
    # on a loaded machine). Here the load waits for a gate opened only after the test.
    site, loading, gate = tmp_path / "site", tmp_path / "loading", tmp_path / "gate"
    site.mkdir()
    (site / "sitecustomize.py").write_text(HELD_IMPORT.format(loading=str(loading), gate=str(gate)))
    env, status = host_wrapper(tmp_path, {"PYTHONPATH": str(site)})
    root = tmp_path / "ws"
    root.mkdir()
    human = HumanNvim(root, env, [], session=False)  # setup() starts the service: the host
    try:
        wait_for(loading.exists, what="the host loading pynvim")
        human.nvim.command("qa!", async_=True)  # a request would wait for as long as the quit
        try:
            human.process.wait(QUIT_BOUND)
        except subprocess.TimeoutExpired:
            pytest.fail(f":qa! held for {QUIT_BOUND} s while the Python host loads pynvim")
    finally:
        gate.touch()
        human.close()
    wait_for(status.exists, what="the host's exit")
    assert status.read_text() == "0"
    log = logged(tmp_path)
    assert "Traceback" not in log and "never retrieved" not in log, log
