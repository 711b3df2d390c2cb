"""Edits lose nothing, for MOVE_TO_FILE (the bridge's Python move) on a real Neovim with
basedpyright: a move fails whole or succeeds whole, the human's unsaved buffer is never
written, and each changed buffer takes one undo step back. (Renames: tests/integration/
test_rename.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.edit_faults import failing_switch
from tests.integration.harness import Bridge, Pool, shop_bridge

pytestmark = pytest.mark.integration

MOVE = (
    "*** Begin Language Server Request\n*** File: shop/catalog.py\n"
    "[@ def find(name: str, products: list[Product]) -> Product | None:\n"
    "@] return None\n! MOVE_TO_FILE shop/lookup.py\n*** End Language Server Request"
)
TOUCHED = ("shop/catalog.py", "shop/checkout.py")


@pytest.fixture(scope="module")
def bridge(bridges: Pool) -> Bridge:
    return shop_bridge(bridges)


def snapshot(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*.py"))}


def move(bridge: Bridge) -> str:
    return bridge.loop.run(bridge.service.handle_text(MOVE)).text


def unchanged(bridge: Bridge, before: dict[str, str]) -> None:
    root = bridge.root
    assert snapshot(root) == before
    assert not (root / "shop" / "lookup.py").exists()
    for rel in TOUCHED:
        assert bridge.buffer_lines(root / rel) in ([], before[rel].splitlines()), rel
        assert not bridge.modified(root / rel), rel


def test_a_move_failing_part_way_changes_nothing(bridge: Bridge) -> None:
    """checkout.py (whose import the move fixes) fails to switch after every check passed:
    the files switched before it are put back, the new file is removed."""
    before = snapshot(bridge.root)
    with failing_switch(bridge, bridge.root / "shop" / "checkout.py"):
        text = move(bridge)
    assert "rolled back" in text and "checkout.py" in text, text
    unchanged(bridge, before)


def test_a_text_format_rename_failing_part_way_changes_nothing(bridge: Bridge) -> None:
    before = snapshot(bridge.root)
    block = (
        "*** Begin Language Server Request\n*** File: shop/catalog.py\n"
        "@@ def find(name: str, products: list[Product]) -> Product | None:\n"
        "! find RENAME_TO lookup\n*** End Language Server Request"
    )
    with failing_switch(bridge, bridge.root / "shop" / "checkout.py"):
        text = bridge.loop.run(bridge.service.handle_text(block)).text
    assert "rolled back" in text and "checkout.py" in text, text
    unchanged(bridge, before)


def test_a_move_refused_by_the_edit_policy_changes_nothing(bridge: Bridge) -> None:
    before = snapshot(bridge.root)
    session = bridge.service.session
    approve = session.approve_edit

    async def deny(summary: str, preview: str) -> bool:
        assert "move" in summary and "def find" in preview
        return False

    session.approve_edit = deny
    try:
        text = move(bridge)
    finally:
        session.approve_edit = approve
    assert "denied" in text, text
    unchanged(bridge, before)


def test_a_move_spares_unsaved_work_and_undoes_in_one_step(bridge: Bridge) -> None:
    root = bridge.root
    catalog, checkout = root / "shop" / "catalog.py", root / "shop" / "checkout.py"
    on_disk = checkout.read_text()
    # the human is typing in checkout.py and has not saved
    bridge.lua(
        "local b = require('lsap.transport.disk').open(...);"
        "vim.api.nvim_buf_set_lines(b, 0, 0, false, {'# the human is writing this'})",
        str(checkout),
    )
    typed = bridge.buffer_lines(checkout)
    catalog_before = bridge.buffer_lines(catalog) or catalog.read_text().splitlines()
    text = move(bridge)
    assert "lookup.py" in text and "error" not in text, text

    written = checkout.read_text()  # the move, without the human's line
    assert "# the human is writing this" not in written, "the human's unsaved line was written"
    assert "from .lookup import find" in written, "the disk was left half moved"
    now = bridge.buffer_lines(checkout)
    assert now[0] == "# the human is writing this" and bridge.modified(checkout)
    assert any("from .lookup import find" in line for line in now), now
    assert "def find(" not in catalog.read_text() and not bridge.modified(catalog)
    assert "def find(" in (root / "shop" / "lookup.py").read_text()

    for path, expected in ((checkout, typed), (catalog, catalog_before)):
        bridge.lua(
            "vim.api.nvim_buf_call(vim.fn.bufnr(...), function() vim.cmd('silent undo') end)",
            str(path),
        )
        assert bridge.buffer_lines(path) == expected, f"one undo did not restore {path.name}"
    # and the human's own typing is still its own undo step, behind the move's
    bridge.lua(
        "vim.api.nvim_buf_call(vim.fn.bufnr(...), function() vim.cmd('silent undo') end)",
        str(checkout),
    )
    assert bridge.buffer_lines(checkout) == on_disk.splitlines()
