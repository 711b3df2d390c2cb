"""Language-server faults on a real headless Neovim, with a fake server that hangs, dies or
answers garbage on demand (tests/reliability/fault_server.py): every fault becomes an error
report within the timeout, and the next request works once the server is back."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge.service import Response
from tests.integration.harness import Bridge

pytestmark = pytest.mark.integration

SERVER = Path(__file__).with_name("fault_server.py")
HOVER = {"mode": "hover", "locate": "notes.fault@beta gamma"}


@pytest.fixture(scope="module")
def faulty(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    root = tmp_path_factory.mktemp("faults")
    (root / "notes.fault").write_text("alpha beta gamma\ndelta beta2\n")
    bridge = Bridge(root, ["none"])
    bridge.lua(
        "local python, server, pidfile, root = ...;"
        "vim.filetype.add({extension = {fault = 'faulty'}});"
        "vim.lsp.config('fault', {cmd = {python, server, pidfile, 'ok'}, filetypes = {'faulty'},"
        "  root_dir = root});"
        "vim.lsp.enable('fault')",
        sys.executable,
        str(SERVER),
        str(root / "server.pid"),
        str(root),
    )
    yield bridge
    bridge.close()


@pytest.fixture
def server(faulty: Bridge) -> Iterator[Path]:
    """The pid file; the behaviour file is removed after each test (back to `ok`)."""
    pid_file = faulty.root / "server.pid"
    faulty.embedded.gateway.timeouts.request = 20
    yield pid_file
    pid_file.with_suffix(".mode").unlink(missing_ok=True)


def behave(pid_file: Path, mode: str) -> None:
    pid_file.with_suffix(".mode").write_text(mode)


def healthy(bridge: Bridge) -> Response:
    response = bridge.request(HOVER)
    assert response.ok, response.text
    assert "fine answer" in response.text
    return response


def server_pid(pid_file: Path) -> int:
    return int(pid_file.read_text())


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead too (Neovim reaps it soon)
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def test_a_server_that_never_answers_gives_timeout(faulty: Bridge, server: Path) -> None:
    healthy(faulty)
    faulty.embedded.gateway.timeouts.request = 2
    behave(server, "hang")
    started = time.monotonic()
    response = faulty.request(HOVER)
    elapsed = time.monotonic() - started
    assert response.error is not None and response.error.code.value == "timeout", response.text
    assert "2 s" in response.text
    # Not before the 2 s timeout; the upper bound detects a missed one (5x, not the 30 s wait).
    assert 2 <= elapsed < 10
    server.with_suffix(".mode").unlink()
    healthy(faulty)  # the server is still there: the next request works


def test_a_timeout_while_the_server_reports_indexing_says_so(faulty: Bridge, server: Path) -> None:
    healthy(faulty)
    faulty.embedded.gateway.timeouts.request = 2
    behave(server, "indexing")
    response = faulty.request(HOVER)
    error = response.error
    assert error is not None and error.code.value == "timeout", response.text
    assert error.hint is not None and "fault is still indexing (Indexing 40%" in error.hint, error.hint
    assert "restart" not in error.hint and "hung" not in error.hint
    server.with_suffix(".mode").unlink()
    healthy(faulty)


def test_a_timeout_from_a_stopped_server_says_hung_and_how_to_restart(faulty: Bridge, server: Path) -> None:
    """SIGSTOP: no progress, no answer, the last answer older than the wait."""
    healthy(faulty)
    time.sleep(0.5)
    faulty.embedded.gateway.timeouts.request = 2
    pid = server_pid(server)
    os.kill(pid, signal.SIGSTOP)
    try:
        response = faulty.request(HOVER)
    finally:
        os.kill(pid, signal.SIGCONT)
    error = response.error
    assert error is not None and error.code.value == "timeout", response.text
    assert "fault did not answer within 2 s" in error.message
    assert error.hint is not None and "fault is busy or hung" in error.hint, error.hint
    assert "its last answer was" in error.hint and "indexing" not in error.hint
    # The bridge's embedded Neovim: the daemon is what an agent restarts.
    assert "`lsap daemon stop`" in error.hint
    assert response.text.count("Next:") == 1
    healthy(faulty)


def test_a_server_killed_mid_request_gives_server_error_then_restarts(
    faulty: Bridge, server: Path
) -> None:
    healthy(faulty)
    old = server_pid(server)
    behave(server, "hang")
    pending = asyncio.run_coroutine_threadsafe(faulty.service.handle(HOVER), faulty.loop.loop)
    time.sleep(0.5)
    assert not pending.done()
    started = time.monotonic()
    os.kill(old, signal.SIGKILL)
    response = pending.result(30)
    elapsed = time.monotonic() - started
    assert response.error is not None and response.error.code.value == "server_error", response.text
    assert "fault" in response.text and "exited" in response.text
    assert elapsed < 5, f"{elapsed:.1f} s: the error came at the timeout, not when the server died"
    server.with_suffix(".mode").unlink()
    healthy(faulty)  # the bridge starts the server again for the buffer
    assert server_pid(server) != old and alive(server_pid(server))


def test_a_server_crashing_on_a_request_gives_server_error_then_restarts(
    faulty: Bridge, server: Path
) -> None:
    healthy(faulty)
    old = server_pid(server)
    behave(server, "exit")
    started = time.monotonic()
    response = faulty.request(HOVER)
    assert response.error is not None and response.error.code.value == "server_error", response.text
    assert time.monotonic() - started < 5
    server.with_suffix(".mode").unlink()
    healthy(faulty)
    assert server_pid(server) != old


@pytest.mark.parametrize(
    "payload",
    [
        HOVER,
        {"mode": "definition", "locate": "notes.fault@beta gamma"},
        {"mode": "references", "locate": "notes.fault@beta gamma"},
        {"mode": "locate", "locate": "notes.fault@beta gamma"},
        {"mode": "outline", "file_path": "notes.fault"},
        {"mode": "inspect", "locate": "notes.fault@beta gamma"},
    ],
)
def test_malformed_results_are_reported_not_crashed_on(
    faulty: Bridge, server: Path, payload: dict[str, Any]
) -> None:
    healthy(faulty)
    behave(server, "garbage")
    response = faulty.request(payload)
    if response.error is not None:
        assert response.error.code.value in ("server_error", "unsupported", "not_found"), (
            response.text
        )
        assert "Traceback" not in response.text and len(response.error.message) > 10
    assert "nowhere.x" not in response.text  # a bogus location outside the root is not shown
    server.with_suffix(".mode").unlink()
    healthy(faulty)


def descendants(pid: int) -> dict[int, str]:
    """Processes under pid, with their command lines (from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int(
                    (entry / "stat").read_text().rsplit(")", 1)[1].split()[1]
                )
            except OSError:
                continue
    found: dict[int, str] = {}
    todo = [pid]
    while todo:
        current = todo.pop()
        for child, parent in parents.items():
            if parent == current and child not in found:
                try:
                    found[child] = (
                        Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ")
                    ).decode()
                except OSError:
                    continue
                todo.append(child)
    return found


def test_a_real_server_killed_is_started_again_by_the_next_request(faulty: Bridge) -> None:
    """basedpyright from the embedded configs (vim.lsp.config + vim.lsp.enable), SIGKILLed:
    the next request brings it back through the same config and gets its answer."""
    (faulty.root / "mod.py").write_text(
        "def greet(name: str) -> str:\n    return name\n\n\nX = greet('a')\n"
    )
    faulty.lua("require('lsap.servers').enable({'basedpyright'}, ...)", str(faulty.root))
    ask = {"mode": "references", "locate": "mod.py@def <|>greet"}
    first = faulty.request(ask)
    assert first.ok, first.text
    servers = {
        pid: cmd
        for pid, cmd in descendants(faulty.embedded.gateway.nvim_pid).items()
        if "basedpyright" in cmd
    }
    assert servers, descendants(faulty.embedded.gateway.nvim_pid)
    for pid in servers:
        os.kill(pid, signal.SIGKILL)
    time.sleep(0.5)
    again = faulty.request(ask)
    assert again.ok, again.text
    assert again.text == first.text
    now = {
        pid
        for pid, cmd in descendants(faulty.embedded.gateway.nvim_pid).items()
        if "basedpyright" in cmd
    }
    assert now and not now & set(servers), "a new server process answered"
