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
    """A hover's head for agents: all of it up to the end of its first code block (the
    signature, and what a server puts before it: clangd its kind and header), that block on
    one line (`_one_line`), then the first paragraph of its docs; and how many lines of docs
    that leaves out (code in them too). Without code: the first paragraph."""
    lines = hover.splitlines()
    opened = next((i for i, line in enumerate(lines) if line.startswith("```")), None)
    closed = next((i for i in range(opened + 1, len(lines)) if lines[i].startswith("```")), None) if (
        opened is not None) else None
    head: list[str] = []
    index = 0
    if opened is not None and closed is not None:
        head = [line for line in lines[:opened] if line.strip()]
        head.append(_one_line("\n".join(lines[opened:closed + 1])))
        index = closed + 1
    while index < len(lines) and lines[index].strip() in ("", "---"):
        index += 1
    end = index
    while end < len(lines) and lines[end].strip() and not lines[end].startswith("```"):
        end += 1
    return "\n".join([*head, *lines[index:end]]).strip(), sum(1 for line in lines[end:] if line.strip())


_FENCE = re.compile(r"```\w*\n(.*)\n```", re.S)


def _one_line(block: str) -> str:
    """A code block as agents get it: a declaration the server wrapped (its lines after the
    first indented, or closing a bracket) joined into one line without a fence, without
    a kind the declaration says itself (basedpyright's `(method) def send(…)`) and the
    type of `self`; any other
    block as it is."""
    found = _FENCE.fullmatch(block)
    if found is None:
        return block
    first, *rest = found[1].splitlines()
    if not all(line[:1].isspace() or line[:1] in ")]}>" for line in rest):
        return block
    joined = re.sub(r"([(\[]) | ([)\]])", r"\1\2", " ".join([first.rstrip(), *(line.strip() for line in rest)]))
    return _SELF.sub(r"(\1", _SAID_KIND.sub("", joined))


# A kind before a declaration that names it: `def` is a function's or a method's (the
# `self` parameter tells which); `(variable) x: int`, `(property) …` keep theirs.
_SAID_KIND = re.compile(r"^\((?:function|method)\) (?=(?:async )?def )")
# The type basedpyright gives `self` and `cls` (`self: Self@Client`): what they always are.
_SELF = re.compile(r"\((self|cls): (?:type\[Self@\w+\]|Self@\w+)(?=[,)])")


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
