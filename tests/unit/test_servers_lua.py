"""The embedded mode's server configs (lua/lsap/servers.lua) find a Python project's root by
the markers nvim-lspconfig uses for basedpyright, pyright and pylsp (a `Pipfile` among them)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from lsap_bridge.embedded import nvim_program
from tests.conftest import ROOT

SERVERS = ("basedpyright", "pyright", "pylsp")
MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "Pipfile")
ROOTS = """vim.opt.rtp:prepend(%r)
local files, out = vim.json.decode(arg[1]), {}
for _, server in ipairs(vim.json.decode(arg[2])) do
  out[server] = {}
  for marker, file in pairs(files) do
    out[server][marker] = vim.fs.root(file, require('lsap.servers').configs[server].root_markers) or vim.NIL
  end
end
io.stdout:write(vim.json.encode(out))"""


def test_a_python_project_root_is_found_by_its_marker(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()  # a repository above: each project's own marker wins
    files = {}
    for marker in MARKERS:
        project = tmp_path / marker.replace(".", "_")
        (project / "pkg").mkdir(parents=True)
        (project / marker).write_text("")
        files[marker] = str(project / "pkg" / "mod.py")
        Path(files[marker]).write_text("x = 1\n")
    script = tmp_path / "roots.lua"
    script.write_text(ROOTS % str(ROOT))
    done = subprocess.run([nvim_program(), "--clean", "--headless", "-l", str(script), json.dumps(files),
                           json.dumps(SERVERS)], capture_output=True, text=True, timeout=30, check=True)
    found = json.loads(done.stdout)
    wrong = {f"{server} by {marker}": found[server][marker] for server in SERVERS for marker in MARKERS
             if found[server][marker] != str(Path(files[marker]).parent.parent)}
    assert wrong == {}, "the root found instead of the project's"
