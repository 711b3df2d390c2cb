"""The start of a session (lsap_bridge/lifecycle.py), which the editor's and the daemon's
share: an edit a crash left unfinished is settled before the socket serves. The editor's
side is test_crash.py; here the daemon's, started the way `lsap` starts it."""

from __future__ import annotations

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
    journal = Journal.prepare(journals, label, [Change(path, old + b"# edited\\n", content_hash(old))])
    journal.marker.touch()
    os._exit(0)
""")


def test_the_daemon_settles_an_edit_a_crash_left_before_it_serves(shop: Path, reap: set[int]) -> None:
    journals = Path(os.environ["XDG_STATE_HOME"]) / "nvim" / "lsap" / "journal"
    target = shop / "shop" / "models.py"
    before = target.read_bytes()
    label = f"an edit of {target}"
    subprocess.run([sys.executable, "-c", CRASH, str(target), str(journals), label], check=True, timeout=60)
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
