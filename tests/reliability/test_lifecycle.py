"""The start of a session (lsap_bridge/lifecycle.py), which the editor's and the daemon's
share: an edit a crash left unfinished is settled before the socket serves. The editor's
side is test_crash.py; here the daemon's, started the way `lsap` starts it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lsap_bridge.client import Connection
from lsap_bridge.journal import RECORD

from .processes import start_daemon

pytestmark = pytest.mark.integration

# Prepares and commits a journal for one file, then stops dead (no clean-up, like a crash
# in the middle of the switch): the next start must complete it.
CRASH = textwrap.dedent("""
    import os, sys
    from pathlib import Path
    from lsap_bridge.filestate import content_hash
    from lsap_bridge.journal import Change, Journal
    path, journals, label = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    old = path.read_bytes()
    journal = Journal.prepare(journals, label, [Change(path, old + b"# edited\\n", content_hash(old))],
                              [Path(sys.argv[4])])
    journal.marker.touch()
    os._exit(0)
""")


def test_the_daemon_settles_an_edit_a_crash_left_before_it_serves(shop: Path, reap: set[int]) -> None:
    journals = Path(os.environ["XDG_STATE_HOME"]) / "nvim" / "lsap" / "journal"
    target = shop / "shop" / "models.py"
    before = target.read_bytes()
    label = f"an edit of {target}"
    subprocess.run([sys.executable, "-c", CRASH, str(target), str(journals), label, str(shop.resolve())],
                   check=True, timeout=60)
    assert target.read_bytes() == before, "committed, not switched yet"
    process, info = start_daemon(shop, reap)  # serving: it answered a hover
    try:
        assert target.read_bytes() == before + b"# edited\n"
        assert not list(journals.glob("*.json"))
        assert f"({label}, 1 file" in (journals / RECORD).read_text()
    finally:
        with Connection(info.socket) as conn:
            conn.call("shutdown")
        process.wait(30)


def test_a_crafted_journal_is_moved_aside_and_the_daemon_starts(shop: Path, reap: set[int]) -> None:
    """A committed journal naming a file outside the workspace (recording the workspace as
    its root), and a directory named like a journal: the daemon serves, the file outside is
    as it was, both are in rejected/, and the log says why."""
    journals = Path(os.environ["XDG_STATE_HOME"]) / "nvim" / "lsap" / "journal"
    journals.mkdir(parents=True, exist_ok=True)
    outside = shop.parent / "precious.txt"
    outside.write_text("keep me\n")
    temp = shop.parent / ".precious.txt.lsap-0123456789ab.new"
    temp.write_text("evil\n")
    entry = {"path": str(outside), "old": None, "new": "0" * 32, "temp": str(temp), "backup": None,
             "in_place": False}
    (journals / "0123456789ab.json").write_text(json.dumps(
        {"id": "0123456789ab", "label": "crafted", "pid": 1, "started": 0.0,
         "roots": [str(shop.resolve())], "files": [entry]}))
    (journals / "0123456789ab.committed").touch()
    (journals / "x.json").mkdir()
    process, info = start_daemon(shop, reap)  # serving: it answered a hover
    try:
        assert outside.read_text() == "keep me\n" and temp.read_text() == "evil\n"
        rejected = sorted(p.name.split(".json")[0] for p in (journals / "rejected").iterdir())
        assert rejected == ["0123456789ab", "x"]
        log = (shop.parent / "daemon.log").read_text()
        assert "moved to" in log and "outside the roots of this session" in log, log[-2000:]
    finally:
        with Connection(info.socket) as conn:
            conn.call("shutdown")
        process.wait(30)
