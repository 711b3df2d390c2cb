"""An edit command under an anchor that matched by near text says which line it took: the
note of the match stays in the response after the edit (it was dropped, so a move of
`everything()` asked for as `all_products()` answered as if nothing was off)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE
from tests.integration.harness import Bridge

pytestmark = pytest.mark.integration


def test_a_move_under_near_miss_anchors_says_what_it_matched(tmp_path: Path) -> None:
    root = tmp_path / "shop"
    shutil.copytree(EXAMPLE, root)
    bridge = Bridge(root, ["basedpyright"])
    try:
        request = "\n".join(
            [
                "*** Begin Language Server Request",
                "*** File: shop/catalog.py",
                "[@ def everythin() -> list[Product]:",
                "@] return [CROISSANT, CAFE]",
                "! MOVE_TO_FILE shop/listing.py",
                "*** End Language Server Request",
            ]
        )
        response = bridge.loop.run(bridge.service.handle_text(request))
    finally:
        bridge.close()
    assert response.ok, response.text
    assert "def everything()" in (root / "shop" / "listing.py").read_text()
    listing = response.text.split("*** File: shop/listing.py\n", 1)[1]
    assert listing.startswith(
        "@@ def everything() -> list[Product]:\n"
        "/*<note>\nanchor matched by fuzzy text: def everything() -> list[Product]:"
    ), response.text
