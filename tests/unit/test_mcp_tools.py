"""The MCP tool list: small, valid, and built from the request models (doc/architecture.md, Costs)."""

from __future__ import annotations

import json

from pydantic import ValidationError

from lsap_bridge.capabilities import REGISTRY
from lsap_bridge.mcp_server import compact_schema, mode_schema, tool_list_tokens, tools

TOKEN_BUDGET = 1500  # a peer's 29 tools cost ~9,900 tokens per turn


def test_the_tool_list_stays_small() -> None:
    assert [t["name"] for t in tools()] == [
        "lsap_query", "lsap_references", "lsap_definition", "lsap_text"]
    assert tool_list_tokens() < TOKEN_BUDGET
    text = json.dumps(tools())
    assert '"title"' not in text and '{"type": "null"}' not in text


def test_mode_tools_accept_what_the_model_accepts() -> None:
    schema = mode_schema("references")
    assert "mode" not in schema["properties"] and schema["required"] == ["locate"]
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
