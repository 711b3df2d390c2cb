"""scripts/lua_structure.py, the require-cycle and size check of `make check`, on small trees."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import ROOT


def structure() -> ModuleType:
    spec = importlib.util.spec_from_file_location("lua_structure", ROOT / "scripts" / "lua_structure.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["lua_structure"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    (tmp_path / "plugin").mkdir(exist_ok=True)
    return tmp_path


def test_a_load_time_cycle_fails_and_a_lazy_one_is_reported(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    check = structure()
    lazy = tree(tmp_path / "lazy", {
        "lua/lsap/init.lua": "local M = {}\nfunction M.go() return require('lsap.a').x end\nreturn M\n",
        "lua/lsap/a.lua": "local lsap = require('lsap')\n-- require('lsap') in a comment\nreturn {x = lsap}\n",
    })
    assert check.main([], lazy) == 0
    assert "cycle through requires inside functions: lsap ↔ lsap.a" in capsys.readouterr().out
    assert check.main(["--strict"], lazy) == 1
    eager = tree(tmp_path / "eager", {
        "lua/lsap/init.lua": "local a = require 'lsap.a'\nreturn {}\n",
        "lua/lsap/a.lua": "local s = [[require('lsap.b')]]\nlocal lsap = require(\"lsap\")\nreturn {}\n",
        "lua/lsap/b.lua": "return {}\n",
    })
    assert check.main([], eager) == 1
    out = capsys.readouterr().out
    assert "cycle at load time (loading breaks): lsap ↔ lsap.a" in out and "lsap.b" not in out


def test_long_functions_and_modules_are_named_with_their_lines(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    check = structure()
    body = "".join(f"  if x then y = {i} end\n" for i in range(60))
    root = tree(tmp_path, {
        "lua/lsap/long.lua": ("local M = {}\nfunction M.long(x)\n" + body + "end\n"
                              "local short = function() for i = 1, 2 do end end\n" + "-- pad\n" * 340 + "return M\n"),
    })
    assert check.main([], root) == 0
    out = capsys.readouterr().out
    assert "lua/lsap/long.lua:2 M.long has 62 lines (over 60)" in out
    assert "lua/lsap/long.lua has 405 lines (over 400)" in out
    assert "short" not in out
    assert check.main(["--strict"], root) == 1
