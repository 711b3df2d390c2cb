"""Servers' documentation cleaned of markup that means nothing as plain text (issue 14):
pyright's `&nbsp;` indents and backslash escapes, HTML line breaks; code kept as it is."""

from __future__ import annotations

from lsap_bridge.decode import clean_markdown, hover_of, hover_text

PYRIGHT = {"contents": {"kind": "markdown", "value": (
    "```python\nclass Console(*, color_system: str = \"auto\")\n```\n---\nA high level console interface.\n\n"
    "Args:\n&nbsp;&nbsp;&nbsp;&nbsp;color\\_system (Optional\\[str\\], optional): `\"auto\"` &lt;default&gt;.<br>"
    "Use `a\\_b` &amp; `&nbsp;` as is.")}}


def test_entities_escapes_and_breaks_go_and_code_stays() -> None:
    assert hover_text(hover_of(PYRIGHT, "pyright")) == (
        "```python\nclass Console(*, color_system: str = \"auto\")\n```\n---\nA high level console interface.\n\n"
        "Args:\n    color_system (Optional[str], optional): `\"auto\"` <default>.\n"
        "Use `a\\_b` & `&nbsp;` as is.")


def test_code_fences_keep_entities_and_escapes() -> None:
    fenced = "```python\nx = \"&nbsp;\"  # a\\_b\n```"
    assert clean_markdown(fenced) == fenced
    assert clean_markdown("a backslash \\\\ stays") == "a backslash \\\\ stays"


def test_every_hover_shape_as_markdown_and_a_malformed_one_named() -> None:
    import pytest

    from lsap_bridge.errors import ErrorCode, LsapError

    marked = {"contents": [{"language": "python", "value": "def f() -> int"}, "Docs."]}
    assert hover_text(hover_of(marked, "pylsp")) == "```python\ndef f() -> int\n```\n\nDocs."
    assert hover_text(hover_of({"contents": "plain"}, "s")) == "plain"
    assert hover_text(hover_of(None, "s")) == "" and hover_text(hover_of({}, "s")) == ""
    with pytest.raises(LsapError) as caught:
        hover_of({"range": {"start": {"line": 0, "character": 0}}}, "broken")
    assert caught.value.code is ErrorCode.SERVER_ERROR
    assert caught.value.message.startswith("broken answered textDocument/hover with a malformed Hover")
