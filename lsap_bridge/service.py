"""The service: validate a request, dispatch it to its capability, render the report."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from .capabilities import REGISTRY, Request
from .errors import ErrorCode, LsapError, invalid
from .gateway import EditorGateway
from .locate.anchor import parse_anchor
from .locate.cursor import anchor_at_cursor
from .models import LineScope, Locate
from .render import render_error, render_json, render_markdown
from .session import Session
from .workspace import Workspace


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
    if mode not in REGISTRY:
        modes = ", ".join(sorted(REGISTRY))
        raise invalid(
            f"unknown mode {mode!r}" if mode is not None else "the request has no `mode`",
            hint=f"use one of: {modes}",
        )
    capability = REGISTRY[mode]
    if isinstance(payload.get("locate"), str):
        locate = parse_anchor(payload["locate"], workspace.is_file)
        payload = {**payload, "locate": locate.model_dump(exclude_none=True)}
    try:
        return capability.model.model_validate(payload)
    except ValidationError as exc:
        raise invalid(
            describe_validation(exc, mode),
            hint=f"`lsap schema` prints the fields of `{mode}`",
        ) from None


class Service:
    """One per Neovim: the bridge's core, shared by the human's commands and agents."""

    def __init__(self, gateway: EditorGateway, workspace: Workspace) -> None:
        self.gateway = gateway
        self.workspace = workspace
        self.session = Session(gateway, workspace)

    async def handle(self, payload: dict[str, Any]) -> Response:
        fmt = payload.get("format", "markdown") if isinstance(payload, dict) else "markdown"
        fmt = fmt if fmt in ("markdown", "json") else "markdown"
        try:
            request = parse_request(payload, self.workspace)
            report = await REGISTRY[request.mode].run(self.session, request)
        except LsapError as error:
            return Response(render_error(error, fmt), error=error)
        except asyncio.TimeoutError:
            error = LsapError(ErrorCode.TIMEOUT, "the request took too long")
            return Response(render_error(error, fmt), error=error)
        if request.format == "json":
            text = render_json(request.mode, report.data)
        else:
            text = render_markdown(report.template, report.data)
        return Response(text, request.mode, report.locations)

    async def handle_command(self, params: list[Any]) -> None:
        """A command typed by the human (`:Lsap …`): run it and show the report in Neovim."""
        command = params[0] if params else {}
        handle_text = getattr(self, "handle_text", None)
        try:
            if "text" in command:  # `:LsapRequest`: a Language Server Request block
                if handle_text is None:
                    raise LsapError(ErrorCode.UNSUPPORTED,
                                    "this version cannot run Language Server Request blocks yet")
                response = await handle_text(str(command["text"]))
                payload = {"mode": "request"}
            else:
                payload = await self.command_request(command)
                response = await self.handle(payload)
        except LsapError as error:
            await self.gateway.show_report(render_error(error), [], {"root": str(self.workspace.root)})
            return
        await self.gateway.show_report(
            response.text, response.locations,
            {"root": str(self.workspace.root), "bang": bool(command.get("bang")), "title": f"lsap {payload.get('mode')}"},
        )

    async def command_request(self, command: dict[str, Any]) -> dict[str, Any]:
        """Turn `:Lsap mode [anchor] [key=value…]` into a JSON request."""
        mode = command.get("mode")
        options = dict(command.get("options") or {})
        for key, value in options.items():
            if isinstance(value, str) and value[:1] in "[{":
                try:
                    options[key] = json.loads(value)
                except json.JSONDecodeError:
                    pass
        anchor = command.get("anchor")
        lines = command.get("range")
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

