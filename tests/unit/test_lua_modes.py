"""The Lua half's tables of modes are generated from the declarations, and kept current."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge import lua_modes, modes
from lsap_bridge.capabilities import REGISTRY
from lsap_bridge.embedded import nvim_program
from lsap_bridge.models import Report, Request
from tests.conftest import ROOT

EVAL = "io.stdout:write(vim.json.encode(dofile(arg[1])))"


def lua_value(path: Path, tmp: Path, env: dict[str, str] | None = None) -> Any:
    """What a Lua file returns, as Neovim's Lua reads it (JSON through `vim.json`)."""
    script = tmp / "eval.lua"
    script.write_text(EVAL)
    done = subprocess.run([nvim_program(), "--clean", "--headless", "-l", str(script), str(path)],
                          capture_output=True, text=True, timeout=30, check=True, env=env)
    return json.loads(done.stdout)


def test_the_committed_modes_lua_is_what_the_declarations_give() -> None:
    assert lua_modes.TARGET.read_text() == lua_modes.render(), (
        "lua/lsap/modes.lua is stale: run `make lua` (python -m lsap_bridge.lua_modes) and commit it")


def test_lua_reads_the_modes_the_capability_modules_declare(tmp_path: Path) -> None:
    # Expectations from the sources and by hand, not from the registry the generator reads.
    declared = {m for path in (ROOT / "lsap_bridge" / "capabilities").rglob("*.py")
                for m in re.findall(r'^@mode\("(\w+)"', path.read_text(), re.M)}
    tables = lua_value(lua_modes.TARGET, tmp_path)
    assert set(tables["modes"]) == declared and len(declared) >= 30
    needs = dict(map(tuple, tables["needs"]))
    assert {k: needs[k] for k in ("references", "hover", "rename", "calls", "types", "outline")} == {
        "references": "textDocument/references", "hover": "textDocument/hover", "rename": "textDocument/rename",
        "calls": "textDocument/prepareCallHierarchy", "types": "textDocument/definition",  # derived without a hierarchy
        "outline": "textDocument/documentSymbol"}
    assert "locate" not in needs and "schema" not in needs  # no server method needed
    assert {k: tables["camel"][k] for k in ("LsapReferences", "LsapRename", "LsapActions")} == {
        "LsapReferences": "references", "LsapRename": "rename", "LsapActions": "code_actions"}
    human = [mode for mode, _ in tables["human"]]
    assert human[:5] == ["references", "definition", "hover", "inspect", "outline"]
    assert human.index("diagnostics") < human.index("check") < human.index("inlay_hints") < human.index("rename")
    assert len(human) == len(set(human))
    assert set(tables["plugs"]) == {"references", "definition", "hover", "inspect", "outline", "calls", "search",
                                    "diagnostics", "rename", "inlay_hints"}
    assert tables["values"]["min_severity"] == ["error", "warning", "information", "hint"]
    assert tables["strings"]["new_name"] is True and tables["cursorless"]["schema"] is True


def test_a_picker_slot_is_one_mode_s() -> None:
    taken = next(c for c in REGISTRY.values() if c.offer.picker)

    async def run(session: Any, request: Any) -> modes.Answer:
        raise AssertionError("never run")

    with pytest.raises(ValueError, match=rf"picker slot {taken.offer.picker} is taken by '{taken.mode}'"):
        modes.mode("scratch", request=Request, report=Report, summary="x",
                   offer=modes.Offer(picker=taken.offer.picker))(run)
    assert "scratch" not in REGISTRY


def test_modes_sharing_a_method_suggest_the_same_fallback() -> None:
    fallbacks: dict[str, set[str]] = {}
    for capability in REGISTRY.values():
        if capability.method and capability.fallback:
            fallbacks.setdefault(capability.method, set()).add(capability.fallback)
    assert all(len(modes) == 1 for modes in fallbacks.values()), fallbacks
