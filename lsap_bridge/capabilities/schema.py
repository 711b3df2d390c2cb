"""`schema`: the JSON Schema of every mode's request and report (also `lsap schema` and the
socket's `schema` method), so an agent can learn the fields without reading the docs."""

from __future__ import annotations

import functools
import json
from typing import Any, Literal

from pydantic import BaseModel, field_validator
from pydantic.json_schema import JsonSchemaMode

from ..models import Report, Request, Row, absent
from ..modes import REGISTRY, Answer, mode
from ..session import Session


def request_schemas(modes: list[str] | None = None) -> dict[str, Any]:
    """JSON Schema of each mode's request model, by mode."""
    return {name: _json_schema(cap.model, "validation") for name, cap in sorted(REGISTRY.items())
            if not modes or name in modes}


def response_schemas(modes: list[str] | None = None) -> dict[str, Any]:
    """JSON Schema of each mode's report (its `format: "json"` answer, with `mode`), by mode."""
    return {name: _json_schema(cap.report, "serialization") for name, cap in sorted(REGISTRY.items())
            if not modes or name in modes}


@functools.cache
def _json_schema(model: type[BaseModel], mode: JsonSchemaMode) -> dict[str, Any]:
    """A model's JSON Schema, made once: making them all costs ~50 ms of the loop, and
    agents ask for them often (shared: read only)."""
    return model.model_json_schema(mode=mode)


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


class ModeSchema(Row):
    mode: str
    summary: str
    body: str  # the request's JSON Schema, compact


class SchemaReport(Report):
    modes: list[ModeSchema] | None = absent()
    schemas: dict[str, Any] | None = absent()  # `format: "json"`: the request schemas by mode
    responses: dict[str, Any] | None = absent()  # and the reports'


@mode("schema", request=SchemaRequest, report=SchemaReport,
      summary="the JSON Schema of every request")
async def schema(session: Session, request: SchemaRequest) -> Answer:
    schemas = request_schemas(request.modes)
    if request.format == "json":
        return Answer(SchemaReport(schemas=schemas, responses=response_schemas(request.modes)))
    modes = [
        ModeSchema(mode=name, summary=REGISTRY[name].summary,
                   body=json.dumps(body, ensure_ascii=False, separators=(",", ":")))
        for name, body in schemas.items()
    ]
    return Answer(SchemaReport(modes=modes))
