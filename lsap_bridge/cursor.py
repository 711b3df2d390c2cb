"""The human's cursor as an anchor, so reports teach the agent's form (doc/architecture.md, The human's side)."""

from __future__ import annotations

import re

from .editor import Cursor
from .errors import ErrorCode, LsapError
from .locate.matcher import find_matches, parse_find
from .models import LineScope, Locate, SymbolScope
from .position import byte_column
from .session.warm import Session


def marker_for(text: str) -> str:
    """`<|>`, or a deeper marker when the line itself contains one."""
    depth = 1
    while "<" * depth + "|" + ">" * depth in text:
        depth += 1
    return "<" * depth + "|" + ">" * depth


async def anchor_at_cursor(session: Session, cursor: Cursor) -> Locate:
    name = cursor.get("path") or ""
    if not name:
        raise LsapError(ErrorCode.INVALID_REQUEST, "the current buffer has no file",
                        hint="open a file, or give an anchor: `:Lsap references path@text`")
    path = session.workspace.resolve(name)
    text = cursor.get("text") or ""
    col = byte_column(text, int(cursor.get("col") or 0))
    # Start of the identifier under (or just after) the cursor.
    for word in re.finditer(r"[\w$]+", text):
        if word.start() <= col < word.end() or word.start() >= col:
            col = word.start()
            break
    stripped = text.lstrip()
    offset = col - (len(text) - len(stripped))
    marker = marker_for(text)
    find = (stripped[:offset] + marker + stripped[offset:]).rstrip()
    rel = session.workspace.display(path)
    line = int(cursor.get("line") or 0)
    if not stripped:  # a blank line has no text to find: the line itself is the anchor
        return Locate(file_path=rel, scope=LineScope(start_line=line + 1, end_line=line + 2))

    target = await session.servers.target(path, "textDocument/documentSymbol")
    doc = await session.texts.document(path)
    tree = await session.symbols.tree(target, doc)
    chain = tree.enclosing(line, col)
    needle = parse_find(find)
    if chain:
        scope = chain[-1].span
        result = find_matches(doc.lines, needle, scope.start_line, scope.end_line + 1)
        if len(result.matches) == 1:
            return Locate(file_path=rel, scope=SymbolScope(symbol_path=[s.bare_name for s in chain]), find=find)
    result = find_matches(doc.lines, needle)
    if len(result.matches) == 1:
        return Locate(file_path=rel, find=find)
    return Locate(file_path=rel, scope=LineScope(start_line=line + 1, end_line=line + 2), find=find)


