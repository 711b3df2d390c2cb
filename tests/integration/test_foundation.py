"""Issue 2 on real parts: a headless Neovim 0.11 with basedpyright, and with pylsp."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge.gateway import LspCall
from lsap_bridge.workspace import path_of, uri_of

from .harness import Bridge

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module", params=["basedpyright", "pylsp"])
def bridge(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    import shutil

    from tests.conftest import EXAMPLE

    root = tmp_path_factory.mktemp(request.param) / "shop"
    shutil.copytree(EXAMPLE, root)
    bridge = Bridge(root, [request.param])
    assert bridge.servers == [request.param]
    yield bridge
    bridge.close()


def raw_references(bridge: Bridge, path: Path, line: int, character: int) -> set[tuple[str, int, int]]:
    """textDocument/references sent straight to the server through the same Neovim."""
    gateway = bridge.embedded.gateway
    bufnr = bridge.loop.run(gateway.open(path))
    clients = bridge.loop.run(gateway.wait_for_clients(bufnr, "textDocument/references"))
    params = {
        "textDocument": {"uri": uri_of(path)},
        "position": {"line": line, "character": character},
        "context": {"includeDeclaration": True},
    }
    answer = bridge.loop.run(gateway.lsp([LspCall(clients[0].id, "textDocument/references", params, bufnr)]))[0]
    assert answer.error is None
    return {
        (path_of(loc["uri"]).relative_to(bridge.root).as_posix(), loc["range"]["start"]["line"] + 1,
         loc["range"]["start"]["character"])
        for loc in answer.result
    }


def test_references_match_raw_lsp(bridge: Bridge) -> None:
    data = bridge.ask(mode="references", locate="shop/models.py@class <|>Product", max_items=500)
    ours = {(loc["path"], loc["line"]) for loc in bridge.request(
        {"mode": "references", "locate": "shop/models.py@class <|>Product", "max_items": 500}).locations}
    raw = raw_references(bridge, bridge.root / "shop/models.py", 6, 6)
    assert {(p, line) for p, line, _ in raw} == ours
    assert data["total"] == len(raw)
    assert len({p for p, _, _ in raw}) >= 4, "the class is used across several files"
    # Grouped by file and enclosing symbol.
    headers = {(g["path"], g["symbol"]) for g in data["groups"]}
    assert ("shop/promotions.py", "Promotion.apply") in headers
    assert ("shop/catalog.py", "find") in headers


def test_markdown_report_shape(bridge: Bridge) -> None:
    full = bridge.request({"mode": "references", "locate": "shop/models.py:Product", "compact": False}).text
    assert full.startswith("# References: `Product`")
    assert "### shop/promotions.py > Promotion.apply" in full
    assert "```python\n12|     def apply(self, product: Product) -> Product:" in full
    assert "references in 4 files" in full
    # Compact by default (issue 32): imports and annotation-only uses as path:line lists.
    text = bridge.request({"mode": "references", "locate": "shop/models.py:Product"}).text
    assert "imported in shop/*.py: catalog:3, checkout:4, promotions:3" in text
    assert "promotions:12,16" in text and "12|" not in text
    # The seed's form (issue 50): the anchor's place in the title, not printed again; a
    # `### path > Symbol.path` header per enclosing symbol; each use's line, no fences.
    assert text.startswith("# References: `Product` (shop/models.py:7) · "), text
    assert text.split("\n", 1)[0].endswith(" references in 4 files"), text
    assert "7| class Product:" not in text and "```" not in text
    assert "### shop/models.py > Product.discounted\n15| return Product(" in text


def test_paging_footer_gives_the_next_request(bridge: Bridge) -> None:
    first = bridge.ask(mode="references", locate="shop/models.py:Product", max_items=5)
    assert first["start"] == 1 and first["end"] == 5
    follow = json.loads(first["next"])
    second = bridge.ask(**{**follow})
    assert second["start"] == 6
    seen = [(g["path"], use["line"], use["column"]) for page in (first, second) for g in page["groups"]
            for use in g["uses"]]
    assert len(seen) == len(set(seen)) == 10


def test_unsaved_buffer_is_what_locate_sees(bridge: Bridge) -> None:
    path = bridge.root / "shop" / "promotions.py"
    anchor = "shop/promotions.py:Promotion.apply@return <|>product"
    before = bridge.ask(mode="locate", locate=anchor)
    bridge.lua(
        "local path = ...; local buf = vim.fn.bufadd(path); vim.fn.bufload(buf);"
        "vim.api.nvim_buf_set_lines(buf, 0, 0, false, {'# one', '# two', '# three'})",
        str(path),
    )
    try:
        after = bridge.ask(mode="locate", locate=anchor)
        assert after["line"] == before["line"] + 3
        assert "# one" not in path.read_text(), "nothing was written to disk"
    finally:
        bridge.lua("vim.api.nvim_buf_call(vim.fn.bufnr(...), function() vim.cmd('edit!') end)", str(path))


def test_non_ascii_before_symbol_locates_to_utf16_column(bridge: Bridge) -> None:
    # `note = "🧾 total: "; ... cheapest: Product` — the emoji is 2 UTF-16 units, 1 code point.
    data = bridge.ask(mode="locate", locate="shop/checkout.py@cheapest: <|>Product")
    line_text = (bridge.root / "shop/checkout.py").read_text().splitlines()[data["line"] - 1]
    column = line_text.index("cheapest: Product") + len("cheapest: ")
    assert data["column"] == column + 1
    target_client = bridge.loop.run(bridge.embedded.gateway.clients(
        bridge.loop.run(bridge.embedded.gateway.open(bridge.root / "shop/checkout.py"))))[0]
    utf16 = len(line_text[:column].encode("utf-16-le")) // 2
    assert utf16 == column + 1
    # The server, asked at that position, answers about Product: the column was converted right.
    hover = bridge.ask(mode="definition", locate="shop/checkout.py@cheapest: <|>Product")
    assert hover["definitions"][0]["symbol"] == "Product", target_client.name


def test_accented_text_before_symbol(bridge: Bridge) -> None:
    data = bridge.ask(mode="definition", locate='shop/catalog.py@CAFE = <|>Product("café crème", 2.5)')
    assert data["definitions"][0]["path"] == "shop/models.py"
    data = bridge.ask(mode="locate", locate='shop/catalog.py@"café crème", <|>2.5')
    assert data["column"] == len('CAFE = Product("café crème", ') + 1


def test_ambiguous_anchor_lists_every_candidate(bridge: Bridge) -> None:
    response = bridge.request({"mode": "locate", "locate": "shop/models.py@return <|>result"})
    assert response.error is not None and response.error.code.value == "ambiguous"
    assert [(c.line, c.symbol) for c in response.error.candidates] == [(31, "Order.total"), (35, "Order.validate")]
    assert "# Error: ambiguous" in response.text and "Order.validate" in response.text
    assert "scope" in response.text


def test_missing_anchor_is_not_found_with_closest(bridge: Bridge) -> None:
    response = bridge.request({"mode": "locate", "locate": "shop/models.py@completely absent text here"})
    assert response.error is not None and response.error.code.value == "not_found"
    response = bridge.request({"mode": "locate", "locate": "shop/models.py:Order.totl@return"})
    assert response.error is not None and response.error.code.value == "not_found"
    assert "Order.total" in response.error.suggestions


@pytest.mark.parametrize(
    ("find", "tier"),
    [
        ("retrun result", "fuzzy"),
        ("return    result", "whitespace"),
        ("for product,quantity in self.lines", "whitespace"),
    ],
)
def test_near_miss_resolves_and_says_so(bridge: Bridge, find: str, tier: str) -> None:
    data = bridge.ask(mode="locate", locate={"file_path": "shop/models.py",
                                              "scope": {"symbol_path": ["Order", "total"]}, "find": find})
    assert data["approximate"]["tier"] == tier
    assert data["symbol"] == "Order.total"
    text = bridge.request({"mode": "locate", "locate": {"file_path": "shop/models.py",
                           "scope": {"symbol_path": ["Order", "total"]}, "find": find}}).text
    assert "Approximate match" in text


def test_a_pasted_report_line_settles_which_return_and_a_case_slip_resolves(bridge: Bridge) -> None:
    data = bridge.ask(mode="locate", locate="shop/models.py@35|         return <|>result")
    assert (data["line"], data["column"], data["symbol"]) == (35, 16, "Order.validate")
    assert "approximate" not in data and "note" not in data
    data = bridge.ask(mode="locate", locate="shop/models.py@def <|>VALIDATE(self)")
    assert (data["line"], data["approximate"]["tier"]) == (33, "case")
    text = bridge.request({"mode": "locate", "locate": "shop/models.py@def <|>VALIDATE(self)"}).text
    assert "letter case or identifier style" in text


def test_curly_quotes_resolve(bridge: Bridge) -> None:
    data = bridge.ask(mode="locate", locate="shop/catalog.py@Product(“croissant”, 1.2)")
    assert data["line"] == 5
    assert data["approximate"]["tier"] == "unicode"


def test_hover_and_definition(bridge: Bridge) -> None:
    data = bridge.ask(mode="hover", locate="shop/checkout.py:checkout@order = <|>Order()")
    assert "Order" in data["hover"]
    data = bridge.ask(mode="definition", locate="shop/checkout.py:checkout@order = <|>Order()")
    assert [(d["path"], d["symbol"]) for d in data["definitions"]] == [("shop/models.py", "Order")]


@pytest.mark.parametrize(
    ("payload", "code", "words"),
    [
        ({"mode": "refrences", "locate": "shop/models.py:Product"},
         "invalid_request", ["unknown mode", "references"]),
        ({"mode": "references", "locate": "shop/models.py:Product", "colour": 1},
         "invalid_request", ["unknown field `colour`"]),
        ({"mode": "references", "locate": "shop/models.py:Product", "max_items": "many"},
         "invalid_request", ["max_items"]),
        ({"mode": "references", "locate": {"file_path": 3, "find": "x"}}, "invalid_request", ["file_path"]),
        ({"mode": "references", "locate": "../../etc/passwd@root"}, "outside_workspace", ["outside the workspace"]),
        ({"mode": "references", "locate": "/etc/passwd@root"}, "outside_workspace", ["outside the workspace"]),
        ({"mode": "references", "locate": "shop/nope.py@x"}, "not_found", ["no such file"]),
        ({"mode": "references", "locate": {"file_path": "shop/models.py", "find": "  "}},
         "invalid_request", ["find is empty"]),
        ({"mode": "references", "locate": "shop/models.py@a <|> b <|> c"}, "invalid_request", ["<|>"]),
        ({"mode": "references"}, "invalid_request", ["missing field `locate`"]),
    ],
)
def test_bad_input_gets_a_clear_error_and_the_session_keeps_working(
    bridge: Bridge, payload: dict[str, Any], code: str, words: list[str]
) -> None:
    response = bridge.request(payload)
    assert response.error is not None, response.text
    assert response.error.code.value == code, response.text
    for word in words:
        assert word in response.text
    assert response.text.startswith(f"# Error: {code}")
    assert bridge.request({"mode": "locate", "locate": "shop/models.py:Product"}).ok
