"""Shared fixtures: isolated XDG dirs, an event loop per session, the example project; and
the guard that no process a test started (Neovim, a daemon, a language server, tmux)
outlives the session: it ends those still alive when the session ends, however it ends
(all passed, `-k`, one file, Ctrl-C, SIGTERM), and fails the run."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from lsap_bridge import cpu
from tests import schedule

if TYPE_CHECKING:
    from tests.integration.harness import Pool

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "shop"

# Every process the tests start inherits this variable (it is in os.environ before any
# test runs), so the session can find those still alive at its end. Its value is the chain
# of pytest pids above the process (an xdist controller, its worker, a pytest a test runs):
# each session sees what it started and what its workers and their tests started, even a
# worker killed mid-test (an interrupted xdist run), and not a neighbour run's.
MARKER = "LSAP_TEST_RUN"
os.environ[MARKER] = ":".join(filter(None, [os.environ.get(MARKER, ""), str(os.getpid())]))
# An edit's answer waits for its diagnostics after as long as the servers take: tests that
# assert them never depend on how loaded the machine is. This is the documented default of
# setup()'s `diagnostics_wait` (doc/lsap.txt), read by every Neovim the tests start; the
# tests of the short default wait start theirs without it (tests/integration/test_edit_pending.py).
DIAGNOSTICS_WAIT = "LSAP_DIAGNOSTICS_WAIT"
os.environ[DIAGNOSTICS_WAIT] = "settled"
LEFTOVER_GRACE = 5.0  # seconds a process that is exiting gets before it counts as left
END_GRACE = 2.0  # seconds a left process gets to exit on SIGTERM before SIGKILL
WORKERS_LEFT: list[str] = []  # under xdist, in the controller: what the workers found left
GROUPS_FILE = pytest.StashKey[Path]()  # where xdist's workers write their groups (`schedule`)


def leftovers() -> dict[int, str]:
    """The live processes (zombies aside) this session's chain marks, by pid: command line."""
    ours = str(os.getpid()).encode()
    found: dict[int, str] = {}
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            chain = next((var.split(b"=", 1)[1] for var in (entry / "environ").read_bytes().split(b"\0")
                          if var.startswith(f"{MARKER}=".encode())), b"")
            if ours not in chain.split(b":"):
                continue
            if (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue
            found[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()[:160]
        except (OSError, IndexError):
            continue  # gone meanwhile, or not ours to read
    return found


def end(pids: Iterable[int]) -> None:
    """SIGTERM to each, SIGKILL to those still marked ours after `END_GRACE` (a pid is
    looked up again before the kill, never reused blindly)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
        deadline = time.monotonic() + END_GRACE
        while (pids := set(pids) & leftovers().keys()) and time.monotonic() < deadline:
            time.sleep(0.1)


def _interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@pytest.hookimpl(trylast=True)  # after the session fixtures' teardown, and xdist's workers'
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """End what a test left behind and fail the run. An xdist worker ends its own and hands
    their lines to the controller (`pytest_testnodedown`), which ends what is still alive
    (a killed worker's) and reports every worker's with its own: a worker's exit status is
    not the run's."""
    config = session.config
    deadline = time.monotonic() + LEFTOVER_GRACE
    left = leftovers()
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = leftovers()
    end(left)
    lines = [f"  {pid}: {command}" for pid, command in sorted(left.items())]
    if hasattr(config, "workerinput"):  # an xdist worker
        config.workeroutput[MARKER] = lines  # type: ignore[attr-defined]
        return
    lines += WORKERS_LEFT
    if not lines:
        return
    report = [f"{len(lines)} process(es) started by the tests were still alive (ended now):", *lines]
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_sep("=", "processes left behind", red=True)
        reporter.write_line("\n".join(report))
    else:
        print("\n".join(report))
    if os.environ.get("LSAP_TEST_LEFTOVERS") != "report":  # "report": count, do not fail
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object | None) -> None:
    """An xdist worker finished: keep what it found left behind, for the run's report."""
    WORKERS_LEFT.extend(f"{line} (worker {node.gateway.id})"
                        for line in getattr(node, "workeroutput", {}).get(MARKER, []))


@pytest.hookimpl(trylast=True)  # the tests `-m` and `-k` kept
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On `make test`'s xdist workers: the tests grouped by the module fixtures they share,
    the longest units first (`tests/schedule.py`)."""
    if schedule.GROUPS in getattr(config, "workerinput", {}):
        schedule.arrange(config, items)


def pytest_configure(config: pytest.Config) -> None:
    """SIGTERM unwinds the session as Ctrl-C does (the fixtures' teardown, then the guard);
    in xdist's controller (`--dist loadgroup`): the file the workers write their groups
    into, and the durations recorder when asked for."""
    signal.signal(signal.SIGTERM, _interrupted)
    if hasattr(config, "workerinput") or getattr(config.option, "dist", "no") != "loadgroup":
        return
    groups = Path(tempfile.mkdtemp(prefix="lsap-groups-")) / "groups.json"
    config.stash[GROUPS_FILE] = groups
    config.add_cleanup(lambda: shutil.rmtree(groups.parent, ignore_errors=True))
    if schedule.Recorder.wanted():
        config.pluginmanager.register(schedule.Recorder(), "lsap-durations")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    groups = node.config.stash.get(GROUPS_FILE, None)
    if groups is not None:
        node.workerinput[schedule.GROUPS] = str(groups)


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    groups = config.stash.get(GROUPS_FILE, None)
    return None if groups is None else schedule.scheduler(config, log, groups)


@pytest.fixture(scope="session", autouse=True)
def cpu_workers() -> Iterator[None]:
    """The worker processes the bridges of this pytest started (`lsap_bridge.cpu`), ended
    as a session's end ends them, before the check for processes left behind."""
    yield
    cpu.shutdown()


@pytest.fixture(scope="session", autouse=True)
def isolated_xdg(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Neovim state, logs and the lsap runtime dir live in a temp dir, never in $HOME."""
    base = tmp_path_factory.mktemp("xdg")
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR"):
        path = base / name.lower()
        path.mkdir(mode=0o700)
        os.environ[name] = str(path)
    bins = [str(ROOT / "node_modules" / ".bin"), str(Path(sys.executable).parent)]
    os.environ["PATH"] = os.pathsep.join([*bins, os.environ.get("PATH", "")])
    # pip's cache is the run's, shared by its tests and xdist workers as a user's is by
    # their installs: each install test builds a fresh venv and resolves, but downloads a
    # package once, not once per test (each test's own XDG_CACHE_HOME would hold it).
    run = tmp_path_factory.getbasetemp()
    os.environ.setdefault("PIP_CACHE_DIR", str((run.parent if "PYTEST_XDIST_WORKER" in os.environ else run)
                                              / "pip-cache"))


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """A fresh copy of the example project, free to change."""
    target = tmp_path / "shop"
    shutil.copytree(EXAMPLE, target)
    return target


@pytest.fixture(scope="session")
def bridges(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pool]:
    """The run's warm bridges, one per (servers, fixture project), each `reset` to its
    fixture when a test takes it (tests/integration/harness.py, Pool)."""
    from tests.integration.harness import Pool  # the harness imports this module

    pool = Pool(tmp_path_factory.mktemp("pool"))
    yield pool
    pool.close()
