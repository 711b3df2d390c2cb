"""The fuzzy tier of the anchor search: near misses, found by aligning the find's tokens to
candidate windows of its height (`align.py`), the windows prefiltered by rapidfuzz; a
runner-up too close to the best one (`close`) makes an ambiguity, never a guess.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from itertools import accumulate

from rapidfuzz import fuzz, process

from .align import WORD, Alignment, Spot, Token, align, spot_of, tokens
from .matches import CLOSEST, Haystack, Match, MatchResult, Tier

#: A fuzzy match must score at least this (0-100: the share of the find's tokens it explains).
FUZZY_THRESHOLD = 60.0
#: A runner-up needing at most this many tokens more than the best makes it ambiguous ...
_MARGIN = 0.5
#: ... if it also needs less than this many times the best one's cost.
_MARGIN_RATIO = 2.5
#: The same window with the marker on another token is a runner-up within a word's cost.
_TWIN = 1.0
#: How many windows each prefilter pass keeps for the token alignment.
_PREFILTER_LIMIT = 20
#: How many of those, the most alike, are aligned token by token.
_ALIGNED = 10
#: How many of a multi-line needle's longest lines place its candidate windows.
_ANCHOR_LINES = 3
#: How many near matches of each of those lines are tried as a window's place.
_ANCHOR_LIMIT = 50


def fuzzy_matches(hay: Haystack, folded_text: str, folded_needle: str, marker: int) -> MatchResult:
    """Near misses: the needle's tokens aligned to windows of its height (align.py).

    Both sides are compared with each line stripped, so a needle copied
    without indentation still scores by its content. Cheap C scorers pick the
    windows worth an alignment: the ones most like the needle as a whole and
    the ones holding most of its words (a dropped or added token leaves those),
    of which the most alike in their best part are aligned. The best is taken
    only when credible and clearly ahead of every credible runner-up.
    """
    needle, needle_marker = _squeeze(folded_needle, marker)
    found = tokens(needle)
    spot = spot_of(found, needle_marker)
    stripped = [line.strip() for line in folded_text.split("\n")]
    if "\n" in needle:
        windows = _tall_windows(needle, stripped)
        rows = _likely(needle, windows)
    else:
        windows = dict(enumerate(stripped))
        rows = _likely(needle, windows) | _holding(found, hay, folded_text, stripped, needle)
    order = _most_alike(needle, {row: windows[row] for row in rows})
    order += _whole_words(found, {row: windows[row] for row in rows if row not in order})
    near: list[_Near] = []
    bound = float("inf")  # windows costing a token more than the best so far cannot compete
    for row in order:
        window = tokens(windows[row])
        alignment = align(found, spot, window, bound=bound)
        if alignment is not None and _credible(alignment, found, marker=False) and not _credible(alignment, found):
            alignment = _kept(found, spot, window) or alignment
        if alignment is not None:
            bound = min(bound, alignment.cost + _TWIN)
            match, start = _place(hay, row, windows[row], alignment)
            near.append(_Near(match, start, fuzz.ratio(needle, match.matched_text), alignment, row, window))
    # Among equal costs, the closest lines a miss lists are the most alike.
    near.sort(key=lambda c: (-c.match.score, -c.alike, c.start))
    ranked = _distinct(near)
    if not ranked or not _credible(ranked[0].alignment, found):
        return MatchResult(None, closest=[c.match for c in ranked if c.match.score or c.alike][:CLOSEST])
    best = ranked[0]
    # A runner-up counts when it could have been taken on its own: the marker's token is
    # there too. The same window may fit as well with the marker elsewhere (`help =
    # help[:end]` for `help =[:end]`): that is a runner-up as well.
    rivals = [c for c in ranked if c is not best and _rival(best, c.alignment, found)]
    matches = [best.match] + [c.match for c in rivals]
    for c in [best, *rivals]:
        other = align(found, spot, c.window, avoid=c.alignment.at) if c.alignment.at is not None else None
        if (other is not None and other.marker != c.alignment.marker and _rival(best, other, found, _TWIN)
                and not _reads_gap(c.alignment, other, c.window)):
            matches.append(_place(hay, c.row, windows[c.row], other)[0])
    return MatchResult(Tier.FUZZY, matches)


def _kept(found: list[Token], spot: Spot, window: list[Token]) -> Alignment | None:
    """The window's cheapest alignment that keeps the marker's token, when the cheapest of
    all skips or changes it, and only if it can be credible (it costs at most 40 % of the
    heavier side: the pruning bound)."""
    heaviest = max(sum(t.weight for t in found), sum(t.weight for t in window))
    kept = align(found, spot, window, bound=heaviest * (1 - FUZZY_THRESHOLD / 100), keep=True)
    return kept if kept is not None and _credible(kept, found) else None


def _reads_gap(alignment: Alignment, twin: Alignment, window: list[Token]) -> bool:
    """Whether a twin only puts the marker elsewhere in the gap the find has at its marker,
    or at its edge: the other reading of one gap, which the best match's note names. A
    twin as cheap on a token like the best's (`f(<|>x)` for `f(x, x)`) is not: which of
    the two the marker meant, the text does not say."""
    if alignment.gap is None or alignment.at is None or twin.at is None:
        return False
    begin, end = alignment.gap
    alike = window[twin.at].text == window[alignment.at].text and twin.cost <= alignment.cost
    return not alike and begin <= twin.marker <= max(end, alignment.marker)


def _credible(alignment: Alignment, found: list[Token], marker: bool = True) -> bool:
    """Whether a near miss may be taken: it scores enough, lacks at most a third of the
    find's words, and has the marker's own token (else where the marker goes is a guess;
    `marker` False: all but that, the only windows worth aligning again to keep it, since
    keeping it never costs less)."""
    words = sum(t.weight == WORD for t in found)
    return (alignment.score >= FUZZY_THRESHOLD and 3 * alignment.missing <= words
            and (not marker or (alignment.at is not None and not alignment.marker_changed)))


def _rival(best: _Near, other: Alignment, found: list[Token], margin: float | None = None) -> bool:
    if margin is not None:  # a twin in the same window: only where the marker goes differs
        return _credible(other, found) and other.cost - best.match.cost <= margin
    return _credible(other, found) and close(best.match, other)


@dataclass(frozen=True)
class _Near:
    """A window's alignment while near misses are ranked."""

    match: Match
    start: tuple[int, int]
    alike: float
    alignment: Alignment
    row: int
    window: list[Token]


def close(best: Match, other: Match | Alignment) -> bool:
    """Whether a runner-up is too close to the best near miss to tell them apart: it needs
    at most half a token more, and less than 2.5 times as much (a typo, 0.5, is told apart
    from a dropped word, 1.5, but not from a changed punctuation, 0.5; a find cut inside a
    word, 0.1, is told apart from a typo)."""
    return other.cost - best.cost <= _MARGIN and other.cost < best.cost * _MARGIN_RATIO


def _most_alike(needle: str, windows: dict[int, str]) -> list[int]:
    """The candidate windows worth an alignment (it costs a Python loop per token pair):
    the ones whose best part, or whose whole, is most like the needle (a short window
    such as `self,` is all alike in part), and all that tie with the last, most alike
    first (so that the first alignments bound the others)."""
    part = process.extract(needle, windows, scorer=fuzz.partial_ratio, limit=None)
    whole = {row: score for _, score, row in process.extract(needle, windows, scorer=fuzz.ratio, limit=None)}
    alike = sorted(((max(score, whole[row]), row) for _, score, row in part), key=lambda hit: -hit[0])
    if len(alike) <= _ALIGNED:
        return [row for _, row in alike]
    least = alike[_ALIGNED - 1][0]
    return [row for score, row in alike if score >= least]


def _whole_words(found: list[Token], windows: dict[int, str]) -> list[int]:
    """The windows holding every word of the find, however unlike it as a whole: a
    dropped keyword (`deque(1000)` for `lambda: deque(maxlen=1000), init=False`) lowers
    the likeness of a long line below that of short lines sharing one word."""
    names = {t.text.rstrip(".") for t in found if t.weight == WORD}
    held = [row for row, text in windows.items() if names <= {t.text.rstrip(".") for t in tokens(text)}]
    return held[:_ALIGNED]


def _likely(needle: str, windows: dict[int, str]) -> set[int]:
    """The windows most like the needle as a whole."""
    return {
        row for _, _, row in process.extract(needle, windows, scorer=fuzz.ratio, limit=_PREFILTER_LIMIT)
    }


def _holding(found: list[Token], hay: Haystack, text: str, stripped: list[str], needle: str) -> set[int]:
    """The lines holding most of the needle's words (weighted by length), found by `str.find`
    over the whole text so that a long file costs what the words' occurrences cost. Lines
    that lack at most the longest word are ranked by their best part's likeness."""
    weight: dict[int, int] = {}
    names = {t.text.rstrip(".") for t in found if t.weight == WORD and len(t.text) > 1}
    for word in names:
        rows: set[int] = set()
        at = text.find(word)
        while at >= 0:
            rows.add(bisect_right(hay.starts, at) - 1)
            at = text.find(word, at + 1)
        for row in rows:
            weight[row] = weight.get(row, 0) + len(word)
    if not weight:
        return set()
    most = max(weight.values()) - max(map(len, names))
    near = {row: stripped[row] for row, w in weight.items() if w >= most}
    heaviest = sorted(weight, key=lambda row: -weight[row])[:_PREFILTER_LIMIT]
    alike = process.extract(needle, near, scorer=fuzz.partial_ratio, limit=_PREFILTER_LIMIT)
    return set(heaviest) | {row for _, _, row in alike}


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


def _place(hay: Haystack, row: int, text: str, alignment: Alignment) -> tuple[Match, tuple[int, int]]:
    """The match of an alignment in the window at row (stripped lines), and its start,
    mapped back to the unstripped lines."""
    offsets = [0, *accumulate(len(line) + 1 for line in text.split("\n"))]

    def place(offset: int) -> tuple[int, int]:
        index = bisect_right(offsets, offset) - 1
        line = hay.first + row + index
        indent = len(hay.lines[line]) - len(hay.lines[line].lstrip())
        return line, offset - offsets[index] + indent

    line, column = place(alignment.marker)
    start_line, start_column = place(alignment.begin)
    end_line, end_column = place(alignment.end)
    matched = "\n".join(hay.lines[start_line : end_line + 1])
    matched = matched[start_column : len(matched) - len(hay.lines[end_line]) + end_column]
    gap = None
    if alignment.gap is not None:
        begin, end = alignment.gap
        other_line, other_column = place(begin if alignment.before else end)
        lacked = " ".join(text[begin:end].split())
        gap = (f"The find lacks `{lacked}` at its marker: taken {'after' if alignment.before else 'before'} "
               f"the gap; the other reading is {'before' if alignment.before else 'after'} it, "
               f"line {other_line + 1} column {other_column + 1}")
    match = Match(line, column, end_line, end_column, Tier.FUZZY, matched, alignment.score, alignment.cost,
                  gap=gap)
    return match, (start_line, start_column)


def _distinct(ranked: list[_Near]) -> list[_Near]:
    """Drop candidates whose span overlaps a better one's: the same spot counts once."""
    kept: list[_Near] = []
    for near in ranked:
        stop = (near.match.end_line, near.match.end_column)
        if not any(near.start < (k.match.end_line, k.match.end_column) and k.start < stop for k in kept):
            kept.append(near)
    return kept
