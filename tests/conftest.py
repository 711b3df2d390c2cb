"""Shared fixtures: isolated XDG dirs, an event loop per session, the example project."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "shop"


@pytest.fixture(scope="session", autouse=True)
def isolated_xdg(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Neovim state, logs and the lsap runtime dir live in a temp dir, never in $HOME."""
    base = tmp_path_factory.mktemp("xdg")
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR"):
        path = base / name.lower()
        path.mkdir(mode=0o700)
        os.environ[name] = str(path)
    bins = [str(ROOT / "node_modules" / ".bin"), str(Path(os.sys.executable).parent)]
    os.environ["PATH"] = os.pathsep.join([*bins, os.environ.get("PATH", "")])


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """A fresh copy of the example project, free to change."""
    target = tmp_path / "shop"
    shutil.copytree(EXAMPLE, target)
    return target
