""":qa! while a language server's diagnostics pour in: Neovim's exit runs every event still
queued (its process teardown waits until the queue is empty), each publish a scheduled
handler, and a server still sending keeps adding to it. lsap wraps the publish handler
(`compat.on_publish`, installed as the service starts watching, `seen.watch`): once Neovim
is exiting, it drops them, so the exit is not held by them however many there are
(doc/lsap.txt, lsap-exit). The flood is that of test_quit.py's rename of 100 files being
applied: 100 buffers changed, 100 publishes each, quit as they arrive."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lsap_bridge.embedded import nvim_program
from tests import stress
from tests.conftest import ROOT

pytestmark = [pytest.mark.integration, pytest.mark.stress]

FLOOD = 20000  # publishes sent at once; their drain held the exit 1.6-2.1 s before the fix
LIMIT = 0.5  # seconds from :qa! to no Neovim (0.05 s with the fix, on an idle machine): the stress target
# The suite's bound: 30x the exit with the fix, below the 1.6 s the drain held it without.
HELD = 1.5

INIT = """
vim.opt.rtp:prepend({root!r})
vim.o.swapfile = false
require('lsap.transport.seen').watch(vim.api.nvim_create_augroup('lsap_test', {{}}))
local heard = false
vim.api.nvim_create_autocmd('DiagnosticChanged', {{ callback = function()
  if heard then return end
  heard = true -- the first publish: the rest are queued or on their way
  vim.schedule(function()
    local out = io.open({out!r}, 'w')
    out:write(('%.6f'):format(vim.uv.hrtime() / 1e9)) -- CLOCK_MONOTONIC, as time.monotonic
    out:close()
    vim.cmd('qa!')
  end)
end }})
vim.api.nvim_create_autocmd('VimEnter', {{ callback = function()
  vim.lsp.start({{ name = 'flood', cmd = {{ {python!r}, {server!r}, '{flood}' }}, root_dir = {root_dir!r} }})
end }})
"""


def test_quit_while_diagnostics_pour_in(tmp_path: Path) -> None:
    quit_at = tmp_path / "quit_at"
    init = tmp_path / "init.lua"
    init.write_text(INIT.format(root=str(ROOT), out=str(quit_at), python=sys.executable, flood=FLOOD,
                                server=str(Path(__file__).with_name("flood_server.py")), root_dir=str(tmp_path)))
    (tmp_path / "notes.txt").write_text("hello\n")
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_DATA_HOME": str(tmp_path / "data")}
    nvim = subprocess.Popen([nvim_program(), "--headless", "--clean", "-u", str(init), "-i", "NONE", "notes.txt"],
                            cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        nvim.wait(60)
    except subprocess.TimeoutExpired:
        nvim.kill()
        nvim.wait()
        raise AssertionError("Neovim did not quit within 60 s of its start") from None
    gone = time.monotonic()
    assert quit_at.exists(), f"no publish was heard; Neovim said: {nvim.stderr.read().decode()[-2000:]}"
    took = gone - float(quit_at.read_text())
    print(f"publishes: exit {took:.2f} s after :qa! with {FLOOD} on their way")
    stress.figure(f"exit after :qa! with {FLOOD} publishes on their way", took, at_most=LIMIT)
    assert took < HELD, f"Neovim took {took:.2f} s to exit after :qa! as {FLOOD} publishes poured in"
