"""A file created a moment before a rename (issue 44, item 3): the rename either edits it or
is refused naming it, with nothing changed; never "ok" with the old name left in it.

basedpyright adds a created file to the files it renames in only on a timer, after a
stretch without requests: a rename asked at once renamed every other file and left the new
importer broken. The disk sync before a rename now opens the created code files for their
servers (`Servers.attach`), and the rename's coverage check reads the files its edit leaves
alone for lines that still name the symbol through its module (`rename.named_elsewhere`).
One trial per case (the 20 tries are the benchmark's: `benchmarks/sections/edit_loop.py`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .harness import Bridge, Pool, shop_bridge

pytestmark = [pytest.mark.integration, pytest.mark.slow]

IMPORTER = 'from shop.models import {name}\n\n\ndef cheap() -> {name}:\n    return {name}("tea", 1.0)\n'


@pytest.fixture(scope="module")
def bridge(bridges: Pool) -> Bridge:
    return shop_bridge(bridges)


def disk(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*.py"))}


@pytest.mark.parametrize("where", ["shop/extra.py", "shop/deals/extra.py"],
                         ids=["existing-directory", "new-subdirectory"])
def test_a_file_created_just_before_a_rename_is_renamed_or_named(bridge: Bridge, where: str) -> None:
    # The server busy with the project as after an agent's earlier edit: a rename and back.
    bridge.ask(mode="rename", locate="shop/models.py:Order", new_name="Purchase")
    bridge.ask(mode="rename", locate="shop/models.py:Purchase", new_name="Order")
    new = bridge.root / where
    new.parent.mkdir(exist_ok=True)
    new.write_text(IMPORTER.format(name="Product"))
    before = disk(bridge.root)
    try:
        response = bridge.request({"mode": "rename", "locate": "shop/models.py:Product",
                                   "new_name": "Item", "format": "json"})
        if response.ok:
            assert "Product" not in new.read_text() and "Item" in new.read_text(), new.read_text()
        else:
            assert where in response.text, response.text
            assert disk(bridge.root) == before, "a refused rename changed nothing"
    finally:
        if "Item" in (bridge.root / "shop" / "models.py").read_text():
            bridge.ask(mode="rename", locate="shop/models.py:Item", new_name="Product",
                       allow_uncovered=True)
        new.unlink()
