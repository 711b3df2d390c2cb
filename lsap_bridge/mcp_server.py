"""`lsap mcp`: a stdio MCP server forwarding to the session found like `lsap` finds it.

Tool descriptions cost tokens on every agent turn (doc/architecture.md, Costs), so the surface is six
tools with tight schemas: `lsap_query` takes any request of `lsap schema` (and carries the
anchor's object form, the `$defs` the other tools share, once), the modes declared with a
tool of their own get their schema from their pydantic models (trimmed of titles and nulls),
`lsap_text` takes a Language Server Request block and `lsap_info` tells the root, the
session and its servers. What an agent needs to use them well is said once, in the
`instructions` of initialize; each tool says whether it may change files (annotations).

The session is found (or its daemon started, which opens the workspace for its servers) as
soon as `lsap mcp` starts, so that the first tool call finds the servers indexed. Each tool
call is a socket call naming the surface `mcp`: the session answers it through the one
request pipeline (`pipeline.answer`; `lsap_text` through the text format, whose operations
are that pipeline's requests), so an agent's follow-up requests come written as tool calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from pathlib import Path

from . import __version__
from .client import ROOT_MARKERS, AsyncSession, ClientError, answered, find_session, marked_root, with_env_budget
from .discovery import session_for
from .jsonvalue import Json, JsonObject, Params, items, obj

LOG = logging.getLogger("lsap.mcp")

TEXT_SCHEMA: Params = {
    "type": "object",
    "properties": {"text": {"type": "string", "description": (
        "*** Begin Language Server Request\n*** File: <path>\n@@ <line text>\n^ <symbol>\n"
        "*** End Language Server Request")}},
    "required": ["text"],
    "additionalProperties": False,
}
ANCHOR: JsonObject = {"type": "string", "description": "anchor path:Symbol.path@text with <|> at the spot"}
READ_ONLY: Params = {"readOnlyHint": True, "openWorldHint": False}
# May rename symbols or move them between files: changes what is there, not only adds.
EDITS: Params = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": False}


def _shared_refs(schema: Json) -> Json:
    """A schema whose `$ref`s into `$defs` point at lsap_query's copy instead (MCP tools
    cannot share definitions, so the object is described there, once)."""
    if isinstance(schema, list):
        return [_shared_refs(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return {"type": "object", "description": f"{ref.rsplit('/', 1)[1]} of lsap_query's $defs"}
    return {key: _shared_refs(value) for key, value in schema.items() if key != "$defs"}


def mode_schema(mode: str) -> JsonObject:
    """The request model of a mode as a tool schema: `mode` implied, `locate` may be a string,
    shared definitions left to lsap_query's schema."""
    from .capabilities import REGISTRY
    from .capabilities.schema import compact_schema
    from .models import Paged

    capability = REGISTRY[mode]
    schema = obj(_shared_refs(compact_schema(capability.model.model_json_schema())))
    properties = obj(schema["properties"])
    properties.pop("mode", None)
    if not issubclass(capability.report, Paged):  # an answer with no pages (undo)
        for key in ("max_items", "start_index", "pagination_id"):
            properties.pop(key, None)
    if "locate" in properties:
        properties["locate"] = {"anyOf": [ANCHOR, properties["locate"]]}
    return schema


def query_schema() -> Params:
    """lsap_query's input: any request, its modes listed, and the definitions the tools share."""
    from .capabilities import REGISTRY
    from .capabilities.schema import compact_schema

    shared: JsonObject = {}
    for capability in REGISTRY.values():
        if capability.offer.mcp:
            compact = compact_schema(capability.model.model_json_schema())
            defs = compact.get("$defs") if isinstance(compact, dict) else None
            shared.update(defs if isinstance(defs, dict) else {})
    request: Params = {"type": "object", "properties": {
        "mode": {"enum": sorted(name for name, c in REGISTRY.items() if c.offer.listed)},
        "locate": {"anyOf": [ANCHOR, {"$ref": "#/$defs/Locate"}]} if "Locate" in shared else ANCHOR,
    }, "required": ["mode"]}
    return {"type": "object", "properties": {"request": request}, "required": ["request"],
            "additionalProperties": False, "$defs": shared}


def tools() -> list[Params]:
    """The tool list as MCP sends it: name, description, input schema, annotations."""
    from .capabilities import REGISTRY

    query_edits = any(c.edits for c in REGISTRY.values())
    # The modes declared with a tool of their own (`Offer(mcp=True)`).
    own: list[Params] = [
        {"name": f"lsap_{c.mode}", "description": c.summary[:1].upper() + c.summary[1:] + ".",
         "inputSchema": mode_schema(c.mode), "annotations": EDITS if c.edits else READ_ONLY}
        for c in sorted(REGISTRY.values(), key=lambda c: c.offer.picker) if c.offer.mcp]
    return [
        {"name": "lsap_query",
         "description": ("Ask the language servers with a text anchor instead of line/column; "
                         "returns a Markdown report. request = {\"mode\": …, \"locate\": …, …}; "
                         "`schema` mode: the fields of each."),
         "inputSchema": query_schema(), "annotations": EDITS if query_edits else READ_ONLY},
        *own,
        {"name": "lsap_text",
         "description": ("Run a Language Server Request block (hover ^, docs, inlay ?, "
                         "RENAME_TO, MOVE_TO_FILE); answers woven into the echo."),
         "inputSchema": TEXT_SCHEMA, "annotations": EDITS},
        {"name": "lsap_info",
         "description": "The workspace root, session and attached language servers.",
         "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
         "annotations": READ_ONLY},
    ]


def instructions(root: str) -> str:
    """What an agent is told once, at initialize: how to ask, which tool for what, how
    answers are cut. `root`: the workspace root and how it was chosen."""
    from .capabilities import REGISTRY

    own = [f"lsap_{c.mode}" for c in sorted(REGISTRY.values(), key=lambda c: c.offer.picker) if c.offer.mcp]
    edits = ", ".join(sorted(c.mode for c in REGISTRY.values() if c.edits))
    check = ("\nAfter editing files with your own tools, ask "
             '`lsap_query {"request":{"mode":"check"}}`: the errors your edit introduced or fixed, '
             "in those files and the files that use them.") if "check" in REGISTRY else ""
    return f"""lsap asks the language servers of this workspace (definitions, references, types, \
diagnostics, renames) by text anchor instead of line/column, and answers in compact Markdown.
Workspace root: {root}. Paths are relative to it.

Anchors: `path:Symbol.path@text`. Symbol.path narrows to a class or function (`Order.total`); \
`@text` is a piece of one line with `<|>` at the exact spot (`shop/models.py:Order.total@return <|>result`). \
Either part may be left out (`shop/models.py:Order`). An ambiguous or unknown anchor is answered \
with the candidates: pick one and ask again.

Tools: {", ".join(own)} for the most asked; lsap_query for every mode ({", ".join(sorted(REGISTRY))}); \
lsap_text for a Language Server Request block (several hovers, renames, moves in one call); \
lsap_info for the root and the servers. Prefer references, inspect and search over grep: they \
follow imports, aliases and overrides.

Answers are bounded: a cut list says what it left out and ends with the exact next request \
(`start_index`, `pagination_id`); send it as written. These may change files: {edits}, and \
lsap_text's RENAME_TO and MOVE_TO_FILE; look first with rename_preview.{check}"""


@dataclass(frozen=True)
class Root:
    """Which root `lsap mcp` serves, said in words (the instructions, `lsap_info`), and
    whether it was a guess the agent should hear of."""

    text: str
    guessed: bool


def choose_root(directory: Path, root: Path | None, session: str | None) -> Root:
    """The root `find_session` will serve, said before any session is reached (the
    instructions go out at initialize): `--session`, `--root`, the session covering the
    directory, the nearest project marker, else the directory itself, a guess."""
    if session:
        return Root(f"that of the session {session!r}", False)
    if root is not None:
        return Root(f"{root.resolve()} (--root)", False)
    if (live := session_for(directory)) is not None:
        return Root(f"{', '.join(live.roots)} (the {live.kind} session {live.name})", False)
    found, marker = marked_root(directory)
    if marker is not None:
        return Root(f"{found} (the nearest directory with {marker})", False)
    return Root(f"{found}: no project marker ({', '.join(ROOT_MARKERS)}) in it or above, so the "
                "directory `lsap mcp` started in; to choose one, start it as `lsap mcp --root DIR`", True)


def info_text(info: JsonObject, root: Root) -> str:
    """The socket's `info`, as much of it as an agent needs."""
    attached = map(obj, items(info.get("servers")))
    servers = ", ".join(f"{s.get('name')} (root {s.get('root_dir')})" for s in attached) or (
        "none attached yet: each starts when a file of its language is first asked about")
    return "\n".join([
        "# lsap info", "",
        f"Root: {root.text}",
        f"Session: {info.get('session')}, lsap {info.get('version')}, Neovim {info.get('nvim_version')}",
        f"Servers: {servers}",
        f"Modes: {', '.join(str(m) for m in items(info.get('modes')))}", ""])


class Forwarder(AsyncSession):
    """Tool calls as socket calls to the session found like `lsap` finds it; the answers'
    follow-up requests are written as tool calls (surface `mcp`)."""

    def __init__(self, directory: Path, root: Path | None = None, session: str | None = None,
                 servers: list[str] | None = None, idle_timeout: float = 900.0) -> None:
        super().__init__(lambda: find_session(directory, root, session, servers, idle_timeout),
                         name="mcp", surface="mcp")
        self.root = choose_root(directory, root, session)
        self.told = False  # whether a guessed root was said in an answer yet
        self.names = {str(t["name"]) for t in tools()}

    async def call(self, tool: str, arguments: JsonObject) -> tuple[str, bool]:
        """The report text and whether it is an error (`tool` is one of `names`)."""
        if tool == "lsap_info":
            return info_text(obj(await self.send("info")), self.root), False
        params: Params
        if tool == "lsap_text":
            method, params = "text", {"text": arguments.get("text", "")}
        elif tool == "lsap_query":
            method, params = "request", {"request": with_env_budget(arguments.get("request"))}
        else:
            method, params = "request", {"request": with_env_budget({**arguments, "mode": tool[5:]})}
        result = answered(await self.send(method, params))
        text, failed = str(result["text"]), not result["ok"]
        if self.root.guessed and (failed or not self.told):
            self.told = True
            text += f"\n> Workspace root: {self.root.text}.\n"
        return text, failed


async def serve(directory: Path, root: Path | None = None, session: str | None = None,
                servers: list[str] | None = None, idle_timeout: float = 900.0) -> None:
    import mcp_types as types
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server
    from mcp.shared.exceptions import MCPError

    forwarder = Forwarder(directory, root, session, servers, idle_timeout)
    listed = [types.Tool.model_validate(t) for t in tools()]

    async def list_tools(_ctx: ServerRequestContext[object], _params: object) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    notes: set[asyncio.Task[None]] = set()

    async def call_tool(ctx: ServerRequestContext[object], params: types.CallToolRequestParams) -> types.CallToolResult:
        def told(message: str) -> None:
            """The session's progress ("waiting for the human's approval …") as a log message."""
            note = asyncio.ensure_future(ctx.session.send_log_message("info", message, logger="lsap"))
            notes.add(note)
            note.add_done_callback(noted)

        def noted(note: asyncio.Task[None]) -> None:
            notes.discard(note)
            if not note.cancelled() and note.exception() is not None:  # the client went away: no one to tell
                LOG.info("progress not sent: %s", note.exception())

        forwarder.on_progress = told
        if forwarder.conn is not None:
            forwarder.conn.on_progress = told
        if params.name not in forwarder.names:
            raise MCPError(types.INVALID_PARAMS, f"unknown tool {params.name!r}; the tools are "
                           f"{', '.join(sorted(forwarder.names))}")
        try:
            text, failed = await forwarder.call(params.name, params.arguments or {})
        except ClientError as exc:
            text, failed = exc.report(), True
        return types.CallToolResult(content=[types.TextContent(text=text)], is_error=failed)

    server: Server[object] = Server("lsap", version=__version__, instructions=instructions(forwarder.root.text),
                                 on_list_tools=list_tools, on_call_tool=call_tool)
    # An agent starts `lsap mcp` to initialize it: find the session now (a daemon it starts
    # opens the workspace for its servers), not at the first tool call.
    warming = asyncio.create_task(_connect(forwarder))
    try:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        warming.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await warming
        await forwarder.close()


async def _connect(forwarder: Forwarder) -> None:
    """Reach the session ahead of the first call; a failure is that call's to report."""
    try:
        await forwarder.connection()
    except Exception as exc:  # the first tool call tries again, and reports it
        LOG.info("no session yet: %s", exc)


