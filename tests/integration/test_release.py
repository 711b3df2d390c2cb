"""`make release` on a clean clone (issue 34): from nothing but the repository's commits it
sets up, checks, builds the sdist and the wheel, checks them with twine, runs the wheel test
on them, and ends with the upload command printed, never run. (Its own file: `make release`
runs test_wheel.py, which must not run this again.)

This is where `make test` runs the wheel tests (issue 28): its main run leaves
tests/integration/test_wheel.py out (`--ignore`), since `make release` here runs every one
of them on the clone's own `dist/`; so this test asserts that each test the clone's
test_wheel.py collects passed, none skipped."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

from .nvim_home import path_outside_checkout

# The clone's set-up, checks, archives and wheel tests take about 5 minutes on a loaded 2-core
# machine (11 beside a whole `make test` of another checkout): far above the 300 s default.
pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(2400)]

# The wheel tests as of issue 28 (test_wheel.py): a floor, so that none goes missing unseen.
WHEEL_TESTS = 6


def test_make_release_on_a_clean_clone(tmp_path: Path) -> None:
    clone = tmp_path / "lsap.nvim"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True, timeout=120)
    # Nothing of this checkout (its venv, node_modules) on PATH: the clone brings its own.
    # Nor of the `make test` (or its xdist worker) this may run under: a user types `make
    # release` in a shell.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("VIRTUAL_ENV", "LSAP_", "PYTHON", "PYTEST_", "MAKE", "MFLAGS"))}
    env["PATH"] = os.pathsep.join(path_outside_checkout())
    base_python = str(Path(sys.base_prefix) / "bin" / "python3")
    done = subprocess.run(["make", "release", f"PYTHON={base_python}"], cwd=clone, env=env,
                          capture_output=True, text=True, timeout=1800)
    out = done.stdout
    assert done.returncode == 0, out[-4000:] + done.stderr[-4000:]
    dist = sorted(p.name for p in (clone / "dist").iterdir())
    assert len(dist) == 2 and dist[0].endswith("-py3-none-any.whl") and dist[1].endswith(".tar.gz"), dist
    for name in dist:
        assert f"Checking dist/{name}: \x1b[32mPASSED" in out or f"Checking dist/{name}: PASSED" in out, out
    # Every wheel test ran and passed: as many as the clone's test_wheel.py holds, none
    # failed, none was skipped.
    collected = subprocess.run([str(clone / ".venv" / "bin" / "pytest"), "--collect-only", "-q",
                                "tests/integration/test_wheel.py"], cwd=clone, env=env, capture_output=True,
                               text=True, timeout=120).stdout
    [count] = re.findall(r"^(\d+) tests? collected", collected, re.M)
    assert int(count) >= WHEEL_TESTS, collected
    assert re.search(rf"^{count} passed in [\d.]+s", out, re.M), out[-2000:]
    assert out.rstrip().endswith("release: to publish, after the checklist in CONTRIBUTING.md:\n"
                                 "  .venv/bin/twine upload dist/*"), out[-1000:]
    assert f"release: checked {dist[0]} {dist[1]}" in out
