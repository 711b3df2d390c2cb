"""The string form of an anchor, `path:scope@find` (doc/architecture.md, Anchors), for CLIs and humans.

- `path` may itself contain `:` or `@` (`node_modules/@types/x.d.ts`, a
  Windows drive `C:`, a `file:///abs/x.py` URI): the longest prefix ending
  before a `:` or `@` that is an existing file is the path. When none exists,
  the first `:` or `@` that can end a file name splits it (not a drive
  letter's colon, not a URI's `file:`, not an `@` right after a slash), so the
  caller can report the missing file.
- `scope` comes after the path's `:` and runs to the next `@`: a dotted
  symbol path (`User.validate`; dots inside brackets, as in `(*T).M`, stay
  in the name), a line (`42`), or `start,end` (end exclusive, 0 = end of file).
- `find` is everything after the first `@` that follows the path, verbatim:
  `models.py:User@@property` finds `@property`, `a.py@x: int = 1` finds
  `x: int = 1`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from pydantic import ValidationError

from lsap_bridge.errors import invalid
from lsap_bridge.models import LineScope, Locate, SymbolScope

_EXAMPLES = (
    "expected path:scope@find, e.g. src/models.py:User.validate@return <|>result; "
    "scope is a symbol path (User.validate), a line (42) or a range (10,20; end "
    "exclusive, 0 = end of file), find is the text to look for"
)
_LINE = re.compile(r"\s*([0-9]+)\s*")
_RANGE = re.compile(r"\s*([0-9]+)\s*,\s*([0-9]+)\s*")
_NEAR_RANGE = re.compile(r"\s*[0-9]+\s*[-:;]\s*[0-9]+\s*")
_DRIVE = re.compile(r"[A-Za-z]:[\\/]")


def split_path(text: str, file_exists: Callable[[str], bool]) -> tuple[str, str]:
    """Split off the file path; the rest is "" or starts with its `:` or `@`.

    Modes that only need a file (outline) call this directly.
    """
    text = text.lstrip()
    first_line = text.split("\n", 1)[0]
    cuts = [i for i, ch in enumerate(first_line) if ch in ":@"]
    if first_line == text:
        cuts.append(len(text))
    existing = [i for i in cuts if i and file_exists(text[:i])]
    if existing:
        path, rest = text[: existing[-1]], text[existing[-1] :]
    else:
        cut = next((i for i in cuts if i == len(text) or _can_end_path(text, i)), None)
        if cut is None:
            raise invalid("the anchor's path runs into a line break", hint=_EXAMPLES)
        path, rest = text[:cut].rstrip(), text[cut:]
    if not path:
        raise invalid("the anchor has no file path", hint=_EXAMPLES)
    return path, rest


def _can_end_path(text: str, cut: int) -> bool:
    """Whether the `:`/`@` at cut may end a path: not after a slash (`@types`), not `C:\\`,
    not the colon of a `file:` URI (decoded where every path is, `Workspace.resolve`)."""
    return text[cut - 1 : cut] not in ("/", "\\") and not (cut == 1 and _DRIVE.match(text)) and not (
        cut == 4 and text[:4].lower() == "file")


def parse_anchor(text: str, file_exists: Callable[[str], bool]) -> Locate:
    """Parse `path:scope@find` into a Locate, or raise invalid_request saying what is wrong."""
    path, rest = split_path(text, file_exists)
    if not rest:
        raise invalid(
            f"anchor {text.strip()!r} names a file but no position: add a scope or a find",
            hint=_EXAMPLES,
        )
    scope_text, at, find = rest[1:].partition("@") if rest[0] == ":" else ("", "@", rest[1:])
    scope = _parse_scope(scope_text) if scope_text.strip() else None
    found = find if at and find.strip() else None
    if scope is None and found is None:
        raise invalid(f"anchor {text.strip()!r} has an empty scope and find", hint=_EXAMPLES)
    try:
        return Locate(file_path=path, scope=scope, find=found)
    except ValidationError as error:  # a find over `MAX_FIND`, say
        raise invalid(f"bad anchor: {_reasons(error)}", hint=_EXAMPLES) from None


def _parse_scope(text: str) -> SymbolScope | LineScope:
    try:
        if line := _LINE.fullmatch(text):
            start = int(line.group(1))
            return LineScope(start_line=start, end_line=start + 1)
        if span := _RANGE.fullmatch(text):
            return LineScope(start_line=int(span.group(1)), end_line=int(span.group(2)))
    except ValidationError as error:
        raise invalid(
            f"bad line scope {text.strip()!r}: {_reasons(error)}", hint=_EXAMPLES
        ) from None
    except ValueError:  # more digits than int() accepts
        raise invalid(f"line number {text.strip()!r} is too long", hint=_EXAMPLES) from None
    if _NEAR_RANGE.fullmatch(text):
        raise invalid(f"bad line range {text.strip()!r}: write it as start,end", hint=_EXAMPLES)
    names = [name.strip() for name in _split_dots(text)]
    if not all(names):
        raise invalid(
            f"bad symbol path {text.strip()!r}: a name between dots is empty",
            hint=_EXAMPLES,
        )
    return SymbolScope(symbol_path=names)


def _split_dots(text: str) -> list[str]:
    """Split at dots outside brackets, so `(*T).M` is two names, not three."""
    names = [""]
    depth = 0
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth = max(depth - 1, 0)
        if ch == "." and not depth:
            names.append("")
        else:
            names[-1] += ch
    return names


def _reasons(error: ValidationError) -> str:
    """Pydantic's messages by field, without its `Value error, ` boilerplate."""
    return "; ".join(
        "".join(f"{part}: " for part in detail["loc"])
        + str(detail["msg"]).removeprefix("Value error, ")
        for detail in error.errors()
    )


def format_anchor(locate: Locate) -> str:
    """The string form of a Locate, to show humans what an agent would send."""
    text = locate.file_path
    if isinstance(locate.scope, SymbolScope):
        text += ":" + ".".join(locate.scope.symbol_path)
    elif isinstance(locate.scope, LineScope):
        start, end = locate.scope.start_line, locate.scope.end_line
        text += f":{start}" if end == start + 1 else f":{start},{end}"
    if locate.find is not None:
        text += "@" + locate.find
    return text
