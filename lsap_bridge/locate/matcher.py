"""Find an anchor's text in a file (DESIGN §3): exact, whitespace, unicode, then fuzzy.

Pure functions over a list of lines, so every tier is testable without an
editor. A tier never silently picks one of several matches: the caller gets
all of them and reports ambiguity; on no match it gets the closest lines.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from itertools import accumulate
from math import ceil

from rapidfuzz import fuzz, process
from rapidfuzz.distance import LCSseq, Levenshtein, ScoreAlignment

from lsap_bridge.errors import invalid

#: A fuzzy match must score at least this (0-100) to count.
FUZZY_THRESHOLD = 80.0
#: Candidates within this many points of the best one make the match ambiguous.
FUZZY_MARGIN = 3.0
#: How many windows each prefilter pass keeps for exact rescoring.
_PREFILTER_LIMIT = 20
#: How many of a multi-line needle's longest lines place its candidate windows.
_ANCHOR_LINES = 3
#: How many near matches of each of those lines are tried as a window's place.
_ANCHOR_LIMIT = 50
#: Windows that cannot score this much are not worth a slow partial comparison.
_FLOOR = 60.0
#: How many below-threshold candidates a miss suggests.
_CLOSEST = 3


class Tier(Enum):
    """How a match was found; anything but EXACT is reported to the agent."""

    EXACT = "exact"
    WHITESPACE = "whitespace"
    UNICODE = "unicode"
    FUZZY = "fuzzy"


@dataclass(frozen=True)
class Needle:
    """Text to find, and the code-point offset of its `<|>` marker (None: match start)."""

    text: str
    marker: int | None


@dataclass(frozen=True)
class Match:
    """One place the needle matched, 0-based lines and code-point columns.

    (line, column) is the marker, or the start of the match when there is no
    marker; (end_line, end_column) is the end of the matched span.
    """

    line: int
    column: int
    end_line: int
    end_column: int
    tier: Tier
    matched_text: str
    score: float


@dataclass(frozen=True)
class MatchResult:
    """All matches at the deciding tier (several = ambiguous), or the closest misses.

    Exact tiers list matches in file order; fuzzy ones best first.
    """

    tier: Tier | None
    matches: list[Match] = field(default_factory=list)
    closest: list[Match] = field(default_factory=list)


def parse_find(find: str) -> Needle:
    """Split a `find` string into its text and marker offset.

    The marker is the deepest `<`*k `|` `>`*k present, so text that itself
    contains `<|>` can be anchored with `<<|>>`; it must occur exactly once.
    """
    depth = 0
    for pipe in (i for i, ch in enumerate(find) if ch == "|"):
        left = pipe - len(find[:pipe].rstrip("<"))
        right = len(find) - pipe - 1 - len(find[pipe + 1 :].lstrip(">"))
        depth = max(depth, min(left, right))
    marker: int | None = None
    text = find
    if depth:
        token = "<" * depth + "|" + ">" * depth
        count = find.count(token)
        if count != 1:
            deeper = "<" * (depth + 1) + "|" + ">" * (depth + 1)
            raise invalid(
                f"marker {token} occurs {count} times in find; it must occur exactly once",
                hint=f"keep one {token}, or mark the position with {deeper} when the "
                f"text itself contains {token}",
            )
        marker = find.index(token)
        text = find[:marker] + find[marker + len(token) :]
    if not text.strip():
        raise invalid(
            "find is empty: it has no text besides the marker",
            hint='give the text around the position, e.g. "return <|>result"',
        )
    return Needle(text, marker)


def find_matches(
    lines: Sequence[str], needle: Needle, start: int = 0, end: int | None = None
) -> MatchResult:
    """Search lines [start, end) for the needle, tier by tier, stopping at the first hit."""
    if not needle.text.strip():
        raise invalid("find is empty", hint='give the text to look for, e.g. "return <|>result"')
    start = max(0, min(start, len(lines)))
    stop = len(lines) if end is None else max(start, min(end, len(lines)))
    if start == stop:
        return MatchResult(None)
    hay = _Haystack(lines, start, stop)
    marker = max(0, min(needle.marker or 0, len(needle.text)))

    found = _exact(hay, needle.text, marker)
    if found:
        return MatchResult(Tier.EXACT, found)
    found = _regex(hay, hay.text, _pattern(needle.text, marker, unicode=False), Tier.WHITESPACE)
    if found:
        return MatchResult(Tier.WHITESPACE, found)
    folded_needle = _fold(needle.text)
    folded_text = _fold(hay.text)
    if folded_needle != needle.text or folded_text != hay.text or _ELLIPSIS.search(needle.text):
        pattern = _pattern(folded_needle, marker, unicode=True)
        found = _regex(hay, folded_text, pattern, Tier.UNICODE)
        if found:
            return MatchResult(Tier.UNICODE, found)
    return _fuzzy(hay, folded_text, folded_needle, marker)


def has_exact(lines: Sequence[str], needle: Needle, start: int = 0, end: int | None = None) -> bool:
    """Whether lines [start, end) hold the needle's exact text: a cheap test that lets a
    search over several regions skip the slower tiers where they cannot win."""
    stop = len(lines) if end is None else max(start, min(end, len(lines)))
    return bool(needle.text) and needle.text in _Haystack(lines, max(0, start), stop).text


class _Haystack:
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

    def match(self, begin: int, stop: int, marker: int, tier: Tier, score: float) -> Match:
        line, column = self.position(marker)
        end_line, end_column = self.position(stop)
        return Match(line, column, end_line, end_column, tier, self.text[begin:stop], score)


def _exact(hay: _Haystack, text: str, marker: int) -> list[Match]:
    found: list[Match] = []
    at = hay.text.find(text)
    while at >= 0:
        found.append(hay.match(at, at + len(text), at + marker, Tier.EXACT, 100.0))
        at = hay.text.find(text, at + 1)
    return found


def _regex(hay: _Haystack, text: str, pattern: re.Pattern[str], tier: Tier) -> list[Match]:
    """All (overlapping) regex matches, one per marker spot."""
    found: dict[int, Match] = {}
    hit = pattern.search(text)
    while hit:
        spot = hit.start("m")
        if spot not in found:
            found[spot] = hay.match(hit.start(), hit.end(), spot, tier, 100.0)
        hit = pattern.search(text, hit.start() + 1)
    return list(found.values())


def _is_word(ch: str) -> bool:
    return ch == "_" or ch.isalnum()


_ELLIPSIS = re.compile(r"\.\.\.|…")
_ELLIPSIS_PATTERN = r"(?:\.\.\.|…)"


def _pattern(text: str, marker: int, unicode: bool) -> re.Pattern[str]:
    """A regex where whitespace runs match any run (none at all next to punctuation).

    Two word characters separated by whitespace in the needle need at least
    one whitespace in the file, so `return result` never matches
    `returnresult`. An empty group `m` marks the marker's spot.
    """
    tokens: list[tuple[int, int, str, bool]] = []  # start, end, regex, is word
    i = 0
    while i < len(text):
        ellipsis = _ELLIPSIS.match(text, i) if unicode else None
        if ellipsis:
            tokens.append((i, ellipsis.end(), _ELLIPSIS_PATTERN, False))
            i = ellipsis.end()
            continue
        if not text[i].isspace():
            tokens.append((i, i + 1, re.escape(text[i]), _is_word(text[i])))
        i += 1
    parts: list[str] = []
    placed = marker <= tokens[0][0]
    if placed:
        parts.append("(?P<m>)")
    previous: tuple[int, int, str, bool] | None = None
    for token in tokens:
        begin, stop, regex, word = token
        if previous is not None:
            spaced = begin > previous[1]
            joined = word and previous[3]
            separator = (r"\s+" if spaced else "") if joined else r"\s*"
            if not placed and spaced and marker == previous[1]:
                parts.append("(?P<m>)")
                placed = True
            parts.append(separator)
        if not placed and marker < stop:
            parts.append("(?P<m>)")
            placed = True
        parts.append(regex)
        previous = token
    if not placed:
        parts.append("(?P<m>)")
    return re.compile("".join(parts))


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


def _fold(text: str) -> str:
    """Fold typographic quotes, dashes and spaces to ASCII, keeping every offset."""
    if text.isascii():
        return text
    return _FOLDABLE.sub(lambda hit: _FOLDS[hit.group()], text)


def _fuzzy(hay: _Haystack, folded_text: str, folded_needle: str, marker: int) -> MatchResult:
    """Near misses: score line windows of the needle's height with rapidfuzz.

    Both sides are compared with each line stripped, so a needle copied
    without indentation still scores by its content.
    """
    needle, needle_marker = _squeeze(folded_needle, marker)
    height = needle.count("\n") + 1
    stripped = [line.strip() for line in folded_text.split("\n")]
    windows = dict(enumerate(stripped)) if height == 1 else _tall_windows(needle, stripped)
    rows = {
        row
        for _, _, row in process.extract(needle, windows, scorer=fuzz.ratio, limit=_PREFILTER_LIMIT)
    }
    # partial_ratio of a window shorter than the needle would search the window
    # inside the needle (a lone "}" scores 100), so those only get ratio. And
    # partial_ratio is slow for long needles, but bounded by 2L/(n+L) with L the
    # longest common subsequence: a cheap LCS pass drops hopeless windows first.
    least = ceil(_FLOOR * len(needle) / (200 - _FLOOR))
    long_enough = {row: w for row, w in windows.items() if len(w) >= len(needle)}
    hopeful = {
        row: windows[row]
        for _, _, row in process.extract(
            needle, long_enough, scorer=LCSseq.similarity, score_cutoff=least, limit=None
        )
    }
    partial = {
        row: score
        for _, score, row in process.extract(
            needle, hopeful, scorer=fuzz.partial_ratio, limit=_PREFILTER_LIMIT
        )
    }
    scored = [
        _score(hay, row, windows[row], needle, needle_marker, partial.get(row, 0.0))
        for row in rows | set(partial)
    ]
    ranked = _distinct(sorted(scored, key=lambda c: (-c[0].score, c[1])))
    if ranked and ranked[0].score >= FUZZY_THRESHOLD:
        best = ranked[0].score
        return MatchResult(Tier.FUZZY, [m for m in ranked if m.score >= best - FUZZY_MARGIN])
    return MatchResult(None, closest=[m for m in ranked if m.score > 0][:_CLOSEST])


def _tall_windows(needle: str, stripped: list[str]) -> dict[int, str]:
    """Windows of a multi-line needle's height, only where its longest lines nearly occur.

    Joining a window at every row costs the needle's height per row; the
    longest lines are the most distinctive, so their near matches place it.
    """
    parts = needle.split("\n")
    height = len(parts)
    longest = sorted(range(height), key=lambda index: -len(parts[index]))[:_ANCHOR_LINES]
    starts = {
        row - index
        for index in longest
        for _, _, row in process.extract(
            parts[index], stripped, scorer=fuzz.ratio, limit=_ANCHOR_LIMIT
        )
    }
    return {
        row: "\n".join(stripped[row : row + height])
        for row in sorted(starts)
        if 0 <= row <= len(stripped) - height
    }


def _squeeze(text: str, marker: int) -> tuple[str, int]:
    """Strip every line and drop blank edge lines; carry the marker to the first kept char."""
    lines = text.split("\n")
    filled = [index for index, line in enumerate(lines) if line.strip()]
    origins: list[int] = []  # where each kept char was in text
    kept: list[str] = []
    offset = sum(len(line) + 1 for line in lines[: filled[0]])
    for index in range(filled[0], filled[-1] + 1):
        line = lines[index]
        if index > filled[0]:
            kept.append("\n")
            origins.append(offset - 1)
        indent = len(line) - len(line.lstrip())
        content = line.strip()
        kept.append(content)
        origins.extend(range(offset + indent, offset + indent + len(content)))
        offset += len(line) + 1
    return "".join(kept), bisect_left(origins, marker)


def _score(
    hay: _Haystack, row: int, text: str, needle: str, marker: int, partial: float
) -> tuple[Match, tuple[int, int]]:
    """Score the window at row (stripped lines) by its whole and its best part.

    `partial` is the window's partial_ratio from the prefilter (0 if unknown);
    the slow alignment is only worth it when that beats the whole window.
    Returns the match and its start, mapped back to the unstripped lines.
    """
    score, begin, stop = fuzz.ratio(needle, text), 0, len(text)
    if partial > score:
        part = fuzz.partial_ratio_alignment(needle, text)
        if part is not None:
            fitted = _fit(needle, text, part)
            if fitted[0] > score:
                score, begin, stop = fitted
    spot = begin + _map_offset(needle, text[begin:stop], marker)
    offsets = [0, *accumulate(len(line) + 1 for line in text.split("\n"))]

    def place(offset: int) -> tuple[int, int]:
        index = bisect_right(offsets, offset) - 1
        line = hay.first + row + index
        indent = len(hay.lines[line]) - len(hay.lines[line].lstrip())
        return line, offset - offsets[index] + indent

    line, column = place(spot)
    start_line, start_column = place(begin)
    end_line, end_column = place(stop)
    matched = "\n".join(hay.lines[start_line : end_line + 1])
    matched = matched[start_column : len(matched) - len(hay.lines[end_line]) + end_column]
    match = Match(line, column, end_line, end_column, Tier.FUZZY, matched, score)
    return match, (start_line, start_column)


def _fit(needle: str, text: str, part: ScoreAlignment) -> tuple[float, int, int]:
    """Refit a partial alignment's ends, scored by ratio.

    partial_ratio compares windows exactly as long as the needle, but a needle
    that dropped a token matches a longer span, one with a typo'd extra letter
    a shorter one: move the end, then the start, to where the ratio peaks.
    """
    slack = min(len(needle) // 2, 32) + 1
    begin = part.dest_start
    ends = range(max(begin + 1, part.dest_end - slack), min(len(text), part.dest_end + slack) + 1)
    stop = max(ends, key=lambda end: fuzz.ratio(needle, text[begin:end]))
    starts = range(min(stop - 1, begin + slack), max(0, begin - slack) - 1, -1)
    begin = max(starts, key=lambda start: fuzz.ratio(needle, text[start:stop]))
    return fuzz.ratio(needle, text[begin:stop]), begin, stop


def _map_offset(source: str, target: str, offset: int) -> int:
    """Where source[offset] lands in target, through a Levenshtein alignment."""
    for op in Levenshtein.opcodes(source, target):
        if op.src_start <= offset < op.src_end:
            if op.tag == "delete":
                return op.dest_start
            return min(op.dest_start + offset - op.src_start, op.dest_end)
    return len(target)


def _distinct(ranked: list[tuple[Match, tuple[int, int]]]) -> list[Match]:
    """Drop candidates whose span overlaps a better one's: the same spot counts once."""
    kept: list[tuple[Match, tuple[int, int]]] = []
    for match, start in ranked:
        stop = (match.end_line, match.end_column)
        if not any(start < (m.end_line, m.end_column) and s < stop for m, s in kept):
            kept.append((match, start))
    return [match for match, _ in kept]
