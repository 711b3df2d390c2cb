"""The service: the bridge's core per Neovim, answering JSON requests through the one request
pipeline (`pipeline.answer`), Language Server Request blocks, and the human's commands."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Awaitable
from typing import TypedDict, cast

from .capabilities import REGISTRY
from .capabilities.outline import symbol_paths
from .cpu import off_loop
from .cursor import anchor_at_cursor
from .editor import Cursor, Editor
from .errors import LsapError, invalid
from .failures import as_error
from .jsonvalue import Json, JsonObject, obj
from .locate.anchor import parse_anchor
from .lsreq.executor import execute
from .lsreq.parser import parse
from .models import LineScope, Locate, bare_field
from .pipeline import Response, answer, delivering
from .position import byte_column
from .render import render_error
from .requests import names_whole_file
from .session.warm import Session
from .surface import REQUEST, SURFACE
from .workspace import Workspace

PARSE_INLINE = 16 * 1024  # characters of a text block parsed on the loop (a few ms); longer ones off it


class Command(TypedDict, total=False):
    """A command typed by the human, as lua/lsap/service.lua sends it (`lsap_command`):
    `:Lsap mode [anchor] [key=value…]`, a Language Server Request block (`text`), or a
    file's symbol paths asked for completion (`complete`)."""

    mode: str
    anchor: str | None
    options: JsonObject
    bang: bool
    range: list[int] | None  # `:'<,'>Lsap`: the selected lines, 0-based
    cursor: Cursor
    ticket: Json
    quiet: bool
    text: str
    complete: str
    line: str


def failed(error: LsapError, fmt: str = "markdown") -> Response:
    """An error as the response to a request."""
    return Response(render_error(error, fmt), error=error)


async def guarded(answer: Awaitable[Response], what: str, fmt: str = "markdown") -> Response:
    """Every failure of a request becomes an error report (`failures.as_error`); none escapes
    to the caller."""
    try:
        return await answer
    except Exception as exc:
        return failed(as_error(exc, what), fmt)


def word_at_cursor(field: str, cursor: Cursor) -> str:
    """The word under the human's cursor, for a mode whose bare argument is a name."""
    text = str(cursor.get("text") or "")
    col = byte_column(text, int(cursor.get("col") or 0))
    for word in re.finditer(r"[\w$]+", text):
        if word.end() > col:
            return word.group(0)
    raise invalid(f"no word under the cursor to use as `{field}`",
                  hint=f"give it: `:Lsap <mode> <{field}>`")


class Service:
    """One per Neovim: the bridge's core, shared by the human's commands and agents."""

    def __init__(self, gateway: Editor, workspace: Workspace) -> None:
        self.gateway = gateway
        self.workspace = workspace
        self.session = Session(gateway, workspace)

    async def handle(self, payload: Json) -> Response:
        """A JSON request and its report, through the one request pipeline."""
        return await answer(self.session, payload, SURFACE.get())

    async def handle_text(self, text: str) -> Response:
        """A Language Server Request block (doc/architecture.md, The text format) and its response block."""

        async def answer() -> Response:  # a large block's parse off the loop (lsap_bridge/cpu.py)
            REQUEST.set({"text": text})
            async with delivering() as deliver:
                request = await off_loop(len(text) > PARSE_INLINE, parse, text)
                response = await execute(self.session, request)
                await deliver()
                return response

        return await guarded(answer(), "the Language Server Request")

    async def handle_command(self, params: list[Json]) -> None:
        """A command typed by the human (`:Lsap …`): run it and show the report in Neovim,
        with the ticket it came with (so the report knows whether the human moved on) and
        suggestions written as Ex commands. `{"complete": path}` asks for the file's symbol
        paths instead, for completing anchors."""
        command = cast(Command, obj(params[0]) if params else {})
        SURFACE.set("nvim")
        if "complete" in command:
            name = str(command["complete"])
            try:
                paths = await symbol_paths(self.session, self.workspace.resolve(name))
            except LsapError:
                paths = []  # no server reads it: nothing to offer, the anchor's error comes later
            await self.gateway.symbols_for_completion(name, paths, str(command.get("line") or ""))
            return
        options: JsonObject = {"root": str(self.workspace.root), "ticket": command.get("ticket")}
        try:
            if "text" in command:  # `:LsapRequest`: a Language Server Request block
                response = await self.handle_text(str(command["text"]))
                mode = "request"
            else:
                response = await self.handle(await self.command_request(command))
                mode = str(command.get("mode"))
        except Exception as exc:  # the human always gets an answer, never a silent command
            await self.gateway.show_report(render_error(as_error(exc, f"`:Lsap {command.get('mode')}`")), [], options)
            return
        if command.get("quiet") and response.ok:  # a decision made in the buffers (lsap.inline)
            return
        await self.gateway.show_report(
            response.text, response.locations,
            {**options, "bang": bool(command.get("bang")), "title": f"lsap {mode}"},
        )

    async def command_request(self, command: Command) -> JsonObject:
        """Turn `:Lsap mode [anchor] [key=value…]` into a JSON request."""
        mode = command.get("mode")
        options = dict(command.get("options") or {})
        for key, value in options.items():
            if isinstance(value, str) and value[:1] in "[{":
                with contextlib.suppress(json.JSONDecodeError):
                    options[key] = json.loads(value)
        anchor = command.get("anchor")
        lines = command.get("range")
        model = REGISTRY[str(mode)].model if mode in REGISTRY else None
        if model is not None and (
            "locate" not in model.model_fields
            or (not anchor and not lines and ("file_path" in options or model.whole_file_at_cursor))
            or (anchor and names_whole_file(model, options, str(anchor), self.workspace))
        ):
            # No anchor to take from the cursor (`:Lsap inlay_hints file_path=… start_line=…`,
            # `:Lsap format shop/messy.py`, `:LsapFormat`).
            return self.locateless_request(str(mode), command, options)
        if anchor:
            locate = parse_anchor(anchor, self.workspace.is_file)
        elif lines:  # `:'<,'>Lsap mode`: the selected lines, as a line scope
            cursor = command.get("cursor") or {}
            path = self.workspace.resolve(str(cursor.get("path") or ""))
            locate = Locate(file_path=self.workspace.display(path),
                            scope=LineScope(start_line=int(lines[0]), end_line=int(lines[1]) + 1))
        else:
            cursor = command.get("cursor") or {}
            locate = await self.session.run_warm(lambda: anchor_at_cursor(self.session, cursor))
        return {"mode": mode, "locate": locate.model_dump(exclude_none=True), **options}

    def locateless_request(self, mode: str, command: Command, options: JsonObject) -> JsonObject:
        """Modes without an anchor (diagnostics, editor, schema, …): the argument, else the
        current buffer (unless the mode says otherwise), is their `file_path` when they take
        one (`.` = the whole workspace)."""
        payload: JsonObject = {"mode": mode, **options}
        model = REGISTRY[mode].model
        bare = bare_field(model)
        # The argument fills the mode's own bare field (`:Lsap review 1`: the id), else the file.
        named = bare not in (None, "file_path", "locate")
        if "file_path" in model.model_fields and "file_path" not in options:
            name = (None if named else command.get("anchor")) or (
                model.file_from_cursor and (command.get("cursor") or {}).get("path"))
            if name:
                payload["file_path"] = self.workspace.display(self.workspace.resolve(str(name))) or "."
        # `:Lsap search [query]`; an optional one (`:Lsap undo [id]`) is left to its default.
        if named and bare not in options and (command.get("anchor") or model.model_fields[str(bare)].is_required()):
            cursor = command.get("cursor") or {}
            payload[str(bare)] = command.get("anchor") or word_at_cursor(str(bare), cursor)
        return payload

