"""A request, validated: JSON in, the mode's request model out, or an `invalid_request`
that names the field (doc/architecture.md, Requests)."""

from __future__ import annotations

from collections.abc import MutableMapping

from pydantic import ValidationError

from .errors import LsapError, did_you_mean, invalid
from .jsonvalue import Json, JsonObject
from .locate.anchor import parse_anchor, split_path
from .models import Locate, Request, bare_field
from .modes import REGISTRY
from .surface import fields_help
from .workspace import Workspace

Anchors = MutableMapping[str, Locate]


def describe_validation(exc: ValidationError, mode: str) -> str:
    """Pydantic errors as one sentence per field, naming the field and what was wrong."""
    parts = []
    fields = REGISTRY[mode].model.model_fields if mode in REGISTRY else {}
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "request"
        if err["type"] == "extra_forbidden":
            parts.append(f"unknown field `{where}`" + did_you_mean(where, fields))
        elif err["type"] == "missing":
            parts.append(f"missing field `{where}`")
        else:
            parts.append(f"`{where}`: {err['msg']}")
    return f"invalid {mode} request: " + "; ".join(parts)


def names_whole_file(model: type[Request], payload: JsonObject, text: str,
                     workspace: Workspace) -> bool:
    """Whether an anchor string is a bare path given to a mode that takes an anchor or a
    whole file (`format`, `code_actions`): then it is that mode's `file_path`."""
    if "file_path" not in model.model_fields or "locate" not in model.model_fields or "file_path" in payload:
        return False
    try:
        return not split_path(text, workspace.is_file)[1]
    except LsapError:
        return False


def anchor_of(text: str, workspace: Workspace, anchors: Anchors | None = None) -> Locate:
    """An anchor string parsed (`parse_anchor`); `anchors`: the session's, which remembers it
    as long as the file checks it rests on are (agents send one anchor to several modes in
    a row)."""
    seen = anchors.get(text) if anchors is not None else None
    if seen is None:
        seen = parse_anchor(text, workspace.is_file)
        if anchors is not None:
            anchors[text] = seen
    return seen


def parse_request(payload: Json, workspace: Workspace, anchors: Anchors | None = None) -> Request:
    """Validate a JSON request into its mode's model; errors name the field.

    `locate` may also be the string form of an anchor (`path:Symbol@find`).
    """
    if not isinstance(payload, dict):
        raise invalid("a request is a JSON object with a `mode`", hint='e.g. {"mode": "references", "locate": {...}}')
    mode = payload.get("mode")
    if not isinstance(mode, str) or mode not in REGISTRY:
        modes = ", ".join(sorted(REGISTRY))
        raise invalid(
            f"unknown mode {mode!r}{did_you_mean(mode, REGISTRY)}" if mode is not None
            else "the request has no `mode`",
            hint=f"use one of: {modes}",
        )
    capability = REGISTRY[mode]
    bare = bare_field(capability.model)
    given = payload.get("locate")
    if isinstance(given, str) and names_whole_file(capability.model, payload, given, workspace):
        # `lsap format shop/messy.py`: a bare path to a mode that also takes a whole file.
        payload = {**{k: v for k, v in payload.items() if k != "locate"}, "file_path": given.strip()}
        given = None
    if bare not in (None, "locate") and bare not in payload and isinstance(given, str):
        # A bare argument (`lsap outline shop/`) comes as `locate`: it fills the mode's field.
        payload = {**{k: v for k, v in payload.items() if k != "locate"}, bare: given}
    fields: dict[str, object] = dict(payload)
    if isinstance(locate := payload.get("locate"), str):
        # The parsed model itself, not its dump: pydantic takes it without validating again.
        fields["locate"] = anchor_of(locate, workspace, anchors)
    try:
        return capability.model.model_validate(fields)
    except ValidationError as exc:
        raise invalid(
            describe_validation(exc, mode),
            hint=fields_help(mode),
        ) from None
