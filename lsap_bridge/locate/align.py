"""Near misses aligned token by token, so that the marker lands on the token it stood before.

A find copied with a dropped, added, changed or swapped token differs from the code by that
token, whatever its length: costs are counted in tokens (a word weighs 1, a punctuation
character 1/2, a slip of the finger inside a word 1/2, a word put in the place of another
1 1/2). The alignment is semi-global: the find may match any part of the window, and its
last word may be cut (a find that stops at `self.rig` still matches `self.right`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from rapidfuzz.distance import OSA, Levenshtein

#: Words (identifiers, keywords, numbers) and single punctuation characters. A qualifier
#: keeps its dot (`self.`, `os.`): dropped or added, it is one word, as agents see it.
_TOKEN = re.compile(r"(?:[^\W\d]\w*|\$[\w$]*)(?:\.(?=[^\W\d]|\$))?|\d\w*(?:\.\d+)?|\S")
#: What a word and a punctuation character weigh (`self.` is one word).
WORD, PUNCTUATION = 1.0, 0.5
#: A typo costs this much per slip (a letter replaced, added, dropped, or two swapped),
#: whatever the word's length: one slip is as likely as a dropped punctuation ...
_TYPO = 0.5
#: ... up to one slip per this many letters, or one, in words this long at least; more is
#: another word (`T` for `A` too), and putting it in the find's place costs more than
#: dropping or adding one.
_SHORTEST = 3
_TYPOS_PER = 4
_CHANGED = 1.5
#: A token of the find that the code lacks counts this much more than one the find lacks:
#: agents leave tokens out more often than they make them up.
_LOST = 1.5
#: A find's last word cut short (`self.rig` for `self.right`) costs a little.
_CUT = 0.1
#: A swap of two neighbouring words (with at most one punctuation between) costs half a word.
_SWAP = 0.5
_INF = float("inf")
#: Among alignments of one cost, the one that keeps more tokens the same wins.
_TIE = 1e-6
_SUB, _DROP, _EXTRA, _SWAP2, _SWAP3 = range(5)


class Token(NamedTuple):
    start: int
    end: int
    text: str
    weight: float  # WORD or PUNCTUATION


def tokens(text: str) -> list[Token]:
    return [
        Token(hit.start(), hit.end(), word, WORD if _is_word(word) else PUNCTUATION)
        for hit in _TOKEN.finditer(text)
        for word in (hit.group(),)
    ]


def _is_word(text: str) -> bool:
    return text[0].isalnum() or text[0] in "_$"


@dataclass(frozen=True)
class Spot:
    """Where a marker sits in a find: in token `index`, `offset` code points into it."""

    index: int
    offset: int


def spot_of(needle: Sequence[Token], marker: int) -> Spot:
    """The token a marker offset belongs to: the one it starts or is inside, else the one
    it ends (`return<|> x`), else the next one (`return <|> x`)."""
    for index, token in enumerate(needle):
        if token.start <= marker < token.end:
            return Spot(index, marker - token.start)
        if marker == token.end and (index + 1 == len(needle) or needle[index + 1].start > marker):
            return Spot(index, marker - token.start)
        if marker < token.start:
            return Spot(index, 0)
    return Spot(len(needle) - 1, needle[-1].end - needle[-1].start)


@dataclass(frozen=True)
class Alignment:
    """The best part of a window for a find: its cost in tokens, span and marker offsets.

    `at` is the window token the marker's token went to (None: the window lacks it),
    `marker_changed` whether that token is another word (or punctuation) there; `missing` counts the
    find's words the span lacks or has changed beyond a typo. `gap` is the window text
    the find lacks right at its marker (begin, end offsets), if any, and `before` whether
    the marker landed after it (on the token that follows the gap), else before it.
    """

    cost: float
    weight: float  # the larger of the find's and the span's
    begin: int
    end: int
    marker: int
    at: int | None
    marker_changed: bool
    missing: int
    gap: tuple[int, int] | None = None
    before: bool = True

    @property
    def score(self) -> float:
        return max(0.0, 100.0 * (1.0 - self.cost / self.weight))


@lru_cache(maxsize=65536)
def _change(a: str, b: str, last: bool) -> float:
    """What putting window token b where the find has a costs (the same pairs come back
    in every window and request: cached)."""
    if a == b:
        return 0.0
    word = _is_word(a)
    if word != _is_word(b):
        return _INF
    if not word:
        return PUNCTUATION + _TIE
    if last and b.startswith(a):
        return _CUT  # the find stops inside the word (`self.rig`)
    if a.rstrip(".") == b.rstrip("."):
        return _CUT  # `rich` for the qualifier `rich.` (the rest of the name dropped)
    shorter = min(len(a), len(b))
    slips = OSA.distance(a, b)
    if shorter < _SHORTEST or slips > max(1, shorter // _TYPOS_PER):
        return _CHANGED + _TIE  # another word: the find's is missing, the window's extra
    return slips * _TYPO + _TIE


def align(
    needle: Sequence[Token], spot: Spot, window: Sequence[Token], avoid: int | None = None, bound: float = _INF,
    keep: bool = False,
) -> Alignment | None:
    """The cheapest alignment of the find's tokens to a run of the window's tokens;
    `avoid` is a window token the marker's token may not go to (for the runner-up), and
    `keep` makes the marker's token go to the same token or one a typo away (a cheaper
    alignment may skip it, `self,` read as `str,` where `source: str,` was dropped).
    None once every partial alignment costs more than `bound` (costs only grow)."""
    n, m = len(needle), len(window)
    if not n or not m:
        return None
    a = [t.text for t in needle]
    b = [t.text for t in window]
    wa = [t.weight for t in needle]
    wb = [t.weight for t in window]
    k = spot.index
    table = _table(a, b, wa, wb, k, avoid, bound, keep)
    if table is None:
        return None
    last_row = table[0][n]
    stop = min(range(m, 0, -1), key=lambda j: last_row[j])  # ties: the longer span
    placed, j = _trace(table[1], n, stop)
    if j >= stop or last_row[stop] >= _INF:
        return None  # nothing of the window is used
    lost = {
        index for index, (to, there) in placed.items()
        if not there or _change(a[index], b[to], index == n - 1) >= _CHANGED
    }
    to, there = placed[k]
    changed = there and (k in lost or (wa[k] == PUNCTUATION and a[k] != b[to]))  # `{` is not `(`
    gap, before = _gap(needle, spot, placed, window) if there else (None, True)
    return Alignment(round(last_row[stop], 3), max(sum(wa), sum(wb[j:stop])), window[j].start, window[stop - 1].end,
                     _land(needle[k], spot.offset, placed[k], window, stop), to if there else None,
                     changed, sum(wa[index] == WORD for index in lost), gap, before)


def _table(a: list[str], b: list[str], wa: list[float], wb: list[float], k: int, avoid: int | None,
           bound: float, keep: bool) -> tuple[list[list[float]], list[list[int]]] | None:
    """The alignment's cost table and its steps back (see `align`): rows[i][j] aligns a[:i]
    to a run ending before b[j]; None once a whole row costs more than `bound`."""
    n, m = len(a), len(b)
    rows = [[0.0] * (m + 1)]
    back = [[_EXTRA] * (m + 1)]
    for i in range(1, n + 1):
        up, ai = rows[i - 1], a[i - 1]
        dropped = wa[i - 1] * _LOST + _TIE
        changes = [_change(ai, bj, i == n) for bj in b]
        if avoid is not None and i - 1 == k:
            changes[avoid] = _INF
        if keep and i - 1 == k:  # a punctuation character is kept only as itself
            changes = [_INF if change >= _CHANGED or (change and wa[k] == PUNCTUATION) else change
                       for change in changes]
            dropped = _INF
        row, steps = [up[0] + dropped] + [0.0] * m, [_DROP] * (m + 1)
        for j in range(1, m + 1):
            best, step = up[j - 1] + changes[j - 1], _SUB
            extra = row[j - 1] + wb[j - 1]
            if extra < best:
                best, step = extra, _EXTRA
            if up[j] + dropped < best:
                best, step = up[j] + dropped, _DROP
            # Swapped neighbours, `x y` or `x , y` (checked from the cheapest test on).
            for width, swap in ((2, _SWAP2), (3, _SWAP3)):
                if (i >= width and j >= width and ai == b[j - width] and rows[i - width][j - width] + _SWAP < best
                        and _swapped(a, b, i, j, width) and not _moves(avoid, k, i, j, width)):
                    best, step = rows[i - width][j - width] + _SWAP, swap
            row[j], steps[j] = best, step
        if min(row) > bound:
            return None
        rows.append(row)
        back.append(steps)
    return rows, back


def _trace(back: list[list[int]], n: int, stop: int) -> tuple[dict[int, tuple[int, bool]], int]:
    """The steps back from the table's last row at `stop`: where each find token went
    (window token, and whether it is there) and where the run begins."""
    placed: dict[int, tuple[int, bool]] = {}
    i, j = n, stop
    while i > 0:
        step = back[i][j]
        if step == _SUB:
            placed[i - 1] = (j - 1, True)
            i, j = i - 1, j - 1
        elif step == _DROP:
            placed[i - 1] = (j, False)  # not in the window: it would stand before b[j]
            i -= 1
        elif step == _EXTRA:
            j -= 1
        else:
            width = 2 if step == _SWAP2 else 3
            for offset in range(width):  # the first of the find's goes last, and back
                placed[i - width + offset] = (j - 1 - offset, True)
            i, j = i - width, j - width
    return placed, j


def _gap(needle: Sequence[Token], spot: Spot, placed: dict[int, tuple[int, bool]],
         window: Sequence[Token]) -> tuple[tuple[int, int] | None, bool]:
    """The window tokens the find lacks right at its marker, as window offsets: before the
    marker's token when the marker starts it (`f(<|>True)` for `f(flag=True)`), after it
    when the marker ends it; and whether they stand before the marker's landing place.
    Without a token of the find on that side, the one window token there is the gap."""
    k = spot.index
    to = placed[k][0]
    kept = [w for w, there in placed.values() if there]
    if spot.offset == 0 and k > 0 and to > 0:
        previous = [w for w in kept if w < to]
        first = max(previous) + 1 if previous else to - 1
        return ((window[first].start, window[to - 1].end) if first < to else None), True
    if spot.offset >= len(needle[k].text) and k + 1 < len(needle) and to + 1 < len(window):
        following = [w for w in kept if w > to]
        last = min(following) - 1 if following else to + 1
        return ((window[to + 1].start, window[last].end) if last > to else None), False
    return None, spot.offset == 0


def _swapped(a: list[str], b: list[str], i: int, j: int, width: int) -> bool:
    """Whether a[i-width:i] is b[j-width:j] with its ends swapped (`x y`, `x , y`)."""
    first, last = a[i - width], a[i - 1]
    return (first != last and first == b[j - 1] and last == b[j - width]
            and a[i - width + 1 : i - 1] == b[j - width + 1 : j - 1])


def _moves(avoid: int | None, k: int, i: int, j: int, width: int) -> bool:
    """Whether a swap would put the marker's token k on the window token to avoid."""
    return avoid is not None and i - width <= k < i and j - 1 - (k - i + width) == avoid


def _land(token: Token, offset: int, placed: tuple[int, bool], window: Sequence[Token], stop: int) -> int:
    """The window offset of a marker `offset` into `token`, given where the token went:
    the start or end of a token stays its start or end."""
    index, there = placed
    if not there:
        return window[index].start if index < stop else window[stop - 1].end
    target = window[index]
    if offset == 0:
        return target.start
    if offset >= len(token.text) or target.text == token.text:
        return target.start + min(offset, len(target.text))
    if target.text.startswith(token.text):
        return target.start + offset
    return target.start + map_offset(token.text, target.text, offset)


def map_offset(source: str, target: str, offset: int) -> int:
    """Where source[offset] lands in target, through a Levenshtein alignment."""
    for op in Levenshtein.opcodes(source, target):
        if op.src_start <= offset < op.src_end:
            if op.tag == "delete":
                return op.dest_start
            return min(op.dest_start + offset - op.src_start, op.dest_end)
    return len(target)
