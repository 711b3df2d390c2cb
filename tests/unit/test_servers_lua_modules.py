"""The Lua half of the server adapters (issue 49): lua/lsap/servers/<name>.lua, one module per
server, found by `lsap.servers` with no change elsewhere; the embedded mode's preference is
the modules' own `preference`."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from lsap_bridge.embedded import nvim_program
from tests.conftest import ROOT

FAKELS = """return {
  preference = { 5, 1 },
  package = { pip = 'fakels' },
  config = { cmd = { 'fakels' }, filetypes = { 'fake' }, root_markers = { '.git' } },
}
"""
SHOW = """vim.opt.rtp:prepend(arg[1])
local servers = require('lsap.servers')
io.stdout:write(vim.json.encode({ preference = servers.preference, packages = servers.packages }))"""


def declared(root: Path, tmp_path: Path) -> dict[str, object]:
    script = tmp_path / "show.lua"
    script.write_text(SHOW)
    done = subprocess.run([nvim_program(), "--clean", "--headless", "-l", str(script), str(root)],
                          capture_output=True, text=True, timeout=30, check=True)
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_the_embedded_preference_is_the_modules(tmp_path: Path) -> None:
    found = declared(ROOT, tmp_path)
    assert found["preference"] == [["basedpyright", "pyright", "pylsp"], ["ruff"], ["ts_ls", "vtsls"], ["clangd"]]


def test_a_new_servers_module_is_used_with_no_change_elsewhere(tmp_path: Path) -> None:
    copy = tmp_path / "plugin"
    shutil.copytree(ROOT / "lua", copy / "lua")
    (copy / "lua" / "lsap" / "servers" / "fakels.lua").write_text(FAKELS)
    found = declared(copy, tmp_path)
    assert found["preference"] == [["basedpyright", "pyright", "pylsp"], ["ruff"], ["ts_ls", "vtsls"], ["clangd"],
                                   ["fakels"]]
    assert found["packages"]["fakels"] == {"pip": "fakels"}  # type: ignore[index]
