"""A file's text and the text edits on it: lines as a language server counts them (decoded from
the disk's bytes, each line's end kept), LSP positions as code points, edits spliced as
Neovim's buffer gets them, and a whole-file replacement cut down to the few edits that make
the same text.
"""

from __future__ import annotations

import codecs
import difflib
import itertools
import re
from dataclasses import dataclass

from lsprotocol import types

from ..errors import ErrorCode, LsapError
from ..filestate import Snapshot
from ..position import Encoding, from_lsp_character

NOTHING = "nothing was changed"
_LINE_BREAK = re.compile(r"(\r\n|\r|\n)")


def point_of(lines: list[str], pos: types.Position, encoding: Encoding) -> tuple[int, int]:
    """(line, code-point column), clamped to the text."""
    line = pos.line
    if line >= len(lines):
        return len(lines) - 1, len(lines[-1])
    return line, from_lsp_character(lines[line], pos.character, encoding)


@dataclass(frozen=True)
class Spliced:
    lines: list[str]
    byte_edits: list[list[int | list[str]]]  # [line, byte, end line, end byte, new lines], last first
    append: bool  # an empty line was appended for positions after the final newline
    fix_eol: bool  # a trailing empty line left by the edits is the final newline: drop it
    breaks: list[str] | None = None  # the line ends of the disk's text, when given


def splice(
    lines: list[str],
    edits: list[types.TextEdit],
    encoding: Encoding,
    name: str,
    breaks: list[str] | None = None,
) -> Spliced:
    """Apply text edits to lines, as Neovim's buffer will get them.

    A file's text ends with a newline that is not a line of the buffer: an edit at the line
    after the last one (appending to the file) works on an extra empty line, and a trailing
    empty line left at the end is that final newline again (as in `vim.lsp.util`). An empty
    file ([""]) has no final newline yet, so the same holds for it.

    `breaks`: each line's end on disk (the last one "" when the file has no final
    newline), kept through the edits so that the file is rewritten byte for byte except
    where it was edited; new line breaks take the file's first kind.
    """
    empty = lines == [""] and (breaks is None or breaks == [""])
    ends_with_newline = breaks is None or breaks[-1] != ""
    append = not empty and ends_with_newline and any(
        end.line >= len(lines) for item in edits for end in (item.range.start, item.range.end)
    )
    work = [*lines, ""] if append else list(lines)
    work_breaks = None if breaks is None else [*breaks, ""] if append else list(breaks)
    eol = next((b for b in breaks or [] if b), "\n")
    byte_edits: list[list[int | list[str]]] = []
    for (sl, sc), (el, ec), text in reversed(_spans(work, edits, encoding, name)):
        byte_edits.append(
            [sl, len(work[sl][:sc].encode()), el, len(work[el][:ec].encode()), text.split("\n")]
        )
        new = (work[sl][:sc] + text + work[el][ec:]).split("\n")
        if work_breaks is not None:
            work_breaks[sl : el + 1] = [eol] * (len(new) - 1) + [work_breaks[el]]
        work[sl : el + 1] = new
    fix_eol = append or empty
    if fix_eol and len(work) > 1 and work[-1] == "":
        work.pop()
        if work_breaks is not None:
            work_breaks.pop()
    if empty and work_breaks is not None and work != [""]:
        work_breaks[-1] = eol  # an empty file's first text ends with a newline, as `:w` does
    return Spliced(work, byte_edits, append, fix_eol, work_breaks)


def _spans(work: list[str], edits: list[types.TextEdit], encoding: Encoding,
           name: str) -> list[tuple[tuple[int, int], tuple[int, int], str]]:
    """The edits as (start, end, new text) in code points, in the text's order (ties in the
    server's): refused when a range ends before it starts or two overlap."""
    spans = []
    for index, item in enumerate(edits):
        start = point_of(work, item.range.start, encoding)
        end = point_of(work, item.range.end, encoding)
        if end < start:
            raise LsapError(
                ErrorCode.SERVER_ERROR,
                f"the server sent an edit of {name} whose range ends before it starts",
            )
        spans.append((start, end, index, item.new_text.replace("\r\n", "\n")))
    spans.sort(key=lambda s: (s[0], s[1], s[2]))
    for before, after in itertools.pairwise(spans):
        if after[0] < before[1]:
            raise LsapError(
                ErrorCode.SERVER_ERROR,
                f"the server sent overlapping edits of {name}",
                hint="nothing was changed; report this to the language server",
            )
    return [(start, end, text) for start, end, _index, text in spans]


def replaces_all(edits: list[types.TextEdit], lines: list[str]) -> bool:
    """Whether one edit rewrites (about) the whole text, as jedi's renames do from the file on
    disk. It starts at the top and reaches the last line or beyond: a text with lines the
    server did not know (the human's) ends its range early, on the buffer's last line."""
    for item in edits:
        start, end = item.range.start, item.range.end
        if (start.line, start.character) == (0, 0) and end.line >= len(lines) - 1 > 0:
            return True
    return False


def minimal(file_lines: list[str], breaks: list[str] | None, lsp: list[types.TextEdit],
             encoding: Encoding, name: str) -> list[types.TextEdit] | None:
    """A whole-file replacement as the few edits that make the same text (code-point
    columns): the lines it keeps are not rewritten, so what it would put back unchanged
    cannot overwrite a change made meanwhile, and the old-name check sees each change.
    None when the replacement changes the file's final newline (kept whole then)."""
    whole = splice(file_lines, lsp, encoding, name, breaks)
    if breaks is not None and whole.breaks is not None and (breaks[-1] == "") != (whole.breaks[-1] == ""):
        return None
    new, last = whole.lines, len(file_lines)
    out: list[types.TextEdit] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, file_lines, new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if i2 < last:  # whole lines, each with its line end
            start, end, text = (i1, 0), (i2, 0), "".join(line + "\n" for line in new[j1:j2])
        elif i1 < i2:  # up to the end of the last line, whose line end stays
            start, end = (i1, 0), (last - 1, len(file_lines[-1]))
            text = "\n".join(new[j1:j2])
            if j1 == j2 and i1 > 0:  # the last lines go, with the line end before them
                start = (i1 - 1, len(file_lines[i1 - 1]))
        else:  # lines added after the last one
            start = end = (last - 1, len(file_lines[-1]))
            text = "".join("\n" + line for line in new[j1:j2])
        out.append(types.TextEdit(types.Range(types.Position(*start), types.Position(*end)), text))
    if splice(file_lines, out, "utf-32", name, breaks).lines != new:
        return None  # never expected; the whole replacement is then applied as sent
    return out


def decoded(disk: Snapshot, name: str) -> tuple[list[str], list[str], bytes]:
    """A file's lines as a language server counts them (\\r\\n, \\r and \\n end a line), each
    line's end, and its byte-order mark; only UTF-8 text is edited on disk."""
    data = disk.data
    bom = codecs.BOM_UTF8 if data.startswith(codecs.BOM_UTF8) else b""
    try:
        text = data[len(bom):].decode("utf-8")
    except UnicodeDecodeError:
        raise LsapError(
            ErrorCode.UNSUPPORTED,
            f"{name} is not UTF-8 text, which the bridge does not rewrite on disk",
            hint="nothing was changed; make this change in Neovim, or by hand",
        ) from None
    parts = _LINE_BREAK.split(text)
    lines, breaks = parts[0::2], [*parts[1::2], ""]
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
        breaks.pop()
    return lines, breaks, bom
