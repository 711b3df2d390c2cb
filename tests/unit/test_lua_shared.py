"""lua/lsap/shared.lua is generated from the Python half (pyproject.toml's dependencies, the
remote plugin's imports, the LSP methods the code names, the service's defaults) and kept
current: a copy that drifts fails here."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

from packaging.requirements import Requirement

from lsap_bridge import lua_shared
from lsap_bridge.capabilities import REGISTRY
from lsap_bridge.fair_share import Limits
from lsap_bridge.gateway import MAX_FILE_SIZE
from lsap_bridge.models import DEFAULT_MAX_TOKENS
from tests.conftest import ROOT
from tests.unit.test_lua_modes import lua_value

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib


def test_the_committed_shared_lua_is_what_the_python_half_gives() -> None:
    assert lua_shared.TARGET.read_text() == lua_shared.render(), (
        "lua/lsap/shared.lua is stale: run `make lua` (python -m lsap_bridge.lua_shared) and commit it")


def test_lua_reads_pyprojects_dependencies(tmp_path: Path) -> None:
    # pyproject.toml read by `packaging`, not by the generator's own parsing.
    wanted = [Requirement(r) for r in tomllib.loads(lua_shared.PYPROJECT.read_text())["project"]["dependencies"]]
    deps = lua_value(lua_shared.TARGET, tmp_path)["dependencies"]
    assert [d["name"] for d in deps] == [r.name for r in wanted]
    assert {"cachetools", "pydantic", "pynvim"} <= {d["name"] for d in deps}
    for dep, requirement in zip(deps, wanted, strict=True):
        assert ("platform" in dep) == (requirement.marker is not None), dep
        if requirement.marker is None or requirement.marker.evaluate():
            importlib.import_module(dep["module"])  # the module a dependency is imported as


def test_the_probe_imports_what_the_remote_plugin_imports(tmp_path: Path) -> None:
    assert lua_value(lua_shared.TARGET, tmp_path)["imports"] == ["lsap_bridge.host", "lsap_bridge.hostexit"]


def test_the_known_methods_are_those_the_code_asks_servers_about(tmp_path: Path) -> None:
    methods = lua_value(lua_shared.TARGET, tmp_path)["methods"]
    # The five compat.lua's hand-kept list lacked, and every mode's own method.
    assert {"callHierarchy/incomingCalls", "callHierarchy/outgoingCalls", "codeAction/resolve",
            "textDocument/rangeFormatting", "workspace/executeCommand"} <= set(methods)
    assert {c.method for c in REGISTRY.values() if c.method} <= set(methods)
    # Not notifications, nor the requests servers send the client.
    assert not {"workspace/applyEdit", "workspace/didChangeWatchedFiles", "textDocument/didOpen"} & set(methods)


def test_setups_defaults_are_the_services(tmp_path: Path) -> None:
    script = tmp_path / "defaults.lua"
    script.write_text(f"vim.opt.rtp:prepend({str(ROOT)!r}); return require('lsap').defaults")
    env = {k: v for k, v in os.environ.items() if k not in ("LSAP_MAX_FILE_SIZE", "LSAP_MAX_TOKENS")}
    defaults = lua_value(script, tmp_path, env)
    assert Limits.of(defaults["agent_limits"]) == Limits()
    assert defaults["max_file_size"] == MAX_FILE_SIZE == 4 * 1024 * 1024
    assert defaults["max_tokens"] == DEFAULT_MAX_TOKENS == 8000

