"""`definition`, `declaration`, `type_definition`, `implementations`: where a symbol is
defined (declared, its type defined, implemented), with the code of each, bounded.

A 2,000-line class must not come back as 22k tokens (doc/architecture.md, Costs): long
definitions show their head (signature and docstring) and an outline of their members
instead (`report.pieces.code_of`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from lsprotocol import types
from pydantic import Field

from ..models import Anchored, LocateRequest, Paged
from ..modes import Answer, Offer, mode
from ..position import Document
from ..report.paging import PagingInfo, paged
from ..report.pieces import MAX_CODE_LINES, Code, anchor_fields, code_of, defining_symbol, editor_location, word_at
from ..resolve import resolve
from ..session.targets import Location
from ..session.warm import Session
from ..surface import SURFACE

FULL_CODE_LINES = 40  # Neovim's report window: a definition's code up to this many lines


class DefinitionLikeRequest(LocateRequest):
    """Fields of definition, declaration, type_definition and implementations."""

    # Up to this many lines of the code, else its head and members; None: for agents the
    # place and the signature only (doc/agents.md), in Neovim `FULL_CODE_LINES`.
    max_code_lines: Annotated[int, Field(ge=1, le=MAX_CODE_LINES)] | None = None


class DefinitionRequest(DefinitionLikeRequest):
    mode: Literal["definition"] = "definition"


class DeclarationRequest(DefinitionLikeRequest):
    mode: Literal["declaration"] = "declaration"


class TypeDefinitionRequest(DefinitionLikeRequest):
    mode: Literal["type_definition"] = "type_definition"


class ImplementationsRequest(DefinitionLikeRequest):
    mode: Literal["implementations"] = "implementations"


class DefinitionReport(Anchored, Paged):
    name: str
    kind_label: str  # "definition", "type definition", "implementation", …
    definitions: list[Code]
    external: list[str]  # results outside the workspace, by path


async def run_definition_like(
    session: Session, request: DefinitionLikeRequest, method: str, label: str | None = None,
) -> Answer:
    """Shared by definition, declaration, type_definition and implementations.

    Results are paged (`max_items`), so an interface with hundreds of implementations
    costs code excerpts only for the page shown.
    """
    found: list[Location] | None = session.kept.page(request)
    resolved = await resolve(session, request.locate, method)
    target = resolved.target
    texts: dict[Path, Document] = {}  # read while converting columns, reused below
    if found is None:
        params = session.servers.position_params(target, resolved.doc, resolved.line, resolved.column)
        # The four methods answer the same Location | Location[] | LocationLink[] (lsp.Locations).
        answer = await session.servers.call(target, method, params, types.DefinitionResponse)
        found = await session.texts.locations(answer, target.client, texts)
    external = [loc for loc in found if not session.workspace.contains(loc.path)]
    limit = request.max_code_lines or (FULL_CODE_LINES if SURFACE.get() == "nvim" else None)

    async def build(request: DefinitionLikeRequest, inside: list[Location], paging: PagingInfo) -> Answer:
        docs = await session.texts.documents([loc.path for loc in inside], have=texts)
        trees = await session.symbols.of([loc.path for loc in inside], target.client, docs) if (
            target.client.supports("textDocument/documentSymbol")) else {}
        definitions = []
        locations = []
        for loc in inside:
            doc = docs[loc.path]
            named = defining_symbol(trees[loc.path], loc) if loc.path in trees else None
            definitions.append(code_of(session, doc, named, loc, limit))
            locations.append(editor_location(session.workspace.display(loc.path), doc, loc.line, loc.col))
        report = DefinitionReport(
            **anchor_fields(resolved, session),
            name=word_at(resolved.line_text, resolved.column),
            kind_label=label or request.mode.replace("_", " "),
            definitions=definitions,
            external=[str(loc.path) for loc in external],
            **paging,
        )
        return Answer(report, locations)

    return await paged(session, request, [loc for loc in found if session.workspace.contains(loc.path)], build)


@mode("definition", request=DefinitionRequest, report=DefinitionReport,
      summary="where a symbol is defined, with its signature or code", method="textDocument/definition",
      fallback="search", offer=Offer(command="LsapDefinition", picker=2, view="def", mcp=True, plug=True))
async def definition(session: Session, request: DefinitionRequest) -> Answer:
    return await run_definition_like(session, request, "textDocument/definition")


@mode("declaration", request=DeclarationRequest, report=DefinitionReport, template="definition",
      summary="where a symbol is declared, with its signature or code", method="textDocument/declaration",
      fallback="definition", offer=Offer(picker=10))
async def declaration(session: Session, request: DeclarationRequest) -> Answer:
    return await run_definition_like(session, request, "textDocument/declaration")


@mode("type_definition", request=TypeDefinitionRequest, report=DefinitionReport,
      template="definition", summary="where the type of a value is defined, with its signature or code",
      method="textDocument/typeDefinition", fallback="hover", offer=Offer(picker=11, view="type"))
async def type_definition(session: Session, request: TypeDefinitionRequest) -> Answer:
    return await run_definition_like(session, request, "textDocument/typeDefinition", "type definition")


@mode("implementations", request=ImplementationsRequest, report=DefinitionReport,
      template="definition", summary="concrete implementations of an interface or member",
      method="textDocument/implementation", fallback="references", workspace=True,
      offer=Offer(picker=9, view="impl"))
async def implementations(session: Session, request: ImplementationsRequest) -> Answer:
    return await run_definition_like(session, request, "textDocument/implementation", "implementation")
