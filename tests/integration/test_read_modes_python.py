"""Issue 3, the read-only modes on Python: basedpyright (and pylsp where it differs)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLE

from .harness import Bridge

pytestmark = pytest.mark.integration

KINDS = '''"""Kinds of products: a small class hierarchy."""

from abc import ABC

from .models import Product


class Perishable(Product, ABC):
    """A product with a shelf life."""

    def expires(self) -> int:
        return 3


class Bread(Perishable):
    def expires(self) -> int:
        return 1


def loaf() -> Bread:
    return Bread("loaf", 2.0)


def ping(n: int) -> int:
    return pong(n - 1)


def pong(n: int) -> int:
    return ping(n) if n > 0 else 0
'''

USES = 300


def generated() -> str:
    """A file with one function used USES times and USES functions named alike."""
    lines = ["def tick(n: int) -> int:", "    return n", "", ""]
    lines += [f"def tock_{i:03}() -> int:\n    return tick({i})\n\n" for i in range(USES)]
    return "\n".join(lines)


def make_project(base: Path) -> Path:
    root = base / "shop"
    shutil.copytree(EXAMPLE, root)
    (root / "shop" / "kinds.py").write_text(KINDS)
    (root / "shop" / "many.py").write_text(generated())
    return root


@pytest.fixture(scope="module")
def py(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    bridge = Bridge(make_project(tmp_path_factory.mktemp("basedpyright")), ["basedpyright"])
    yield bridge
    bridge.close()


def markdown(bridge: Bridge, **payload: Any) -> str:
    response = bridge.request(payload)
    assert response.ok, response.text
    return response.text


# -- definition kinds ----------------------------------------------------------------


def test_declaration_of_an_import_shows_the_function(py: Bridge) -> None:
    data = py.ask(
        mode="declaration", locate="shop/checkout.py@from .catalog import everything, <|>find"
    )
    [found] = data["definitions"]
    assert (found["path"], found["symbol"], found["kind"]) == (
        "shop/catalog.py",
        "find",
        "function",
    )
    # An agent's default is the place and the signature; `max_code_lines` shows the code.
    assert [line["text"] for line in found["lines"]] == [
        "def find(name: str, products: list[Product]) -> Product | None:"]
    asked = py.ask(mode="declaration", locate="shop/checkout.py@from .catalog import everything, <|>find",
                   max_code_lines=40)
    assert any("for product in products:" in line["text"] for line in asked["definitions"][0]["lines"])


def test_an_agents_definition_is_its_place_and_signature(py: Bridge) -> None:
    """Issue 50: where a name is defined, for an agent, is the place and the signature (a
    decorator and a signature over several lines whole), the rest counted with the request
    that shows it; a name defined inside a function is its own statement, not the function's."""
    (py.root / "shop" / "heads.py").write_text(
        "import functools\n\n\n@functools.cache\ndef priced(\n    name: str,\n    price: float,\n) -> str:\n"
        "    label = f'{name}: {price}'\n    return label\n\n\nVALUE = priced(\n    'a', 1.0)\n")
    text = py.request({"mode": "definition", "locate": "shop/heads.py@VALUE = <|>priced("}).text
    assert text == ("# Definition: shop/heads.py > priced\n4| @functools.cache\n5| def priced(\n6|     name: str,\n"
                         "7|     price: float,\n8| ) -> str:\n"
                         "+2 lines: `\"max_code_lines\": 7`\n"), text
    local = py.request({"mode": "definition", "locate": "shop/heads.py@return <|>label"}).text
    assert local == ("# Definition: shop/heads.py > priced.label\n9|     label = f'{name}: {price}'\n"), local


def test_type_definition_of_a_variable_is_its_class(py: Bridge) -> None:
    data = py.ask(mode="type_definition", locate="shop/checkout.py@<|>order = Order()")
    [found] = data["definitions"]
    assert (found["path"], found["symbol"]) == ("shop/models.py", "Order")
    assert data["kind_label"] == "type definition"


def test_implementations_of_an_overridden_method(py: Bridge) -> None:
    data = py.ask(mode="implementations", locate="shop/kinds.py:Perishable.expires")
    symbols = {d["symbol"] for d in data["definitions"]}
    assert "Bread.expires" in symbols
    text = markdown(py, mode="implementations", locate="shop/kinds.py:Perishable.expires")
    # The title names the symbol; each block's header says where it is.
    assert text.startswith("# Implementation: `Perishable.expires` · 2 implementations\n"
                           "### shop/kinds.py > Perishable.expires\n"), text


# -- inspect --------------------------------------------------------------------------


def test_inspect_gathers_signature_code_callers_and_reference_count(py: Bridge) -> None:
    data = py.ask(mode="inspect", locate="shop/models.py:Order.total")
    assert "def total(self" in data["hover"]
    assert data["definition"]["symbol"] == "Order.total"
    assert any(
        "result += product.price * quantity" in line["text"] for line in data["definition"]["lines"]
    )
    assert data["references"] == {"total": 1, "files": 1, "external": 0}
    assert [r["name"] for r in data["callers"]["rows"]] == ["receipt"]
    assert data["callers"]["rows"][0]["site_text"].find("order.total()") >= 0
    assert data["callees"]["rows"] == []


# -- outline --------------------------------------------------------------------------


def test_outline_of_a_file_flattens_paths_and_leaves_locals_out(py: Bridge) -> None:
    data = py.ask(mode="outline", file_path="shop/models.py")
    symbols = [s["symbol"] for g in data["groups"] for s in g["symbols"]]
    assert symbols[:4] == ["Product", "Product.name", "Product.price", "Product.discounted"]
    assert "Order.total" in symbols and "Order.total.result" not in symbols
    text = markdown(py, mode="outline", file_path="shop/models.py")
    # Agents' form (issue 50): members under their class, one line per kind.
    assert "19| class Order\n" in text and "  method: add, total, validate\n" in text, text


def test_outline_of_a_directory_a_glob_and_a_symbol(py: Bridge) -> None:
    directory = py.ask(mode="outline", file_path="shop", max_items=500, max_tokens=100_000)  # all in one page
    assert {g["path"] for g in directory["groups"]} >= {
        "shop/models.py",
        "shop/kinds.py",
        "shop/catalog.py",
    }
    models = next(g for g in directory["groups"] if g["path"] == "shop/models.py")
    assert [(s["symbol"], s["children"]) for s in models["symbols"]] == [
        ("Product", 3),
        ("Order", 4),
    ]
    glob = py.ask(mode="outline", file_path="shop/k*.py")
    assert [g["path"] for g in glob["groups"]] == ["shop/kinds.py"]
    scoped = py.ask(mode="outline", file_path="shop/models.py", symbol_path=["Order", "total"])
    assert [s["symbol"] for s in scoped["groups"][0]["symbols"]][:2] == [
        "Order.total",
        "Order.total.result",
    ]


def test_outline_bare_argument_from_the_cli_form(py: Bridge) -> None:
    response = py.request({"mode": "outline", "locate": "shop/catalog.py"})
    assert response.ok, response.text
    assert "function: find," in response.text, response.text


def test_outline_missing_symbol_suggests(py: Bridge) -> None:
    response = py.request(
        {"mode": "outline", "file_path": "shop/models.py", "symbol_path": "Order.totl"}
    )
    assert response.error is not None and response.error.code.value == "not_found"
    assert "Order.total" in response.error.suggestions


# -- search and paging ------------------------------------------------------------------


def test_search_ranks_the_exact_name_first_and_filters_kinds(py: Bridge) -> None:
    data = py.ask(mode="search", query="Product")
    assert (data["symbols"][0]["name"], data["symbols"][0]["kind"]) == ("Product", "class")
    classes = py.ask(mode="search", query="r", kinds=["class"])
    assert {s["name"] for s in classes["symbols"]} == {
        "Perishable",
        "Bread",
        "Promotion",
        "Order",
        "Product",
    }
    assert {s["kind"] for s in classes["symbols"]} == {"class"}
    response = py.request({"mode": "search", "locate": "Bread"})  # `lsap search Bread`
    assert response.ok and "class `Bread`" in response.text


def test_paging_search_returns_every_item_exactly_once(py: Bridge) -> None:
    seen: list[str] = []
    request: dict[str, Any] = {
        "mode": "search",
        "query": "tock_",
        "kinds": ["function"],
        "max_items": 50,
    }
    pages = 0
    while True:
        data = py.ask(**request)
        seen += [s["name"] for s in data["symbols"]]
        pages += 1
        if "next" not in data:
            break
        request = json.loads(data["next"])
    assert pages == USES // 50
    assert sorted(seen) == [f"tock_{i:03}" for i in range(USES)]


def test_paging_references_returns_every_use_exactly_once(py: Bridge) -> None:
    seen: list[int] = []
    request: dict[str, Any] = {
        "mode": "references",
        "locate": "shop/many.py:tick",
        "max_items": 50,
        "include_declaration": False,
    }
    while True:
        data = py.ask(**request)
        seen += [use["line"] for group in data["groups"] for use in group.get("uses", [])] or [
            line["number"] for group in data["groups"] for line in group["lines"]
        ]
        if "next" not in data:
            break
        request = json.loads(data["next"])
    assert data["total"] == USES
    assert len(seen) == USES and len(set(seen)) == USES


# -- calls and types ------------------------------------------------------------------


def test_calls_both_directions_with_call_sites(py: Bridge) -> None:
    data = py.ask(mode="calls", locate="shop/catalog.py:find")
    incoming, outgoing = data["sections"]
    assert [(r["name"], r["path"], r["sites"]) for r in incoming["rows"]] == [
        ("checkout", "shop/checkout.py", [10])
    ]
    assert outgoing["rows"] == []


def test_calls_show_a_cycle_once(py: Bridge) -> None:
    data = py.ask(mode="calls", locate="shop/kinds.py:ping", direction="outgoing", depth=4)
    rows = data["sections"][0]["rows"]
    assert [(r["name"], r["depth"], r["repeat"]) for r in rows] == [
        ("pong", 1, False),
        ("ping", 2, True),
    ]
    text = markdown(py, mode="calls", locate="shop/kinds.py:ping", direction="outgoing", depth=4)
    assert "(repeated: expanded once, above)" in text


def test_calls_count_external_entries_and_list_them_on_request(py: Bridge) -> None:
    data = py.ask(mode="calls", locate="shop/models.py:Order.add", direction="outgoing")
    section = data["sections"][0]
    assert section["rows"] == [] and section["external"] == 1
    listed = py.ask(
        mode="calls",
        locate="shop/models.py:Order.add",
        direction="outgoing",
        include_external=True,
    )
    [row] = listed["sections"][0]["rows"]
    assert row["name"] == "append" and row["external"] and not row["path"].startswith("shop/")


def test_types_are_derived_for_basedpyright_and_say_so(py: Bridge) -> None:
    data = py.ask(mode="types", locate="shop/kinds.py:Bread", depth=2)
    assert data["derived"] == "basedpyright lacks textDocument/prepareTypeHierarchy"
    supertypes, subtypes = data["sections"]
    assert [(r["name"], r["depth"]) for r in supertypes["rows"]] == [
        ("Perishable", 1),
        ("Product", 2),
    ]
    assert supertypes["external"] == 1  # abc.ABC, counted and not listed
    assert subtypes["rows"] == []
    down = py.ask(mode="types", locate="shop/models.py:Product", direction="subtypes", depth=3)
    assert [(r["name"], r["depth"]) for r in down["sections"][0]["rows"]] == [
        ("Perishable", 1),
        ("Bread", 2),
    ]
    # For agents the rows are the answer whether derived or not: the title says where and
    # how deep, each section its class headers under their file.
    text = markdown(py, mode="types", locate="shop/kinds.py:Bread", depth=2)
    assert text == (
        "# Types: `Bread` (shop/kinds.py:15) · depth 2\n\nSupertypes:\n### shop/kinds.py\n"
        "8| class Perishable · at shop/kinds.py:15 `class Bread(Perishable):`\n### shop/models.py\n"
        "  7| class Product · at shop/kinds.py:8 `class Perishable(Product, ABC):`\n"
        "+1 external (ABC): `\"include_external\": true`\n\nSubtypes:\nnone\n"), text


def test_types_on_a_function_is_a_clear_error(py: Bridge) -> None:
    response = py.request({"mode": "types", "locate": "shop/kinds.py:loaf"})
    assert response.error is not None and response.error.code.value == "not_found"
    assert "calls" in (response.error.hint or "")


# -- inlay hints, signature help, completion --------------------------------------------


def test_inlay_hints_woven_into_a_function(py: Bridge) -> None:
    data = py.ask(mode="inlay_hints", locate="shop/checkout.py:checkout")
    lines = {line["number"]: line["text"] for line in data["lines"]}
    assert (data["first"], data["last"]) == (7, 13)
    assert lines[8] == "    order/*<inlay>: Order</inlay>*/ = Order()"
    assert "find(name, /*<inlay>products=</inlay>*/everything())" in lines[10]
    by_lines = py.ask(
        mode="inlay_hints", file_path="shop/promotions.py", start_line=17, end_line=18
    )
    assert by_lines["lines"] == [
        {
            "number": 17,
            "text": "    sale/*<inlay>: Promotion</inlay>*/ = "
            "Promotion(/*<inlay>percent=</inlay>*/20)",
        }
    ]


def test_signature_help_marks_the_active_parameter(py: Bridge) -> None:
    data = py.ask(mode="signature_help", locate="shop/checkout.py@find(name, <|>everything())")
    [signature] = data["signatures"]
    assert [(p["label"], p["active"]) for p in signature["parameters"]] == [
        ("name: str", False),
        ("products: list[Product]", True),
    ]
    assert "The product with this name" in signature["docs"]


def test_signature_help_outside_a_call_says_so(py: Bridge) -> None:
    text = markdown(py, mode="signature_help", locate="shop/checkout.py@<|>order = Order()")
    assert "has no signature here" in text


def test_completion_is_bounded_and_paged(py: Bridge) -> None:
    data = py.ask(mode="completion", locate="shop/checkout.py@order.<|>add(product)", max_items=3)
    assert len(data["items"]) == 3 and data["total"] > 3
    labels = [i["label"] for i in data["items"]]
    assert labels[0] == "add" and {"kind": "method"}.items() <= data["items"][0].items()
    rest = py.ask(**json.loads(data["next"]))
    assert not set(labels) & {i["label"] for i in rest["items"]}


# -- pylsp: where it differs --------------------------------------------------------------


@pytest.fixture(scope="module")
def pylsp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    bridge = Bridge(make_project(tmp_path_factory.mktemp("pylsp")), ["pylsp"])
    yield bridge
    bridge.close()


def test_pylsp_outline_from_flat_symbols(pylsp: Bridge) -> None:
    data = pylsp.ask(mode="outline", file_path="shop/kinds.py")
    symbols = [s["symbol"] for g in data["groups"] for s in g["symbols"]]
    assert "Perishable.expires" in symbols and "Bread.expires" in symbols


@pytest.mark.parametrize(
    ("mode", "method", "fallback"),
    [
        ("calls", "textDocument/prepareCallHierarchy", "references"),
        ("inlay_hints", "textDocument/inlayHint", "hover"),
        ("implementations", "textDocument/implementation", "references"),
    ],
)
def test_pylsp_lacking_a_method_names_it_and_suggests_a_mode(
    pylsp: Bridge, mode: str, method: str, fallback: str
) -> None:
    response = pylsp.request({"mode": mode, "locate": "shop/kinds.py:loaf"})
    assert response.error is not None and response.error.code.value == "unsupported"
    assert f"pylsp lacks {method}" in response.error.message
    assert f"`{fallback}`" in (response.error.hint or "")


def test_pylsp_search_unsupported_suggests_outline(pylsp: Bridge) -> None:
    response = pylsp.request({"mode": "search", "query": "Bread"})
    assert response.error is not None and response.error.code.value == "unsupported"
    assert "outline" in (response.error.hint or "")


# -- :Lsap {mode} -----------------------------------------------------------------------

READ_MODES = (
    "declaration",
    "type_definition",
    "implementations",
    "inspect",
    "outline",
    "search",
    "calls",
    "types",
    "inlay_hints",
    "signature_help",
    "completion",
)


def test_lua_command_options_match_the_request_models(py: Bridge) -> None:
    from lsap_bridge.capabilities import REGISTRY
    from lsap_bridge.models import LocateRequest

    lua_modes = py.lua("return require('lsap.commands').modes")
    shared = set(LocateRequest.model_fields) | {"mode"}
    for mode in READ_MODES:
        assert set(lua_modes[mode]) == set(REGISTRY[mode].model.model_fields) - shared, mode


def test_commands_fill_bare_arguments_from_the_cursor(py: Bridge) -> None:
    path = str(py.root / "shop" / "models.py")
    cursor = {"path": path, "text": "class Product:", "col": 8, "line": 6}
    search = py.loop.run(
        py.service.command_request({"mode": "search", "cursor": cursor, "options": {}})
    )
    assert search == {"mode": "search", "query": "Product"}
    outline = py.loop.run(
        py.service.command_request(
            {"mode": "outline", "cursor": cursor, "options": {"recursive": "true"}}
        )
    )
    assert outline == {"mode": "outline", "file_path": "shop/models.py", "recursive": "true"}
    given = py.loop.run(
        py.service.command_request(
            {"mode": "search", "anchor": "Order", "cursor": cursor, "options": {"kinds": "class"}}
        )
    )
    response = py.request(given)
    assert response.ok and "class `Order`" in response.text


# -- round trips ------------------------------------------------------------------------


@pytest.fixture
def batches(py: Bridge) -> Iterator[list[list[str]]]:
    """The methods of every `gateway.lsp` round trip made while the test runs."""
    gateway = py.embedded.gateway
    original = gateway.lsp
    seen: list[list[str]] = []

    async def recording(calls: list[Any], *args: Any, **kwargs: Any) -> Any:
        seen.append([call.method for call in calls])
        return await original(calls, *args, **kwargs)

    gateway.lsp = recording  # type: ignore[method-assign]
    yield seen
    gateway.lsp = original  # type: ignore[method-assign]


def test_inspect_asks_together_what_can_travel_together(
    py: Bridge, batches: list[list[str]]
) -> None:
    py.ask(mode="inspect", locate="shop/catalog.py:find")
    calls = [b for b in batches if "textDocument/documentSymbol" not in b]
    assert [sorted(b) for b in calls] == [
        sorted(
            [
                "textDocument/hover",
                "textDocument/definition",
                "textDocument/references",
                "textDocument/prepareCallHierarchy",
            ]
        ),
        ["callHierarchy/incomingCalls", "callHierarchy/outgoingCalls"],
    ]


def test_outline_of_a_directory_fetches_symbols_in_one_round_trip(
    py: Bridge, batches: list[list[str]]
) -> None:
    package = py.root / "fresh"
    package.mkdir()
    for name in ("a", "b", "c", "d"):
        (package / f"{name}.py").write_text(
            f"def {name}_one() -> int:\n    return 1\n\n\nclass {name.upper()}:\n    pass\n"
        )
    data = py.ask(mode="outline", file_path="fresh")
    assert [g["path"] for g in data["groups"]] == [f"fresh/{n}.py" for n in "abcd"]
    symbol_batches = [b for b in batches if "textDocument/documentSymbol" in b]
    # One batch for all four. The server does not know files made after it started: those
    # not yet open are opened and asked again, together (all four when a Python server was
    # already answering, since `Servers.reader` opens none; three when the first was opened
    # to find a server).
    assert [len(b) for b in symbol_batches] in ([4, 4], [4, 3])


REAL_REPORTS = [
    {"mode": "declaration", "locate": "shop/checkout.py@import everything, <|>find"},
    {"mode": "type_definition", "locate": "shop/checkout.py@<|>order = Order()"},
    {"mode": "implementations", "locate": "shop/kinds.py:Perishable.expires"},
    {"mode": "inspect", "locate": "shop/models.py:Product", "max_code_lines": 3},
    {"mode": "outline", "file_path": "shop/kinds.py"},
    {"mode": "outline", "file_path": ".", "recursive": True, "max_items": 20},
    {"mode": "search", "query": "tock", "max_items": 5},
    {"mode": "calls", "locate": "shop/kinds.py:ping", "depth": 3, "include_external": True},
    {"mode": "types", "locate": "shop/kinds.py:Perishable", "include_external": True},
    {"mode": "inlay_hints", "locate": "shop/kinds.py:1,0"},
    {"mode": "signature_help", "locate": "shop/kinds.py@return Bread(<|>"},
    {"mode": "completion", "locate": "shop/kinds.py@return Bread(<|>", "max_items": 5},
]


@pytest.mark.parametrize("payload", REAL_REPORTS, ids=lambda p: str(p["mode"]))
def test_real_reports_keep_the_report_rules(py: Bridge, payload: dict[str, Any]) -> None:
    from tests.golden import check_report_shape

    text = markdown(py, **payload)
    assert check_report_shape(text) == [], text


def test_pylsp_types_derived_from_flat_symbols(pylsp: Bridge) -> None:
    data = pylsp.ask(mode="types", locate="shop/kinds.py:Bread", depth=2)
    assert data["derived"] == "pylsp lacks textDocument/prepareTypeHierarchy"
    assert [(r["name"], r["depth"]) for r in data["sections"][0]["rows"]] == [
        ("Perishable", 1),
        ("Product", 2),
    ]
    down = pylsp.ask(mode="types", locate="shop/models.py:Product", direction="subtypes", depth=2)
    assert [r["name"] for r in down["sections"][0]["rows"]] == ["Perishable", "Bread"]


def test_pylsp_inspect_says_what_it_lacks(pylsp: Bridge) -> None:
    data = pylsp.ask(mode="inspect", locate="shop/models.py:Order.total")
    assert data["lacking"] == ["pylsp lacks textDocument/prepareCallHierarchy"]
    assert data["callers"] is None and data["references"]["total"] == 1
    assert "total(self) -> float" in data["hover"]
