"""The position codec (doc/architecture.md, Positions): a file's text as a `Document`, and
the one place code points meet utf-8/16/32 units.

Python indexes strings by code point; a language server counts `character` in the unit
of its negotiated `offset_encoding`, Neovim and Python's `ast` count UTF-8 bytes. Every
conversion goes through here so that emoji, accents and CJK text never shift a column,
and every line is read through `line_at`/`Document.line`, so that a range ending one
line past the text (or a stale line number) reads "" instead of failing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypedDict

Encoding = Literal["utf-8", "utf-16", "utf-32"]


class _Jump(TypedDict):
    path: str  # as reports name it
    line: int  # 1-based


class EditorLocation(_Jump, total=False):
    """Where the editor jumps from a report (its jump list, the quickfix list): a byte
    `col`, or a server's `character` in its `encoding` (Lua converts it)."""

    col: int
    character: int
    encoding: str
    text: str


def line_at(lines: Sequence[str], index: int) -> str:
    """Line `index` of a text, or "" when there is no such line."""
    return lines[index] if 0 <= index < len(lines) else ""


@dataclass(frozen=True)
class Document:
    """A file's text: from the loaded buffer when there is one, else from disk."""

    path: Path
    lines: list[str]
    version: str  # changedtick for buffers, the disk stamp for files: a cache key
    bufnr: int | None = None
    modified: bool = False
    # A buffer with unsaved changes whose file was "changed" or "deleted" on disk since the
    # buffer was read: the text is the human's, and answers say the disk differs.
    disk_differs: Literal["changed", "deleted"] | None = None
    # A text read from disk while its stamp was racy: its content hash, which settles
    # whether an equal stamp later still means this text (see `DiskStamp.racy`).
    digest: str | None = None
    # A buffer's version as its servers last heard it (`didChange`), which a server's edit
    # names: a write moves the changedtick past it without changing the text.
    sent: int | None = None

    def line(self, index: int) -> str:
        """Line `index`, or "" when there is no such line."""
        return line_at(self.lines, index)

    def column(self, line: int, character: int, encoding: Encoding) -> int:
        """The code-point column of an LSP `character` on `line`."""
        return column_at(self.lines, line, character, encoding)

    def character(self, line: int, column: int, encoding: Encoding) -> int:
        """The LSP `character` of code-point `column` on `line`."""
        return to_lsp_character(self.line(line), column, encoding)


def column_at(lines: Sequence[str], line: int, character: int, encoding: Encoding) -> int:
    """The code-point column of an LSP `character` on line `line` of `lines`."""
    text = lines[line] if 0 <= line < len(lines) else ""
    if text.isascii():  # the common case, inline: a large file's symbols ask 40,000 times
        return max(0, min(character, len(text)))
    return from_lsp_character(text, character, encoding)


def byte_column(line_text: str, byte: int) -> int:
    """The code-point column of a UTF-8 byte offset (Neovim's columns, `ast`'s offsets);
    an offset inside a multibyte sequence maps to the code point containing it."""
    return from_lsp_character(line_text, byte, "utf-8")


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
