"""The Lua unit tests (tests/lua/test_*.lua), each file in a child headless Neovim run by
tests/lua/runner.lua: a failing case fails here with the runner's output."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from lsap_bridge.embedded import nvim_program
from tests.conftest import ROOT

FILES = sorted((ROOT / "tests" / "lua").glob("test_*.lua"))


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_lua(path: Path, tmp_path: Path) -> None:
    done = subprocess.run([nvim_program(), "--headless", "--clean", "-l", str(ROOT / "tests" / "lua" / "runner.lua"),
                           str(path)], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert " 0 failed" in out and "FAIL" not in out, out


def _dispatch_names() -> set[str]:
    """The names of lua/lsap/rpc.lua's dispatch table (`M.functions`), read from its source."""
    text = (ROOT / "lua" / "lsap" / "rpc.lua").read_text()
    table = text[text.index("M.functions = {"):text.index("\n}\n", text.index("M.functions = {"))]
    return set(re.findall(r"^  (\w+) = ", table, re.MULTILINE))


def test_every_name_the_service_calls_is_in_the_dispatch_table() -> None:
    """Python calls Lua by name only (EditorGateway.call, `_ask`): each name it uses exists,
    and no module of the service sends Lua source of its own."""
    called: set[str] = set()
    for path in [*(ROOT / "lsap_bridge").rglob("*.py"), ROOT / "rplugin" / "python3" / "lsap.py"]:
        text = path.read_text()
        called |= set(re.findall(r"""(?:gateway\.call|self\.call|self\._ask|rpc'\)\.call)\(\s*["'](\w+)["']""", text))
        if path.name != "gateway.py":
            assert "exec_lua(" not in text.replace("self.nvim.exec_lua(", ""), f"{path.name} sends Lua source"
    assert {"register", "request", "when_diagnosed", "confirm", "log_append", "start_failed"} <= called
    assert called - _dispatch_names() == set()
    gateway = (ROOT / "lsap_bridge" / "gateway.py").read_text()
    assert gateway.count("nvim_exec_lua") == 1 and gateway.count("require(") == 1, "one snippet: the dispatch call"


def test_start_up_defines_the_commands_and_loads_little(tmp_path: Path) -> None:
    """plugin/lsap.lua defines :Lsap and :LsapX and lazy-loads the rest: no transport, no
    commands, no build at start-up."""
    script = tmp_path / "probe.lua"
    script.write_text(
        "local out = { commands = vim.fn.exists(':Lsap') == 2 and vim.fn.exists(':LsapReferences') == 2 }\n"
        "out.loaded = vim.tbl_filter(function(n) return n:match('^lsap') end, vim.tbl_keys(package.loaded))\n"
        "io.stdout:write(vim.json.encode(out))\n")
    argv = [nvim_program(), "--headless", "--clean", "--cmd", f"set rtp^={ROOT}", "-c", "runtime plugin/lsap.lua",
            "-c", f"luafile {script}", "-c", "qa!"]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    found = json.loads(done.stdout or done.stderr)
    assert found["commands"], found
    assert sorted(found["loaded"]) == ["lsap.camel", "lsap.host", "lsap.modes"], found
