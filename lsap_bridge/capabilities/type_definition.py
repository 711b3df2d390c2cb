"""`type_definition`: where the type of a value is defined, with that type's code."""

from __future__ import annotations

from typing import Literal

from ..session import Session
from .base import Report, capability
from .definition import DefinitionLikeRequest, run_definition_like


class TypeDefinitionRequest(DefinitionLikeRequest):
    mode: Literal["type_definition"] = "type_definition"


@capability(
    "type_definition", TypeDefinitionRequest, "where the type of a value is defined, with its code"
)
async def type_definition(session: Session, request: TypeDefinitionRequest) -> Report:
    return await run_definition_like(
        session, request, "textDocument/typeDefinition", "type definition"
    )
