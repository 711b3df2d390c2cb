"""A rename's coverage check reads a whole-line edit's new text through the position codec:
the use's column counts the server's units (UTF-16 here), the new text is code points."""

from __future__ import annotations

from lsprotocol import types

from lsap_bridge.capabilities.rename.coverage import _renames

LINE = 's = "\U0001f600"; foo()'  # the emoji is 2 UTF-16 units and 1 code point
USE = types.Position(0, 10)  # `foo`, in UTF-16 units
WHOLE = types.Range(types.Position(0, 0), types.Position(1, 0))  # jedi rewrites whole lines


def test_a_whole_line_edit_that_keeps_the_old_name_does_not_rename_the_use() -> None:
    assert not _renames(types.TextEdit(WHOLE, LINE + "\n"), USE, "foo", "utf-16")


def test_a_whole_line_edit_that_renames_the_use_does() -> None:
    assert _renames(types.TextEdit(WHOLE, LINE.replace("foo", "bar") + "\n"), USE, "foo", "utf-16")


def test_an_edit_on_the_use_renames_it() -> None:
    rng = types.Range(types.Position(0, 10), types.Position(0, 13))
    assert _renames(types.TextEdit(rng, "bar"), USE, "foo", "utf-16")
