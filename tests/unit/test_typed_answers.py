"""Servers' answers decoded once, where they come back, into lsprotocol's types (issue 49,
item 2; doc/architecture.md, Typed LSP data): every shape an answer may take, and an answer
of another shape as the server's error, never a KeyError."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from lsap_bridge.decode import location_count, location_files, locations, packed_locations
from lsap_bridge.errors import ErrorCode, LsapError
from lsap_bridge.jsonvalue import Json
from lsap_bridge.lsp import decoded
from lsap_bridge.symbols import PackedSymbols, build_tree, document_symbols

SYMBOLS = "textDocument/documentSymbol"
REFERENCES = "textDocument/references"


def rng(sl: int, sc: int, el: int, ec: int) -> Json:
    return {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}


def test_document_symbols_of_every_shape_become_one_tree_in_code_points() -> None:
    lines = ["class Café:", "    def émoji_😀(self): pass"]
    nested: Json = [{"name": "Café", "kind": 5, "range": rng(0, 0, 1, 28), "selectionRange": rng(0, 6, 0, 10),
                     "children": [{"name": "émoji_😀", "kind": 6, "detail": "()", "range": rng(1, 4, 1, 28),
                                   "selectionRange": rng(1, 8, 1, 16)}]}]
    flat: Json = [{"name": "Café", "kind": 5, "location": {"uri": "file:///a.py", "range": rng(0, 0, 1, 28)}},
                  {"name": "émoji_😀", "kind": 6, "location": {"uri": "file:///a.py", "range": rng(1, 4, 1, 28)}}]
    packed: Json = {"symbols": [["Café", "émoji_😀"], ["", "()"],
                                [0, 5, 0, 0, 1, 28, 0, 6, 0, 10, 1, 6, 1, 4, 1, 28, 1, 8, 1, 16]]}
    assert isinstance(document_symbols(packed), PackedSymbols)
    trees = {name: build_tree(decoded(document_symbols, answer, "srv", SYMBOLS), lines, "utf-16")
             for name, answer in (("nested", nested), ("flat", flat), ("packed", packed))}
    shapes = {name: [(path, s.kind, s.span) for path, s in tree.walk()] for name, tree in trees.items()}
    assert shapes["nested"] == shapes["flat"] == shapes["packed"] == [
        (("Café",), 5, (0, 0, 1, 27)), (("Café", "émoji_😀"), 6, (1, 4, 1, 27))]
    [(_, method)] = [(p, s) for p, s in trees["nested"].walk() if s.kind == 6]
    assert (method.selection, method.detail) == ((1, 8, 1, 15), "()")  # the 😀 is two UTF-16 units
    unknown = document_symbols([{"name": "x", "kind": 99, "range": rng(0, 0, 0, 1)}])
    assert [s.kind for _, s in build_tree(unknown, ["x"], "utf-16").walk()] == [99]  # kept, as LSP asks


@pytest.mark.parametrize("answer", [
    [{"name": "f", "kind": 12}],  # no range
    [{"name": 3, "kind": 12, "range": rng(0, 0, 0, 1)}],
    [{"name": "f", "kind": 12, "range": rng(0, -1, 0, 1)}],
    [{"name": "f", "kind": 12, "location": {"uri": "file:///a.py"}}],
    [{"name": "f", "kind": 12, "range": rng(0, 0, 0, 1), "children": {}}],
    {"symbols": 5},
    "symbols",
])
def test_a_malformed_symbol_answer_is_the_servers_error(answer: Json) -> None:
    with pytest.raises(LsapError, match=f"srv answered {SYMBOLS} with a malformed answer") as raised:
        decoded(document_symbols, answer, "srv", SYMBOLS)
    assert raised.value.code is ErrorCode.SERVER_ERROR


def test_locations_of_either_shape_are_the_same_files_and_ranges(tmp_path: Path) -> None:
    a, b = (tmp_path / "a.py").as_uri(), (tmp_path / "b.py").as_uri()
    plain: Json = [{"uri": b, "range": rng(3, 1, 3, 4)}, {"uri": a, "range": rng(0, 2, 0, 5)},
                   {"targetUri": a, "targetRange": rng(0, 0, 9, 0), "targetSelectionRange": rng(5, 0, 5, 3)},
                   {"uri": "untitled:1", "range": rng(0, 0, 0, 1)},  # not a file: left out
                   {"uri": a, "range": rng(-1, 0, 0, 1)}, 7]  # as packing.lua leaves them out
    packed: Json = {"packed": [[b, [3, 1, 3, 4]], [a, [0, 2, 0, 5, 5, 0, 5, 3]]]}
    typed = decoded(locations, plain, "srv", REFERENCES)
    assert [(use.uri, use.range.start.line) for use in typed] == [(b, 3), (a, 0), (a, 5)]
    assert location_files(typed) == location_files(decoded(packed_locations, packed, "srv", REFERENCES)) == [
        (tmp_path / "a.py", [(0, 2, 0, 5), (5, 0, 5, 3)]), (tmp_path / "b.py", [(3, 1, 3, 4)])]
    assert location_count(packed_locations(packed)) == location_count(packed_locations(plain)) == 3
    assert location_count(packed_locations(None)) == 0
    assert locations(None) == [] and len(locations({"uri": a, "range": rng(0, 0, 0, 1)})) == 1


@pytest.mark.parametrize(("read", "answer"), [
    (locations, "file:///a.py"),
    (locations, 3),
    (packed_locations, "file:///a.py"),
    (packed_locations, {"packed": [["file:///a.py", [0, 0, 0]]]}),
    (packed_locations, {"packed": [["file:///a.py"]]}),
    (packed_locations, {"packed": 1}),
])
def test_a_malformed_location_answer_is_the_servers_error(read: Callable[[Json], object], answer: Json) -> None:
    with pytest.raises(LsapError, match=f"srv answered {REFERENCES} with a malformed answer"):
        decoded(read, answer, "srv", REFERENCES)
