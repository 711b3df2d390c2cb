"""`has_exact`: the cheap test that lets Locate skip slow tiers in regions that cannot win."""

from __future__ import annotations

from lsap_bridge.locate.matcher import find_matches, has_exact, parse_find
from lsap_bridge.locate.matches import Tier

LINES = [
    "def map(project):",
    "    ...",
    "def map(project, this_arg):",
    "    return operate(project)",
]


def test_only_the_region_with_the_text_has_it() -> None:
    needle = parse_find("return <|>operate")
    assert not has_exact(LINES, needle, 0, 2)
    assert has_exact(LINES, needle, 2, 4)
    assert has_exact(LINES, needle)


def test_it_agrees_with_the_exact_tier_across_lines_and_nul_bytes() -> None:
    lines = ["a = '\n'", "b = 1", "c = 2"]  # Neovim gives a NUL byte as "\n" inside a line
    for find in ("b = 1\nc", "'\n'", "= '\n'\nb", "b = 1", "c = 3"):
        needle = parse_find(find)
        exact = find_matches(lines, needle).tier is Tier.EXACT
        assert has_exact(lines, needle) == exact, find


def test_out_of_range_regions_hold_nothing() -> None:
    needle = parse_find("operate")
    assert not has_exact(LINES, needle, 10, 20)
    assert not has_exact(LINES, needle, 3, 3)
