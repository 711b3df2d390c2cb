"""An edit held at the moment it is most exposed, in a human's Neovim (its Python host): the
edit's journal is on disk and no file has been switched yet. The host of a Neovim started
with `environment(marker)` (this directory on PYTHONPATH: `sitecustomize.py`) holds every
edit's call to Neovim that switches the files (`EditorGateway.apply_edits`) for good, once
it has created `marker`: a test waits for the marker (`held`), then quits or kills the
editor there, every time, where repeated runs used to land there only now and then."""

from __future__ import annotations

from pathlib import Path

from tests.integration.nvim_home import wait_for

VARIABLE = "LSAP_TEST_HOLD_SWITCH"
HERE = Path(__file__).resolve().parent


def environment(marker: Path) -> dict[str, str]:
    """The variables that make a Neovim's host hold its edits' switch (see the module)."""
    return {"PYTHONPATH": str(HERE), VARIABLE: str(marker)}


def held(marker: Path, timeout: float = 120) -> None:
    """Wait until the host holds an edit: its journal written, no file switched. A hang
    bound: a rename of a few hundred files is planned in seconds."""
    wait_for(lambda: marker.exists() or None, timeout, "the edit to be held before its switch")
