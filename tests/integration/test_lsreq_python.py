# ruff: noqa: E501  (golden responses have long lines)
"""The seed's request shapes on a Python project with basedpyright: hover, docs, inlay
hints, injected diagnostics, the extension views, anchors that are missing or ambiguous,
RENAME_TO, and MOVE_TO_FILE done by the bridge (imports of the moved code and its users)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE
from tests.integration.harness import Bridge

pytestmark = pytest.mark.integration


def block(path: str, *lines: str) -> str:
    return "\n".join(
        [
            "*** Begin Language Server Request",
            f"*** File: {path}",
            *lines,
            "*** End Language Server Request",
        ]
    )


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Bridge, Path]]:
    root = tmp_path_factory.mktemp("lsreq_py") / "shop"
    shutil.copytree(EXAMPLE, root)
    with open(root / "shop" / "checkout.py", "a") as out:
        out.write("\n\nWRONG: str = 42\n")
    bridge = Bridge(root, ["basedpyright"])
    try:
        yield bridge, root
    finally:
        bridge.close()


def ask(bridge: Bridge, text: str) -> str:
    response = bridge.loop.run(bridge.service.handle_text(text))
    assert response.ok, response.text
    return response.text


QUERY_RESPONSE = """*** Begin Language Server Response
*** File: shop/checkout.py
@@ def checkout(names: list[str]) -> Order:
^ Order checkout[docs]
/*<hover:Order>```python
class Order(lines: list[tuple[Product, int]] = list)
```</hover:Order>*/
/*<docs:checkout>
(no documentation)
</docs:checkout>*/
? product/*<inlay>: Product | None</inlay>*/ = find(name, /*<inlay>products=</inlay>*/everything())
^ find[docs] product
/*<docs:find>
The product with this name, if any.
</docs:find>*/
/*<hover:product>```python
(variable) product: Product | None
```</hover:product>*/
@@ WRONG: str = 42
/*<diagnostics:error:WRONG:basedpyright>
Type "Literal[42]" is not assignable to declared type "str"
  "Literal[42]" is not assignable to "str" · basedpyright(reportAssignmentType)
</diagnostics:error:WRONG:basedpyright>*/
*** End Language Server Response
"""


def test_hover_docs_inlay_and_injected_diagnostic(shop: tuple[Bridge, Path]) -> None:
    bridge, _ = shop
    text = ask(
        bridge,
        block(
            "shop/checkout.py",
            "@@ def checkout(names: list[str]) -> Order:",
            "^ Order checkout[docs]",
            "? product = find(name, everything())",
            "^ find[docs] product",
        ),
    )
    assert text == QUERY_RESPONSE


def test_extension_views_and_bare_caret(shop: tuple[Bridge, Path]) -> None:
    bridge, _ = shop
    text = ask(
        bridge,
        block(
            "shop/checkout.py",
            "@@ order = Order()",
            "^",
            "@@ def receipt(order: Order) -> str:",
            "^ receipt[refs] Order[def] receipt[calls]",
        ),
    )
    refs = text.split("/*<refs:receipt>\n", 1)[1].split("</refs:receipt>*/", 1)[0]
    # The seed's compact form: the anchor's place in the title, its own line not printed again.
    assert refs.startswith("# References: `receipt` (shop/checkout.py:16) · 1 reference in 1 file")
    definition = text.split("/*<def:Order>\n", 1)[1].split("</def:Order>*/", 1)[0]
    assert "# Definition: shop/models.py > Order\n" in definition and "19| class Order:" in definition
    assert "/*<calls:receipt>" in text
    # Bare `^`: every symbol on the line, each with its own hover.
    assert "/*<hover:order>```python\n(variable) order: Order\n```</hover:order>*/" in text
    bare = text.split("@@ order = Order()", 1)[1].split("@@ def receipt", 1)[0]
    assert "/*<hover:Order>```python\nclass Order(" in bare


AMBIGUOUS_RESPONSE = """*** Begin Language Server Response
*** File: shop/models.py
@@ return result
/*<error:ambiguous>
'return result' matches 2 lines in shop/models.py
  31 in Order.total: return result
  35 in Order.validate: return result
Next: add a `@@ <line>` line above it with a line unique to the part you mean (e.g. the enclosing `def`, `class` or function line), or copy more of the line
</error:ambiguous>*/
^ result
/*<error:not_found>
skipped: the anchored line above was not found
</error:not_found>*/
*** File: shop/models.py
@@ def validate(self) -> bool:
@@ return result
^ result
/*<hover:result>```python
(variable) result: bool
```</hover:result>*/
@@ return nothing_like_this_at_all
/*<error:not_found>
'return nothing_like_this_at_all' is not in shop/models.py after line 35
  31 in Order.total (score 25.0): return result
  35 in Order.validate (score 25.0): return result
  15 in Product.discounted (score 25.0): return Product(self.name, round(self.price * (1 - percent / 100), 2))
Next: the closest lines are listed: copy the line's text exactly
</error:not_found>*/
*** File: shop/models.py
@@ return result
/*<note>
one of 2 matching lines, settled by the next anchor
</note>*/
^ result
/*<hover:result>```python
(variable) result: float
```</hover:result>*/
@@ def validate(self) -> bool:
*** End Language Server Response
"""


def test_ambiguous_missing_and_stacked_anchors(shop: tuple[Bridge, Path]) -> None:
    """Alone, a line found twice is ambiguous; a stacked `@@` above it narrows it; the
    anchor after it settles it (anchors are in file order)."""
    bridge, _ = shop
    text = ask(
        bridge,
        "\n".join(
            [
                "*** Begin Language Server Request",
                "*** File: shop/models.py",
                "@@ return result",
                "^ result",
                "*** File: shop/models.py",
                "@@ def validate(self) -> bool:",
                "@@ return result",
                "^ result",
                "@@ return nothing_like_this_at_all",
                "*** File: shop/models.py",
                "@@ return result",
                "^ result",
                "@@ def validate(self) -> bool:",
                "*** End Language Server Request",
            ]
        ),
    )
    assert text == AMBIGUOUS_RESPONSE


def test_stacked_anchor_narrows_to_the_enclosing_definition(shop: tuple[Bridge, Path]) -> None:
    """`return result` is in total() and in validate(); after `@@ def total…` it means total's."""
    bridge, _ = shop
    text = ask(
        bridge,
        block(
            "shop/models.py",
            "@@ def total(self) -> float:",
            "@@ return result",
            "^ result",
        ),
    )
    assert "/*<hover:result>```python\n(variable) result: float\n```</hover:result>*/" in text


def test_out_of_order_and_near_miss_anchors(shop: tuple[Bridge, Path]) -> None:
    bridge, _ = shop
    text = ask(
        bridge,
        block(
            "shop/models.py",
            "@@ def validate(self) -> bool:",
            "@@ def total(self) -> float:",
            "@@ def discounted(self, percnt: float) -> 'Product':",
        ),
    )
    assert "'def total(self) -> float:' is only before the previous anchor" in text
    assert "found at line 27" in text
    # A typo still anchors (fuzzy tier), and the response says what it matched.
    assert "anchor matched by fuzzy text" not in text  # searched after validate: nothing there
    text = ask(
        bridge, block("shop/models.py", "@@ def discounted(self, percnt: float) -> 'Product':")
    )
    assert (
        '/*<note>\nanchor matched by fuzzy text: def discounted(self, percent: float) -> "Product":'
        in text
    )


def test_rename_then_move_to_a_new_module(shop: tuple[Bridge, Path]) -> None:
    bridge, root = shop
    text = ask(
        bridge,
        block(
            "shop/catalog.py",
            '[@ CROISSANT = Product("croissant", 1.2)',
            '@@ CAFE = Product("café crème", 2.5)',
            "! CAFE RENAME_TO COFFEE",
            "@) def find(name: str, products: list[Product]) -> Product | None:",
            "! MOVE_TO_FILE shop/menu.py",
        ),
    )
    assert (
        text
        == """*** Begin Language Server Response
*** File: shop/catalog.py
@@ def find(name: str, products: list[Product]) -> Product | None:
*** File: shop/menu.py
@@ CROISSANT = Product("croissant", 1.2)
@@ COFFEE = Product("café crème", 2.5)
*** End Language Server Response
"""
    )
    assert (root / "shop" / "menu.py").read_text() == (
        'from .models import Product\n\n\nCROISSANT = Product("croissant", 1.2)\n'
        'COFFEE = Product("café crème", 2.5)\n'
    )
    catalog = (root / "shop" / "catalog.py").read_text()
    assert "from .menu import COFFEE, CROISSANT\n" in catalog
    assert "return [CROISSANT, COFFEE]" in catalog and "CAFE" not in catalog


def test_move_fixes_the_imports_of_users(shop: tuple[Bridge, Path]) -> None:
    bridge, root = shop
    text = ask(
        bridge,
        block(
            "shop/catalog.py",
            "[@ def find(name: str, products: list[Product]) -> Product | None:",
            "@] return None",
            "! MOVE_TO_FILE shop/lookup.py",
        ),
    )
    checkout = (root / "shop" / "checkout.py").read_text()
    assert "from .catalog import everything\nfrom .lookup import find\n" in checkout
    assert (
        (root / "shop" / "lookup.py")
        .read_text()
        .startswith(
            "from .models import Product\n\n\ndef find(name: str, products: list[Product]) -> Product | None:\n"
        )
    )
    # No new diagnostics: checkout.py still has only its WRONG line.
    assert "*** File: shop/lookup.py\n@@ def find(" in text
    assert text.count("/*<diagnostics:") == 1 and "/*<diagnostics:error:WRONG:basedpyright>" in text


def test_rename_shows_the_other_files_it_changed(shop: tuple[Bridge, Path]) -> None:
    bridge, root = shop
    text = ask(
        bridge,
        block(
            "shop/catalog.py",
            "@@ def everything() -> list[Product]:",
            "! everything RENAME_TO all_products",
        ),
    )
    assert text.startswith(
        "*** Begin Language Server Response\n*** File: shop/catalog.py\n"
        "@@ def all_products() -> list[Product]:\n"
    )
    # checkout.py was never named in the request: its changed lines are shown.
    assert "*** File: shop/checkout.py\n@@ from .catalog import all_products\n" in text
    assert "@@ product = find(name, all_products())\n" in text
    assert "all_products()" in (root / "shop" / "checkout.py").read_text()


def test_move_into_an_existing_module_at_the_end_of_the_old_one(shop: tuple[Bridge, Path]) -> None:
    bridge, root = shop
    text = ask(
        bridge,
        block(
            "shop/promotions.py",
            "[@ def summer_sale(products: list[Product]) -> list[Product]:",
            "@] return [sale.apply(product) for product in products]",
            "! MOVE_TO_FILE shop/catalog.py",
        ),
    )
    assert (
        "*** File: shop/catalog.py\n@@ def summer_sale(products: list[Product]) -> list[Product]:"
        in text
    )
    assert "/*<diagnostics:" not in text.split("*** File: shop/catalog.py", 1)[1], text
    catalog = (root / "shop" / "catalog.py").read_text()
    assert catalog.count("from .models import Product\n") == 1  # already there: not added again
    assert "from .promotions import Promotion\n" in catalog
    assert catalog.endswith("    return [sale.apply(product) for product in products]\n")
    promotions = (root / "shop" / "promotions.py").read_text()
    assert promotions.endswith("        return product.discounted(self.percent)\n"), promotions


def test_lsap_request_command_shows_the_response_in_the_report(shop: tuple[Bridge, Path]) -> None:
    """`:LsapRequest` in the human's editor: the block under the cursor, answered in the report."""
    bridge, _ = shop
    request = block("shop/models.py", "@@ def total(self) -> float:", "^ total")
    bridge.lua(
        "vim.cmd.enew(); vim.api.nvim_buf_set_lines(0, 0, -1, false, vim.split(..., '\\n'));"
        "vim.api.nvim_win_set_cursor(0, {3, 0}); vim.cmd('LsapRequest')",
        "notes\n" + request + "\nmore notes",
    )
    deadline = time.monotonic() + 60
    lines: list[str] = []
    while time.monotonic() < deadline:
        lines = bridge.lua(
            "local b = vim.fn.bufnr('lsap://report'); if b < 1 then return {} end;"
            "return vim.api.nvim_buf_get_lines(b, 0, -1, false)"
        )
        if "*** End Language Server Response" in lines:
            break
        time.sleep(0.1)
    text = "\n".join(lines)
    assert (
        "*** File: shop/models.py\n@@ def total(self) -> float:\n^ total\n/*<hover:total>```python"
        in text
    )


def test_refused_edit_is_reported_under_its_command_and_changes_nothing(
    shop: tuple[Bridge, Path],
) -> None:
    bridge, root = shop
    session = bridge.service.session
    before = (root / "shop" / "models.py").read_text()

    async def refuse(_summary: str, _preview: str) -> bool:
        return False

    previous, session.approve_edit = session.approve_edit, refuse
    try:
        text = ask(
            bridge,
            block(
                "shop/models.py",
                "@@ class Product:",
                "^ Product",
                "! Product RENAME_TO Item",
            ),
        )
    finally:
        session.approve_edit = previous
    assert "@@ class Product:\n^ Product\n/*<hover:Product>```python\nclass Product(" in text
    assert "! Product RENAME_TO Item\n/*<error:denied>\nthe edit was not approved" in text
    assert (root / "shop" / "models.py").read_text() == before


def test_lsap_request_cli_reads_the_block_on_stdin(tmp_path: Path) -> None:
    """`lsap request < block`: through the embedded daemon, stopped afterwards."""
    root = tmp_path / "shop"
    shutil.copytree(EXAMPLE, root)
    env = {**os.environ, "LSAP_SERVERS": "basedpyright"}

    def lsap(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "lsap_bridge", *args],
            cwd=root,
            capture_output=True,
            text=True,
            input=stdin,
            timeout=120,
            env=env,
            check=False,
        )

    try:
        done = lsap(
            "request",
            "--idle-timeout",
            "60",
            stdin=block("shop/models.py", "@@ def total(self) -> float:", "^ total"),
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(
            "*** Begin Language Server Response\n*** File: shop/models.py\n"
        )
        assert (
            "/*<hover:total>```python\n(method) def total(self: Self@Order) -> float\n```"
            in done.stdout
        )
        bad = lsap("request", stdin="*** File: shop/models.py\n")
        assert (
            bad.returncode == 2  # the request itself is invalid (lsap-exit-codes)
            and "line 1: the request does not start with the Begin line" in bad.stdout
        )
    finally:
        lsap("daemon", "stop")


def test_users_the_bridge_cannot_rewrite_are_named_with_their_diagnostics(
    shop: tuple[Bridge, Path],
) -> None:
    # Its own modules, created a moment ago: it runs alone or after the module's renames
    # and moves of catalog.py (it once moved whatever catalog.py's last function was then).
    bridge, root = shop
    (root / "shop" / "stock.py").write_text(
        'def in_stock() -> list[str]:\n    return ["croissant"]\n'
    )
    (root / "shop" / "report.py").write_text(
        "from . import stock\n\n\ndef count() -> int:\n    return len(stock.in_stock())\n"
    )
    # A module the server has analysed (an agent asking about it first opens it).
    ask(bridge, block("shop/report.py", "@@ return len(stock.in_stock())"))
    text = ask(
        bridge,
        block(
            "shop/stock.py",
            "[@ def in_stock() -> list[str]:",
            '@] return ["croissant"]',
            "! MOVE_TO_FILE shop/shelf.py",
        ),
    )
    assert "/*<note>\nshop/report.py uses in_stock without a `from shop.stock import …`" in text
    report = text.split("*** File: shop/report.py\n", 1)[1]
    assert report.startswith("@@ return len(stock.in_stock())\n"), text
    assert '"in_stock" is not a known attribute of module' in report


def test_a_bad_file_block_is_an_error_block_and_the_others_still_run(
    shop: tuple[Bridge, Path],
) -> None:
    bridge, _ = shop
    text = ask(
        bridge,
        "\n".join(
            [
                "*** Begin Language Server Request",
                "*** File: shop/nope.py",
                "@@ anything",
                "*** File: ../outside.py",
                "@@ anything",
                "*** File: shop/models.py",
                "@@ class Order:",
                "^ Order",
                "*** End Language Server Request",
            ]
        ),
    )
    assert "*** File: shop/nope.py\n/*<error:not_found>\nno such file: shop/nope.py" in text
    assert "*** File: ../outside.py\n/*<error:outside_workspace>" in text
    assert "*** File: shop/models.py\n@@ class Order:\n^ Order\n/*<hover:Order>" in text


def test_move_a_decorated_class_used_everywhere(shop: tuple[Bridge, Path]) -> None:
    bridge, root = shop
    text = ask(
        bridge,
        block(
            "shop/models.py",
            "[@ @dataclass",
            "@@ class Product:",
            "@] return Product(self.name, round(self.price * (1 - percent / 100), 2))",
            "! MOVE_TO_FILE shop/product.py",
        ),
    )
    assert (
        "*** File: shop/product.py\n@@ @dataclass\n"
        "/*<note>\none of 2 matching lines, settled by the next anchor\n</note>*/\n"
        "@@ class Product:\n" in text
    )
    product = (root / "shop" / "product.py").read_text()
    assert product.startswith("from dataclasses import dataclass\n\n\n@dataclass\nclass Product:\n")
    models = (root / "shop" / "models.py").read_text()
    assert "class Product" not in models and "from shop.product import Product\n" in models
    assert "from dataclasses import dataclass, field\n" in models  # Order still uses both
    checkout = (root / "shop" / "checkout.py").read_text()
    assert (
        "from .models import Order\n" in checkout and "from .product import Product\n" in checkout
    )
    for name in ("catalog", "promotions", "menu", "lookup"):
        assert "from .product import Product\n" in (root / "shop" / f"{name}.py").read_text(), name
    errors = [line for line in text.splitlines() if line.startswith("/*<diagnostics:error:")]
    assert errors == ["/*<diagnostics:error:WRONG:basedpyright>"], text
