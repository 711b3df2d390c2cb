"""SIGKILL in the middle of a rename of a symbol used in a few hundred files, in the human's
real Neovim (the service in its Python host, basedpyright attached), several times: after
a restart every file is wholly old or wholly new, the whole set agrees, nothing of the
edit is left beside the files, and the recovery is in the log and `:checkhealth lsap`.

Each round kills once the edit's journal is on disk (the window in which files change):
either Neovim alone (its Python host then finds Neovim gone and settles the edit itself, or
dies at the end of its input wherever it is) or Neovim with every process under it (a crash
of the whole editor: the next start settles the edit). Round 0, the suite's one round, kills
the whole editor while its host holds the edit with the journal written and no file switched
(`held_switch`): the next start settles a journal every time. The other rounds (under
stress) kill at a random moment of the edit as it runs.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import threading
import time
from pathlib import Path

import pytest

from lsap_bridge.client import ClientError, Connection
from tests import stress
from tests.integration import held_switch
from tests.integration.human import HumanNvim, register_remote_plugin
from tests.integration.nvim_home import checkhealth, section
from tests.reliability.test_exit import running, tree

pytestmark = [pytest.mark.integration, pytest.mark.slow]

FILES = 300
ROUNDS = 4  # under stress (round 0 held, then random moments of the rename); 1 in the suite: round 0
OLD_NAME, NEW_NAME = "Widget", "Gadget"
RENAME = {"mode": "rename", "locate": f"pkg/core.py@class <|>{OLD_NAME}", "new_name": NEW_NAME}


def module(i: int, name: str) -> str:
    return f"from .core import {name}\n\n\ndef make_{i}(size: int) -> {name}:\n    return {name}(size)\n"


def core(name: str) -> str:
    return f'class {name}:\n    """A part."""\n\n    def __init__(self, size: int) -> None:\n        self.size = size\n'


def project(root: Path) -> dict[str, tuple[str, str]]:
    """The generated files, each with its text before and after the rename."""
    files = {"pkg/core.py": (core(OLD_NAME), core(NEW_NAME))}
    files |= {f"pkg/mod_{i:03d}.py": (module(i, OLD_NAME), module(i, NEW_NAME)) for i in range(FILES)}
    (root / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "parts"\n')
    (root / "pkg" / "__init__.py").write_text("")
    for rel, (old, _new) in files.items():
        (root / rel).write_text(old)
    return files


def states(root: Path, files: dict[str, tuple[str, str]]) -> dict[str, str]:
    """Per file: "old", "new", or what else it holds (a torn file)."""
    out = {}
    for rel, (old, new) in files.items():
        text = (root / rel).read_text()
        out[rel] = "old" if text == old else "new" if text == new else f"torn: {text!r}"
    return out


def kill(editor: HumanNvim, everything: bool) -> None:
    """SIGKILL Neovim (and with `everything`, every process under it), then wait until all
    of them are gone: the host and the servers go once their input ends."""
    family = tree(editor.pid)
    for pid in family if everything else {editor.pid}:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    editor.process.wait(10)
    deadline = time.monotonic() + 30
    while any(running(pid) for pid in family):
        assert time.monotonic() < deadline, f"still running: {[p for p in family if running(p)]}"
        time.sleep(0.1)


def ask_rename(socket: str) -> None:
    """An agent asks for the rename (its answer is lost with the editor)."""
    with contextlib.suppress(ClientError, OSError), Connection(socket) as agent:
        agent.call("request", {"request": RENAME})


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return register_remote_plugin(tmp_path_factory.mktemp("rplugin"))


@pytest.mark.stress
def test_sigkill_during_a_rename_of_hundreds_of_files(env: dict[str, str], tmp_path: Path) -> None:
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    settled_at_start = 0
    for number in range(stress.trials(ROUNDS)):
        root = tmp_path / f"round{number}"
        files = project(root)
        state = tmp_path / f"state{number}"
        home = {**env, "XDG_STATE_HOME": str(state)}
        marker = tmp_path / f"held{number}"
        # Round 0: the edit waits, journal written, until the kill.
        hold = held_switch.environment(marker) if number == 0 else {}
        journals, log = state / "nvim" / "lsap" / "journal", state / "nvim" / "lsap.log"
        editor = HumanNvim(root, home | hold, ["basedpyright"])
        with Connection(editor.session.socket) as conn:  # basedpyright indexes the files
            assert conn.call("request", {"request": {**RENAME, "mode": "rename_preview"}})["ok"]
        agent = threading.Thread(target=ask_rename, args=(editor.session.socket,), daemon=True)
        agent.start()
        if hold:
            held_switch.held(marker)
            assert any(journals.glob("*.json")), "the edit was held before its journal was written"
        deadline = time.monotonic() + 120
        while not any(journals.glob("*.json")) and agent.is_alive():
            assert time.monotonic() < deadline, "no edit journal appeared"
            time.sleep(0.002)
        delay = 0.0 if number == 0 else rng.uniform(0, 0.3)
        time.sleep(delay)
        everything = number % 2 == 0
        kill(editor, everything)
        agent.join(30)
        left = sorted(journals.glob("*.json"))
        before = states(root, files)
        context = f"seed {seed}, round {number}, delay {delay:.3f} s, kill all: {everything}"
        if hold:  # killed where it was held: the journal left, every file as it was
            assert left and set(before.values()) == {"old"}, f"{context}: {left} {before}"

        restarted = HumanNvim(root, home, ["basedpyright"])  # settles what was left
        try:
            after = states(root, files)
            assert set(after.values()) in ({"old"}, {"new"}), f"{context}: {after}"
            assert not [p for p in root.rglob("*") if ".lsap-" in p.name], context
            assert not list(journals.glob("*.json")), context
            record = (journals / "recovered.log").read_text() if left else ""
            if left:  # settled by this start: logged, and shown by :checkhealth
                settled_at_start += 1
                assert f"(rename {OLD_NAME} → {NEW_NAME}, {FILES + 1} files" in record, context
                assert "every file has its new content" in record or "no file had been changed" in record
                assert "[python] lsap.journal: lsap: an edit left unfinished" in log.read_text()
                health = section(checkhealth(restarted.nvim), "Edit journal")
                assert "settled after a crash" in health and "no unfinished edit" in health, health
            elif set(before.values()) != {"old"}:  # the host settled it, or it was done
                assert set(before.values()) == {"new"}, f"{context}: {before}"
        finally:
            restarted.close()
    assert settled_at_start, f"seed {seed}: no round left a journal for the next start to settle"
