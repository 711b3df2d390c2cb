"""The MCP tool list: small, valid, and built from the request models (doc/architecture.md, Costs)."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from benchmarks.cl100k import tokens
from lsap_bridge.capabilities import REGISTRY
from lsap_bridge.capabilities.schema import compact_schema
from lsap_bridge.mcp_server import (
    choose_root,
    instructions,
    mode_schema,
    tools,
)

TOKEN_BUDGET = 1500  # a peer's 29 tools cost ~9,900 tokens per turn
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


def test_mode_tools_accept_what_the_model_accepts() -> None:
    schema = mode_schema("references")
    assert "mode" not in schema["properties"] and schema["required"] == ["locate"]
    assert "$defs" not in schema and "$ref" not in json.dumps(schema)
    assert schema["additionalProperties"] is False
    # Every property the tool offers is a field of the request model, and vice versa.
    model = REGISTRY["references"].model
    assert set(schema["properties"]) == set(model.model_fields) - {"mode"}
    model.model_validate({"mode": "references", "locate": {"file_path": "a.py", "find": "x"}})
    try:
        model.model_validate({"mode": "references", "locate": {"file_path": "a.py"}, "bogus": 1})
    except ValidationError:
        pass
    else:
        raise AssertionError("unknown fields must be refused, as the schema says")


def test_compact_schema_keeps_meaning() -> None:
    schema = {"title": "X", "type": "object", "properties": {
        "a": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "title": "A"},
        "b": {"anyOf": [{"type": "string"}, {"type": "integer"}], "title": "B"},
        "title": {"type": "string"}}}
    assert compact_schema(schema) == {"type": "object", "properties": {
        "a": {"type": "string"}, "b": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        "title": {"type": "string"}}}
