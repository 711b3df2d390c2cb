"""Golden files for the foundation's templates (locate, references, definition, hover, error)."""

from __future__ import annotations

from typing import Any

import pytest

from lsap_bridge.errors import Candidate, ErrorCode, LsapError
from lsap_bridge.render import render_error
from tests.golden import GOLDEN, assert_golden, assert_report_golden, check_report_shape

ANCHOR: dict[str, Any] = {
    "anchor": "shop/models.py:Product", "path": "shop/models.py", "line": 7, "column": 7,
    "symbol": "Product", "text": "class Product:", "server": "basedpyright", "partial": False,
}

CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "references_approximate_partial.md": ("references", {
        **ANCHOR, "anchor": "shop/models.py@clas Product", "partial": True,
        "approximate": {"tier": "fuzzy", "matched": "class Product", "score": 92.3},
        "name": "Product", "files": 1, "external": 0, "total": 1, "start": 1, "end": 1,
        "groups": [{"path": "shop/models.py", "symbol": "Product", "language": "python",
                    "lines": [{"number": 7, "text": "class Product:"}], "uses": []}],
    }),
    "locate_pasted_moved.md": ("locate", {
        **ANCHOR, "anchor": "shop/models.py@5| class <|>Product:", "note": "line 5 is now line 7",
        "language": "python", "lines": [{"number": 7, "text": "class Product:"}],
    }),
    "locate_case.md": ("locate", {
        **ANCHOR, "anchor": "shop/models.py@class <|>PRODUCT:",
        "approximate": {"tier": "case", "matched": "class Product:", "score": 100.0},
        "language": "python", "lines": [{"number": 7, "text": "class Product:"}],
    }),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_template_golden(name: str) -> None:
    assert_report_golden(name, *CASES[name])


def test_error_report_golden() -> None:
    error = LsapError(
        ErrorCode.AMBIGUOUS, "'return result' matches 2 places in shop/models.py",
        hint="narrow it with a scope",
        candidates=[Candidate(31, "return result", "Order.total"),
                    Candidate(35, "return result", "Order.validate", 71.5)],
        suggestions=["Order.total"],
    )
    text = render_error(error)
    assert check_report_shape(text) == []
    assert_golden("error_ambiguous.md", text)


def test_every_golden_file_keeps_the_report_rules() -> None:
    files = sorted(GOLDEN.rglob("*.md"))
    assert files
    for path in files:
        assert check_report_shape(path.read_text()) == [], path.name


def test_report_shape_checker_catches_violations() -> None:
    assert check_report_shape("#### deep\n```\ncode\n```\n") == [
        "line 1: heading deeper than ###", "line 2: code fence without a language"]
