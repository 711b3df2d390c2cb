"""The MCP tool list: small, valid, and built from the request models (doc/architecture.md, Costs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from benchmarks.cl100k import tokens
from lsap_bridge.capabilities import REGISTRY
from lsap_bridge.capabilities.schema import compact_schema
from lsap_bridge.errors import LsapError
from lsap_bridge.mcp_server import (
    choose_root,
    instructions,
    mode_schema,
    tools,
)
from lsap_bridge.requests import parse_request
from lsap_bridge.workspace import Workspace
from tests.conftest import EXAMPLE

WORKSPACE = Workspace.of(EXAMPLE)
# A peer's 29 tools cost ~9,900 tokens per turn; references' `include_tests` took it past 1,500.
TOKEN_BUDGET = 1520
INSTRUCTIONS_BUDGET = 600


def test_the_tool_list_stays_small() -> None:
    assert [t["name"] for t in tools()] == [
        "lsap_query", "lsap_references", "lsap_definition", "lsap_undo", "lsap_text", "lsap_info"]
    assert tokens(json.dumps(tools())) < TOKEN_BUDGET  # what the tool list costs an agent per turn
    text = json.dumps(tools())
    assert '"title"' not in text and '{"type": "null"}' not in text
    # The definitions the tools share are sent once, with lsap_query.
    assert [t["name"] for t in tools() if "$defs" in t["inputSchema"]] == ["lsap_query"]
    assert text.count('"Locate": {') == 1


def test_annotations_say_which_tools_change_files() -> None:
    hints = {t["name"]: t["annotations"] for t in tools()}
    for name in ("lsap_references", "lsap_definition", "lsap_info"):
        assert hints[name]["readOnlyHint"] is True
    # rename (through lsap_query) and RENAME_TO / MOVE_TO_FILE (lsap_text) change files.
    assert any(REGISTRY[m].edits for m in ("rename", "rename_execute"))
    for name in ("lsap_query", "lsap_text", "lsap_undo"):
        assert hints[name]["readOnlyHint"] is False and hints[name]["destructiveHint"] is True


def test_instructions_teach_anchors_paging_and_the_tools_in_few_tokens(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    marked = choose_root(tmp_path, None, None)
    text = instructions(marked.text)
    assert tokens(text) < INSTRUCTIONS_BUDGET
    assert f"{tmp_path} (the nearest directory with pyproject.toml)" in text and not marked.guessed
    for needed in ("<|>", "relative to it", "pagination_id", "lsap_query", "lsap_text", "lsap_info",
                   *(t["name"] for t in tools()), *REGISTRY):
        assert needed in text, needed
    assert ('"mode":"check"' in text) == ("check" in REGISTRY)


def test_a_root_without_a_marker_is_said_with_how_to_choose_one(tmp_path: Path) -> None:
    bare = tmp_path / "loose"
    bare.mkdir()
    guessed = choose_root(bare, None, None)
    # Unless a marker sits above the temporary directory: then it is that one's.
    if guessed.guessed:
        assert str(bare) in guessed.text and "lsap mcp --root DIR" in guessed.text
    assert choose_root(bare, tmp_path, None) == choose_root(tmp_path / "x", tmp_path, None)
    assert not choose_root(bare, tmp_path, None).guessed


# lsap_references' arguments, and whether the tool must take them: written by hand, so that
# the schema and the request model are each checked against it, not against each other.
# (`locate`'s object form is checked by lsap_query's shared $defs, not here.)
REFERENCES_ARGUMENTS = [
    ({"locate": "shop/models.py:Product"}, True),
    ({"locate": {"file_path": "shop/models.py", "find": "Product"}}, True),
    ({"locate": "shop/models.py:Product", "include_declaration": False, "include_tests": False, "compact": True,
      "max_items": 5,
      "start_index": 5, "context_lines": 2, "max_tokens": 500, "format": "json"}, True),
    ({}, False),  # no anchor
    ({"locate": "shop/models.py:Product", "bogus": 1}, False),
    ({"locate": "shop/models.py:Product", "max_items": "five"}, False),
    ({"locate": "shop/models.py:Product", "max_items": 0}, False),
    ({"locate": "shop/models.py:Product", "max_tokens": 100}, False),
    ({"locate": "shop/models.py:Product", "format": "yaml"}, False),
    ({"locate": 7}, False),
]


@pytest.mark.parametrize(("arguments", "valid"), REFERENCES_ARGUMENTS)
def test_a_mode_tools_schema_and_its_request_take_the_same_arguments(arguments: dict[str, Any], valid: bool) -> None:
    schema = mode_schema("references")
    assert "$defs" not in schema and "$ref" not in json.dumps(schema)
    assert set(schema["properties"]) == {"locate", "include_declaration", "include_tests", "compact", "format",
                                         "max_items", "start_index", "pagination_id", "context_lines", "max_tokens"}
    assert jsonschema.Draft202012Validator(schema).is_valid(arguments) is valid, "the tool's schema"
    try:
        parse_request({**arguments, "mode": "references"}, WORKSPACE)  # as mcp_server sends a tool's call
    except LsapError as error:
        assert not valid, error.message
    else:
        assert valid, "the request model took what the tool's schema refuses"


def test_compact_schema_keeps_meaning() -> None:
    schema = {"title": "X", "type": "object", "properties": {
        "a": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "title": "A"},
        "b": {"anyOf": [{"type": "string"}, {"type": "integer"}], "title": "B"},
        "title": {"type": "string"}}}
    assert compact_schema(schema) == {"type": "object", "properties": {
        "a": {"type": "string"}, "b": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        "title": {"type": "string"}}}
