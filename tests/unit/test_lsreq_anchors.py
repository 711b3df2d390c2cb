"""How the text format finds anchored lines (no editor): file order, whole lines first,
stacked `@@` lines narrowing to a definition, and the candidate lists of its errors."""

from __future__ import annotations

import pytest

from lsap_bridge.errors import ErrorCode, LsapError
from lsap_bridge.lsreq.executor import find_line, find_lines
from lsap_bridge.symbols import Span, Symbol, SymbolTree

LINES = [
    "class Order:",  # 0
    "    def total(self):",  # 1
    "        result = 0",  # 2
    "        return result",  # 3
    "    def validate(self):",  # 4
    "        result = True",  # 5
    "        return result",  # 6
    "return result_of_all",  # 7
]


def method(name: str, first: int, last: int) -> Symbol:
    return Symbol(name, 6, Span(first, 4, last, 21), Span(first, 8, first, 8 + len(name)))


TREE = SymbolTree(
    [
        Symbol(
            "Order",
            5,
            Span(0, 0, 6, 21),
            Span(0, 6, 0, 11),
            children=[
                method("total", 1, 3),
                method("validate", 4, 6),
            ],
        )
    ]
)


def error(text: str, previous: int | None = None) -> LsapError:
    with pytest.raises(LsapError) as caught:
        find_line(LINES, TREE, "models.py", text, previous)
    return caught.value


def test_ambiguous_lines_list_every_candidate_with_its_symbol() -> None:
    failure = error("return result")
    assert failure.code is ErrorCode.AMBIGUOUS
    assert [(c.line, c.symbol) for c in failure.candidates] == [
        (4, "Order.total"),
        (7, "Order.validate"),
    ]
    assert failure.hint is not None and "`@@ <line>`" in failure.hint


def test_whole_line_matches_win_over_lines_that_only_contain_the_text() -> None:
    # "return result" is also inside "return result_of_all"; after validate() only that
    # line and validate's own contain it, and validate's is the whole line.
    assert find_line(LINES, TREE, "models.py", "return result", 5) == (6, None)


def test_a_stacked_anchor_on_a_definition_narrows_to_its_body() -> None:
    assert find_line(LINES, TREE, "models.py", "return result", 1) == (3, None)
    assert find_line(LINES, TREE, "models.py", "return result", 4) == (6, None)


def test_anchors_are_searched_after_the_previous_one() -> None:
    failure = error("def total(self):", 4)
    assert failure.code is ErrorCode.NOT_FOUND
    assert "only before the previous anchor" in failure.message and "line 2" in failure.message


def test_a_missing_line_lists_the_closest_ones() -> None:
    failure = error("return totally_different_thing")
    assert failure.code is ErrorCode.NOT_FOUND
    assert [c.line for c in failure.candidates] == [8, 4, 7]
    assert all(c.score is not None and c.score < 80 for c in failure.candidates)


def test_inexact_matches_carry_a_note() -> None:
    line, note = find_line(LINES, TREE, "models.py", "def   validate( self ):", None)
    assert line == 4 and note == "anchor matched by whitespace text: def validate(self):"
    assert find_line(LINES, TREE, "models.py", "class Ordr:", None) == (
        0,
        "anchor matched by fuzzy text: class Order: (score 80.0)",
    )


def test_an_ambiguous_line_is_settled_by_the_next_anchor() -> None:
    lines = ["@dataclass", "class Product:", "    name: str", "@dataclass", "class Order:"]
    found = find_lines(lines, SymbolTree([]), "models.py", ["@dataclass", "class Order:"])
    assert found == [(3, "one of 2 matching lines, settled by the next anchor"), (4, None)]
    found = find_lines(lines, SymbolTree([]), "models.py", ["@dataclass", "class Product:"])
    assert found[0] == (0, "one of 2 matching lines, settled by the next anchor")
    # Nothing after it to settle it: still ambiguous.
    (alone,) = find_lines(lines, SymbolTree([]), "models.py", ["@dataclass"])
    assert isinstance(alone, LsapError) and alone.code is ErrorCode.AMBIGUOUS
    # The next anchor after both candidates does not settle it either.
    first, _ = find_lines([*lines, "x = 1"], SymbolTree([]), "models.py", ["@dataclass", "x = 1"])
    assert isinstance(first, LsapError) and first.code is ErrorCode.AMBIGUOUS


def test_a_far_next_anchor_with_several_candidates_before_it_settles_nothing() -> None:
    lines = ["@dataclass", "class A:", "    x = 1", "@dataclass", "class B:", "    return result"]
    first, second = find_lines(lines, SymbolTree([]), "m.py", ["@dataclass", "return result"])
    assert isinstance(first, LsapError) and first.code is ErrorCode.AMBIGUOUS
    assert second == (5, None)
