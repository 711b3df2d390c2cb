"""The error report's golden file, and the rules every golden report keeps (the modes' own
goldens are replayed: tests/unit/test_replayed.py)."""

from __future__ import annotations

from lsap_bridge.errors import Candidate, ErrorCode, LsapError
from lsap_bridge.render import render_error
from tests.golden import GOLDEN, assert_golden, check_report_shape


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
