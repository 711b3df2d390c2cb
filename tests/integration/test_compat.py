"""Neovim's LSP internals only behind lua/lsap/compat.lua: each fallback, taken by removing
what it replaces from a real Neovim; and a server's methods asked of Neovim, whatever the
method (a fake server offering one no mode of lsap names)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import EXAMPLE, ROOT

from .harness import Bridge
from .nvim_home import wait_for

pytestmark = pytest.mark.integration

UNUSUAL = "textDocument/linkedEditingRange"


@pytest.fixture(scope="module")
def bridge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    root = tmp_path_factory.mktemp("compat") / "shop"
    shutil.copytree(EXAMPLE, root)
    (root / "notes.unusual").write_text("alpha beta\n")
    bridge = Bridge(root, ["basedpyright"])
    yield bridge
    bridge.close()


def start_unusual(bridge: Bridge) -> int:
    bufnr: int = bridge.lua(
        "local path, python, server, root = ...;"
        "local buf = require('lsap.transport.disk').open(path);"
        "vim.lsp.start({name = 'unusual', cmd = {python, server}, root_dir = root}, {bufnr = buf});"
        "return buf",
        str(bridge.root / "notes.unusual"), sys.executable,
        str(ROOT / "tests" / "integration" / "unusual_server.py"), str(bridge.root),
    )
    return bufnr


def test_a_method_no_list_names_is_supported_when_the_server_offers_it(bridge: Bridge) -> None:
    bufnr = start_unusual(bridge)
    session = bridge.service.session
    target = bridge.loop.run(session.servers.target(bridge.root / "notes.unusual", UNUSUAL))
    assert target.client.name == "unusual" and target.client.supports(UNUSUAL)
    assert not target.client.supports("textDocument/references")
    answer: Any = bridge.loop.run(session.servers.call_json(target, UNUSUAL, {
        "textDocument": {"uri": (bridge.root / "notes.unusual").as_uri()},
        "position": {"line": 0, "character": 1}}))
    assert answer["ranges"][0]["end"]["character"] == 5
    clients = bridge.loop.run(bridge.embedded.gateway.clients(bufnr))
    assert any(UNUSUAL in c.methods for c in clients)


def test_methods_fall_back_to_the_known_ones_without_the_protocol_table(bridge: Bridge) -> None:
    result = bridge.lua("""
        local compat = require('lsap.compat')
        local saved = vim.lsp.protocol.Methods
        compat.reset()
        local full = compat.methods()
        vim.lsp.protocol.Methods = nil
        compat.reset()
        local ok, fallback = pcall(compat.methods)
        vim.lsp.protocol.Methods = saved
        compat.reset()
        return { full = full, ok = ok, fallback = fallback, known = compat.KNOWN_METHODS }
    """)
    assert "textDocument/references" in result["full"] and UNUSUAL in result["full"]
    assert result["ok"] and result["fallback"] == result["known"]


def test_flushing_changes_without_the_internal_is_a_no_op(bridge: Bridge) -> None:
    # basedpyright attached first (what the test waits for, not a phase of its own): beside
    # other workers it had not yet when this ran first in its module.
    bridge.lua("vim.cmd.edit(...)", str(bridge.root / "shop" / "models.py"))
    wait_for(lambda: bridge.lua("return #vim.lsp.get_clients() > 0") or None, 100, "basedpyright attached")
    flushed = bridge.lua("""
        local compat = require('lsap.compat')
        local client = vim.lsp.get_clients()[1]
        local with = compat.flush_changes(client)
        local saved = vim.lsp._changetracking
        vim.lsp._changetracking = false  -- (nil would have vim.lsp load it again)
        local ok, without = pcall(compat.flush_changes, client)
        vim.lsp._changetracking = saved
        return { with = with, ok = ok, without = without }
    """)
    assert flushed == {"with": True, "ok": True, "without": False}


def test_enabled_configs_by_the_public_api_then_the_internal_then_unknown(bridge: Bridge) -> None:
    result = bridge.lua("""
        local compat = require('lsap.compat')
        local public = compat.enabled_configs()
        local is_enabled = vim.lsp.is_enabled
        vim.lsp.is_enabled = nil
        local internal = compat.enabled_configs()
        local enabled = vim.lsp._enabled_configs
        vim.lsp._enabled_configs = nil
        local unknown = compat.enabled_configs()
        local clients = require('lsap.transport.clients')
        local expected = clients.servers_expected({ vim.fn.bufadd(vim.fn.tempname() .. '.none') })
        vim.lsp._enabled_configs = enabled
        vim.lsp.is_enabled = is_enabled
        return { public = public, internal = internal, unknown = unknown == nil, expected = expected[1] }
    """)
    assert "basedpyright" in result["public"] and result["internal"] == result["public"]
    assert result["unknown"] and result["expected"], "unknown configs: a server is assumed to come"


def test_clients_starting_are_the_buffers_clients(bridge: Bridge) -> None:
    bufnr = start_unusual(bridge)
    names = bridge.lua(
        "local buf = ...; return vim.tbl_map(function(c) return c.name end,"
        " require('lsap.compat').clients_starting(buf))", bufnr)
    assert "unusual" in names


def test_starting_enabled_configs_without_the_group_enables_them_again(bridge: Bridge) -> None:
    result = bridge.lua("""
        local compat = require('lsap.compat')
        local bufnr = vim.api.nvim_get_current_buf()
        local direct = compat.start_enabled(bufnr)
        local exec, enable, enabled = vim.api.nvim_exec_autocmds, vim.lsp.enable, {}
        vim.api.nvim_exec_autocmds = function() error('no such group') end
        vim.lsp.enable = function(name) enabled[#enabled + 1] = name end
        local ok, fallback = pcall(compat.start_enabled, bufnr)
        vim.api.nvim_exec_autocmds, vim.lsp.enable = exec, enable
        return { direct = direct, ok = ok, fallback = fallback, enabled = enabled }
    """)
    assert result["direct"] and result["ok"] and result["fallback"]
    assert "basedpyright" in result["enabled"]


def test_no_internal_outside_the_compat_module() -> None:
    internals = ("_changetracking", "lsp._enabled_configs", "_uninitialized", "config._configs", "nvim.lsp.enable")
    for path in sorted((ROOT / "lua" / "lsap").rglob("*.lua")):
        if path.name == "compat.lua":
            continue
        code = "\n".join(line for line in path.read_text().splitlines() if not line.lstrip().startswith("--"))
        assert not [name for name in internals if name in code], path.name

