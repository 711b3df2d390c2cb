"""Suggested requests are written for the surface that asked: JSON for socket clients, a
command line for the CLI (what `lsap` parses back), a tool call for MCP, Ex commands for the
human in Neovim (what `:Lsap` parses back), from one place."""

from __future__ import annotations

import contextvars
import json
import shlex
from collections.abc import Callable
from typing import Any

from lsap_bridge.cli import mode_request, parse
from lsap_bridge.surface import SURFACE, Surface, fields_help, phrase, phrase_option, servers_help
from tests.golden import render_data

NEXT = {
    "max_items": 2,
    "locate": {"file_path": "shop/models.py", "scope": {"symbol_path": ["Order", "total"]}, "find": "return <|>result"},
    "mode": "references",
    "start_index": 2,
    "pagination_id": "0123456789",
}


def in_neovim(function: Callable[..., str], *args: Any) -> str:
    """Call `function` as a `:Lsap` command's request would: with the surface set to nvim."""

    def run() -> str:
        SURFACE.set("nvim")
        return function(*args)

    return contextvars.copy_context().run(run)


def test_agents_get_json_and_the_human_an_ex_command() -> None:
    assert phrase(NEXT) == (
        '{"max_items":2,"locate":{"file_path":"shop/models.py","scope":{"symbol_path":["Order","total"]},'
        '"find":"return <|>result"},"mode":"references","start_index":2,"pagination_id":"0123456789"}')
    assert in_neovim(phrase, NEXT) == (
        ":Lsap references shop/models.py:Order.total@return <|>result max_items=2 start_index=2"
        " pagination_id=0123456789")


def test_bare_fields_options_and_values_that_are_not_one_word() -> None:
    outline = {"mode": "outline", "file_path": "shop", "recursive": True, "kinds": ["class", "function"]}
    assert in_neovim(phrase, outline, "file_path") == ':Lsap outline shop recursive=true kinds=["class","function"]'
    spaced = {"mode": "search", "query": "Product", "exclude_files": ["my tests/*"]}
    assert in_neovim(phrase, spaced, "query") == phrase(spaced)  # no Ex form: the JSON one
    assert phrase_option("include_external", True) == '"include_external": true'
    assert in_neovim(phrase_option, "include_external", True) == "include_external=true"


def test_templates_suggest_in_the_surfaces_form() -> None:
    data = {
        "anchor": "shop/models.py:Product", "path": "shop/models.py", "line": 7, "column": 7,
        "symbol": "Product", "old_name": "Product", "new_name": "Item", "edits": 1, "total": 1,
        "start": 1, "end": 1, "server": "basedpyright", "files": [],
        "execute": ":Lsap rename_execute 0123abcd45", "text": "class Product:", "partial": False,
        "rename_id": "0123abcd45", "uses": None, "uncovered": [], "uncovered_total": 0,
    }
    text = in_neovim(render_data, "rename_preview", data)
    assert 'add `exclude_files=["tests/*"]` to leave files out' in text
    assert '"exclude_files": ["tests/*"]' in render_data("rename_preview", data)


def on(surface: Surface, function: Callable[..., str], *args: Any) -> str:
    def run() -> str:
        SURFACE.set(surface)
        return function(*args)

    return contextvars.copy_context().run(run)


def test_the_cli_gets_a_command_line_that_parses_back_to_the_request() -> None:
    digits = {**NEXT, "pagination_id": "1234", "exclude_files": ["my tests/*"], "include_declaration": False}
    line = on("cli", phrase, digits)
    assert line.startswith("lsap references 'shop/models.py:Order.total@return <|>result' --set max_items=2")
    words = shlex.split(line)
    assert words[0] == "lsap"
    request = mode_request(parse(words[1:]))
    assert request == {**digits, "locate": "shop/models.py:Order.total@return <|>result"}
    option = shlex.split(on("cli", phrase_option, "max_code_lines", 2001))
    assert option == ["--set", "max_code_lines=2001"]
    assert mode_request(parse(["hover", "a.py:f", *option]))["max_code_lines"] == 2001


def test_mcp_gets_a_tool_call_and_each_surface_its_own_way_to_the_servers() -> None:
    call = on("mcp", phrase, NEXT)
    tool, _, arguments = call.partition(" ")
    assert tool == "lsap_query" and json.loads(arguments) == {"request": NEXT}
    assert on("mcp", phrase_option, "max_items", 5) == phrase_option("max_items", 5) == '"max_items": 5'
    assert "lsap_info" in on("mcp", servers_help) and "`lsap info`" in on("cli", servers_help)
    assert ":checkhealth lsap" in on("nvim", servers_help)
    schema = on("mcp", fields_help, "hover")
    assert schema.startswith('`lsap_query {"request":{"mode":"schema","modes":["hover"]}}`')
    assert "`lsap schema hover`" in on("cli", fields_help, "hover")


def test_options_may_come_after_the_words() -> None:
    before = mode_request(parse(["check", "--max-items", "1", "shop/"]))
    after = mode_request(parse(["check", "shop/", "--max-items", "1"]))
    assert before == after == {"mode": "check", "locate": "shop/", "max_items": 1}


def test_no_formatter_attached_says_how_to_attach_ruff_on_each_surface() -> None:
    """Issue 30: `format` where only basedpyright is attached names the formatter to attach
    (ruff), in the asking surface's terms, instead of advising another mode."""
    from lsap_bridge.errors import ErrorCode
    from tests.conftest import EXAMPLE
    from tests.fakes import Recording, client, fake_session

    session = fake_session(EXAMPLE, Recording("shop", EXAMPLE), clients=[client()])

    def refusal() -> str:
        error = session.servers.unsupported("textDocument/formatting", [client()], EXAMPLE / "shop" / "models.py")
        assert error.code is ErrorCode.UNSUPPORTED
        return str(error.hint)

    assert "vim.lsp.enable('ruff')" in on("nvim", refusal) and "mode instead" not in on("nvim", refusal)
    assert "pip install ruff" in on("cli", refusal) and "lsap daemon stop" in on("cli", refusal)
    assert "pip install ruff" in on("mcp", refusal)
