"""Find an anchor's text in a file (doc/architecture.md, Anchors): exact, whitespace, unicode, fuzzy, then case.

Pure functions over a list of lines, so every tier is testable without an
editor. A tier never silently picks one of several matches: the caller gets
all of them and reports ambiguity; on no match it gets the closest lines.
`decide` turns the results of one search into one place, an ambiguity or a
miss; the resolver and the benchmarks both use it.

The tiers before the fuzzy one, the order they are tried in, and `decide` live here; what a
search works with is `matches.py`, the fuzzy tier `fuzzy.py`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from lsap_bridge.errors import invalid

from .align import WORD, map_offset, spot_of, tokens
from .fuzzy import close, fuzzy_matches
from .matches import CLOSEST, Haystack, Match, MatchResult, Needle, Tier, fold, is_word

#: The longest find (characters) matched on the loop when it has no exact match: a few
#: milliseconds of work, about what a hop to a worker process costs (lsap_bridge/cpu.py).
INLINE_FIND = 256


#: A line as the bridge's reports number it (`17|     return result`).
_NUMBERED = re.compile(r"\s*([0-9]+)\|(?: |$)")
#: A Markdown fence around pasted report lines.
_FENCE = re.compile(r"\s*(```|~~~)[\w+-]*\s*")


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
    hay = Haystack(lines, start, stop)
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
    folded_needle = fold(needle.text)
    folded_text = fold(hay.text)
    if folded_needle != needle.text or folded_text != hay.text or _ELLIPSIS.search(needle.text):
        pattern = _pattern(folded_needle, marker, unicode=True)
        found = _regex(hay, folded_text, pattern, Tier.UNICODE, tall)
        if found:
            return MatchResult(Tier.UNICODE, found)
    result = fuzzy_matches(hay, folded_text, folded_needle, marker)
    if result.matches:
        return result
    found = _case(hay, folded_text, folded_needle, marker)
    if len(found) == 1:
        return MatchResult(Tier.CASE, found)
    return MatchResult(None, closest=(found + result.closest)[: max(CLOSEST, len(found))])


def find_in(lines: Sequence[str], needle: Needle, spans: Sequence[tuple[int, int]]) -> list[MatchResult]:
    """`find_matches` in each span [start, end): one piece of work for a worker process."""
    return [find_matches(lines, needle, start, end) for start, end in spans]


def _case(hay: Haystack, text: str, needle: str, marker: int) -> list[Match]:
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
        return Decision(None, None, closest[:CLOSEST])
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
    return bool(needle.text) and needle.text in Haystack(lines, max(0, start), stop).text


def _exact(hay: Haystack, text: str, marker: int) -> list[Match]:
    found: list[Match] = []
    tall = "\n" in text
    at = hay.text.find(text)
    while at >= 0:
        found.append(hay.match(at, at + len(text), at + marker, Tier.EXACT, 100.0, tall))
        at = hay.text.find(text, at + 1)
    return found


def _trimmed(hay: Haystack, text: str, marker: int) -> list[Match]:
    """A one-line find's text found as written but for the whitespace at its edges: copied
    indentation says nothing of what precedes the text (`   style = sty` for `self.style =
    style`), and text that occurs as written beats places where only its inner spacing fits."""
    core = text.strip()
    if core == text or "\n" in core:
        return []
    lead = len(text) - len(text.lstrip())
    return _exact(hay, core, max(0, min(marker - lead, len(core))))


def _regex(hay: Haystack, text: str, pattern: re.Pattern[str], tier: Tier, tall: bool) -> list[Match]:
    """All (overlapping) regex matches, one per marker spot."""
    found: dict[int, Match] = {}
    hit = pattern.search(text)
    while hit:
        spot = hit.start("m")
        if spot not in found:
            found[spot] = hay.match(hit.start(), hit.end(), spot, tier, 100.0, tall)
        hit = pattern.search(text, hit.start() + 1)
    return list(found.values())


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
            tokens.append((i, i + 1, re.escape(text[i]), is_word(text[i])))
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
