"""The Lua unit tests (tests/lua/test_*.lua), each file in a child headless Neovim run by
tests/lua/runner.lua: a failing case fails here with the runner's output."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from lsap_bridge.embedded import find_nvim
from tests.conftest import ROOT

FILES = sorted((ROOT / "tests" / "lua").glob("test_*.lua"))


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_lua(path: Path, tmp_path: Path) -> None:
    done = subprocess.run([find_nvim(), "--headless", "--clean", "-l", str(ROOT / "tests" / "lua" / "runner.lua"),
                           str(path)], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert " 0 failed" in out and "FAIL" not in out, out
