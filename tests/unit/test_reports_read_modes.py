"""Golden files for the read-only modes' templates (issue 3), and their pure helpers."""

from __future__ import annotations

from typing import Any

import pytest
from lsprotocol import types

from lsap_bridge.capabilities.completion import completion_items
from lsap_bridge.capabilities.search import SearchRequest, rank
from lsap_bridge.capabilities.signature_help import signatures
from lsap_bridge.capabilities.types import header_names
from lsap_bridge.decode import completions
from lsap_bridge.errors import LsapError
from lsap_bridge.jsonvalue import Json
from lsap_bridge.lsp import decoded, structure
from tests.golden import assert_report_golden

ANCHOR: dict[str, Any] = {
    "anchor": "shop/catalog.py:find",
    "path": "shop/catalog.py",
    "line": 9,
    "column": 5,
    "symbol": "find",
    "text": "def find(name: str, products: list[Product]) -> Product | None:",
    "server": "basedpyright",
    "partial": False,
}


def row(name: str, depth: int = 1, **extra: Any) -> dict[str, Any]:
    base = {
        "depth": depth,
        "name": name,
        "kind": "function",
        "detail": "",
        "path": "shop/checkout.py",
        "line": 7,
        "external": False,
        "repeat": False,
        "site_path": "shop/checkout.py",
        "sites": [10],
        "site_text": "product = find(name, everything())",
    }
    return {**base, **extra}


CALLS = {
    **ANCHOR,
    "name": "find",
    "depth": 2,
    "roots": [{"name": "find", "kind": "function", "path": "shop/catalog.py", "line": 9}],
    "sections": [
        {
            "direction": "incoming",
            "external": 0,
            "dropped": 0,
            "rows": [
                row("checkout"),
                row(
                    "main",
                    2,
                    path="shop/cli.py",
                    line=3,
                    site_path="shop/cli.py",
                    sites=[5, 8],
                    site_text="checkout(sys.argv[1:])",
                ),
            ],
        },
        {
            "direction": "outgoing",
            "external": 2,
            "dropped": 3,
            "rows": [row("find", 1, repeat=True, path="shop/catalog.py", line=9)],
        },
    ],
}

CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "inlay_hints_cut.md": (
        "inlay_hints",
        {
            "anchor": "big.py:1,0",
            "path": "big.py",
            "first": 1,
            "last": 1,
            "count": 0,
            "hinted_lines": 0,
            "server": "basedpyright",
            "partial": True,
            "language": "python",
            "cut": 600,
            "next_range": '{"mode": "inlay_hints", "file_path": "big.py", "start_line": 2}',
            "lines": [{"number": 1, "text": "import os"}],
        },
    ),
    "implementations_paged.md": (
        "definition",
        {
            **ANCHOR,
            "name": "Priced",
            "kind_label": "implementation",
            "external": [],
            "total": 4,
            "start": 1,
            "end": 1,
            "next": '{"mode":"implementations","locate":"src/pricing.ts:Priced","start_index":1}',
            "definitions": [
                {
                    "path": "src/pricing.ts",
                    "line": 7,
                    "symbol": "Item",
                    "kind": "class",
                    "language": "typescript",
                    "truncated": 0,
                    "members": [],
                    "lines": [{"number": 7, "text": "export class Item implements Priced {"}],
                }
            ],
        },
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_template_golden(name: str) -> None:
    assert_report_golden(name, *CASES[name])


def test_header_names_skip_keyword_arguments_and_the_body() -> None:
    line = "class Bread(Perishable, abc.ABC, metaclass=Meta):"
    assert [name for _, name in header_names(line, line.index("("))] == ["Perishable", "abc", "ABC"]
    ts = "export class WeighedItem extends Item implements Priced { x = 1 }"
    names = [name for _, name in header_names(ts, ts.index("WeighedItem") + len("WeighedItem"))]
    assert names == ["Item", "Priced"]  # the keywords are no candidates (issue 50)


def test_search_rank_prefers_exact_then_declarations() -> None:
    names = [
        ("product", "variable"),
        ("Product", "class"),
        ("ProductList", "class"),
        ("myProduct", "function"),
    ]
    ordered = sorted(names, key=lambda n: rank("Product", *n))
    assert ordered == [
        ("Product", "class"),
        ("product", "variable"),
        ("ProductList", "class"),
        ("myProduct", "function"),
    ]


def test_search_kinds_validated_and_comma_separated() -> None:
    assert SearchRequest.model_validate({"query": "x", "kinds": "class, function"}).kinds == [
        "class",
        "function",
    ]
    with pytest.raises(ValueError, match="unknown kinds"):
        SearchRequest.model_validate({"query": "x", "kinds": ["klass"]})


def test_signature_parameters_given_as_offsets() -> None:
    result = {
        "signatures": [
            {"label": "f(a: int, b: str)", "parameters": [{"label": [2, 8]}, {"label": [10, 16]}]}
        ],
        "activeSignature": 0,
        "activeParameter": 1,
    }
    [sig] = (s.model_dump() for s in signatures(structure(result, types.SignatureHelp, "s", "sig")))
    assert [(p["label"], p["active"]) for p in sig["parameters"]] == [
        ("a: int", False),
        ("b: str", True),
    ]


def test_completion_items_follow_sort_text_and_join_details() -> None:
    rows, incomplete = completion_items(completions(
        {
            "isIncomplete": True,
            "items": [
                {"label": "zeta", "sortText": "1", "kind": 2},
                {
                    "label": "alpha",
                    "sortText": "2",
                    "kind": 6,
                    "labelDetails": {"description": "int"},
                    "detail": "x",
                },
            ],
        }
    ))
    assert incomplete
    assert [row.model_dump() for row in rows] == [
        {"label": "zeta", "kind": "method", "detail": ""},
        {"label": "alpha", "kind": "variable", "detail": "int x"},
    ]
    assert completion_items(completions([{"label": "b", "kind": 99}, {"label": "a"}]))[0][0].kind == ""


@pytest.mark.parametrize("answer", [
    {"items": [{"kind": 2}]},  # no label
    {"items": [{"label": 3}]},
    {"items": [{"label": "a", "labelDetails": "int"}]},
    {"items": 5},
    "items",
])
def test_a_malformed_completion_answer_is_the_servers_error(answer: Json) -> None:
    with pytest.raises(LsapError, match="s answered textDocument/completion with a malformed answer"):
        decoded(completions, answer, "s", "textDocument/completion")
