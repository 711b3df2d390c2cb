"""Locate's text matching: markers, and the exact, whitespace, unicode and fuzzy tiers."""

from __future__ import annotations

import time

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from lsap_bridge.errors import ErrorCode, LsapError
from lsap_bridge.locate.fuzzy import FUZZY_THRESHOLD
from lsap_bridge.locate.matcher import find_matches, parse_find
from lsap_bridge.locate.matches import Match, MatchResult, Needle, Tier
from tests import stress

SOURCE = """\
from dataclasses import dataclass


@dataclass
class User:
    name: str
    email: str

    def validate(self, strict: bool = False) -> bool:
        result = self.check(self.email, strict=True)
        total = compute_total(items, tax_rate)
        return result

    def check(self, value: str, strict: bool) -> bool:
        result = "@" in value
        return result
""".splitlines()


def find(lines: list[str], text: str, start: int = 0, end: int | None = None) -> MatchResult:
    return find_matches(lines, parse_find(text), start, end)


def only(result: MatchResult) -> Match:
    assert len(result.matches) == 1, result
    return result.matches[0]


# --- parse_find -------------------------------------------------------------


@pytest.mark.parametrize(
    ("find_text", "needle"),
    [
        ("return <|>result", Needle("return result", 7)),
        ("return result", Needle("return result", None)),
        ("<|>x", Needle("x", 0)),
        ("x<|>", Needle("x", 1)),
        ("a <|> b <<|>> c", Needle("a <|> b  c", 8)),
        ("<|> <<|>> <<<|>>> z", Needle("<|> <<|>>  z", 10)),
        ("x <|>> y", Needle("x > y", 2)),
        ("x <<|> y", Needle("x < y", 3)),
        ("a | b", Needle("a | b", None)),
        ("a <| b |> c", Needle("a <| b |> c", None)),
        ("@property", Needle("@property", None)),
        ("foo(\n    <|>bar)", Needle("foo(\n    bar)", 9)),
    ],
)
def test_parse_find(find_text: str, needle: Needle) -> None:
    assert parse_find(find_text) == needle


@pytest.mark.parametrize(
    ("find_text", "marker", "count", "deeper"),
    [
        ("a <|> b <|> c", "<|>", 2, "<<|>>"),
        ("<|><|><|>x", "<|>", 3, "<<|>>"),
        ("a <|> <<|>> b <<|>>", "<<|>>", 2, "<<<|>>>"),
    ],
)
def test_a_repeated_marker_is_invalid(find_text: str, marker: str, count: int, deeper: str) -> None:
    with pytest.raises(LsapError) as caught:
        parse_find(find_text)
    error = caught.value
    assert error.code is ErrorCode.INVALID_REQUEST
    assert marker in error.message
    assert f"{count} times" in error.message
    assert error.hint is not None
    assert deeper in error.hint


@pytest.mark.parametrize("find_text", ["", "   ", "<|>", "  <|> \n", "\t<<|>>"])
def test_an_empty_find_is_invalid(find_text: str) -> None:
    with pytest.raises(LsapError) as caught:
        parse_find(find_text)
    assert caught.value.code is ErrorCode.INVALID_REQUEST
    assert "empty" in caught.value.message


def test_find_matches_refuses_an_empty_needle() -> None:
    with pytest.raises(LsapError):
        find_matches(SOURCE, Needle("  ", None))


# --- exact ------------------------------------------------------------------


def test_exact_match_at_the_marker() -> None:
    result = find(SOURCE, "return <|>result")
    assert result.tier is Tier.EXACT
    assert result.matches[0] == Match(11, 15, 11, 21, Tier.EXACT, "return result", 100.0)


def test_exact_match_without_a_marker_points_at_its_start() -> None:
    match = only(find(SOURCE, "compute_total(items"))
    assert (match.line, match.column) == (10, 16)
    assert (match.end_line, match.end_column) == (10, 35)


def test_every_exact_match_is_returned_when_ambiguous() -> None:
    result = find(SOURCE, "<|>return result")
    assert result.tier is Tier.EXACT
    assert [(m.line, m.column) for m in result.matches] == [(11, 8), (15, 8)]


def test_a_scope_narrows_an_ambiguous_match() -> None:
    match = only(find(SOURCE, "<|>return result", start=13, end=16))
    assert (match.line, match.column) == (15, 8)
    assert find(SOURCE, "return result", start=12, end=15).tier is not Tier.EXACT


def test_overlapping_exact_occurrences_are_distinct_spots() -> None:
    result = find(["aaa"], "aa")
    assert [(m.line, m.column) for m in result.matches] == [(0, 0), (0, 1)]


def test_multi_line_exact_match() -> None:
    match = only(find(SOURCE, "total = compute_total(items, tax_rate)\n        <|>return result"))
    assert match.tier is Tier.EXACT
    assert (match.line, match.column) == (11, 8)
    assert (match.end_line, match.end_column) == (11, 21)
    assert match.matched_text.endswith("tax_rate)\n        return result")


def test_decorator_text_is_plain_text() -> None:
    match = only(find(SOURCE, "@<|>dataclass\nclass"))
    assert (match.line, match.column) == (3, 1)


def test_empty_or_inverted_scope_finds_nothing() -> None:
    assert find(SOURCE, "return result", start=5, end=5) == MatchResult(None)
    assert find(SOURCE, "return result", start=9, end=3) == MatchResult(None)
    assert find([], "x") == MatchResult(None)


def test_unicode_columns_are_code_points() -> None:
    match = only(find(['msg = "héllo 😀 wörld"'], "😀 <|>wörld"))
    assert (match.line, match.column) == (0, 15)


# --- whitespace -------------------------------------------------------------


def test_spaces_inside_punctuation_match_none_and_vice_versa() -> None:
    result = find(["x = foo( a, b )"], "foo(a,<|>b)")
    assert result.tier is Tier.WHITESPACE
    match = only(result)
    assert (match.column, match.end_column, match.matched_text) == (12, 15, "foo( a, b )")
    assert find(["x = foo(a,b)"], "foo( a , b )").tier is Tier.WHITESPACE


def test_runs_of_whitespace_match_any_run() -> None:
    result = find(SOURCE, "return  <|>result")
    assert result.tier is Tier.WHITESPACE
    assert [(m.line, m.column) for m in result.matches] == [(11, 15), (15, 15)]
    tabbed = only(find(["if\tx  and\t\ty:"], "if x and <|>y"))
    assert (tabbed.tier, tabbed.column) == (Tier.WHITESPACE, 11)


def test_words_never_merge_or_split() -> None:
    assert find(["return result"], "returnresult").tier is not Tier.WHITESPACE
    assert find(["returnresult"], "return result").tier is not Tier.WHITESPACE


def test_marker_next_to_whitespace_keeps_its_side() -> None:
    before = only(find(["return    result"], "return<|> result"))
    after = only(find(["return    result"], "return <|>result"))
    assert (before.tier, before.column) == (Tier.WHITESPACE, 6)
    assert (after.tier, after.column) == (Tier.WHITESPACE, 10)


def test_leading_and_trailing_whitespace_of_the_needle_is_ignored() -> None:
    match = only(find(["x=1"], "  x = <|>1  \n"))
    assert (match.tier, match.column, match.matched_text) == (Tier.WHITESPACE, 2, "x=1")
    leading = only(find(["    x=1"], "  <|>  x = 1"))
    assert leading.column == 4
    trailing = only(find(["x=1 "], "x = 1 <|> "))
    assert trailing.column == 3


def test_a_needle_may_span_lines_the_file_does_not_and_back() -> None:
    joined = only(find(["call(first,", "     second)"], "call(first, <|>second)"))
    assert joined.tier is Tier.WHITESPACE
    assert (joined.line, joined.column, joined.end_line, joined.end_column) == (1, 5, 1, 12)
    split = only(find(["call(first, second)"], "call(\n    first,\n    <|>second\n)"))
    assert (split.tier, split.column) == (Tier.WHITESPACE, 12)


def test_dedented_multi_line_needle() -> None:
    match = only(find(SOURCE, "def check(self, value: str, strict: bool) -> bool:\n<|>result ="))
    assert (match.tier, match.line, match.column) == (Tier.WHITESPACE, 14, 8)


def test_whitespace_matches_are_all_returned() -> None:
    result = find(["f( x )", "g", "f(x)"], "f(x)")
    assert result.tier is Tier.EXACT
    result = find(["f( x )", "g", "f (x)"], "f(x)")
    assert result.tier is Tier.WHITESPACE
    assert [m.line for m in result.matches] == [0, 2]


# --- unicode ----------------------------------------------------------------


def test_curly_quotes_in_the_needle() -> None:
    result = find(SOURCE, "result = “@” in <|>value")
    assert result.tier is Tier.UNICODE
    match = only(result)
    assert (match.line, match.column, match.matched_text) == (14, 24, 'result = "@" in value')


def test_curly_quotes_in_the_file() -> None:
    lines = ["print(‘it’s fine’)", "x = 1"]
    match = only(find(lines, "print('it's <|>fine')"))
    assert (match.tier, match.column) == (Tier.UNICODE, 12)


def test_dashes_and_minus_signs() -> None:
    match = only(find(["delta = a − b  # en – dash"], "a - <|>b  # en - dash"))
    assert (match.tier, match.column) == (Tier.UNICODE, 12)


def test_unicode_spaces_and_whitespace_together() -> None:
    match = only(find(["x\u00a0=\u3000“a”"], 'x = <|>"a"'))
    assert match.tier is Tier.UNICODE
    assert match.column == 4


@pytest.mark.parametrize(
    ("line", "needle", "column"),
    [
        ("raise NotImplementedError('todo…')", "'todo...<|>')", 32),
        ("raise NotImplementedError('todo...')", "'todo…<|>')", 34),
        ("wait… <|>done", "wait... done", 0),
    ],
)
def test_ellipsis_either_way(line: str, needle: str, column: int) -> None:
    match = only(find([line.replace("<|>", "")], needle))
    assert (match.tier, match.column) == (Tier.UNICODE, column)


# --- fuzzy ------------------------------------------------------------------


def test_a_one_character_typo_resolves_with_the_right_column() -> None:
    result = find(SOURCE, "total = compute_totl(items, <|>tax_rate)")
    assert result.tier is Tier.FUZZY
    match = only(result)
    assert (match.line, match.column) == (10, 37)
    assert match.matched_text == "total = compute_total(items, tax_rate)"
    assert FUZZY_THRESHOLD <= match.score < 100


@pytest.mark.parametrize(
    ("needle", "column"),
    [
        ("total = compute_total(itmes, <|>tax_rate)", 37),  # swapped letters
        ("total = computee_total(items, <|>tax_rate)", 37),  # extra letter
        ("total = compute_total(<|>itms, tax_rate)", 30),  # marker on the typo
        ("<|>totl = compute_total(items, tax_rate)", 8),
        ("total = compute_total(items, tax_rat<|>)", 45),
    ],
)
def test_typo_variants_keep_the_marker_in_place(needle: str, column: int) -> None:
    match = only(find(SOURCE, needle))
    assert (match.tier, match.line, match.column) == (Tier.FUZZY, 10, column)


def test_a_dropped_token_resolves() -> None:
    match = only(find(SOURCE, "result = self.check(strict=<|>True)"))
    assert (match.tier, match.line, match.column) == (Tier.FUZZY, 9, 47)
    assert match.matched_text == "result = self.check(self.email, strict=True)"


def test_a_typo_in_part_of_a_line() -> None:
    match = only(find(SOURCE, "def validate(self, strict: bool = Flase)"))
    assert (match.tier, match.line, match.column) == (Tier.FUZZY, 8, 4)


def test_a_multi_line_needle_with_a_typo() -> None:
    match = only(find(SOURCE, "def chek(self, value: str, strict: bool) -> bool:\n<|>result ="))
    assert (match.tier, match.line, match.column) == (Tier.FUZZY, 14, 8)
    assert (match.end_line, match.end_column) == (14, 16)


def test_a_multi_line_needle_keeps_its_blank_lines() -> None:
    needle = "\n    total = compute_total(items, tax_rat)\n    return result\n\n    <|>def chek("
    match = only(find(SOURCE, needle))
    assert (match.tier, match.line, match.column) == (Tier.FUZZY, 13, 4)
    assert match.matched_text.startswith("total = compute_total(items, tax_rate)\n")


def test_near_tied_fuzzy_candidates_are_all_returned() -> None:
    lines = ["x = load(path_a)", "y = 2", "x = load(path_b)"]
    result = find(lines, "x = load(path_c)")
    assert result.tier is Tier.FUZZY
    assert sorted(m.line for m in result.matches) == [0, 2]


def test_a_clear_winner_is_not_ambiguous() -> None:
    lines = ["value = compute(alpha, beta)", "value = compute(alpha, gamma)"]
    match = only(find(lines, "value = compute(alpha, bteta)"))
    assert match.line == 0


def test_unrelated_text_gives_no_match_but_the_closest_lines() -> None:
    result = find(SOURCE, "the quick brown fox jumps over the lazy dog")
    assert result.tier is None
    assert result.matches == []
    assert 1 <= len(result.closest) <= 3
    assert all(m.tier is Tier.FUZZY and m.score < FUZZY_THRESHOLD for m in result.closest)
    scores = [m.score for m in result.closest]
    assert scores == sorted(scores, reverse=True)


def test_a_near_miss_below_threshold_is_the_first_suggestion() -> None:
    result = find(SOURCE, "def validation_routine(this, strictly)")
    assert result.tier is None
    assert result.closest[0].line == 8


def test_fuzzy_respects_the_scope() -> None:
    result = find(SOURCE, "def chek(self, value", start=0, end=12)
    assert all(m.line < 12 for m in result.matches + result.closest)
    assert find(SOURCE, "a\nb\nc", start=0, end=2) == MatchResult(None)


def test_overlapping_fuzzy_windows_count_once() -> None:
    lines = ["a = 1", "b = 2", "c = 3", "d = 4"]
    match = only(find(lines, "b = 2\nc = 33"))
    assert (match.line, match.end_line) == (1, 2)


# --- speed ------------------------------------------------------------------


@pytest.mark.stress
def test_large_files_are_fast_for_exact_and_whitespace() -> None:
    lines = [f"    value_{i} = compute(item_{i}, factor={i % 7})" for i in range(20_000)]
    lines[17_345] = "    target = special( alpha,beta )"
    for text, tier in [
        ("value_19999 = compute(", Tier.EXACT),
        ("target = special(alpha, <|>beta)", Tier.WHITESPACE),
    ]:
        needle = parse_find(text)
        best = float("inf")
        for _ in range(3):
            began = time.perf_counter()
            result = find_matches(lines, needle)
            best = min(best, time.perf_counter() - began)
        assert result.tier is tier
        stress.figure(f"a {tier.name.lower()} find in 20,000 lines, best of 3", best, at_most=0.1)
        assert best < 1.0  # a hang bound: 10x the target


# --- properties ---------------------------------------------------------------


@settings(max_examples=1000)
@given(st.text())
def test_parse_find_only_raises_lsap_errors(text: str) -> None:
    try:
        needle = parse_find(text)
    except LsapError as error:
        assert error.code is ErrorCode.INVALID_REQUEST
        return
    assert needle.text.strip()
    assert needle.marker is None or 0 <= needle.marker <= len(needle.text)


def _depth(text: str) -> int:
    """The deepest `<`*k `|` `>`*k in text."""
    depth = 0
    while "<" * (depth + 1) + "|" + ">" * (depth + 1) in text:
        depth += 1
    return depth


line_text = st.text(st.characters(blacklist_characters="\n", blacklist_categories=["Cs"]))


@settings(max_examples=1000, deadline=None)
@given(st.lists(line_text, min_size=1, max_size=8), st.data())
def test_an_exact_substring_is_found_at_its_position(lines: list[str], data: st.DataObject) -> None:
    text = "\n".join(lines)
    visible = [index for index, ch in enumerate(text) if not ch.isspace()]
    assume(visible)
    anchor = data.draw(st.sampled_from(visible))
    begin = data.draw(st.integers(max(0, anchor - 20), anchor))
    stop = data.draw(st.integers(anchor + 1, min(len(text), anchor + 20)))
    sub = text[begin:stop]
    offset = data.draw(st.integers(0, len(sub)))
    assume(not (sub[offset - 1 : offset] == "<" and sub[offset : offset + 1] == ">"))
    depth = _depth(sub) + 1
    marked = sub[:offset] + "<" * depth + "|" + ">" * depth + sub[offset:]

    needle = parse_find(marked)
    assert needle == Needle(sub, offset)
    result = find_matches(lines, needle)
    line = text.count("\n", 0, begin + offset)
    column = begin + offset - (text.rfind("\n", 0, begin + offset) + 1)
    assert result.tier is Tier.EXACT
    assert (line, column) in [(m.line, m.column) for m in result.matches]
    assert all(m.matched_text == sub for m in result.matches)


@settings(max_examples=1000, deadline=None)
@given(
    st.lists(line_text, max_size=6),
    st.text(min_size=1, max_size=30),
    st.integers(-2, 8),
    st.one_of(st.none(), st.integers(-2, 8)),
)
def test_any_search_gives_positions_inside_the_lines(
    lines: list[str], text: str, start: int, end: int | None
) -> None:
    try:
        needle = parse_find(text)
    except LsapError:
        return
    result = find_matches(lines, needle, start, end)
    assert (result.tier is None) == (not result.matches)
    for match in result.matches + result.closest:
        assert 0 <= match.line <= match.end_line < len(lines)
        assert 0 <= match.column <= len(lines[match.line])
        assert 0 <= match.end_column <= len(lines[match.end_line])
        assert (match.line, match.column) <= (match.end_line, match.end_column)
