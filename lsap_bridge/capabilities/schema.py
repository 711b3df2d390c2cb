"""`schema`: an index of the modes (each one's purpose and required fields), or the JSON
Schema of the named modes' requests and reports (`lsap schema hover`; the socket's `schema`
method sends them all), so an agent can learn the fields without reading the docs."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import ClassVar, Literal

from pydantic import BaseModel, field_validator
from pydantic.json_schema import JsonSchemaMode

from ..errors import did_you_mean
from ..jsonvalue import Json, JsonObject
from ..models import Report, Request, Row, absent
from ..modes import REGISTRY, Answer, mode
from ..session.warm import Session
from ..surface import fields_help


def compact_schema(schema: Json) -> Json:
    """A pydantic JSON Schema without what costs tokens and tells an agent nothing:
    titles, `null` alternatives of optional fields and `default: null`."""
    if isinstance(schema, list):
        return [compact_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: JsonObject = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "default" and value is None:
            continue
        if key == "anyOf" and isinstance(value, list):
            kept = [v for v in value if v != {"type": "null"}]
            if len(kept) == 1:
                if isinstance(only := compact_schema(kept[0]), dict):
                    out.update(only)
                continue
            value = kept
        out[key] = compact_schema(value)
    return out


def request_schemas(modes: list[str] | None = None) -> JsonObject:
    """JSON Schema of each mode's request model, by mode."""
    return {name: _json_schema(cap.model, "validation") for name, cap in sorted(REGISTRY.items())
            if not modes or name in modes}


def response_schemas(modes: list[str] | None = None) -> JsonObject:
    """JSON Schema of each mode's report (its `format: "json"` answer, with `mode`), by mode."""
    return {name: _json_schema(cap.report, "serialization") for name, cap in sorted(REGISTRY.items())
            if not modes or name in modes}


@functools.cache
def _json_schema(model: type[BaseModel], mode: JsonSchemaMode) -> JsonObject:
    """A model's JSON Schema, made once: making them all costs ~50 ms of the loop, and
    agents ask for them often (shared: read only)."""
    return model.model_json_schema(mode=mode)


class SchemaRequest(Request):
    mode: Literal["schema"] = "schema"
    modes: list[str] | None = None  # the schemas of these modes; none: the index of all
    positional: ClassVar[str] = "modes"  # `lsap schema hover search`, `:Lsap schema hover`
    file_from_cursor: ClassVar[bool] = False

    @field_validator("modes", mode="before")
    @classmethod
    def _words(cls, modes: object) -> object:
        """`:Lsap schema hover search` sends the modes as one string."""
        return modes.replace(",", " ").split() if isinstance(modes, str) else modes

    @field_validator("modes")
    @classmethod
    def _known(cls, modes: list[str] | None) -> list[str] | None:
        unknown = sorted(set(modes or ()) - set(REGISTRY))
        if unknown:
            close = "".join(did_you_mean(name, REGISTRY) for name in unknown)
            raise ValueError(f"unknown modes {unknown}{close}: use {', '.join(sorted(REGISTRY))}")
        return modes


class ModeSchema(Row):
    mode: str
    summary: str
    body: str  # the request's JSON Schema, compact


class ModeIndex(Row):
    mode: str
    summary: str
    required: list[str]  # the fields a request of the mode must give, besides `mode`


class SchemaReport(Report):
    index: list[ModeIndex] | None = absent()  # no `modes` asked: one line a mode
    more: str | None = absent()  # with the index: how to get one mode's fields
    modes: list[ModeSchema] | None = absent()
    schemas: Mapping[str, object] | None = absent()  # `format: "json"`: the request schemas by mode
    responses: Mapping[str, object] | None = absent()  # and the reports'


def mode_index() -> list[ModeIndex]:
    """Every mode an agent asks for with its purpose and required fields: what an agent
    reads first (not the modes only a transport sends, `Offer.listed`)."""
    return [
        ModeIndex(mode=name, summary=cap.summary,
                  required=[f for f in cap.model.model_json_schema().get("required", []) if f != "mode"])
        for name, cap in sorted(REGISTRY.items()) if cap.offer.listed
    ]


@mode("schema", request=SchemaRequest, report=SchemaReport,
      summary="the modes, or the JSON Schema of the named modes' requests")
async def schema(session: Session, request: SchemaRequest) -> Answer:
    if not request.modes:
        # A request that runs as written, for one mode of the table.
        return Answer(SchemaReport(index=mode_index(), more=fields_help("references") + ", and likewise any mode"))
    schemas = request_schemas(request.modes)
    if request.format == "json":
        return Answer(SchemaReport(schemas=schemas, responses=response_schemas(request.modes)))
    modes = [
        ModeSchema(mode=name, summary=REGISTRY[name].summary,
                   body=json.dumps(compact_schema(body), ensure_ascii=False, separators=(",", ":")))
        for name, body in schemas.items()
    ]
    return Answer(SchemaReport(modes=modes))
