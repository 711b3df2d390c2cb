"""Golden files for the read-only modes' templates (issue 3), and their pure helpers."""

from __future__ import annotations

from typing import Any

import pytest

from lsap_bridge.capabilities.completion import completion_items
from lsap_bridge.capabilities.search import SearchRequest, rank
from lsap_bridge.capabilities.signature_help import signatures
from lsap_bridge.capabilities.types import header_names
from lsap_bridge.render import render_markdown
from tests.golden import assert_report_golden, check_report_shape

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
    "calls.md": ("calls", CALLS),
    "calls_none.md": (
        "calls",
        {**CALLS, "sections": [{"direction": "outgoing", "external": 1, "dropped": 0, "rows": []}]},
    ),
    "inspect.md": (
        "inspect",
        {
            **ANCHOR,
            "name": "find",
            "hover": "```python\n(function) def find(name: str, products: list) -> Product\n```"
            "\n---\nThe product with this name, if any.",
            "definition": {
                "path": "shop/catalog.py",
                "line": 9,
                "symbol": "find",
                "kind": "function",
                "language": "python",
                "truncated": 0,
                "members": [],
                "lines": [
                    {
                        "number": 9,
                        "text": "def find(name: str, products: list[Product]) -> Product | None:",
                    },
                    {"number": 10, "text": '    """The product with this name, if any."""'},
                ],
            },
            "references": {"total": 2, "files": 1, "external": 0},
            "callers": {"rows": [row("checkout")], "external": 0, "dropped": 0},
            "callees": {"rows": [], "external": 1, "dropped": 0},
            "lacking": [],
            "more": {
                "references": '{"mode": "references", "locate": "shop/catalog.py:find"}',
                "calls": '{"mode": "calls", "locate": "shop/catalog.py:find", "depth": 2}',
            },
        },
    ),
    "inspect_lacking.md": (
        "inspect",
        {
            **ANCHOR,
            "name": "find",
            "server": "pylsp",
            "hover": "",
            "definition": None,
            "references": None,
            "callers": None,
            "callees": None,
            "lacking": ["pylsp lacks textDocument/prepareCallHierarchy"],
            "more": {
                "references": '{"mode": "references", "locate": "shop/catalog.py:find"}',
                "calls": "",
            },
        },
    ),
    "outline_file.md": (
        "outline",
        {
            "target": "shop/models.py",
            "scope": None,
            "many": False,
            "files": 1,
            "more_files": 0,
            "lacking": [],
            "total": 3,
            "start": 1,
            "end": 3,
            "groups": [
                {
                    "path": "shop/models.py",
                    "symbols": [
                        {
                            "line": 7,
                            "kind": "class",
                            "symbol": "Product",
                            "detail": "",
                            "children": 0,
                        },
                        {
                            "line": 13,
                            "kind": "method",
                            "symbol": "Product.discounted",
                            "detail": "(percent: float)",
                            "children": 0,
                        },
                        {
                            "line": 19,
                            "kind": "class",
                            "symbol": "Order",
                            "detail": "",
                            "children": 0,
                        },
                    ],
                }
            ],
        },
    ),
    "outline_directory_paged.md": (
        "outline",
        {
            "target": "shop",
            "scope": None,
            "many": True,
            "files": 2,
            "more_files": 0,
            "lacking": ["1 typescript file(s): no language server is attached to web/app.ts"],
            "total": 9,
            "start": 1,
            "end": 2,
            "next": '{"mode":"outline","file_path":"shop","start_index":2,"pagination_id":"9f8e"}',
            "groups": [
                {
                    "path": "shop/models.py",
                    "symbols": [
                        {
                            "line": 7,
                            "kind": "class",
                            "symbol": "Product",
                            "detail": "",
                            "children": 3,
                        },
                        {
                            "line": 19,
                            "kind": "class",
                            "symbol": "Order",
                            "detail": "",
                            "children": 1,
                        },
                    ],
                }
            ],
        },
    ),
    "search.md": (
        "search",
        {
            "query": "Product",
            "kinds": ["class", "function"],
            "servers": ["basedpyright", "ts_ls"],
            "lacking": [],
            "external": 4,
            "total": 2,
            "start": 1,
            "end": 2,
            "symbols": [
                {
                    "name": "Product",
                    "kind": "class",
                    "container": None,
                    "path": "shop/models.py",
                    "line": 7,
                },
                {
                    "name": "discounted",
                    "kind": "method",
                    "container": "Product",
                    "path": "shop/models.py",
                    "line": 13,
                },
            ],
        },
    ),
    "search_empty.md": (
        "search",
        {
            "query": "Basket",
            "kinds": None,
            "servers": ["basedpyright"],
            "lacking": [],
            "external": 0,
            "total": 0,
            "start": 0,
            "end": 0,
            "symbols": [],
        },
    ),
    "types_derived.md": (
        "types",
        {
            **ANCHOR,
            "name": "Bread",
            "depth": 2,
            "roots": [{"name": "Bread", "kind": "class", "path": "shop/kinds.py", "line": 16}],
            "derived": "basedpyright lacks textDocument/prepareTypeHierarchy",
            "sections": [
                {
                    "direction": "supertypes",
                    "external": 1,
                    "dropped": 0,
                    "rows": [
                        row(
                            "Perishable",
                            kind="class",
                            path="shop/kinds.py",
                            line=8,
                            site_path="shop/kinds.py",
                            sites=[16],
                            site_text="class Bread(Perishable):",
                        )
                    ],
                },
                {"direction": "subtypes", "external": 0, "dropped": 0, "rows": []},
            ],
        },
    ),
    "inlay_hints.md": (
        "inlay_hints",
        {
            "anchor": "shop/checkout.py:checkout",
            "path": "shop/checkout.py",
            "first": 7,
            "last": 8,
            "count": 2,
            "hinted_lines": 1,
            "server": "basedpyright",
            "partial": False,
            "language": "python",
            "cut": 0,
            "next_range": None,
            "lines": [
                {"number": 7, "text": "def checkout(names: list[str]) -> Order:"},
                {
                    "number": 8,
                    "text": "    order/*<inlay>: Order</inlay>*/ = Order(/*<inlay>x=</inlay>*/1)",
                },
            ],
        },
    ),
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
    "signature_help.md": (
        "signature_help",
        {
            **ANCHOR,
            "language": "python",
            "signatures": [
                {
                    "label": "(name: str, products: list[Product]) -> (Product | None)",
                    "docs": "The product with this name, if any.",
                    "active": True,
                    "parameters": [
                        {"label": "name: str", "docs": "", "active": False},
                        {
                            "label": "products: list[Product]",
                            "docs": "where to look",
                            "active": True,
                        },
                    ],
                }
            ],
        },
    ),
    "signature_help_none.md": (
        "signature_help",
        {**ANCHOR, "language": "python", "signatures": []},
    ),
    "completion_paged.md": (
        "completion",
        {
            **ANCHOR,
            "incomplete": True,
            "total": 29,
            "start": 1,
            "end": 2,
            "next": '{"mode":"completion","locate":"shop/checkout.py@order.<|>","start_index":2}',
            "items": [
                {
                    "label": "add",
                    "kind": "method",
                    "detail": "(product: Product, quantity: int = 1) -> None",
                },
                {"label": "lines", "kind": "variable", "detail": ""},
            ],
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
    assert names == ["extends", "Item", "implements", "Priced"]


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
    [sig] = signatures(result)
    assert [(p["label"], p["active"]) for p in sig["parameters"]] == [
        ("a: int", False),
        ("b: str", True),
    ]


def test_completion_items_follow_sort_text_and_join_details() -> None:
    rows, incomplete = completion_items(
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
    )
    assert incomplete
    assert rows == [
        {"label": "zeta", "kind": "method", "detail": ""},
        {"label": "alpha", "kind": "variable", "detail": "int x"},
    ]


def test_server_docs_keep_the_report_rules() -> None:
    hover = "```python\n#### not a heading in code\n```\n#### Examples\n```\nf(1)\n```"
    text = render_markdown("inspect", {**CASES["inspect.md"][1], "hover": hover})
    assert "**Examples**" in text and "#### not a heading in code" in text
    assert "```text\nf(1)\n```" in text
    assert check_report_shape(text) == []
