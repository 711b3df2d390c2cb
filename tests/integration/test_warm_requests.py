"""Warm requests (issue 6's optimisations) on a real Neovim with basedpyright.

A warm `hover`/`references`/`definition` resolves against the text the session holds and
sends one guarded LSP request: one Neovim round trip. When the human edits the buffer in
between, the guard notices and the request runs again on the new text, so answers are
never computed from stale text.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from .harness import Bridge, Pool, shop_bridge

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def bridge(bridges: Pool) -> Bridge:
    return shop_bridge(bridges)


class Counted:
    """Counts the msgpack requests the service sends to Neovim."""

    def __init__(self, bridge: Bridge) -> None:
        self.count = 0
        conn = bridge.embedded.conn
        original = conn.request

        async def counting(method: str, *args: Any) -> Any:
            self.count += 1
            return await original(method, *args)

        conn.request = counting  # type: ignore[method-assign]


def insert_above(bridge: Bridge, path: Path, count: int) -> None:
    """The human types `count` comment lines at the top of the file (unsaved)."""
    bridge.lua(
        "local path, n = ...; local b = vim.fn.bufadd(path); vim.fn.bufload(b); "
        "local lines = {}; for i = 1, n do lines[i] = '# added ' .. i end; "
        "vim.api.nvim_buf_set_lines(b, 0, 0, false, lines)",
        str(path), count,
    )


def test_warm_hover_is_one_round_trip(bridge: Bridge) -> None:
    counted = Counted(bridge)
    bridge.ask(mode="hover", locate="shop/models.py:Product.discounted")
    before = counted.count
    data = bridge.ask(mode="hover", locate="shop/models.py:Product.discounted")
    assert counted.count - before == 1
    assert "discounted" in data["hover"]


def test_an_edit_between_requests_is_seen(bridge: Bridge) -> None:
    path = bridge.root / "shop" / "models.py"
    first = bridge.ask(mode="hover", locate="shop/models.py:Product.discounted")
    bridge.ask(mode="hover", locate="shop/models.py:Product.discounted")
    insert_above(bridge, path, 3)
    moved = bridge.ask(mode="hover", locate="shop/models.py:Product.discounted")
    assert moved["line"] == first["line"] + 3
    assert "discounted" in moved["hover"]


def test_warm_references_follow_edits(bridge: Bridge) -> None:
    path = bridge.root / "shop" / "models.py"
    anchor = "shop/models.py@class <|>Order"
    before = bridge.ask(mode="references", locate=anchor, max_items=500)
    insert_above(bridge, path, 2)
    after = bridge.ask(mode="references", locate=anchor, max_items=500)
    assert after["line"] == before["line"] + 2
    assert after["total"] == before["total"]
    lines_before = {(g["path"], line["number"]) for g in before["groups"] for line in g["lines"]}
    lines_after = {(g["path"], line["number"]) for g in after["groups"] for line in g["lines"]}
    in_models = {n for p, n in lines_before if p == "shop/models.py"}
    assert {n for p, n in lines_after if p == "shop/models.py"} == {n + 2 for n in in_models}
    assert {x for x in lines_after if x[0] != "shop/models.py"} == {
        x for x in lines_before if x[0] != "shop/models.py"
    }


def test_outline_reads_a_file_nobody_has_open_without_opening_it(bridge: Bridge) -> None:
    bridge.ask(mode="hover", locate="shop/models.py:Product.discounted")  # a server answers
    path = bridge.root / "shop" / "promotions.py"
    text = bridge.request({"mode": "outline", "file_path": "shop/promotions.py"}).text
    assert "Promotion" in text and "summer_sale" in text
    assert bridge.lua("return vim.fn.bufloaded(...)", str(path)) == 0


def test_a_buffer_opened_through_a_symlink_is_the_truth(bridge: Bridge) -> None:
    """The human opened `shop/alias.py`, a link to promotions.py, and typed without saving:
    the bridge, which asks about the real path, reads that buffer, not the disk."""
    link = bridge.root / "shop" / "alias.py"
    link.symlink_to(bridge.root / "shop" / "promotions.py")
    bridge.lua(
        "local b = vim.fn.bufadd(...); vim.fn.bufload(b); "
        "vim.api.nvim_buf_set_lines(b, 0, 0, false, {'UNSAVED_MARK = 1'})",
        str(link),
    )
    data = bridge.ask(mode="locate", locate="shop/promotions.py@<|>UNSAVED_MARK = 1")
    assert data["line"] == 1


def test_a_warm_anchor_is_resolved_once_per_text(bridge: Bridge, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hover, definition and hover again of one anchor: resolved once while the text holds;
    an edit, or the 2 s a confined path is trusted running out, resolves it afresh."""
    from lsap_bridge import resolve, workspace

    resolutions = []
    original = resolve._resolve_on

    async def counting(*args: Any) -> Any:
        resolutions.append(args)
        return await original(*args)

    monkeypatch.setattr(resolve, "_resolve_on", counting)
    anchor = "shop/models.py:Product.discounted"
    for mode in ("hover", "definition", "hover", "definition"):  # both targets warm
        bridge.ask(mode=mode, locate=anchor)
    before = len(resolutions)
    first = bridge.ask(mode="hover", locate=anchor)
    assert bridge.ask(mode="definition", locate=anchor)["line"] == first["line"]
    assert len(resolutions) == before
    insert_above(bridge, bridge.root / "shop" / "models.py", 1)
    # The stale guard turns the remembered answer away; the new text is then read, and
    # resolved on once more when it is held (remembered from there on).
    assert bridge.ask(mode="hover", locate=anchor)["line"] == first["line"] + 1
    assert len(resolutions) == before + 1
    for _ in range(2):
        assert bridge.ask(mode="hover", locate=anchor)["line"] == first["line"] + 1
    assert len(resolutions) == before + 2
    later = time.monotonic() + workspace.INSIDE_TTL  # the time a confined path is trusted, gone
    monkeypatch.setattr(workspace, "clock", lambda: later)
    bridge.ask(mode="hover", locate=anchor)
    assert len(resolutions) == before + 3
