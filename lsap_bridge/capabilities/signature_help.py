"""`signature_help`: the signature of the call around a position, with the active parameter."""

from __future__ import annotations

from typing import Any, Literal

from ..locate.resolve import resolve
from ..session import Session
from .base import LocateRequest, Report, anchor_data, capability, fence_language

METHOD = "textDocument/signatureHelp"


class SignatureHelpRequest(LocateRequest):
    mode: Literal["signature_help"] = "signature_help"


def _docs(value: Any) -> str:
    """`string | MarkupContent` documentation as Markdown."""
    if isinstance(value, dict):
        return str(value.get("value", "")).strip()
    return str(value or "").strip()


def signatures(result: Any) -> list[dict[str, Any]]:
    """`SignatureHelp` as report rows: label, parameters, the active one marked."""
    if not result:
        return []
    active_signature = int(result.get("activeSignature") or 0)
    out = []
    for index, raw in enumerate(result.get("signatures") or []):
        label = str(raw.get("label", ""))
        active = raw.get("activeParameter", result.get("activeParameter"))
        parameters = []
        for number, param in enumerate(raw.get("parameters") or []):
            name = param.get("label", "")
            # A parameter label is its text, or [start, end) offsets into the signature label.
            text = (
                label[name[0] : name[1]] if isinstance(name, list) and len(name) == 2 else str(name)
            )
            parameters.append(
                {
                    "label": text,
                    "docs": _docs(param.get("documentation")),
                    "active": active is not None and number == int(active),
                }
            )
        out.append(
            {
                "label": label,
                "docs": _docs(raw.get("documentation")),
                "parameters": parameters,
                "active": index == active_signature,
            }
        )
    return out


@capability("signature_help", SignatureHelpRequest, "the signature of the call at a position")
async def signature_help(session: Session, request: SignatureHelpRequest) -> Report:
    resolved = await resolve(session, request.locate, METHOD)
    params = session.position_params(resolved.target, resolved.doc, resolved.line, resolved.column)
    params["context"] = {"triggerKind": 1, "isRetrigger": False}
    result = await session.call(resolved.target, METHOD, params)
    data = {
        **anchor_data(resolved, session),
        "signatures": signatures(result),
        "language": fence_language(resolved.doc),
    }
    return Report("signature_help", data)
