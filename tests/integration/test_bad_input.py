"""Bad input a careless agent sends gets the error that names its problem, on a real Neovim
with basedpyright and typescript-language-server: over-long paths and names, `file://`
URIs wherever a path goes, pages past the end, invalid new names, and a hint said once."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge.service import Response
from tests.integration.harness import Bridge, Pool, shop_bridge

pytestmark = pytest.mark.integration

TS_FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "ts_shop"


@pytest.fixture(scope="module")
def mixed(bridges: Pool) -> Bridge:
    """examples/shop (Python) with the TypeScript fixture in `web/`."""
    return shop_bridge(bridges, ("basedpyright", "ts_ls"), {"web": TS_FIXTURE})


def error_of(response: Response, code: str) -> str:
    """The error of a response; a request block's errors are tags in its response."""
    if response.mode == "request":
        assert f"/*<error:{code}>" in response.text, response.text
    else:
        assert response.error is not None, response.text
        assert response.error.code.value == code, response.text
    return response.text


def block(path: str, *lines: str) -> str:
    return "\n".join(["*** Begin Language Server Request", f"*** File: {path}", *lines,
                      "*** End Language Server Request"])


def text_request(bridge: Bridge, text: str) -> Response:
    return bridge.loop.run(bridge.service.handle_text(text))


# -- paths ------------------------------------------------------------------------------


def long_paths(root: Path) -> dict[str, tuple[str, str]]:
    """Paths the file system cannot have, with the limit each breaks."""
    name_max = os.pathconf(root, "PC_NAME_MAX")
    path_max = os.pathconf(root, "PC_PATH_MAX")
    return {
        "a 5,000-character path": ("a/" * 2500 + "x.py", f"limit of {path_max} bytes for a path (PATH_MAX)"),
        "a 300-character name": ("shop/" + "n" * 300 + ".py", f"limit of {name_max} bytes for a file name (NAME_MAX)"),
    }


@pytest.mark.parametrize("case", ["a 5,000-character path", "a 300-character name"])
def test_over_long_paths_and_names_are_invalid_requests_naming_the_limit(mixed: Bridge, case: str) -> None:
    path, limit = long_paths(mixed.root)[case]
    asks: list[Response] = [
        mixed.request({"mode": "hover", "locate": {"file_path": path, "find": "x"}}),
        mixed.request({"mode": "hover", "locate": f"{path}:Foo"}),
        mixed.request({"mode": "outline", "file_path": path}),
        mixed.request({"mode": "diagnostics", "file_path": path}),
        text_request(mixed, block(path, "@@ x", "^")),
    ]
    for response in asks:
        text = error_of(response, "invalid_request")
        assert limit in text, text
        assert "Errno" not in text and "malformed answer" not in text
        error = text[text.index("/*<error:"):] if response.mode == "request" else text  # after the echo
        assert len(error) < 1000, "the error quotes the path cut short"


def test_file_uris_are_decoded_wherever_a_path_goes(mixed: Bridge) -> None:
    uri = (mixed.root / "shop" / "models.py").as_uri()
    answers = [
        mixed.request({"mode": "hover", "locate": {"file_path": uri, "find": "class <|>Product"}}),
        mixed.request({"mode": "hover", "locate": f"{uri}:Product"}),
        mixed.request({"mode": "outline", "file_path": uri}),
        mixed.request({"mode": "outline", "file_path": (mixed.root / "shop").as_uri() + "/*.py"}),
        mixed.request({"mode": "diagnostics", "file_path": uri}),
    ]
    for response in answers:
        assert response.ok, response.text
    assert "(shop/models.py:7)" in answers[0].text and "(shop/models.py:7)" in answers[1].text
    assert answers[2].text.startswith("# Outline: shop/models.py") and "method: add, total, validate" in answers[2].text
    assert "shop/promotions.py" in answers[3].text
    request = text_request(mixed, block(uri, "@@ class Product:", "^ Product"))
    assert request.ok and "<hover:Product>" in request.text, request.text
    # A URI with a percent escape, and one naming no file: the file's own error.
    spaced = mixed.root / "shop" / "with space.py"
    spaced.write_text("VALUE = 1\n")
    try:
        hovered = mixed.request({"mode": "hover", "locate": f"{spaced.as_uri()}@<|>VALUE"})
        assert hovered.ok and "%20" in spaced.as_uri(), hovered.text
    finally:
        spaced.unlink()
    nope = (mixed.root / "shop" / "nope.py").as_uri()
    missing = error_of(mixed.request({"mode": "hover", "locate": f"{nope}:Product"}), "not_found")
    assert "no such file: shop/nope.py" in missing
    assert not (mixed.root / "file:").exists()


@pytest.mark.parametrize(
    ("path", "code", "words"),
    [
        ("file:///etc/passwd", "outside_workspace", "resolves to /etc/passwd, outside the workspace"),
        ("file://example.com/shop/models.py", "invalid_request", "names the host 'example.com'"),
        ("file:shop/models.py", "invalid_request", "is not a file URI"),
    ],
)
def test_file_uris_outside_or_remote_are_refused(mixed: Bridge, path: str, code: str, words: str) -> None:
    for response in (
        mixed.request({"mode": "hover", "locate": {"file_path": path, "find": "x"}}),
        text_request(mixed, block(path, "@@ x", "^")),
    ):
        assert words in error_of(response, code)
    assert not (mixed.root / "file:").exists()


def test_move_to_file_takes_a_file_uri_and_confines_it(mixed: Bridge, tmp_path: Path) -> None:
    promotions = mixed.root / "shop" / "promotions.py"
    before = promotions.read_text()
    selection = ("[@ def summer_sale(products: list[Product]) -> list[Product]:",
                 "@] return [sale.apply(product) for product in products]")
    elsewhere = tmp_path / "elsewhere" / "moved.py"
    refused = text_request(mixed, block("shop/promotions.py", *selection, f"! MOVE_TO_FILE {elsewhere.as_uri()}"))
    assert "error:outside_workspace" in refused.text, refused.text
    assert promotions.read_text() == before and not elsewhere.exists()
    assert not (mixed.root / "file:").exists(), "never a directory named `file:`"
    target = mixed.root / "shop" / "sales.py"
    moved = text_request(mixed, block("shop/promotions.py", *selection, f"! MOVE_TO_FILE {target.as_uri()}"))
    try:
        assert moved.ok and "*** File: shop/sales.py" in moved.text, moved.text
        assert "def summer_sale" in target.read_text() and "def summer_sale" not in promotions.read_text()
    finally:
        promotions.write_text(before)
        target.unlink(missing_ok=True)


def test_exclude_files_takes_a_file_uri_inside_and_refuses_one_outside(mixed: Bridge) -> None:
    catalog = mixed.root / "shop" / "catalog.py"
    preview = mixed.ask(mode="rename_preview", locate="shop/models.py:Product", new_name="Article")
    refused = mixed.request({"mode": "rename_execute", "rename_id": preview["rename_id"],
                             "exclude_files": ["file:///etc/*"]})
    assert "exclude_files pattern 'file:///etc/*' points outside the workspace" in error_of(
        refused, "outside_workspace")
    before = {p: p.read_text() for p in (mixed.root / "shop").glob("*.py")}
    try:
        done = mixed.ask(mode="rename_execute", rename_id=preview["rename_id"], exclude_files=[catalog.as_uri()])
        assert done["excluded"] == ["shop/catalog.py"]
        assert "Product" in catalog.read_text() and "class Article" in (mixed.root / "shop/models.py").read_text()
    finally:
        for path, text in before.items():
            path.write_text(text)
        mixed.request({"mode": "diagnostics", "file_path": "shop"})  # the servers see the texts back


# -- pages ------------------------------------------------------------------------------


PAGED: list[dict[str, Any]] = [
    {"mode": "references", "locate": "shop/models.py:Product", "max_items": 5},
    {"mode": "outline", "file_path": "shop/models.py", "max_items": 4},
    {"mode": "search", "query": "Product", "max_items": 2},
    {"mode": "definition", "locate": "shop/catalog.py:find@products: list[<|>Product]"},
    {"mode": "completion", "locate": "shop/checkout.py@order.<|>add", "max_items": 3},
    {"mode": "rename_preview", "locate": "shop/models.py:Product", "new_name": "Item", "max_items": 3},
    {"mode": "implementations", "locate": "web/src/pricing.ts:Priced", "max_items": 3},
    {"mode": "diagnostics", "file_path": "shop", "min_severity": "hint", "max_items": 1},  # keeps its analysis
]


@pytest.mark.parametrize("payload", PAGED, ids=[p["mode"] for p in PAGED])
def test_a_page_past_the_end_gives_the_total_and_the_last_page(mixed: Bridge, payload: dict[str, Any]) -> None:
    total = mixed.ask(**payload)["total"]
    assert total > 0
    past = mixed.request({**payload, "start_index": total + 990})
    text = error_of(past, "invalid_request")
    assert f"nothing at start_index {total + 990}: the {payload['mode']} answer has {total} item" in text
    assert "Next: the last page (item" in text
    last = json.loads(text.split("`")[-2])  # the exact request for the last page, as sent
    page = mixed.ask(**last)
    assert page["end"] == total and page["start"] == last["start_index"] + 1
    assert last["start_index"] == (total - 1) // payload.get("max_items", 50) * payload.get("max_items", 50)
    # JSON too: the same error as data.
    as_json = json.loads(mixed.request({**payload, "start_index": total, "format": "json"}).text)
    assert as_json["error"]["code"] == "invalid_request" and "the last page" in as_json["error"]["hint"]


def test_a_page_past_the_end_of_nothing_says_so(mixed: Bridge) -> None:
    payload = {"mode": "search", "query": "NoSuchSymbolAnywhere"}
    assert mixed.ask(**payload)["total"] == 0
    text = error_of(mixed.request({**payload, "start_index": 3}), "invalid_request")
    assert "nothing at start_index 3: the search answer has no items" in text
    assert '`{"mode":"search","query":"NoSuchSymbolAnywhere"}`' in text


# -- new names --------------------------------------------------------------------------


BAD_NAMES = {
    "a b": "it contains a space",
    "1abc": "it starts with a digit",
    "class": "`class` is a",
    "Client\nimport os": "it contains a line break",
    "x" * 100_000: "it is 100,000 characters long, over the limit of 255",
}


@pytest.mark.parametrize(("new_name", "problem"), list(BAD_NAMES.items()), ids=list(range(len(BAD_NAMES))))
@pytest.mark.parametrize(("anchor", "language"), [("shop/models.py:Product", "a Python name"),
                                                  ("web/src/pricing.ts:Item", "a TypeScript or JavaScript name")])
@pytest.mark.parametrize("mode", ["rename_preview", "rename"])
def test_invalid_new_names_are_refused_before_any_server(
        mixed: Bridge, mode: str, anchor: str, language: str, new_name: str, problem: str) -> None:
    before = {p: p.read_text() for p in mixed.root.rglob("*.[pt][ys]")}
    text = error_of(mixed.request({"mode": mode, "locate": anchor, "new_name": new_name}), "invalid_request")
    assert "cannot be the new name: " + problem in text
    assert f"Next: {language} is an identifier" in text
    assert "found nothing to rename" not in text and len(text) < 1500
    assert {p: p.read_text() for p in before} == before


def test_rename_to_in_the_text_format_checks_the_name_for_the_files_language(mixed: Bridge) -> None:
    for path, line, name, problem in (
        ("web/src/pricing.ts", "export class Item implements Priced {", "default", "reserved word"),
        ("shop/models.py", "class Product:", "None", "Python keyword"),
    ):
        response = text_request(mixed, block(path, f"@@ {line}", f"! Item RENAME_TO {name}"))
        assert f"cannot be the new name: `{name}` is a" in error_of(response, "invalid_request")
        assert problem in response.text


def test_a_name_the_server_refuses_is_reported_as_the_servers(mixed: Bridge) -> None:
    """`__debug__` is an identifier and no keyword, but Python cannot assign it: basedpyright
    accepts the position (prepareRename) and answers no edit for that name."""
    text = error_of(mixed.request({"mode": "rename_preview", "locate": "shop/models.py:Product",
                                   "new_name": "__debug__"}), "invalid_request")
    assert "basedpyright refused to rename `Product` to '__debug__'" in text
    assert "found nothing to rename" not in text


# -- hints ------------------------------------------------------------------------------


def test_a_symbol_path_typo_suggests_once(mixed: Bridge) -> None:
    text = error_of(mixed.request({"mode": "hover", "locate": "shop/models.py:Order.totl"}), "not_found")
    assert text.lower().count("did you mean") == 1, text
    assert "`Order.total`" in text
    outline = error_of(mixed.request({"mode": "outline", "file_path": "shop/models.py", "symbol_path": "Ordr"}),
                       "not_found")
    assert outline.lower().count("did you mean") == 1, outline
