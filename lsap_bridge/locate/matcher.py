"""Find an anchor's text in a file (doc/architecture.md, Anchors): exact, whitespace, unicode, fuzzy, then case.

Pure functions over a list of lines, so every tier is testable without an
editor. A tier never silently picks one of several matches: the caller gets
all of them and reports ambiguity; on no match it gets the closest lines.
`decide` turns the results of one search into one place, an ambiguity or a
miss; the resolver and the benchmarks both use it.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from itertools import accumulate

from rapidfuzz import fuzz, process

from lsap_bridge.errors import invalid

from .align import WORD, Alignment, Spot, Token, align, map_offset, spot_of, tokens

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
#: The longest find (characters) matched on the loop when it has no exact match: a few
#: milliseconds of work, about what a hop to a worker process costs (lsap_bridge/cpu.py).
INLINE_FIND = 256
#: How many below-threshold candidates a miss suggests.
_CLOSEST = 3
#: A line as the bridge's reports number it (`17|     return result`).
_NUMBERED = re.compile(r"\s*([0-9]+)\|(?: |$)")
#: A Markdown fence around pasted report lines.
_FENCE = re.compile(r"\s*(```|~~~)[\w+-]*\s*")


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


def parse_find(find: str) -> Needle:
    """Split a `find` string into its text and marker offset.

    The marker is the deepest `<`*k `|` `>`*k present, so text that itself
    contains `<|>` can be anchored with `<<|>>`; it must occur exactly once.
    Lines pasted from a report (`17|     return result`, fenced or not) lose
    their numbers, and the marker's line number is kept as `line`.
    """
    find, numbers = unpaste(find)
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
    line = numbers[find.count("\n", 0, marker or 0)] if numbers else None
    return Needle(text, marker, line)


def unpaste(text: str) -> tuple[str, list[int]]:
    """Lines copied from a report without their `N| ` numbers (and fence), and the
    0-based line each number named; text that is not all numbered lines is kept as it is."""
    lines = text.split("\n")
    while lines and (not lines[0].strip() or _FENCE.fullmatch(lines[0])):
        lines.pop(0)
    while lines and (not lines[-1].strip() or _FENCE.fullmatch(lines[-1])):
        lines.pop()
    numbered = [_NUMBERED.match(line) for line in lines]
    if not lines or not all(numbered):
        return text, []
    return (
        "\n".join(line[hit.end() :] for line, hit in zip(lines, numbered, strict=True) if hit),
        [int(hit.group(1)) - 1 for hit in numbered if hit],
    )


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
    found = _trimmed(hay, needle.text, marker)
    if found:
        return MatchResult(Tier.WHITESPACE, found)
    tall = "\n" in needle.text.strip()
    found = _regex(hay, hay.text, _pattern(needle.text, marker, unicode=False), Tier.WHITESPACE, tall)
    if found:
        return MatchResult(Tier.WHITESPACE, found)
    folded_needle = _fold(needle.text)
    folded_text = _fold(hay.text)
    if folded_needle != needle.text or folded_text != hay.text or _ELLIPSIS.search(needle.text):
        pattern = _pattern(folded_needle, marker, unicode=True)
        found = _regex(hay, folded_text, pattern, Tier.UNICODE, tall)
        if found:
            return MatchResult(Tier.UNICODE, found)
    result = _fuzzy(hay, folded_text, folded_needle, marker)
    if result.matches:
        return result
    found = _case(hay, folded_text, folded_needle, marker)
    if len(found) == 1:
        return MatchResult(Tier.CASE, found)
    return MatchResult(None, closest=(found + result.closest)[: max(_CLOSEST, len(found))])


def find_in(lines: Sequence[str], needle: Needle, spans: Sequence[tuple[int, int]]) -> list[MatchResult]:
    """`find_matches` in each span [start, end): one piece of work for a worker process."""
    return [find_matches(lines, needle, start, end) for start, end in spans]


def _case(hay: _Haystack, text: str, needle: str, marker: int) -> list[Match]:
    """Matches that differ only in letter case or identifier style: each word of the
    needle matches any word with the same letters, ignoring case and underscores
    (`VALIDATE`, `validate`; `get_user`, `getUser`), with whitespace as in the second tier."""
    found = tokens(needle)
    spot = spot_of(found, marker)
    tall = "\n" in needle.strip()
    parts: list[str] = []
    for index, token in enumerate(found):
        if index:
            between = needle[found[index - 1].end : token.start]
            joined = token.weight == WORD and found[index - 1].weight == WORD
            parts.append((r"\s+" if between else "") if joined else r"\s*")
        if token.weight == WORD:
            name = token.text.rstrip(".")  # a qualifier's dot is not part of its name
            letters = [re.escape(ch) for ch in name if ch != "_"] or [re.escape(name)]
            word = r"(?<![\w$])_*" + "_*".join(letters) + r"_*(?![\w$])"
            dot = r"\." * (len(token.text) - len(name))
            parts.append((f"(?P<m>{word})" if index == spot.index else word) + dot)
        else:
            parts.append(f"(?P<m>{re.escape(token.text)})" if index == spot.index else re.escape(token.text))
    pattern = re.compile("".join(parts), re.IGNORECASE)
    out: dict[int, Match] = {}
    hit = pattern.search(text)
    while hit:
        word = hit.group("m")
        at = hit.start("m") + map_offset(found[spot.index].text.lower(), word.lower(), spot.offset)
        if at not in out:
            out[at] = hay.match(hit.start(), hit.end(), at, Tier.CASE, 100.0, tall)
        hit = pattern.search(text, hit.start() + 1)
    return list(out.values())


@dataclass(frozen=True)
class Decision:
    """What a search comes to: one match, or the candidates of an ambiguity (`tier` set),
    or of a miss (the closest lines, `tier` None). `note` says how a pasted line number
    was used."""

    match: Match | None
    tier: Tier | None
    candidates: list[Match] = field(default_factory=list)
    note: str | None = None


def decide(results: Sequence[MatchResult], line: int | None = None) -> Decision:
    """One place from the results of the searched regions, or why not.

    The first tier with a match decides; near misses close to the best one are
    kept with it (an ambiguity, never a guess), case slips count only when
    unique. `line`, the number of a pasted report line, settles a tie.
    """
    tiers = [r.tier for r in results if r.tier is not None and r.matches]
    if not tiers:
        closest = sorted((m for r in results for m in r.closest), key=lambda m: -m.score)
        return Decision(None, None, closest[:_CLOSEST])
    best = min(tiers, key=list(Tier).index)
    deciding = [r for r in results if r.tier is best]
    if best is Tier.FUZZY:  # a region's runner-ups stand; other regions' bests must be close
        top = min((r.matches[0] for r in deciding), key=lambda m: m.cost)
        deciding = [r for r in deciding if r.matches[0] is top or close(top, r.matches[0])]
    unique = list({(m.line, m.column): m for r in deciding for m in r.matches}.values())
    # The text as written, whole identifiers on one line, beats the same text cut out of
    # longer identifiers or spread over lines (`def print` is not `def print_json`).
    unique = [m for m in unique if m.whole] or unique
    if best is Tier.CASE and len(unique) > 1:
        return Decision(None, None, unique)
    if len(unique) > 1 and line is not None:
        settled = settle([m.line for m in unique], line)
        unique = [m for m in unique if m.line == settled] or unique
    if len(unique) > 1:
        return Decision(None, best, unique)
    return Decision(unique[0], best, note=moved(line, unique[0].line))


def settle(found: Sequence[int], line: int) -> int | None:
    """The candidate line a pasted line number names: the nearest, if it is the line itself
    or under half as far as the next nearest (lines shift together when text is added above)."""
    nearest = sorted(set(found), key=lambda n: abs(n - line))
    if not nearest:
        return None
    if len(nearest) == 1 or nearest[0] == line or 2 * abs(nearest[0] - line) < abs(nearest[1] - line):
        return nearest[0]
    return None


def moved(line: int | None, now: int) -> str | None:
    """The note for a pasted line number the match is no longer at (1-based, as reports say)."""
    if line is None or line == now:
        return None
    return f"line {line + 1} is now line {now + 1}"


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

    def match(self, begin: int, stop: int, marker: int, tier: Tier, score: float, tall: bool = False) -> Match:
        line, column = self.position(marker)
        end_line, end_column = self.position(stop)
        return Match(line, column, end_line, end_column, tier, self.text[begin:stop], score,
                     whole=self.whole(begin, stop, tall))

    def whole(self, begin: int, stop: int, tall: bool) -> bool:
        """Whether text[begin:stop] neither cuts into an identifier at either end nor, for a
        one-line find (`tall` False), runs over a line break."""
        text = self.text
        inside = (begin > 0 and _in_name(text[begin]) and _in_name(text[begin - 1])) or (
            stop < len(text) and _in_name(text[stop - 1]) and _in_name(text[stop]))
        return not inside and (tall or text.find("\n", begin, stop) < 0)


def _exact(hay: _Haystack, text: str, marker: int) -> list[Match]:
    found: list[Match] = []
    tall = "\n" in text
    at = hay.text.find(text)
    while at >= 0:
        found.append(hay.match(at, at + len(text), at + marker, Tier.EXACT, 100.0, tall))
        at = hay.text.find(text, at + 1)
    return found


def _trimmed(hay: _Haystack, text: str, marker: int) -> list[Match]:
    """A one-line find's text found as written but for the whitespace at its edges: copied
    indentation says nothing of what precedes the text (`   style = sty` for `self.style =
    style`), and text that occurs as written beats places where only its inner spacing fits."""
    core = text.strip()
    if core == text or "\n" in core:
        return []
    lead = len(text) - len(text.lstrip())
    return _exact(hay, core, max(0, min(marker - lead, len(core))))


def _regex(hay: _Haystack, text: str, pattern: re.Pattern[str], tier: Tier, tall: bool) -> list[Match]:
    """All (overlapping) regex matches, one per marker spot."""
    found: dict[int, Match] = {}
    hit = pattern.search(text)
    while hit:
        spot = hit.start("m")
        if spot not in found:
            found[spot] = hay.match(hit.start(), hit.end(), spot, tier, 100.0, tall)
        hit = pattern.search(text, hit.start() + 1)
    return list(found.values())


def _is_word(ch: str) -> bool:
    return ch == "_" or ch.isalnum()


def _in_name(ch: str) -> bool:
    """A character of an identifier, `$` too (`source$`, `$el`)."""
    return ch == "$" or _is_word(ch)


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
        return MatchResult(None, closest=[c.match for c in ranked if c.match.score or c.alike][:_CLOSEST])
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


def _holding(found: list[Token], hay: _Haystack, text: str, stripped: list[str], needle: str) -> set[int]:
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


def _place(hay: _Haystack, row: int, text: str, alignment: Alignment) -> tuple[Match, tuple[int, int]]:
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
