"""The first answer of a fresh daemon (issue 26, item 1): the server is chosen by what the
request needs, among every server that attaches, and a choice made while servers were
still attaching is not kept.

On a cold Python file `ruff server` attaches before basedpyright; it has hover (for its
rule codes) and formatting but no document symbols. Each daemon here is fresh (its own
Neovim and servers, the workspace warmed concurrently as `lsap daemon` does), and its
first request is either a hover on a method or a format of one function.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lsap_bridge.client import Connection
from tests import stress

from .harness import Bridge, rich_copy
from .human import HumanNvim, register_remote_plugin

pytestmark = pytest.mark.integration

DAEMONS = 10  # fresh daemons under stress, ~4 s each on two shared cores; 2 in the suite (each order)
MESSY = "def f( x ):\n    return x+1\n\n\ndef g( y ):\n    return y+2\n"
F_FORMATTED = "def f(x):\n    return x + 1\n"
G_UNTOUCHED = "def g( y ):\n    return y+2\n"


@pytest.fixture(scope="module")
def rich(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of rich 13.9.4's package (the benchmark corpus), with one messy module."""
    return rich_copy(tmp_path_factory.mktemp("first"))


def fresh(root: Path) -> Iterator[Bridge]:
    """A fresh daemon: Neovim, basedpyright and `ruff server`, warming the workspace in the
    background as `Lifecycle._warm` does, the first request sent at once."""
    bridge = Bridge(root, ["basedpyright", "ruff"])
    warming = bridge.loop.run(_start_warming(bridge))
    try:
        yield bridge
    finally:
        bridge.loop.loop.call_soon_threadsafe(warming.cancel)
        bridge.close()


async def _start_warming(bridge: Bridge) -> asyncio.Task[list[str]]:
    return asyncio.ensure_future(bridge.service.session.servers.open_workspace())


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
        for bridge in fresh(rich):
            started = time.monotonic()
            first(bridge, messy)
            firsts.append(time.monotonic() - started)
            then(bridge, messy)
    print(f"first answers of {len(firsts)} fresh daemons: " + ", ".join(f"{s:.1f}" for s in firsts) + " s")
    stress.figure("a fresh daemon's first answer, the slowest", max(firsts))


USERS = 3  # fresh Neovims of a user's (the remote plugin, a socket, agents' connections)


def test_in_a_user_s_neovim_too(rich: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The same in a human's Neovim with basedpyright and ruff enabled: an agent's first
    request over the socket, right after the service published its session."""
    env = register_remote_plugin(tmp_path_factory.mktemp("rplugin"))
    messy = rich / "rich" / "messy.py"
    for n in range(USERS):
        messy.write_text(MESSY)
        editor = HumanNvim(rich, env, ["basedpyright", "ruff"])
        try:
            with Connection(editor.session.socket, name=f"agent{n}") as conn:
                first = {"mode": "hover", "locate": "rich/console.py:Console.print", "format": "json"}
                then = {"mode": "format", "locate": "rich/messy.py:f", "format": "json"}
                for payload in (first, then) if n % 2 == 0 else (then, first):
                    answer = conn.call("request", {"request": payload})
                    assert answer["ok"], answer
                    report = json.loads(answer["text"])
                    if payload is first:
                        assert report["server"] == "basedpyright" and "def print(" in report["hover"], report
                    else:
                        assert report["server"] == "ruff", report
                        text = messy.read_text()
                        assert text.startswith(F_FORMATTED) and text.endswith(G_UNTOUCHED), text
        finally:
            editor.close()
