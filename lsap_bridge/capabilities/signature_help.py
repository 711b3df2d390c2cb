"""`signature_help`: the signature of the call around a position, with the active parameter."""

from __future__ import annotations

from typing import Literal

from lsprotocol import types

from ..decode import clean_markdown
from ..models import Anchored, LocateRequest, Row
from ..modes import Answer, mode
from ..report.pieces import anchor_fields, fence_language
from ..resolve import resolve
from ..session.warm import Session

METHOD = "textDocument/signatureHelp"


class SignatureHelpRequest(LocateRequest):
    mode: Literal["signature_help"] = "signature_help"


class Parameter(Row):
    label: str
    docs: str
    active: bool


class Signature(Row):
    label: str
    docs: str
    parameters: list[Parameter]
    active: bool


class SignatureHelpReport(Anchored):
    signatures: list[Signature]
    language: str


def _docs(value: str | types.MarkupContent | None) -> str:
    """`string | MarkupContent` documentation as Markdown, cleaned of markup noise."""
    if isinstance(value, types.MarkupContent):
        text = str(value.value).strip()
        return clean_markdown(text) if value.kind == types.MarkupKind.Markdown else text
    return str(value or "").strip()


def signatures(result: types.SignatureHelp | None) -> list[Signature]:
    """`SignatureHelp` as report rows: label, parameters, the active one marked."""
    if result is None:
        return []
    active_signature = int(result.active_signature or 0)
    out = []
    for index, raw in enumerate(result.signatures or []):
        label = str(raw.label)
        active = raw.active_parameter if raw.active_parameter is not None else result.active_parameter
        parameters = []
        for number, param in enumerate(raw.parameters or []):
            name = param.label
            # A parameter label is its text, or [start, end) offsets into the signature label.
            text = label[name[0] : name[1]] if isinstance(name, (list, tuple)) and len(name) == 2 else str(name)
            parameters.append(Parameter(label=text, docs=_docs(param.documentation),
                                        active=active is not None and number == int(active)))
        out.append(Signature(label=label, docs=_docs(raw.documentation), parameters=parameters,
                             active=index == active_signature))
    return out


@mode("signature_help", request=SignatureHelpRequest, report=SignatureHelpReport,
      summary="the signature of the call at a position", method=METHOD, fallback="hover")
async def signature_help(session: Session, request: SignatureHelpRequest) -> Answer:
    resolved = await resolve(session, request.locate, METHOD)
    params = session.servers.position_params(resolved.target, resolved.doc, resolved.line, resolved.column)
    params["context"] = {"triggerKind": 1, "isRetrigger": False}
    result = await session.servers.call(resolved.target, METHOD, params, types.SignatureHelpResponse)
    return Answer(SignatureHelpReport(**anchor_fields(resolved, session), signatures=signatures(result),
                                      language=fence_language(resolved.doc)))
