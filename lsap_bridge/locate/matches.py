"""What an anchor search works with and finds: the tiers (`Tier`), the text sought (`Needle`),
a place found (`Match`) and a region's result (`MatchResult`), and the searched lines as one
text (`Haystack`) with its typographic characters folded to ASCII (`fold`).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from itertools import accumulate

#: How many below-threshold candidates a miss suggests.
CLOSEST = 3


class Tier(Enum):
    """How a match was found; anything but EXACT is reported to the agent."""

    EXACT = "exact"
    WHITESPACE = "whitespace"
    UNICODE = "unicode"
    FUZZY = "fuzzy"
    CASE = "case"  # letter case or identifier style (`get_user` for `getUser`); unique only


@dataclass(frozen=True)
class Needle:
    """Text to find, and the code-point offset of its `<|>` marker (None: match start).

    `line` is the 0-based line a pasted report gave the marker's line (`17| …`), if any.
    """

    text: str
    marker: int | None
    line: int | None = None


@dataclass(frozen=True)
class Match:
    """One place the needle matched, 0-based lines and code-point columns.

    (line, column) is the marker, or the start of the match when there is no
    marker; (end_line, end_column) is the end of the matched span. `cost` is
    what a near miss differs by, in tokens (0 for the other tiers). `whole` is False
    when the match cuts into a longer identifier (`def print` in `def print_json`) or a
    one-line find spans lines; `gap` says what the find lacks at its marker and where
    the other reading of the marker is (a near miss).
    """

    line: int
    column: int
    end_line: int
    end_column: int
    tier: Tier
    matched_text: str
    score: float
    cost: float = 0.0
    whole: bool = True
    gap: str | None = None


@dataclass(frozen=True)
class MatchResult:
    """All matches at the deciding tier (several = ambiguous), or the closest misses.

    Exact tiers list matches in file order; fuzzy ones best first.
    """

    tier: Tier | None
    matches: list[Match] = field(default_factory=list)
    closest: list[Match] = field(default_factory=list)


class Haystack:
    """The searched lines joined by newlines, with offset <-> (line, column) mapping."""

    def __init__(self, lines: Sequence[str], start: int, stop: int) -> None:
        # A line never holds a newline, except Neovim's NUL (nvim_buf_get_lines gives it as
        # "\n"): keep it one character but not a line break, so offsets stay in step.
        if any("\n" in line for line in lines[start:stop]):
            lines = [line.replace("\n", "\0") for line in lines]
        self.lines = lines
        self.first = start
        self.text = "\n".join(lines[start:stop])
        self.starts = [0, *accumulate(len(line) + 1 for line in lines[start:stop])]

    def position(self, offset: int) -> tuple[int, int]:
        row = bisect_right(self.starts, offset) - 1
        return self.first + row, offset - self.starts[row]

    def match(self, begin: int, stop: int, marker: int, tier: Tier, score: float, tall: bool = False) -> Match:
        line, column = self.position(marker)
        end_line, end_column = self.position(stop)
        return Match(line, column, end_line, end_column, tier, self.text[begin:stop], score,
                     whole=self.whole(begin, stop, tall))

    def whole(self, begin: int, stop: int, tall: bool) -> bool:
        """Whether text[begin:stop] neither cuts into an identifier at either end nor, for a
        one-line find (`tall` False), runs over a line break."""
        text = self.text
        inside = (begin > 0 and in_name(text[begin]) and in_name(text[begin - 1])) or (
            stop < len(text) and in_name(text[stop - 1]) and in_name(text[stop]))
        return not inside and (tall or text.find("\n", begin, stop) < 0)


def is_word(ch: str) -> bool:
    return ch == "_" or ch.isalnum()


def in_name(ch: str) -> bool:
    """A character of an identifier, `$` too (`source$`, `$el`)."""
    return ch == "$" or is_word(ch)


# One-to-one folds, so offsets in folded text are offsets in the original.
_FOLDS = {
    **dict.fromkeys("‘’‚‛′‵ʼ", "'"),
    **dict.fromkeys("“”„‟″‶", '"'),
    **dict.fromkeys("‐‑‒–—―−﹘﹣－", "-"),
    **dict.fromkeys(
        "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
        "\u2007\u2008\u2009\u200a\u202f\u205f\u3000",
        " ",
    ),
}
_FOLDABLE = re.compile("[" + "".join(_FOLDS) + "]")


def fold(text: str) -> str:
    """Fold typographic quotes, dashes and spaces to ASCII, keeping every offset."""
    if text.isascii():
        return text
    return _FOLDABLE.sub(lambda hit: _FOLDS[hit.group()], text)
