"""A file's indentation, for the `FormattingOptions` of formatting and of edits that insert
new code (tsserver's "Move to file").

The buffer's own settings win where someone set them: an `.editorconfig` (through Neovim's
own support) or 'expandtab'. Otherwise (a Neovim started `--clean`, as the embedded mode's
is, keeps tabs of width 8) the unit is read from the file's code lines only: a line inside a
block comment or a multi-line string says nothing about the code's indent (a JSDoc ` * `
is not a 1-space indent), and neither does a comment line.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import TypedDict

LINES_READ = 2000  # the first lines of a file are enough to tell its indent
LINE_COMMENTS = ("//", "#", "--")
TRIPLE_QUOTES = ('"""', "'''")


class Options(TypedDict):
    """LSP `FormattingOptions` (the two fields every server reads)."""

    tabSize: int
    insertSpaces: bool


def code_lines(lines: list[str]) -> list[str]:
    """The lines that begin in code: not inside a block comment (`/* */`), a template
    literal or a triple-quoted string, and not a comment line themselves."""
    code: list[str] = []
    inside: str | None = None  # the closing delimiter of the comment or string a line is in
    for line in lines[:LINES_READ]:
        stripped = line.lstrip()
        if inside is None and stripped and not stripped.startswith((*LINE_COMMENTS, "/*")):
            code.append(line)
        inside = _state_after(line, inside)
    return code


def _state_after(line: str, inside: str | None) -> str | None:
    """What the line leaves open: the closing delimiter of a block comment, a template
    literal or a triple-quoted string, or None (back in code)."""
    i = 0
    while i < len(line):
        if inside is not None:
            end = line.find(inside, i)
            if end < 0:
                return inside
            i, inside = end + len(inside), None
            continue
        rest = line[i:]
        if rest.startswith(LINE_COMMENTS):
            return None
        if rest.startswith("/*"):
            inside, i = "*/", i + 2
        elif rest.startswith(TRIPLE_QUOTES):
            inside, i = rest[:3], i + 3
        elif rest[0] == "`":
            inside, i = "`", i + 1
        elif rest[0] in "'\"":  # a one-line string: skipped to its close (or the line's end)
            i = _string_end(line, i)
        else:
            i += 1
    return inside


def _string_end(line: str, start: int) -> int:
    quote, i = line[start], start + 1
    while i < len(line):
        if line[i] == "\\":
            i += 2
        elif line[i] == quote:
            return i + 1
        else:
            i += 1
    return i


def detect(lines: list[str]) -> Options | None:
    """The indent the code lines use: tabs if they indent with tabs, else the most common
    step between one code line's indent and the next one's, in or out (ties: the smaller);
    None when no code line is indented."""
    steps: Counter[int] = Counter()
    tabs = spaces = 0
    previous = 0
    for line in code_lines(lines):
        body = line.lstrip(" \t")
        if not body:
            continue
        indent = line[: len(line) - len(body)]
        if "\t" in indent:
            tabs += 1
            continue
        width = len(indent)
        if width:
            spaces += 1
        if width != previous:
            steps[abs(width - previous)] += 1
        previous = width
    if tabs > spaces:
        return {"tabSize": 4, "insertSpaces": False}
    if not steps:
        return None
    step = min(steps, key=lambda s: (-steps[s], s))
    return {"tabSize": step, "insertSpaces": True}


def _number(value: object) -> int:
    """A setting's number (Neovim's options are numbers; 0 for one not set)."""
    return int(value) if isinstance(value, (int, float, str)) and value else 0


def options(settings: Mapping[str, object], lines: list[str]) -> Options:
    """The options for a buffer whose settings (`lsap.transport.indent_settings`) and lines
    are given: its settings when someone set them, else what its code lines use, else its
    settings."""
    width = _number(settings.get("shiftwidth")) or _number(settings.get("tabstop")) or 8
    own: Options = {"tabSize": width, "insertSpaces": bool(settings.get("expandtab"))}
    if settings.get("editorconfig") or own["insertSpaces"]:
        return own
    found = detect(lines)
    if found is not None and not found["insertSpaces"]:
        found["tabSize"] = _number(settings.get("tabstop")) or width
    return found or own
