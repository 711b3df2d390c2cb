"""A rename's edits checked against the text they change: each replaces the old name as a
whole token (and a whole-file replacement nothing but the old name made the new one), so
that an edit computed on other text is refused.
"""

from __future__ import annotations

import re

from lsprotocol import types

from ..errors import ErrorCode, LsapError
from ..position import Encoding
from .text import NOTHING, point_of


def check_replaced(lines: list[str], edits: list[types.TextEdit], replaces: str,
                    encoding: Encoding, name: str, new_name: str | None = None) -> None:
    """A rename's edits each replace the old name: one that would replace other text was
    computed on another text than this (the file changed since the server read it).
    Whole-file replacements come here as their minimal edits (`minimal`), with the
    `new_name`: each must be the text it replaces with some of the old name's tokens made
    the new one, and nothing else (`_renamed`): a line the text holds and the server's did
    not (a write the server did not read: jedi's parse cache keeps a file by its mtime)
    would otherwise be reverted unseen, in a hunk that also holds the name."""
    for item in edits:
        (sl, sc), (el, ec) = point_of(lines, item.range.start, encoding), point_of(lines, item.range.end, encoding)
        found = lines[sl][sc:] + "".join("\n" + lines[i] for i in range(sl + 1, el + 1)) \
            if el > sl else lines[sl][sc:ec]
        if el > sl:
            found = found[:len(found) - (len(lines[el]) - ec)]
        held = holds_name(found, replaces)
        if not held or (new_name is not None
                        and not _renamed(found, item.new_text.replace("\r\n", "\n"), replaces, new_name)):
            shown = found if len(found) <= 60 and "\n" not in found else found[:57].replace("\n", "⏎") + "…"
            raise LsapError(
                ErrorCode.CONFLICT,
                f"the edit of {name} at {sl + 1}:{sc + 1} would replace `{shown}`, not "
                f"{'just ' if held else ''}`{replaces}`: the file changed since the server read it",
                hint=NOTHING + "; ask again once the server has seen the file as it is now",
            )


def _token(name: str) -> re.Pattern[str]:
    """The name as a whole token: not `f` within `def` or `fetch`."""
    return re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")


def _renamed(old: str, new: str, name: str, new_name: str) -> bool:
    """Whether `new` is `old` with some of its `name` tokens made `new_name`, and nothing
    else changed (a server may leave the name in a comment or a string alone)."""
    parts = _token(name).split(old)
    either = f"(?:{re.escape(name)}|{re.escape(new_name)})"
    return re.fullmatch(either.join(re.escape(part) for part in parts), new, re.DOTALL) is not None


def holds_name(text: str, name: str) -> bool:
    """Whether the replaced text holds the name as a whole token: an edit of `f` that
    would replace `def` or `fetch` was computed on other text."""
    return _token(name).search(text) is not None
