"""Suggested requests are written for the surface that asked: JSON for agents, Ex commands
for the human in Neovim (what `:Lsap` parses back), from one place."""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import Any

from lsap_bridge.surface import SURFACE, phrase, phrase_option
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
