"""`schema`: the JSON Schema of every request model (also `lsap schema` and the socket's
`schema` method), so an agent can learn the fields without reading the docs."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import field_validator

from ..session import Session
from .base import REGISTRY, Report, Request, capability


def request_schemas(modes: list[str] | None = None) -> dict[str, Any]:
    """JSON Schema of each mode's request model, by mode."""
    return {
        mode: cap.model.model_json_schema()
        for mode, cap in sorted(REGISTRY.items())
        if not modes or mode in modes
    }


class SchemaRequest(Request):
    mode: Literal["schema"] = "schema"
    modes: list[str] | None = None  # only these modes; all when left out

    @field_validator("modes")
    @classmethod
    def _known(cls, modes: list[str] | None) -> list[str] | None:
        unknown = sorted(set(modes or ()) - set(REGISTRY))
        if unknown:
            raise ValueError(f"unknown modes {unknown}: use {', '.join(sorted(REGISTRY))}")
        return modes


@capability("schema", SchemaRequest, "the JSON Schema of every request")
async def schema(session: Session, request: SchemaRequest) -> Report:
    schemas = request_schemas(request.modes)
    if request.format == "json":
        return Report("schema", {"schemas": schemas})
    modes = [
        {
            "mode": mode,
            "summary": REGISTRY[mode].summary,
            "schema": json.dumps(body, ensure_ascii=False, separators=(",", ":")),
        }
        for mode, body in schemas.items()
    ]
    return Report("schema", {"modes": modes})
