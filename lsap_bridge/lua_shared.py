"""`lua/lsap/shared.lua`, generated from the Python half: what the Lua half must know of it
and would otherwise keep by hand (and let drift) — the package's dependencies and what the
remote plugin imports (`:checkhealth lsap`, the install probe), the LSP methods the code asks
a server about (compat.lua's list when Neovim has none), the defaults of the options whose
meaning is the service's (`agent_limits`, `max_file_size`, `max_tokens`) and the racy window
of a file's stamp.

`python -m lsap_bridge.lua_shared` (`make lua`) writes it from a checkout (it reads
pyproject.toml); a test fails while the committed file differs from what this gives.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from typing import TypedDict

from .fair_share import MIB, Limits
from .filestate import RACY_NS
from .gateway import MAX_FILE_SIZE
from .jsonvalue import Params
from .lua_modes import _lua
from .models import DEFAULT_MAX_TOKENS, DIAGNOSTICS_WAIT

PACKAGE = Path(__file__).resolve().parent
CHECKOUT = PACKAGE.parent
TARGET = CHECKOUT / "lua" / "lsap" / "shared.lua"
PYPROJECT = CHECKOUT / "pyproject.toml"
RPLUGIN = CHECKOUT / "rplugin" / "python3" / "lsap.py"

# An LSP method as the code names it (`textDocument/hover`, `callHierarchy/incomingCalls`).
_METHOD = re.compile(r"^(textDocument|workspace|callHierarchy|typeHierarchy|codeAction|codeLens|completionItem"
                     r"|inlayHint|documentLink|workspaceSymbol)/[a-z][A-Za-z]*$")
# Methods a server sends the client (the bridge answers them, never asks a server about them).
_SERVER_TO_CLIENT = {"workspace/applyEdit", "workspace/configuration", "workspace/workspaceFolders"}
_REQUIREMENT = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*[^;]*(?:;\s*(.*))?$")
_PLATFORM = re.compile(r"""^sys_platform\s*==\s*['"](\w+)['"]$""")


def dependencies(pyproject: Path = PYPROJECT) -> list[dict[str, str]]:
    """pyproject.toml's `[project] dependencies`: each distribution's name, the module it is
    imported as, and the one platform it is for when its marker says so."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - the dev extra brings tomli to Python 3.10
        import tomli as tomllib
    out = []
    for requirement in tomllib.loads(pyproject.read_text())["project"]["dependencies"]:
        found = _REQUIREMENT.match(requirement.strip())
        if not found:
            raise ValueError(f"pyproject.toml: cannot read the dependency {requirement!r}")
        name, marker = found.group(1), (found.group(2) or "").strip()
        entry = {"name": name, "module": name.lower().replace("-", "_")}
        if marker:
            platform = _PLATFORM.match(marker)
            if not platform:
                raise ValueError(f"pyproject.toml: {requirement!r}: only a `sys_platform == '…'` marker is "
                                 "understood here; teach lsap_bridge/lua_shared.py the new one")
            entry["platform"] = platform.group(1)
        out.append(entry)
    return out


def plugin_imports(rplugin: Path = RPLUGIN) -> list[str]:
    """The lsap_bridge modules the remote plugin's entry imports (where the service starts)."""
    modules = {node.module for node in ast.walk(ast.parse(rplugin.read_text()))
               if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("lsap_bridge")}
    return sorted(modules)


def methods(package: Path = PACKAGE) -> list[str]:
    """The LSP methods the code names, that a client may be asked whether a server supports:
    every string in lsap_bridge/ that is a method, less notifications (`did…`) and the
    requests servers send."""
    found: set[str] = set()
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _METHOD.match(node.value):
                found.add(node.value)
    return sorted(m for m in found if m not in _SERVER_TO_CLIENT and not m.split("/", 1)[1].startswith("did"))


class Tables(TypedDict):
    """The tables of shared.lua."""

    dependencies: list[dict[str, str]]
    imports: list[str]
    methods: list[str]
    defaults: Params
    racy_ns: int


def tables() -> Tables:
    """The tables of shared.lua."""
    limits = Limits()
    return {
        "dependencies": dependencies(),
        "imports": plugin_imports(),
        "methods": methods(),
        "defaults": {
            "agent_limits": {"in_flight": limits.in_flight, "queue": limits.queue,
                             "memory_mib": limits.memory // MIB, "total_mib": limits.total // MIB,
                             "running": limits.running},
            "max_file_size": MAX_FILE_SIZE,
            "max_tokens": DEFAULT_MAX_TOKENS,
            "diagnostics_wait": DIAGNOSTICS_WAIT,
        },
        "racy_ns": RACY_NS,
    }


def _rows(values: list[str]) -> str:
    """A list as a Lua table, one entry a line."""
    return "{\n" + "".join(f"    {_lua(v)},\n" for v in values) + "  }"


def render() -> str:
    data = tables()
    inline = ["{ " + ", ".join(f"{k} = {_lua(v)}" for k, v in d.items()) + " }" for d in data["dependencies"]]
    rows = {
        "dependencies": "{\n" + "".join(f"    {row},\n" for row in inline) + "  }",
        "imports": _rows(data["imports"]),
        "methods": _rows(data["methods"]),
        "defaults": _lua(data["defaults"], "  "),
        "racy_ns": _lua(data["racy_ns"], "  "),
    }
    body = "".join(f"  {key} = {value},\n" for key, value in rows.items())
    return ("-- Generated from the Python half (pyproject.toml, rplugin/, lsap_bridge/) by\n"
            "-- `python -m lsap_bridge.lua_shared` (`make lua`): do not edit; a test checks it is current.\n"
            "return {\n" + body + "}\n")


def main() -> int:
    TARGET.write_text(render())
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
