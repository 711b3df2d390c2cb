"""Report pieces every mode builds from: how the anchor resolved, numbered lines, editor
locations, a definition's bounded code, a diagnostic's row."""

from __future__ import annotations

import re
from typing import Any, Literal, TypeAlias, TypedDict

from ..diagnostics import Diagnostic
from ..models import INCOMPLETE, Line, Row, absent
from ..position import Document, EditorLocation, line_at
from ..session.targets import Location, Resolved
from ..session.warm import Session
from ..surface import phrase
from ..symbols import Symbol, SymbolTree
from ..workspace import language_of

HEAD_LINES = 12  # a long definition shows this much of its head (signature, docstring)
MAX_CODE_LINES = 2000  # the most `max_code_lines` a request may ask for
MEMBERS = 100  # members a long definition lists; the rest are counted (`outline` lists all)
STATEMENT_LINES = 6  # a use's statement is shown up to this many lines, then `…`


class Approximate(TypedDict, total=False):
    """How an approximate anchor matched (`models.Anchored.approximate`)."""

    tier: str
    matched: str
    score: float
    gap: str  # the marker sat where the find lacks text: which reading was taken


# The fields of `models.Anchored` (its model checks them).
AnchorFields: TypeAlias = dict[str, Any]


def anchor_fields(resolved: Resolved, session: Session, partial: bool | None = None) -> AnchorFields:
    """How the anchor resolved, including the approximate-match note (doc/architecture.md,
    Anchors): the fields of `models.Anchored`. `partial`: the answer's own (its server's
    index by default)."""
    data: AnchorFields = {
        "anchor": resolved.anchor,
        "path": session.workspace.display(resolved.path),
        "line": resolved.line + 1,
        "column": resolved.column + 1,
        "symbol": resolved.symbol_path,
        "text": resolved.line_text.strip(),
        "server": resolved.target.client.name,
        "partial": resolved.target.partial if partial is None else partial,
    }
    if resolved.approximate and resolved.match is not None:
        approximate: Approximate = {
            "tier": resolved.match.tier.name.lower(),
            "matched": resolved.match.matched_text,
            "score": round(resolved.match.score, 1),
        }
        if resolved.match.gap:  # the marker sat where the find lacks text: which reading was taken
            approximate["gap"] = resolved.match.gap
        data["approximate"] = approximate
    if resolved.note:
        data["note"] = resolved.note
    if resolved.overloads:
        data["overloads"] = resolved.overloads
    return data


def excerpt(doc: Document, first: int, last: int, context: int = 0) -> list[Line]:
    """Numbered lines `first..last` (0-based, inclusive) widened by `context` lines."""
    start = max(0, first - context)
    stop = min(len(doc.lines), last + context + 1)
    return [Line(number=i + 1, text=doc.lines[i]) for i in range(start, stop)]


def use_lines(doc: Document, line: int, context: int = 0) -> list[Line]:
    """The numbered lines that show a use on `line` (0-based): its statement, so that a
    multi-line call's arguments are there (at most `STATEMENT_LINES`, the last marked `…`
    when it goes on), widened by `context` lines."""
    last, at_block = statement_span(doc.lines, line, _comment(doc))
    shown = excerpt(doc, line, min(last, line + STATEMENT_LINES - 1), context)
    if at_block or last >= line + STATEMENT_LINES:
        end = min(last + 1, line + STATEMENT_LINES)
        shown = [Line(number=n.number, text=n.text + " …") if n.number == end else n for n in shown]
    return shown


def _comment(doc: Document) -> str:
    return "#" if language_of(doc.path) == "python" else "//"


_STRING = re.compile(r"""'(?:\\.|[^'\\])*'?|"(?:\\.|[^"\\])*"?|`(?:\\.|[^`\\])*`?""")


def statement_end(lines: list[str], line: int, comment: str, bound: int = STATEMENT_LINES) -> int:
    """The last line (0-based) of the statement that starts at `line` (`statement_span`)."""
    return statement_span(lines, line, comment, bound)[0]


# A brace that opens a block inside a call's arguments: a callback's body, `(b) => {`,
# `function (b) {` (an object literal's brace follows `(`, `,`, `:` or `=` instead).
_BLOCK = re.compile(r"(=>|\))\s*\{$")


def statement_span(lines: list[str], line: int, comment: str, bound: int = STATEMENT_LINES) -> tuple[int, bool]:
    """The last line (0-based) of the statement that starts at `line`, and whether it was
    cut there at a block. A statement goes on while a `(` or `[` opened on it is
    still open, or a line ends with `\\`; it is cut after `bound` lines past the first,
    and at a block that one of its arguments opens (a callback's body: what an agent reads
    of a use is the call, not the callback's code). Strings and comments are skipped (a
    string or comment spanning lines is not followed; brace blocks are no statement's
    arguments)."""
    depth = 0
    for index in range(line, min(len(lines), line + bound + 1)):
        code = _STRING.sub('""', lines[index]).split(comment, 1)[0].rstrip()
        depth += sum(code.count(c) for c in "([") - sum(code.count(c) for c in ")]")
        if depth <= 0 and not code.endswith("\\"):
            return index, False
        if _BLOCK.search(code):
            return index, True
    return min(len(lines) - 1, line + bound), False


def without_comment(text: str, comment: str) -> str:
    """A line without its trailing comment (`comment`'s marker inside a string is none)."""
    at = 0
    while (start := text.find(comment, at)) >= 0:
        inside = next((m for m in _STRING.finditer(text) if m.start() < start < m.end()), None)
        if inside is None:
            return text[:start].rstrip()
        at = inside.end()
    return text


def editor_location(display: str, doc: Document, line: int, column: int) -> EditorLocation:
    """A location for the editor (report jumps, quickfix): 1-based line, byte column."""
    return {"path": display, "line": line + 1, "col": doc.character(line, column, "utf-8"),
            "text": doc.line(line).strip()}


def word_at(text: str, column: int) -> str:
    """The identifier at a column: what a report calls the symbol it is about."""
    match = re.match(r"[\w$]+", text[column:])
    return match.group(0) if match else text[column:column + 20].strip()


def fence_language(doc: Document) -> str:
    return language_of(doc.path)


class Member(Row):
    name: str
    kind: str
    line: int


class Code(Row):
    """A definition's code (`_definition.md.j2`): all of it if it fits, else its head and
    an outline of its members."""

    path: str
    line: int
    symbol: str | None
    kind: str | None
    language: str
    lines: list[Line]
    truncated: int
    members: list[Member]
    more_members: int = 0  # members past the first `MEMBERS`, not listed
    # Only its head was asked for (agents' default, `max_code_lines` not given): its
    # decorators and the statement that names it, the rest counted in `truncated`.
    head: bool | None = absent()

    @property
    def asked(self) -> int:
        """The `max_code_lines` that shows all of it, or the most a request may ask for."""
        return min(len(self.lines) + self.truncated, MAX_CODE_LINES)


def defining_symbol(tree: SymbolTree, loc: Location) -> tuple[str, Symbol] | None:
    """The symbol whose name is at the location, else the innermost one containing it."""
    best: tuple[str, Symbol] | None = None
    for path, symbol in tree.walk():
        if symbol.selection.contains(loc.line, loc.col):
            return ".".join(path), symbol
        if symbol.span.contains(loc.line, loc.col) and (
            best is None or symbol.span.start_line >= best[1].span.start_line
        ):
            best = ".".join(path), symbol
    return best


def _head(doc: Document, symbol: Symbol, most: int) -> int:
    """How many lines of a long definition its head is: up to `most`, and not into its
    first member (listed below it anyway), without trailing blank lines; at least one."""
    first = symbol.span.start_line
    stop = min([first + most] + [c.span.start_line for c in symbol.children if c.span.start_line > first])
    while stop - 1 > first and not line_at(doc.lines, stop - 1).strip():
        stop -= 1
    return max(1, stop - first)


def signature_of(doc: Document, symbol: Symbol | None, line: int) -> tuple[list[Line], int]:
    """A definition's head as agents get it by default (the place and the signature, not a
    body): the symbol's decorators and the statement that names it (a signature over
    several lines whole, up to `HEAD_LINES`), and how many lines of the symbol follow.
    Without a symbol, the statement at `line`."""
    if symbol is None:
        return use_lines(doc, line), 0
    named = symbol.selection.start_line
    first = max(symbol.span.start_line, named - HEAD_LINES)
    last = statement_end(doc.lines, named, _comment(doc), HEAD_LINES)
    return excerpt(doc, first, last), max(0, symbol.span.end_line - last)


def code_of(session: Session, doc: Document, named: tuple[str, Symbol] | None, loc: Location,
            limit: int | None) -> Code:
    """The defining symbol's code if it fits in `limit` lines, else its head and members;
    `limit` None: its signature only (`signature_of`).

    A 2,000-line class must not come back as 22k tokens (doc/architecture.md, Costs)."""
    symbol = named[1] if named else None
    lines, truncated, members, more = excerpt(doc, loc.line, loc.line, 2), 0, [], 0
    if limit is None:  # the symbol named there, not one the place is inside of
        own = symbol if symbol is not None and symbol.selection.contains(loc.line, loc.col) else None
        lines, truncated = signature_of(doc, own, loc.line)
    elif symbol is not None:
        first, last = symbol.span.start_line, symbol.span.end_line
        size = last - first + 1
        if size <= limit:
            lines = excerpt(doc, first, last)
        else:
            head = _head(doc, symbol, min(HEAD_LINES, limit))
            members = [
                Member(name=child.bare_name, kind=child.kind_name, line=child.selection.start_line + 1)
                for child in symbol.children[:MEMBERS]
            ]
            more = max(0, len(symbol.children) - MEMBERS)
            lines, truncated = excerpt(doc, first, first + head - 1), size - head
    return Code(path=session.workspace.display(loc.path), line=loc.line + 1,
                symbol=named[0] if named else None, kind=symbol.kind_name if symbol else None,
                language=fence_language(doc), lines=lines, truncated=truncated, members=members,
                more_members=more, head=True if limit is None else None)


class DiagnosticRow(Row):
    line: int
    column: int
    severity: str
    message: str
    code: str | None
    source: str | None


class Incomplete(TypedDict, total=False):
    """A report's `status` and `again` (`models.Report`)."""

    status: Literal["incomplete"]
    again: str


class ChangedFile(Row):
    """A file an edit changed, as the reports after it list it (rename, code actions)."""

    path: str
    edits: int
    saved: bool  # written to disk; False: the edit stays in the buffer with the human's unsaved changes
    disk_differs: bool
    beside_unsaved: bool = False  # saved, and its buffer keeps the human's unsaved changes too


def diagnostic_row(d: Diagnostic) -> dict[str, Any]:
    """A diagnostic's fields as reports show them (1-based line and column)."""
    return {"line": d.line + 1, "column": d.col + 1, "severity": d.severity, "message": d.message,
            "code": d.code, "source": d.source}


def incomplete(short: bool) -> Incomplete:
    """A report's `status` and `again` (`models.Report`) when it left files it should have
    compared (`short`): the `check` that compares them, written for the asking surface. What
    a check or an edit's diagnostics after could not compare yet, the next check does (they
    changed on disk since the last one)."""
    return {"status": INCOMPLETE, "again": phrase({"mode": "check"}, "file_path")} if short else {}
