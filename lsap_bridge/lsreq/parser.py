"""Parse a Language Server Request block (doc/architecture.md, The text format) into files, anchors and operations.

The format follows Codex's apply_patch, so every line's first characters say what it is.
Anything malformed is an `invalid_request` error that names the request's line number and
the grammar rule it broke; the parser never raises anything else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum

from .. import capabilities  # noqa: F401  (discovers the modes, whose views the grammar names)
from ..errors import LsapError, invalid
from ..identifiers import check_new_name
from ..jsonvalue import JsonObject
from ..models import MAX_FIND, MAX_ITEMS_LIMIT, MAX_TOKENS_LIMIT, MIN_TOKENS, too_long_find
from ..modes import views

BEGIN = "*** Begin Language Server Request"
END = "*** End Language Server Request"
FILE = "*** File:"
DIAGNOSTICS = "*** Diagnostics:"
MAX_TOKENS = "*** Max Tokens:"
#: Which diagnostics a response shows (`*** Diagnostics: …`): errors in the touched files
#: and any on the anchored lines (the default), all of them, or none.
CHOICES = ("default", "all", "none")
CHECK = "*** Check"
#: The most lines a request may have: each anchor is searched for in its file in turn, and
#: one without an exact match costs a fuzzy search (doc/architecture.md, Costs).
MAX_LINES = 5000

#: The grammar, one rule per line kind; errors quote the rule that was broken.
RULES = {
    "begin": f"a request starts with `{BEGIN}`",
    "end": f"a request ends with `{END}`",
    "file": f"`{FILE} <path>` starts the lines about one file",
    "anchor": "`@@ <line text>` anchors the next line matching the text",
    "inlay": "`? <line text>` anchors a line and asks for its inlay hints",
    "hover": "`^ <symbol>[<view>] …` asks about symbols on the anchored line; "
    "bare `^` = every symbol; "
    "views: " + ", ".join(f"[{v}]" for v in ("docs", *views())),
    "rename": "`! <symbol> RENAME_TO <new name>` renames a symbol on the anchored line",
    "select": "`[@ <line>` / `(@ <line>` open a selection (inclusive / exclusive); "
    "`@] <line>` / `@) <line>` close it (inclusive / exclusive)",
    "move": "`! MOVE_TO_FILE <path>` moves the selection just closed to a file",
    "diagnostics": f"`{DIAGNOSTICS} default|all|none [from <n>]` (once, anywhere) picks the "
    "diagnostics shown, from the n-th on",
    "max_tokens": f"`{MAX_TOKENS} <n>` (once, anywhere) sets the response's budget, "
    f"{MIN_TOKENS}–{MAX_TOKENS_LIMIT} tokens",
    "check": f"`{CHECK}` (or `{CHECK}: <file, directory or glob>`), once, anywhere in the request: "
    "after the rest has run, the diagnostics added or removed since the last check",
    "fix": "`! FIX <diagnostic code, action title or action id>` runs the code action that "
    "fixes the anchored line (a server's quick fix)",
    "format": "`! FORMAT` formats the selection just closed, else the whole file",
    "organize": "`! ORGANIZE_IMPORTS [server]` organises the file's imports",
}

# `[hover]` and `[docs]` are the hover's own; the others run the mode that declares them.
VIEWS = ("hover", "docs", *views())
_SYMBOL = re.compile(r"^([^\s\[\]]+)(?:\[([^\]]*)\])?$")


class AnchorKind(str, Enum):
    """What an anchored line is besides a position: echoed with the same prefix."""

    CONTEXT = "@@"
    INLAY = "?"
    OPEN_INCLUSIVE = "[@"
    OPEN_EXCLUSIVE = "(@"
    CLOSE_INCLUSIVE = "@]"
    CLOSE_EXCLUSIVE = "@)"

    @property
    def opens(self) -> bool:
        return self in (AnchorKind.OPEN_INCLUSIVE, AnchorKind.OPEN_EXCLUSIVE)

    @property
    def closes(self) -> bool:
        return self in (AnchorKind.CLOSE_INCLUSIVE, AnchorKind.CLOSE_EXCLUSIVE)


#: Items per extension view: answers stay short; the tag says how to ask for more.
VIEW_ITEMS = 20


def spot(file_path: str, line: int, text: str, column: int) -> JsonObject:
    """The anchor of what starts at `column` of the 0-based `line` (whose text is `text`),
    as the operations' requests send it: the line's scope, and its text with the spot
    marked (`<<|>>` where the code itself holds a `<|>`)."""
    marker = "<<|>>" if "<|>" in text else "<|>"
    return {"file_path": file_path, "scope": {"start_line": line + 1, "end_line": line + 2},
            "find": (text[:column] + marker + text[column:]).strip()}


def line_locate(file_path: str, first: int, last: int) -> JsonObject:
    """The lines `first` to `last` (0-based, both included) as a `locate`: what a `FIX` or a
    `FORMAT` of a selection names."""
    return {"file_path": file_path, "scope": {"start_line": first + 1, "end_line": last + 2}}


def inlay_request(file_path: str, line: int) -> JsonObject:
    """A `?` line's request: the `inlay_hints` of that one (0-based) line."""
    return {"mode": "inlay_hints", "file_path": file_path, "start_line": line + 1, "end_line": line + 2}


def diagnostics_request(file_path: str, settled: bool, start_index: int = 0,
                        pagination_id: str | None = None) -> JsonObject:
    """The diagnostics of a file the request touched: the `diagnostics` mode's request, all
    of them (the response chooses which it shows, `fit.py`), after the request's edits
    `settled`; a later page from `start_index`."""
    return {"mode": "diagnostics", "file_path": file_path, "settled": settled, "max_items": MAX_ITEMS_LIMIT,
            "start_index": start_index, **({"pagination_id": pagination_id} if pagination_id else {})}


@dataclass(frozen=True)
class Query:
    """One `^` target: a symbol (None: every symbol on the line) and what to show of it."""

    symbol: str | None
    view: str = "hover"

    @property
    def label(self) -> str:
        return self.symbol or "*"

    def request(self, locate: JsonObject) -> JsonObject:
        """The mode's request at `locate` (`spot`): `hover` for a hover or its docs, else the
        mode that declares the view (`modes.Offer.view`), a page of `VIEW_ITEMS`."""
        mode = views().get(self.view)
        if mode is None:  # all of it: the text format splits it into signature and docs itself
            return {"mode": "hover", "locate": locate, "compact": False}
        return {"mode": mode, "max_items": VIEW_ITEMS, "locate": locate}


@dataclass(frozen=True)
class Hover:
    """A `^` line."""

    line: int
    source: str
    queries: tuple[Query, ...]


@dataclass(frozen=True)
class Rename:
    line: int
    source: str
    symbol: str
    new_name: str

    def request(self, locate: JsonObject) -> JsonObject:
        """`RENAME_TO` is the `rename` mode at `locate` (`spot`)."""
        return {"mode": "rename", "locate": locate, "new_name": self.new_name}


@dataclass(frozen=True)
class Move:
    """`! MOVE_TO_FILE`: moves the selection `selection` (index into the file's selections)."""

    line: int
    source: str
    path: str
    selection: int


@dataclass(frozen=True)
class Fix:
    """`! FIX`: the code action a diagnostic code (`F401`, `2304`) or a title names."""

    line: int
    source: str
    what: str


@dataclass(frozen=True)
class Format:
    """`! FORMAT`: the selection `selection` (None: the whole file)."""

    line: int
    source: str
    selection: int | None


@dataclass(frozen=True)
class OrganizeImports:
    line: int
    source: str
    server: str | None


Operation = Hover | Rename | Move | Fix | Format
#: Operations of a File block as a whole, wherever they are written in it.
FileOperation = Format | OrganizeImports
#: What changes code (run after the queries, in request order).
COMMANDS = (Rename, Move, Fix, Format, OrganizeImports)


@dataclass
class Anchor:
    """A line of the file named by its text, with the operations written under it."""

    line: int  # of the request, 1-based
    kind: AnchorKind
    text: str
    operations: list[Operation] = field(default_factory=list)


@dataclass(frozen=True)
class Selection:
    """Lines between two anchors (indices into the file's anchors) and their inclusiveness."""

    start: int
    end: int
    start_inclusive: bool
    end_inclusive: bool


@dataclass
class FileBlock:
    line: int
    path: str
    anchors: list[Anchor] = field(default_factory=list)
    selections: list[Selection] = field(default_factory=list)
    operations: list[FileOperation] = field(default_factory=list)  # about the whole file


@dataclass(frozen=True)
class Check:
    """A `*** Check` line: the `check` mode after the rest of the request."""

    line: int
    file_path: str | None

    def request(self) -> JsonObject:
        return {"mode": "check", **({"file_path": self.file_path} if self.file_path else {})}


@dataclass
class Request:
    files: list[FileBlock]
    diagnostics: str = "default"  # one of CHOICES
    diagnostics_from: int = 1  # the first diagnostic shown, 1-based, in response order
    max_tokens: int | None = None  # the response's budget; None: the session's
    check: Check | None = None

    @property
    def has_commands(self) -> bool:
        return any(f.operations for f in self.files) or any(
            isinstance(op, COMMANDS)
            for f in self.files
            for a in f.anchors
            for op in a.operations
        )


def _fail(number: int, problem: str, rule: str) -> LsapError:
    return invalid(f"line {number}: {problem}", hint=f"rule ({rule}): {RULES[rule]}")


def parse(text: str) -> Request:
    """The request's AST, or an `invalid_request` LsapError naming the line and the rule."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if len(lines) > MAX_LINES:
        raise invalid(f"the request has {len(lines)} lines, over the limit of {MAX_LINES}",
                      hint="split it into several requests (a few files, or fewer anchors, each)")
    numbered = [(i + 1, line.rstrip()) for i, line in enumerate(lines)]
    body = [(n, line) for n, line in numbered if line.strip()]
    if not body or body[0][1].strip() != BEGIN:
        where = body[0][0] if body else 1
        raise _fail(where, "the request does not start with the Begin line", "begin")
    ends = [n for n, line in body if line.strip() == END]
    if not ends:
        raise _fail(body[-1][0], "the request has no End line", "end")
    if body[-1][1].strip() != END:
        raise _fail(body[-1][0], "text after the End line", "end")
    parser = _Parser()
    for number, line in body[1:-1]:
        parser.feed(number, line)
    return parser.finish(body[-1][0])


class _Parser:
    def __init__(self) -> None:
        self.files: list[FileBlock] = []
        self.open_at: int | None = None  # index of the anchor that opened a selection
        self.movable: int | None = None  # selection closed and not moved yet
        self.lines: dict[str, int] = {}  # the header options given, with their lines
        self.diagnostics: tuple[str, int] = ("default", 1)  # `*** Diagnostics:` choice and first shown
        self.max_tokens: int | None = None
        self.check: Check | None = None

    @property
    def current(self) -> FileBlock | None:
        return self.files[-1] if self.files else None

    def feed(self, number: int, raw: str) -> None:
        line = raw.strip()
        if line.startswith("***"):
            if line.startswith(FILE):
                self._file(number, line[len(FILE) :].strip())
                return
            if line == CHECK or line.startswith(CHECK + ":"):
                self._check(number, line[len(CHECK) :].lstrip(":").strip())
                return
            if line.startswith(DIAGNOSTICS) or line.startswith(MAX_TOKENS):
                self._option(number, line)
                return
            if line == BEGIN:
                raise _fail(number, "a second Begin line inside the request", "begin")
            if line == END:
                raise _fail(number, "an End line before the end of the request", "end")
            raise _fail(number, f"unknown header {line!r}", "file")
        block = self.current
        if block is None:
            raise _fail(number, f"{line!r} comes before any `{FILE}` line", "file")
        for kind in AnchorKind:
            if line == kind.value or line.startswith(kind.value + " "):
                self._anchor(number, block, kind, line[len(kind.value) :].strip())
                return
        if line == "^" or line.startswith("^ ") or line.startswith("^\t"):
            self._hover(number, block, line)
        elif line.startswith("!"):
            self._command(number, block, line)
        else:
            raise _fail(
                number,
                f"unknown operator at the start of {line!r}; lines start with "
                "`@@`, `?`, `^`, `!`, `[@`, `(@`, `@]`, `@)` or `***`",
                "anchor",
            )

    def _option(self, number: int, line: str) -> None:
        """`*** Diagnostics: all from 41`, `*** Max Tokens: 20000`: once each."""
        rule = "diagnostics" if line.startswith(DIAGNOSTICS) else "max_tokens"
        if rule in self.lines:
            raise _fail(number, f"a second `{line.split(':')[0]}:` line (the first is line "
                        f"{self.lines[rule]})", rule)
        words = line.split(":", 1)[1].split()
        if rule == "max_tokens":
            if len(words) != 1 or not words[0].isdigit() or not MIN_TOKENS <= int(words[0]) <= MAX_TOKENS_LIMIT:
                raise _fail(number, f"{line!r} does not give a budget in range", rule)
            self.lines[rule], self.max_tokens = number, int(words[0])
            return
        start = words[2] if len(words) == 3 and words[1] == "from" else "1" if len(words) == 1 else ""
        if not words or words[0] not in CHOICES or not start.isdigit() or int(start) < 1:
            raise _fail(number, f"{line!r} is not a choice of diagnostics", rule)
        self.lines[rule], self.diagnostics = number, (words[0], int(start))

    def _file(self, number: int, path: str) -> None:
        if not path:
            raise _fail(number, "the File line names no path", "file")
        self._close_file()
        self.files.append(FileBlock(number, path))

    def _check(self, number: int, file_path: str) -> None:
        if self.check is not None:
            raise _fail(number, f"a second `{CHECK}` line (the first is line {self.check.line})", "check")
        self.check = Check(number, file_path or None)

    def _close_file(self) -> None:
        block = self.current
        if block is not None and self.open_at is not None:
            opened = block.anchors[self.open_at]
            raise _fail(
                opened.line,
                f"the selection opened here by `{opened.kind.value}` is never closed "
                "(add `@] <line>` or `@) <line>` before the next File or the End line)",
                "select",
            )
        self.movable = None

    def _anchor(self, number: int, block: FileBlock, kind: AnchorKind, text: str) -> None:
        rule = (
            "inlay"
            if kind is AnchorKind.INLAY
            else "select"
            if kind.opens or kind.closes
            else "anchor"
        )
        if not text:
            raise _fail(number, f"`{kind.value}` needs the text of a line", rule)
        if len(text) > MAX_FIND:
            raise _fail(number, too_long_find(len(text)), rule)
        index = len(block.anchors)
        if kind.opens:
            if self.open_at is not None:
                raise _fail(
                    number,
                    "a selection is already open (selections do not nest); close it first",
                    "select",
                )
            self.open_at = index
        elif kind.closes:
            if self.open_at is None:
                raise _fail(
                    number,
                    f"`{kind.value}` closes a selection, but none is open "
                    "(open one with `[@ <line>` or `(@ <line>`)",
                    "select",
                )
            opener = block.anchors[self.open_at].kind
            block.selections.append(
                Selection(
                    self.open_at,
                    index,
                    opener is AnchorKind.OPEN_INCLUSIVE,
                    kind is AnchorKind.CLOSE_INCLUSIVE,
                )
            )
            self.open_at = None
            self.movable = len(block.selections) - 1
        block.anchors.append(Anchor(number, kind, text))

    def _hover(self, number: int, block: FileBlock, line: str) -> None:
        anchor = self._anchored(number, block, "hover", "`^`")
        words = line[1:].split()
        queries: list[Query] = []
        if not words:
            queries.append(Query(None))
        for word in words:
            found = _SYMBOL.match(word)
            if not found:
                raise _fail(number, f"{word!r} is not a symbol with an optional [view]", "hover")
            symbol, view = found.group(1), found.group(2)
            if view is not None and view not in VIEWS:
                raise _fail(number, f"unknown view [{view}] on {symbol}", "hover")
            queries.append(Query(None if symbol == "*" else symbol, view or "hover"))
        anchor.operations.append(Hover(number, line, tuple(queries)))

    def _command(self, number: int, block: FileBlock, line: str) -> None:
        words = line[1:].split()
        if not words:
            raise _fail(number, "`!` needs a command: RENAME_TO, MOVE_TO_FILE, FIX, FORMAT or "
                        "ORGANIZE_IMPORTS", "rename")
        commands = {"ORGANIZE_IMPORTS": self._organize_imports, "FORMAT": self._format,
                    "FIX": self._fix, "MOVE_TO_FILE": self._move_to_file}
        if words[0] in commands:
            commands[words[0]](number, block, line, words)
        elif "RENAME_TO" in words:
            self._rename_to(number, block, line, words)
        else:
            raise _fail(
                number,
                f"unknown command {words[0]!r}; commands are RENAME_TO, MOVE_TO_FILE, FIX, "
                "FORMAT and ORGANIZE_IMPORTS",
                "rename",
            )

    def _organize_imports(self, number: int, block: FileBlock, line: str, words: list[str]) -> None:
        if len(words) > 2:
            raise _fail(number, "ORGANIZE_IMPORTS takes at most a server's name", "organize")
        block.operations.append(
            OrganizeImports(number, line, words[1] if len(words) == 2 else None))

    def _format(self, number: int, block: FileBlock, line: str, words: list[str]) -> None:
        """`! FORMAT`: of the selection it follows, else of the whole file."""
        if len(words) != 1:
            raise _fail(number, "FORMAT takes nothing after it", "format")
        closed = self.movable is not None and (
            block.selections[self.movable].end == len(block.anchors) - 1)
        if closed and self.movable is not None:
            anchor = block.anchors[-1]
            anchor.operations.append(Format(number, line, self.movable))
            self.movable = None
        else:
            block.operations.append(Format(number, line, None))

    def _fix(self, number: int, block: FileBlock, line: str, words: list[str]) -> None:
        anchor = self._anchored(number, block, "fix", "`! FIX`")
        if len(words) < 2:
            raise _fail(number, "FIX needs a diagnostic code or an action's title", "fix")
        anchor.operations.append(Fix(number, line, line.strip()[1:].strip()[3:].strip()))

    def _move_to_file(self, number: int, block: FileBlock, line: str, words: list[str]) -> None:
        """`! MOVE_TO_FILE <path>`, right after the line that closes a selection."""
        anchor = self._anchored(number, block, "move", "`! MOVE_TO_FILE`")
        if len(words) != 2:
            raise _fail(
                number,
                "MOVE_TO_FILE takes exactly one path"
                if len(words) > 2
                else "MOVE_TO_FILE needs the target path",
                "move",
            )
        if self.movable is None or block.selections[self.movable].end != len(block.anchors) - 1:
            raise _fail(
                number,
                "MOVE_TO_FILE must follow the line that closes a selection "
                "(`@] <line>` or `@) <line>`)",
                "move",
            )
        anchor.operations.append(Move(number, line, words[1], self.movable))
        self.movable = None

    def _rename_to(self, number: int, block: FileBlock, line: str, words: list[str]) -> None:
        """`! <symbol> RENAME_TO <new name>`."""
        anchor = self._anchored(number, block, "rename", "`! RENAME_TO`")
        at = words.index("RENAME_TO")
        if at != 1:
            raise _fail(number, "RENAME_TO needs exactly one symbol before it", "rename")
        if len(words) != 3:
            raise _fail(
                number,
                "RENAME_TO needs a new name after it"
                if len(words) < 3
                else "RENAME_TO takes one new name (no spaces)",
                "rename",
            )
        try:
            check_new_name(words[2], block.path)
        except LsapError as error:
            raise invalid(f"line {number}: {error.message}",
                          hint=f"rule (rename): {RULES['rename']}; {error.hint}") from None
        anchor.operations.append(Rename(number, line, words[0], words[2]))

    def _anchored(self, number: int, block: FileBlock, rule: str, what: str) -> Anchor:
        if not block.anchors:
            raise _fail(number, f"{what} needs an anchored line before it (`@@ <line text>`)", rule)
        return block.anchors[-1]

    def finish(self, end_line: int) -> Request:
        if not self.files and self.check is None:
            raise _fail(end_line, f"the request names no file (`{FILE} <path>`)", "file")
        self._close_file()
        for block in self.files:
            if not block.anchors and not block.operations:
                raise _fail(
                    block.line, f"the File block for {block.path} has no anchored line", "anchor"
                )
        return Request(self.files, *self.diagnostics, self.max_tokens, self.check)
