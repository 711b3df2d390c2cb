"""One real embedded Neovim (basedpyright) over a scratch copy of the example, shared by the
reliability tests, with the agent socket served from the same loop."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from lsap_bridge.server import SocketServer
from tests.conftest import EXAMPLE
from tests.integration.harness import Bridge

from .processes import running


@pytest.fixture(scope="session")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("reliability") / "shop"
    shutil.copytree(EXAMPLE, root)
    return root


@pytest.fixture(scope="session")
def bridge(scratch: Path) -> Iterator[Bridge]:
    bridge = Bridge(scratch, ["basedpyright"])
    yield bridge
    bridge.close()


@pytest.fixture(scope="session")
def socket_server(bridge: Bridge) -> Iterator[SocketServer]:
    path = Path(os.environ["XDG_RUNTIME_DIR"]) / "reliability.sock"
    server = SocketServer(bridge.service, path)
    bridge.loop.run(server.start())
    yield server
    bridge.loop.run(server.close())


@pytest.fixture
def reap() -> Iterator[set[int]]:
    """Pids a test started: whatever still runs when it ends (a failed test) is killed."""
    started: set[int] = set()
    yield started
    for pid in sorted(started):
        if running(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
