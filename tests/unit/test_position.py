"""Code-point columns <-> LSP characters in utf-8, utf-16 and utf-32."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsap_bridge.position import (
    Document,
    Encoding,
    byte_column,
    column_at,
    from_lsp_character,
    line_at,
    to_lsp_character,
)

ENCODINGS: list[Encoding] = ["utf-8", "utf-16", "utf-32"]

# a, grinning face (astral: 4 utf-8 bytes, a utf-16 surrogate pair), é (2 bytes),
# 中 (3 bytes), b
LINE = "a😀é中b"
UNITS = {
    "utf-8": [0, 1, 5, 7, 10, 11],
    "utf-16": [0, 1, 3, 4, 5, 6],
    "utf-32": [0, 1, 2, 3, 4, 5],
}


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_every_column_of_a_mixed_line(encoding: Encoding) -> None:
    for column, character in enumerate(UNITS[encoding]):
        assert to_lsp_character(LINE, column, encoding) == character
        assert from_lsp_character(LINE, character, encoding) == column


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_ascii_is_the_identity(encoding: Encoding) -> None:
    line = "def validate(self):"
    for column in range(len(line) + 1):
        assert to_lsp_character(line, column, encoding) == column
        assert from_lsp_character(line, column, encoding) == column


def test_inside_a_surrogate_pair_maps_to_the_emoji() -> None:
    # utf-16 unit 2 is the low surrogate of 😀, which starts at column 1.
    assert from_lsp_character(LINE, 2, "utf-16") == 1


@pytest.mark.parametrize(("character", "column"), [(2, 1), (3, 1), (4, 1), (6, 2), (8, 3), (9, 3)])
def test_inside_a_utf8_sequence_maps_to_its_code_point(character: int, column: int) -> None:
    assert from_lsp_character(LINE, character, "utf-8") == column


def test_accented_letters_decomposed_and_precomposed() -> None:
    precomposed, decomposed = "café = 1", "cafe\u0301 = 1"
    assert to_lsp_character(precomposed, 5, "utf-8") == 6
    assert to_lsp_character(decomposed, 6, "utf-8") == 7
    assert to_lsp_character(decomposed, 6, "utf-16") == 6


def test_cjk_identifiers() -> None:
    line = "变量 = 值"
    assert to_lsp_character(line, 3, "utf-8") == 7
    assert to_lsp_character(line, 3, "utf-16") == 3
    assert from_lsp_character(line, 7, "utf-8") == 3


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_out_of_range_is_clamped(encoding: Encoding) -> None:
    end = UNITS[encoding][-1]
    assert from_lsp_character(LINE, 1000, encoding) == len(LINE)
    assert from_lsp_character(LINE, -3, encoding) == 0
    assert to_lsp_character(LINE, 1000, encoding) == end
    assert to_lsp_character(LINE, -1, encoding) == 0
    assert from_lsp_character("", 5, encoding) == 0
    assert to_lsp_character("", 5, encoding) == 0


def _reference(text: str, encoding: Encoding) -> int:
    """Units counted by Python's own codecs."""
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-16":
        return len(text.encode("utf-16-le")) // 2
    return len(text)


encodings = st.sampled_from(ENCODINGS)


@settings(max_examples=1000)
@given(st.text(), st.data(), encodings)
def test_round_trip_and_codec_agreement(line: str, data: st.DataObject, encoding: Encoding) -> None:
    column = data.draw(st.integers(0, len(line)))
    character = to_lsp_character(line, column, encoding)
    assert character == _reference(line[:column], encoding)
    assert from_lsp_character(line, character, encoding) == column


@settings(max_examples=1000)
@given(st.text(), st.integers(-5, 200), encodings)
def test_any_character_maps_to_the_code_point_containing_it(
    line: str, character: int, encoding: Encoding
) -> None:
    column = from_lsp_character(line, character, encoding)
    assert 0 <= column <= len(line)
    # The column's code point starts at or before the unit, the next one after it.
    assert to_lsp_character(line, column, encoding) <= max(character, 0)
    if column < len(line):
        assert to_lsp_character(line, column + 1, encoding) > character


def test_a_document_reads_past_its_ends_as_empty_lines() -> None:
    doc = Document(Path("a.py"), ["x = 1", LINE], "tick:1")
    assert [doc.line(i) for i in (-1, 0, 1, 2)] == ["", "x = 1", LINE, ""]
    assert line_at(doc.lines, 5) == ""


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_document_converts_each_line_in_the_servers_units(encoding: Encoding) -> None:
    doc = Document(Path("a.py"), ["x = 1", LINE], "tick:1")
    for column, character in enumerate(UNITS[encoding]):
        assert doc.character(1, column, encoding) == character
        assert doc.column(1, character, encoding) == column
        assert column_at(doc.lines, 1, character, encoding) == column
    assert doc.column(0, 99, encoding) == 5  # clamped to the line
    assert doc.column(7, 3, encoding) == 0  # a line past the text


@given(st.text(max_size=30), st.integers(min_value=0, max_value=140))
@settings(max_examples=200, deadline=None)
def test_byte_columns_agree_with_decoding_the_prefix(line: str, byte: int) -> None:
    """Neovim's and `ast`'s byte columns: the code points wholly before the offset."""
    assert byte_column(line, byte) == len(line.encode("utf-8")[:byte].decode("utf-8", errors="ignore"))
