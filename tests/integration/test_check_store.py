"""Issue 35: `check`'s record survives the daemon — a baseline, `lsap daemon stop`, an edit
while no daemon runs, then `check` reports the edit's error as new (lsap_bridge/check_store.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


def lsap(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lsap_bridge", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "LSAP_SERVERS": "basedpyright"}, check=False)


def test_a_restarted_daemon_reports_the_edit_made_meanwhile_as_new(shop: Path) -> None:
    try:
        baseline = lsap(shop, "check")
        assert baseline.returncode == 0, baseline.stderr
        assert baseline.stdout.startswith("# Check 1: baseline recorded"), baseline.stdout
        assert lsap(shop, "daemon", "stop").returncode == 0
        models = shop / "shop" / "models.py"
        models.write_text(models.read_text() + "\nbroken: int = 'not a number'\n")
        after = lsap(shop, "check")
        assert after.stdout.startswith("# Check 2: new 1 error since "), after.stdout
        assert "Changed: shop/models.py" in after.stdout
        assert '"Literal[\'not a number\']" is not assignable to "int"' in after.stdout
    finally:
        lsap(shop, "daemon", "stop")


def test_the_baseline_says_how_many_files_its_cap_left_out(shop: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lsap_bridge.capabilities import check

    from .harness import Bridge

    monkeypatch.setattr(check, "FILES_LIMIT", 3)
    bridge = Bridge(shop, ["basedpyright"])
    try:
        text = bridge.request({"mode": "check"}).text
        assert text.startswith("# Check 1: baseline recorded\n\n3 files checked"), text
        assert ("> 2 more files not in the baseline (it holds the workspace's first 3): an edit to one "
                "of them is compared only when the file is given in `file_path`.") in text
    finally:
        bridge.close()
