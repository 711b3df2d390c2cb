"""Print a Language Server Response block (`:help lsap-text-response`; doc/architecture.md, The text format).

The executor hands over what to say per file: echoed lines, in file order, each with the
answers that belong to it as `/*<tag>…</tag>*/` blocks. Diagnostics are merged in here by
line, so a diagnostic on a line the request never mentioned gets its own `@@` line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..diagnostics import Diagnostic, labelled, short_source
from ..errors import LsapError
from ..position import line_at
from .parser import CHECK

BEGIN = "*** Begin Language Server Response"
END = "*** End Language Server Response"

_WORD = re.compile(r"[\w$]+")
_IDENTIFIER = re.compile(r"(?<![\w$])[^\W\d][\w$]*|\$[\w$]*")


@dataclass(frozen=True)
class Tag:
    """One answer: `/*<name>body</name>*/`, the body on its own lines unless it is a code fence."""

    name: str
    body: str

    def render(self) -> str:
        body = self.body.strip("\n")
        if body.startswith("```"):
            return f"/*<{self.name}>{body}</{self.name}>*/"
        return f"/*<{self.name}>\n{body}\n</{self.name}>*/"


@dataclass
class Echo:
    """A request line echoed back (`^ V`, `! …`) with its answers."""

    text: str
    tags: list[Tag] = field(default_factory=list)


@dataclass
class Entry:
    """An anchored line: where it is (0-based; None if it could not be found) and what follows."""

    line: int | None
    prefix: str
    text: str
    tags: list[Tag] = field(default_factory=list)
    echoes: list[Echo] = field(default_factory=list)


@dataclass
class FileSection:
    path: str
    entries: list[Entry] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)  # the file's text, for diagnostics' lines
    diagnostics: list[Diagnostic] = field(default_factory=list)
    tags: list[Tag] = field(default_factory=list)  # file-level problems
    echoes: list[Echo] = field(default_factory=list)  # file-level commands (`! ORGANIZE_IMPORTS`)


def error_tag(error: LsapError) -> Tag:
    """An error as a tag: what failed, the candidates, and what to write instead."""
    lines = [error.message]
    for c in error.candidates:
        symbol = f" in {c.symbol}" if c.symbol else ""
        score = f" (score {c.score})" if c.score is not None else ""
        lines.append(f"  {c.line}{symbol}{score}: {c.text}")
    if error.suggestions:
        lines.append("did you mean: " + ", ".join(error.suggestions))
    if error.hint:
        lines.append(f"Next: {error.hint}")
    return Tag(f"error:{error.code.value}", "\n".join(lines))


def diagnostic_symbol(diagnostic: Diagnostic, lines: list[str]) -> str:
    """What a diagnostic is about: the first identifier of its range (`wrong`, `lookup` in
    `".lookup"`); for a range without one (a literal, as in `WRONG: str = 42`), the first
    identifier of the line before it; else the range's first word, else `_`."""
    text = line_at(lines, diagnostic.line)
    end = diagnostic.end_col if diagnostic.end_line == diagnostic.line else len(text)
    span = text[diagnostic.col : max(end, diagnostic.col + 1)]
    found = _IDENTIFIER.search(span) or _IDENTIFIER.search(text[: diagnostic.col])
    if found:
        return found.group()
    word = _WORD.search(span)
    return word.group() if word else "_"


def diagnostic_tag(diagnostic: Diagnostic, lines: list[str]) -> Tag:
    """`/*<diagnostics:error:wrong:ts>message.ts(2322)</…>*/`, severity, symbol and source."""
    source = short_source(diagnostic.source)
    name = f"diagnostics:{diagnostic.severity}:{diagnostic_symbol(diagnostic, lines)}:{source}"
    return Tag(name, labelled(diagnostic.message, diagnostic.source, diagnostic.code))


def _ordered(section: FileSection) -> list[Entry]:
    """Entries in line order, diagnostics attached to their line (new `@@` lines if needed).

    An anchor that could not be found keeps its place after the entry before it.
    """
    keyed: list[tuple[tuple[int, int, int], Entry]] = []
    last = -1
    by_line: dict[int, Entry] = {}
    for seq, entry in enumerate(section.entries):
        if entry.line is not None:
            last = entry.line
            by_line.setdefault(entry.line, entry)
        keyed.append(((last, 0, seq), entry))
    extra: dict[int, Entry] = {}
    for diagnostic in sorted(section.diagnostics, key=lambda d: (d.line, d.col)):
        tag = diagnostic_tag(diagnostic, section.lines)
        owner = by_line.get(diagnostic.line) or extra.get(diagnostic.line)
        if owner is None:
            text = line_at(section.lines, diagnostic.line)
            owner = Entry(diagnostic.line, "@@", text.strip())
            extra[diagnostic.line] = owner
            keyed.append(((diagnostic.line, 1, 0), owner))
        owner.tags.append(tag)
    return [entry for _, entry in sorted(keyed, key=lambda item: item[0])]


def print_response(sections: list[FileSection], check: Tag | None = None) -> str:
    """The response block; `check`: the answer to a `*** Check` line, after the files."""
    out = [BEGIN]
    for section in sections:
        out.append(f"*** File: {section.path}")
        out.extend(tag.render() for tag in section.tags)
        for echo in section.echoes:
            out.append(echo.text)
            out.extend(tag.render() for tag in echo.tags)
        for entry in _ordered(section):
            out.append(f"{entry.prefix} {entry.text}")
            answers = [t for t in entry.tags if not t.name.startswith("diagnostics:")]
            out.extend(tag.render() for tag in answers)
            for echo in entry.echoes:
                out.append(echo.text)
                out.extend(tag.render() for tag in echo.tags)
            out.extend(t.render() for t in entry.tags if t.name.startswith("diagnostics:"))
    if check is not None:
        out += [CHECK, check.render()]
    out.append(END)
    return "\n".join(out) + "\n"
