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
    """Where a symbol is on a line: as a whole word first, else as any substring."""
    whole = re.search(rf"(?<![\w$]){re.escape(symbol)}(?![\w$])", text)
    if whole:
        return whole.start()
    at = text.find(symbol)
    return at if at >= 0 else None


def identifiers(text: str) -> list[tuple[int, str]]:
    """Every identifier on a line, once each, with its column (for bare `^`)."""
    seen: dict[str, int] = {}
    for found in _IDENT.finditer(text):
        seen.setdefault(found.group(), found.start())
    return [(col, name) for name, col in seen.items()]
