"""`hover`: the type or signature of a symbol and its documentation."""

from __future__ import annotations

import re
from typing import Literal

from lsprotocol import types

from ..decode import hover_text
from ..models import Anchored, LocateRequest, absent
from ..modes import Answer, Offer, mode
from ..report.pieces import anchor_fields, word_at
from ..resolve import resolve
from ..session.warm import Session
from ..surface import SURFACE

METHOD = "textDocument/hover"


class HoverRequest(LocateRequest):
    mode: Literal["hover"] = "hover"
    # The signature and the docs' first paragraph, the rest of the docs counted; None:
    # compact for agents, all of it in Neovim's report window.
    compact: bool | None = None


class HoverReport(Anchored):
    name: str
    hover: str  # Markdown, as the server wrote it (compact: its head, `brief`)
    more: int | None = absent()  # lines of docs the compact form left out


def brief(hover: str) -> tuple[str, int]:
    """A hover's head for agents: its leading code blocks (the signature) and the first
    paragraph of its docs; and how many lines of docs that leaves out (code in them too)."""
    lines = hover.splitlines()
    index, fenced = 0, False
    while index < len(lines) and (fenced or lines[index].startswith("```") or not lines[index].strip()
                                  or lines[index].strip() == "---"):
        fenced ^= lines[index].startswith("```")
        index += 1
    end = index
    while end < len(lines) and lines[end].strip() and not lines[end].startswith("```"):
        end += 1
    head = _one_line("\n".join(line for line in lines[:index] if line.strip() not in ("", "---")))
    prose = [line for line in lines[index:end] if line.strip()]
    return "\n".join([*head, *prose]).strip(), sum(1 for line in lines[end:] if line.strip())


_FENCE = re.compile(r"^```\w*\n(.*?)\n```$", re.S | re.M)


def _one_line(code: str) -> list[str]:
    """Code blocks as agents get them: a declaration the server wrapped (its lines after
    the first indented, or closing a bracket) joined into one line without a fence; any
    other block as it is."""
    out: list[str] = []
    for block in _FENCE.finditer(code):
        first, *rest = block[1].splitlines() or [""]
        if all(line[:1].isspace() or line[:1] in ")]}>" for line in rest):
            joined = " ".join([first.rstrip(), *(line.strip() for line in rest)])
            out.append(re.sub(r"([(\[]) | ([)\]])", r"\1\2", joined))
        else:
            out.append(block[0])
    return out if out else [code] if code else []


@mode("hover", request=HoverRequest, report=HoverReport,
      summary="type, signature and documentation of a symbol", method=METHOD,
      fallback="definition", offer=Offer(command="LsapHover", picker=3, plug=True))
async def hover(session: Session, request: HoverRequest) -> Answer:
    resolved = await resolve(session, request.locate, METHOD)
    params = session.servers.position_params(resolved.target, resolved.doc, resolved.line, resolved.column)
    result = await session.servers.call(resolved.target, METHOD, params, types.HoverResponse)
    text, more = hover_text(result), None
    if request.compact if request.compact is not None else SURFACE.get() != "nvim":
        text, more = brief(text)
    return Answer(HoverReport(**anchor_fields(resolved, session), name=word_at(resolved.line_text, resolved.column),
                              hover=text, more=more or None))
