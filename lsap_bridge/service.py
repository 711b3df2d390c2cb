"""The service: validate a request, dispatch it to its capability, render the report."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from .capabilities import REGISTRY, Request
from .capabilities.base import bare_field
from .capabilities.outline import symbol_paths
from .errors import ErrorCode, LsapError, invalid
from .gateway import ClientGone, EditorGateway, StaleText
from .locate.anchor import parse_anchor
from .locate.cursor import anchor_at_cursor
from .lsreq.executor import execute
from .lsreq.parser import parse
from .models import LineScope, Locate
from .render import render_error, render_json, render_markdown
from .session import Session, disk_notes
from .surface import SURFACE, fields_help
from .workspace import Remembered, Workspace


@dataclass
class Response:
    text: str
    mode: str | None = None
    locations: list[dict[str, Any]] = field(default_factory=list)
    error: LsapError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def describe_validation(exc: ValidationError, mode: str) -> str:
    """Pydantic errors as one sentence per field, naming the field and what was wrong."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "request"
        if err["type"] == "extra_forbidden":
            parts.append(f"unknown field `{where}`")
        elif err["type"] == "missing":
            parts.append(f"missing field `{where}`")
        else:
            parts.append(f"`{where}`: {err['msg']}")
    return f"invalid {mode} request: " + "; ".join(parts)


def parse_request(payload: dict[str, Any], workspace: Workspace) -> Request:
    """Validate a JSON request into its mode's model; errors name the field.

    `locate` may also be the string form of an anchor (`path:Symbol@find`).
    """
    if not isinstance(payload, dict):
        raise invalid("a request is a JSON object with a `mode`", hint='e.g. {"mode": "references", "locate": {...}}')
    mode = payload.get("mode")
    if not isinstance(mode, str) or mode not in REGISTRY:
        modes = ", ".join(sorted(REGISTRY))
        raise invalid(
            f"unknown mode {mode!r}" if mode is not None else "the request has no `mode`",
            hint=f"use one of: {modes}",
        )
    capability = REGISTRY[mode]
    bare = bare_field(capability.model)
    given = payload.get("locate")
    if bare not in (None, "locate") and bare not in payload and isinstance(given, str):
        # A bare argument (`lsap outline shop/`) comes as `locate`: it fills the mode's field.
        payload = {**{k: v for k, v in payload.items() if k != "locate"}, bare: given}
    if isinstance(payload.get("locate"), str):
        # The parsed model itself, not its dump: pydantic takes it without validating again.
        payload = {**payload, "locate": anchor_of(payload["locate"], workspace)}
    try:
        return capability.model.model_validate(payload)
    except ValidationError as exc:
        raise invalid(
            describe_validation(exc, mode),
            hint=fields_help(mode),
        ) from None


_anchors: Remembered[tuple[Workspace, str], Locate] = Remembered(1000)


def anchor_of(text: str, workspace: Workspace) -> Locate:
    """`parse_anchor`, remembered as long as the file checks it rests on are: agents send
    one anchor string to several modes in a row."""
    seen = _anchors.get((workspace, text))
    return seen if seen is not None else _anchors.put((workspace, text), parse_anchor(text, workspace.is_file))


LOG = logging.getLogger("lsap.service")


def unexpected(exc: Exception, what: str) -> LsapError:
    """A failure nobody planned for (most often a server's answer of an unexpected shape):
    an error report for the asker and a traceback in the log, never a dead request."""
    LOG.error("%s failed", what, exc_info=exc)
    # One hint per cause: a file system's refusal is no language server's malformed answer.
    cause = ("the file system refused it" if isinstance(exc, OSError)
             else "a language server may have sent a malformed answer")
    return LsapError(
        ErrorCode.SERVER_ERROR,
        f"{what} failed on something unexpected: {type(exc).__name__}: {exc}"[:500],
        hint=f"{cause}; the traceback is in the log (`:checkhealth lsap` shows where). Other "
        "requests are not affected.",
    )


def failed(error: LsapError, fmt: str = "markdown") -> Response:
    """An error as the response to a request."""
    return Response(render_error(error, fmt), error=error)


async def guarded(answer: Coroutine[Any, Any, Response], what: str, fmt: str = "markdown") -> Response:
    """Every failure of a request becomes an error report; none escapes to the caller."""
    try:
        return await answer
    except LsapError as error:
        return failed(error, fmt)
    except ClientGone as gone:
        return failed(LsapError(ErrorCode.SERVER_ERROR, f"{gone}: it exited", hint="send the request again"), fmt)
    except StaleText as stale:
        return failed(LsapError(ErrorCode.CONFLICT, str(stale), hint="send the request again"), fmt)
    except asyncio.TimeoutError:
        return failed(LsapError(ErrorCode.TIMEOUT, "the request took too long"), fmt)
    except Exception as exc:
        return failed(unexpected(exc, what), fmt)


def word_at_cursor(field: str, cursor: dict[str, Any]) -> str:
    """The word under the human's cursor, for a mode whose bare argument is a name."""
    text = str(cursor.get("text") or "")
    col = len(text.encode("utf-8")[: int(cursor.get("col") or 0)].decode("utf-8", errors="ignore"))
    for word in re.finditer(r"[\w$]+", text):
        if word.end() > col:
            return word.group(0)
    raise invalid(f"no word under the cursor to use as `{field}`",
                  hint=f"give it: `:Lsap <mode> <{field}>`")


class Service:
    """One per Neovim: the bridge's core, shared by the human's commands and agents."""

    def __init__(self, gateway: EditorGateway, workspace: Workspace) -> None:
        self.gateway = gateway
        self.workspace = workspace
        self.session = Session(gateway, workspace)

    async def handle(self, payload: dict[str, Any]) -> Response:
        fmt = payload.get("format", "markdown") if isinstance(payload, dict) else "markdown"
        fmt = fmt if fmt in ("markdown", "json") else "markdown"
        what = f"the {payload.get('mode') if isinstance(payload, dict) else None} request"
        return await guarded(self._answer(payload), what, fmt)

    async def _answer(self, payload: dict[str, Any]) -> Response:
        request = parse_request(payload, self.workspace)
        with disk_notes() as notes:
            report = await REGISTRY[request.mode].run(self.session, request)
        data = {**report.data, "notes": list(notes.values())} if notes else report.data
        as_json = request.format == "json"
        text = render_json(request.mode, data) if as_json else render_markdown(report.template, data)
        return Response(text, request.mode, report.locations)

    async def handle_text(self, text: str) -> Response:
        """A Language Server Request block (doc/architecture.md, The text format) and its response block."""

        async def answer() -> Response:
            return Response(await execute(self.session, parse(text)), "request")

        return await guarded(answer(), "the Language Server Request")

    async def handle_command(self, params: list[Any]) -> None:
        """A command typed by the human (`:Lsap …`): run it and show the report in Neovim,
        with the ticket it came with (so the report knows whether the human moved on) and
        suggestions written as Ex commands. `{"complete": path}` asks for the file's symbol
        paths instead, for completing anchors."""
        command = params[0] if params else {}
        SURFACE.set("nvim")
        if "complete" in command:
            name = str(command["complete"])
            try:
                paths = await symbol_paths(self.session, self.workspace.resolve(name))
            except LsapError:
                paths = []  # no server reads it: nothing to offer, the anchor's error comes later
            await self.gateway.symbols_for_completion(name, paths, str(command.get("line") or ""))
            return
        options = {"root": str(self.workspace.root), "ticket": command.get("ticket")}
        try:
            if "text" in command:  # `:LsapRequest`: a Language Server Request block
                response = await self.handle_text(str(command["text"]))
                mode = "request"
            else:
                response = await self.handle(await self.command_request(command))
                mode = str(command.get("mode"))
        except LsapError as error:
            await self.gateway.show_report(render_error(error), [], options)
            return
        except Exception as exc:  # the human always gets an answer, never a silent command
            await self.gateway.show_report(render_error(unexpected(exc, f"`:Lsap {command.get('mode')}`")), [], options)
            return
        await self.gateway.show_report(
            response.text, response.locations,
            {**options, "bang": bool(command.get("bang")), "title": f"lsap {mode}"},
        )

    async def command_request(self, command: dict[str, Any]) -> dict[str, Any]:
        """Turn `:Lsap mode [anchor] [key=value…]` into a JSON request."""
        mode = command.get("mode")
        options = dict(command.get("options") or {})
        for key, value in options.items():
            if isinstance(value, str) and value[:1] in "[{":
                with contextlib.suppress(json.JSONDecodeError):
                    options[key] = json.loads(value)
        anchor = command.get("anchor")
        lines = command.get("range")
        fields = REGISTRY[mode].model.model_fields if mode in REGISTRY else None
        if fields is not None and ("locate" not in fields or (not anchor and not lines and "file_path" in options)):
            # No anchor to take from the cursor (`:Lsap inlay_hints file_path=… start_line=…`).
            return self.locateless_request(str(mode), command, options)
        if anchor:
            locate = parse_anchor(anchor, self.workspace.is_file)
        elif lines:  # `:'<,'>Lsap mode`: the selected lines, as a line scope
            cursor = command.get("cursor") or {}
            path = self.workspace.resolve(str(cursor.get("path") or ""))
            locate = Locate(file_path=self.workspace.display(path),
                            scope=LineScope(start_line=int(lines[0]), end_line=int(lines[1]) + 1))
        else:
            locate = await anchor_at_cursor(self.session, command.get("cursor") or {})
        return {"mode": mode, "locate": locate.model_dump(exclude_none=True), **options}

    def locateless_request(self, mode: str, command: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
        """Modes without an anchor (diagnostics, editor, schema, …): the argument, else the
        current buffer, is their `file_path` when they take one (`.` = the whole workspace)."""
        payload: dict[str, Any] = {"mode": mode, **options}
        if "file_path" in REGISTRY[mode].model.model_fields and "file_path" not in options:
            name = command.get("anchor") or (command.get("cursor") or {}).get("path")
            if name:
                payload["file_path"] = self.workspace.display(self.workspace.resolve(str(name))) or "."
        bare = bare_field(REGISTRY[mode].model)
        if bare not in (None, "file_path") and bare not in options:  # `:Lsap search [query]`
            cursor = command.get("cursor") or {}
            payload[str(bare)] = command.get("anchor") or word_at_cursor(str(bare), cursor)
        return payload

