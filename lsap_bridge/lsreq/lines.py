"""Symbols on one line of code, and hover text split into signature and documentation."""

from __future__ import annotations

import re

_FENCE = re.compile(r"```[^\n]*\n[\s\S]*?```")
_IDENT = re.compile(r"[^\W\d][\w$]*|\$[\w$]*")


def split_hover(markdown: str) -> tuple[str, str]:
    """A hover as (signature: its code fences, documentation: the rest)."""
    fences = _FENCE.findall(markdown)
    rest = _FENCE.sub("", markdown)
    docs = "\n".join(line for line in rest.split("\n") if line.strip() not in ("---", "***", "___"))
    return "\n".join(fences).strip(), re.sub(r"\n{3,}", "\n\n", docs).strip()


def symbol_column(text: str, symbol: str) -> int | None:
    """Where a symbol asked about is on a line: as a name (`name_column`), else as any
    substring (a read may point into a longer word; an edit never does)."""
    whole = name_column(text, symbol)
    if whole is not None:
        return whole
    at = text.find(symbol)
    return at if at >= 0 else None


def name_column(text: str, name: str) -> int | None:
    """Where a name is written on a line as a whole token, for an edit: the first place
    outside a string literal, else the first place at all (`f` in `log("f", f)` is the
    second, and never the `f` of `def` or of `fetch`)."""
    places = [m.start() for m in re.finditer(rf"(?<![\w$]){re.escape(name)}(?![\w$])", text)]
    quoted = _quoted(text)
    return next((at for at in places if at not in quoted), places[0] if places else None)


def _quoted(text: str) -> set[int]:
    """The columns inside the line's one-line string literals ('…', "…", `…`)."""
    inside: set[int] = set()
    quote: str | None = None
    escaped = False
    for col, char in enumerate(text):
        if quote is not None:
            inside.add(col)
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = None
        elif char in "'\"`":
            quote = char
    return inside


def identifiers(text: str) -> list[tuple[int, str]]:
    """Every identifier on a line, once each, with its column (for bare `^`)."""
    seen: dict[str, int] = {}
    for found in _IDENT.finditer(text):
        seen.setdefault(found.group(), found.start())
    return [(col, name) for name, col in seen.items()]
