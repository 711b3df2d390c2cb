"""The Lua half's tables of modes are generated from the declarations, and kept current."""

from __future__ import annotations

from lsap_bridge import lua_modes
from lsap_bridge.capabilities import REGISTRY


def test_the_committed_modes_lua_is_what_the_declarations_give() -> None:
    assert lua_modes.TARGET.read_text() == lua_modes.render(), (
        "lua/lsap/modes.lua is stale: run `make lua` (python -m lsap_bridge.lua_modes) and commit it")


def test_every_mode_and_its_method_reach_the_lua_tables() -> None:
    tables = lua_modes.tables()
    assert set(tables["modes"]) == set(REGISTRY)
    assert dict(map(tuple, tables["needs"])) == {n: c.method for n, c in REGISTRY.items() if c.method}
    assert set(tables["camel"].values()) == {n for n, c in REGISTRY.items() if c.offer.command}


def test_modes_sharing_a_method_suggest_the_same_fallback() -> None:
    fallbacks: dict[str, set[str]] = {}
    for capability in REGISTRY.values():
        if capability.method and capability.fallback:
            fallbacks.setdefault(capability.method, set()).add(capability.fallback)
    assert all(len(modes) == 1 for modes in fallbacks.values()), fallbacks
