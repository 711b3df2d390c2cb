"""LSP position encodings (doc/architecture.md, Positions): the one place code points meet utf-8/16/32 units.

Python indexes strings by code point; a language server counts `character` in
the unit of its negotiated `offset_encoding`. Every conversion goes through
here so that emoji, accents and CJK text never shift a column.
"""

from __future__ import annotations

from typing import Literal

Encoding = Literal["utf-8", "utf-16", "utf-32"]


def _units(ch: str, encoding: Encoding) -> int:
    """Code units of one code point; lone surrogates count as their own unit(s)."""
    point = ord(ch)
    if encoding == "utf-32":
        return 1
    if encoding == "utf-16":
        return 2 if point > 0xFFFF else 1
    if point < 0x80:
        return 1
    if point < 0x800:
        return 2
    return 3 if point <= 0xFFFF else 4


def to_lsp_character(line_text: str, column: int, encoding: Encoding) -> int:
    """The LSP `character` for code-point `column` of a line (clamped to the line)."""
    column = max(0, min(column, len(line_text)))
    if encoding == "utf-32" or line_text.isascii():
        return column
    return sum(_units(ch, encoding) for ch in line_text[:column])


def from_lsp_character(line_text: str, character: int, encoding: Encoding) -> int:
    """The code-point column for an LSP `character`, clamped to the line.

    Servers may point into the middle of a surrogate pair or a multibyte
    sequence; that maps to the code point containing it rather than failing.
    """
    if character <= 0:
        return 0
    if encoding == "utf-32" or line_text.isascii():
        return min(character, len(line_text))
    consumed = 0
    for index, ch in enumerate(line_text):
        consumed += _units(ch, encoding)
        if consumed > character:
            return index
    return len(line_text)
