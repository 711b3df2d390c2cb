"""`declaration`: where a symbol is declared (an import, a `.d.ts`, a header), with its code."""

from __future__ import annotations

from typing import Literal

from ..session import Session
from .base import Report, capability
from .definition import DefinitionLikeRequest, run_definition_like


class DeclarationRequest(DefinitionLikeRequest):
    mode: Literal["declaration"] = "declaration"


@capability("declaration", DeclarationRequest, "where a symbol is declared, with its code")
async def declaration(session: Session, request: DeclarationRequest) -> Report:
    return await run_definition_like(session, request, "textDocument/declaration")
