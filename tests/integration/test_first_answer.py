"""The first answer of a fresh daemon (issue 26, item 1): the server is chosen by what the
request needs, among every server that attaches, and a choice made while servers were
still attaching is not kept.

On a cold Python file `ruff server` attaches before basedpyright; it has hover (for its
rule codes) and formatting but no document symbols. Each daemon here is fresh (its own
Neovim and servers, the workspace warmed concurrently as `lsap daemon` does), and its
first request is either a hover on a method or a format of one function.

The race is made to happen every time: basedpyright's answer to `initialize` is held back by
the proxy (`delay_server.py --attach`) until the first request waits for the servers and
ruff has attached, the cold start's order: a hover first, and a format first (its function
found by basedpyright's symbols). The suite runs one daemon each way; under stress (`benchmarks/stress.py`)
the daemons after those start as they come, unheld. In a user's Neovim the first of three
holds basedpyright (a hover first); the other two come as they come, as before.
"""

from __future__ import annotations

import asyncio
import functools
import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge.client import Connection
from tests import stress

from .harness import Bridge, behind_delay_proxy, rich_copy
from .human import HumanNvim, register_remote_plugin
from .nvim_home import wait_for

pytestmark = pytest.mark.integration

DAEMONS = 10  # fresh daemons under stress, ~4 s each on two shared cores; 2 in the suite (each order)
# The server still attaching when the first request comes, and the one attached: the cold
# start's order (ruff first), for a hover first and for a format first (whose function is
# found by basedpyright's symbols: ruff has none).
HELD = ("basedpyright", "ruff")
ATTACHED = """
for _, client in ipairs(vim.lsp.get_clients({name = ...})) do
  if client.initialized then return true end
end
return false
"""
# How many waits for servers on the buffer of a file (`when_attached`'s autocmds): 0 for none.
WAITING = """
local b = vim.fn.bufnr(...)
return b > 0 and #vim.api.nvim_get_autocmds({event = 'LspAttach', buffer = b}) or 0
"""
MESSY = "def f( x ):\n    return x+1\n\n\ndef g( y ):\n    return y+2\n"
F_FORMATTED = "def f(x):\n    return x + 1\n"
G_UNTOUCHED = "def g( y ):\n    return y+2\n"


@pytest.fixture(scope="module")
def rich(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of rich 13.9.4's package (the benchmark corpus), with one messy module."""
    return rich_copy(tmp_path_factory.mktemp("first"))


def fresh(root: Path, release: Path | None = None, held: str = "") -> Iterator[Bridge]:
    """A fresh daemon: Neovim, basedpyright and `ruff server`, warming the workspace in the
    background as `Lifecycle._warm` does, the first request sent at once; with `release`,
    `held`'s attach waits for that file."""
    bridge = Bridge(root, ["basedpyright", "ruff"])
    if release is not None:
        behind_delay_proxy(bridge.lua, held, "--attach", str(release))
    warming = bridge.loop.run(_start_warming(bridge))
    try:
        yield bridge
    finally:
        bridge.loop.loop.call_soon_threadsafe(warming.cancel)
        bridge.close()


async def _start_warming(bridge: Bridge) -> asyncio.Task[list[str]]:
    return asyncio.ensure_future(bridge.service.session.servers.open_workspace())


def while_attaching(lua: Callable[..., Any], attached: str, path: Path, release: Path,
                    first: Callable[[], None]) -> None:
    """`first()`, the first request (on `path`), sent at once; the held server let attach
    only once that request waits for the servers of `path`'s buffer and `attached` has come
    (in a user's Neovim the request is what opens the file and starts them). Hang bounds: a
    server attaches in seconds."""
    before = lua(WAITING, str(path))  # the warming's own wait, when it opened this very file
    failed: list[BaseException] = []

    def send() -> None:
        try:
            first()
        except BaseException as exc:  # raised again below, in the test's thread
            failed.append(exc)

    asking = threading.Thread(target=send, daemon=True)
    asking.start()
    wait_for(lambda: (lua(WAITING, str(path)) > before and lua(ATTACHED, attached)) or not asking.is_alive(), 60,
             f"the first request to wait for the servers, {attached} attached")
    release.touch()
    asking.join(120)
    assert not asking.is_alive(), "the first request is still waiting after its server attached"
    if failed:
        raise failed[0]


def hover(bridge: Bridge, _messy: Path) -> None:
    report = bridge.ask(mode="hover", locate="rich/console.py:Console.print")
    assert report["symbol"] == "Console.print" and report["server"] == "basedpyright", report
    assert "def print(" in report["hover"] and "*objects: Any" in report["hover"], report["hover"]


def format_f(bridge: Bridge, messy: Path) -> None:
    messy.write_text(MESSY)
    report = bridge.ask(mode="format", locate="rich/messy.py:f")
    assert report["server"] == "ruff", report
    text = messy.read_text()
    assert text.startswith(F_FORMATTED) and text.endswith(G_UNTOUCHED), text


@pytest.mark.stress
def test_the_first_request_of_each_fresh_daemon_is_answered_by_the_right_server(rich: Path) -> None:
    """Half the daemons are asked a hover first, half a format first; each is then asked the
    other, so both are seen as a first request and after one."""
    messy = rich / "rich" / "messy.py"
    firsts: list[float] = []
    for n in range(stress.trials(DAEMONS, suite=2)):
        messy.write_text(MESSY)
        first, then = (hover, format_f) if n % 2 == 0 else (format_f, hover)
        path = rich / "rich" / ("console.py" if first is hover else "messy.py")
        held, attached = HELD
        release = rich.parent / f"release{n}"
        for bridge in fresh(rich, release if n < 2 else None, held):
            started = time.monotonic()
            if n < 2:  # one each way, held
                while_attaching(bridge.lua, attached, path, release, functools.partial(first, bridge, messy))
            else:  # under stress: as it comes
                first(bridge, messy)
                firsts.append(time.monotonic() - started)
            then(bridge, messy)
    print(f"first answers of {len(firsts)} fresh daemons unheld: " + ", ".join(f"{s:.1f}" for s in firsts) + " s")
    if firsts:
        stress.figure("a fresh daemon's first answer, the slowest", max(firsts))


HOVER = {"mode": "hover", "locate": "rich/console.py:Console.print", "format": "json"}
FORMAT = {"mode": "format", "locate": "rich/messy.py:f", "format": "json"}


def user_asks(conn: Connection, payload: dict[str, str], messy: Path) -> None:
    """An agent's request in a user's Neovim, answered by the right server."""
    answer = conn.call("request", {"request": payload})
    assert answer["ok"], answer
    report = json.loads(answer["text"])
    if payload is HOVER:
        assert report["server"] == "basedpyright" and "def print(" in report["hover"], report
    else:
        assert report["server"] == "ruff", report
        text = messy.read_text()
        assert text.startswith(F_FORMATTED) and text.endswith(G_UNTOUCHED), text


USERS = 3  # fresh Neovims of a user's; the first with basedpyright held (a hover first)


def test_in_a_user_s_neovim_too(rich: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The same in a human's Neovim with basedpyright and ruff enabled: an agent's first
    request over the socket, right after the service published its session."""
    env = register_remote_plugin(tmp_path_factory.mktemp("rplugin"))
    messy = rich / "rich" / "messy.py"
    for n in range(USERS):
        messy.write_text(MESSY)
        editor = HumanNvim(rich, env, ["basedpyright", "ruff"])
        held, attached = HELD
        release = rich.parent / f"user-release{n}"
        if n == 0:
            behind_delay_proxy(editor.lua, held, "--attach", str(release))
        try:
            with Connection(editor.session.socket, name=f"agent{n}") as conn:
                order = (HOVER, FORMAT) if n % 2 == 0 else (FORMAT, HOVER)
                if n == 0:
                    path = rich / ("rich/console.py" if order[0] is HOVER else "rich/messy.py")
                    while_attaching(editor.lua, attached, path, release,
                                    functools.partial(user_asks, conn, order[0], messy))
                else:  # as it comes
                    user_asks(conn, order[0], messy)
                user_asks(conn, order[1], messy)
        finally:
            editor.close()
