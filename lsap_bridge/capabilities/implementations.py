"""`implementations`: the concrete implementations of an interface, abstract class or member."""

from __future__ import annotations

from typing import Literal

from ..session import Session
from .base import Report, capability
from .definition import DefinitionLikeRequest, run_definition_like


class ImplementationsRequest(DefinitionLikeRequest):
    mode: Literal["implementations"] = "implementations"


@capability(
    "implementations", ImplementationsRequest, "concrete implementations of an interface or member",
    workspace=True,
)
async def implementations(session: Session, request: ImplementationsRequest) -> Report:
    return await run_definition_like(
        session, request, "textDocument/implementation", "implementation"
    )
