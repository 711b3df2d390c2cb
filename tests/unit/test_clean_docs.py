"""Servers' documentation cleaned of markup that means nothing as plain text (issue 14):
pyright's `&nbsp;` indents and backslash escapes, HTML line breaks; code kept as it is."""

from __future__ import annotations

from lsap_bridge.decode import clean_markdown, hover_text

PYRIGHT = {"contents": {"kind": "markdown", "value": (
    "```python\nclass Console(*, color_system: str = \"auto\")\n```\n---\nA high level console interface.\n\n"
    "Args:\n&nbsp;&nbsp;&nbsp;&nbsp;color\\_system (Optional\\[str\\], optional): `\"auto\"` &lt;default&gt;.<br>"
    "Use `a\\_b` &amp; `&nbsp;` as is.")}}


def test_entities_escapes_and_breaks_go_and_code_stays() -> None:
    assert hover_text(PYRIGHT) == (
        "```python\nclass Console(*, color_system: str = \"auto\")\n```\n---\nA high level console interface.\n\n"
        "Args:\n    color_system (Optional[str], optional): `\"auto\"` <default>.\n"
        "Use `a\\_b` & `&nbsp;` as is.")


def test_code_fences_keep_entities_and_escapes() -> None:
    fenced = "```python\nx = \"&nbsp;\"  # a\\_b\n```"
    assert clean_markdown(fenced) == fenced
    assert clean_markdown("a backslash \\\\ stays") == "a backslash \\\\ stays"
