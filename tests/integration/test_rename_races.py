"""A foreign writer racing a rename through pylsp, one window at a time (issue 47), with a
real pylsp: whatever the moment, the writer's text is kept or the rename is a `conflict`.

pylsp's renames are jedi's: whole-file replacements, which the bridge turns into the few
edits that make the same text (`edits.text.minimal`) and checks against the old name
(`edits.names.check_replaced`). The windows, each held open on purpose:

- the server's read: the writer rewrites a file no buffer holds after jedi read it, before
  the request, keeping its mtime (as a write within the clock tick of jedi's read does):
  jedi's parse cache gives it the old text while the disk, unchanged since the request
  began, proves the writer's: only the replacement itself shows it was computed on
  another text (every line it changes must be the old name made the new one);
- the proof at the switch: the writer truncates the file after the engine proved it, and
  writes once the switch is over (a plain `open(path, "w")` then `.write`);
- the roll-back: the writer rewrites a file Neovim has just written in place, and the
  switch then fails on the next file: everything goes back, except the writer's file.

The random-moment figure (50 runs) is benchmarks/pylsp_race.py.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from lsap_bridge.edits import switch

from .harness import Bridge, Pool

pytestmark = pytest.mark.integration

if shutil.which("pylsp") is None:
    pytest.skip("pylsp is not installed", allow_module_level=True)

RENAME = {"mode": "rename", "locate": "gizmos.py@class <|>Gizmo0", "new_name": "Gizmo1", "format": "json"}
ORIGINAL = "from gizmos import Gizmo0\n\n\ndef make() -> Gizmo0:\n    return Gizmo0()\n"
# The writer's text: a line of its own between two uses, so that reverting it and renaming
# them is one hunk of the diff that also holds the old name.
WRITTEN = "from gizmos import Gizmo0\n\n\ndef make() -> Gizmo0:\n    # the writer's line\n    return Gizmo0()\n"


def project(root: Path) -> None:
    (root / "gizmos.py").write_text("class Gizmo0:\n    pass\n")
    for index in range(3):
        (root / f"m{index}.py").write_text(ORIGINAL)


@pytest.fixture
def bridge(bridges: Pool, tmp_path_factory: pytest.TempPathFactory) -> Bridge:
    source = tmp_path_factory.getbasetemp() / "gizmos-source"
    if not source.exists():
        source.mkdir()
        project(source)
    return bridges.take(("pylsp",), "gizmos", source, restart=True)


def kept_or_refused(bridge: Bridge, victim: Path, response: Any) -> None:
    """The property: a rename answered ok left the writer's text (renamed at most); a
    refused one changed nothing else either."""
    held = victim.read_text()
    if response.ok:
        assert held in (WRITTEN, WRITTEN.replace("Gizmo0", "Gizmo1")), f"the writer's text is gone: {held!r}"
    else:
        assert response.error is not None and response.error.code.value == "conflict", response.text
        assert held == WRITTEN
        assert "class Gizmo0:" in (bridge.root / "gizmos.py").read_text()


def test_a_write_jedi_did_not_read_is_never_reverted(bridge: Bridge) -> None:
    victim = bridge.root / "m1.py"
    # jedi reads every module from disk (its parse cache keeps them by mtime); no buffer
    # holds m1.py, so pylsp names no version for it and the disk is the proof.
    assert bridge.ask(mode="references", locate="gizmos.py@class <|>Gizmo0")
    assert bridge.buffer_lines(victim) == []
    before = os.stat(victim)
    victim.write_text(WRITTEN)
    os.utime(victim, ns=(before.st_atime_ns, before.st_mtime_ns))  # the same clock tick
    response = bridge.request(RENAME)
    kept_or_refused(bridge, victim, response)


@pytest.fixture
def held_after_proof() -> Iterator[list[IO[str]]]:
    """The engine held right after it proved the files (`switch._proved`): the writer opens
    (truncates) the victim there; the test writes once the switch is over."""
    opened: list[IO[str]] = []
    proved = switch._proved

    def proving(plan: Any, display: Any) -> Any:
        now = proved(plan, display)
        victim = next(f.path for f in plan.on_disk if f.path.name == "m1.py")
        opened.append(open(victim, "w"))  # noqa: SIM115 (written after the switch)
        return now

    switch._proved = proving  # type: ignore[assignment]
    try:
        yield opened
    finally:
        switch._proved = proved  # type: ignore[assignment]
        for handle in opened:
            handle.close()


def test_a_truncate_after_the_proof_and_a_write_after_the_switch(
        bridge: Bridge, held_after_proof: list[IO[str]]) -> None:
    victim = bridge.root / "m1.py"
    response = bridge.request(RENAME)
    [handle] = held_after_proof
    handle.write(WRITTEN)
    handle.close()
    kept_or_refused(bridge, victim, response)


# Neovim's write of the second buffer the switch writes fails, after a writer rewrote the
# first one (`write` in lua/lsap/edits.lua runs `:write!` through vim.cmd).
FAIL_SECOND_WRITE = """
local text = ...
local cmd, written = vim.cmd, {}
vim.cmd = setmetatable({}, { __index = cmd, __call = function(_, command, ...)
  if type(command) == 'string' and command:find('lockmarks write!', 1, true) then
    if #written == 1 then
      vim.cmd = cmd
      local file = assert(io.open(written[1], 'w'))
      file:write(text)
      file:close()
      error('E212: injected: cannot open the file for writing')
    end
    written[#written + 1] = vim.api.nvim_buf_get_name(0)
  end
  return cmd(command, ...)
end })
_G.lsap_race_written = written
"""


def test_a_roll_back_keeps_a_write_made_after_the_switch(bridge: Bridge) -> None:
    paths = [bridge.root / name for name in ("gizmos.py", "m0.py", "m1.py", "m2.py")]
    for path in paths:  # loaded, unmodified: Neovim writes each in place
        bridge.lua("require('lsap.transport.disk').open(...)", str(path))
    bridge.lua(FAIL_SECOND_WRITE, WRITTEN)
    try:
        response = bridge.request(RENAME)
    finally:
        victims = bridge.lua("local w = _G.lsap_race_written or {}; _G.lsap_race_written = nil; return w")
        bridge.lua("if getmetatable(vim.cmd) and getmetatable(vim.cmd).__index then "
                   "vim.cmd = getmetatable(vim.cmd).__index end")
    assert response.error is not None, response.text
    [victim] = [Path(p) for p in victims]
    assert victim.read_text() == WRITTEN, "the writer's text was rolled back"
    for path in paths:
        if path != victim:
            assert "Gizmo1" not in path.read_text(), f"{path.name} was not rolled back"
