"""A rename under the human's unsaved edits leaves the disk whole (`edits.apply.apply_workspace_edit`,
`disk_too`), with basedpyright on examples/shop in a real Neovim.

The human has catalog.py open with a line typed and not saved; an agent renames `Product`,
used there and elsewhere. The file on disk gets the rename (rebased onto the disk's text,
without the human's line), the buffer gets it beside the human's line and stays unsaved,
so the package on disk imports. Where the human's unsaved change touches a renamed use,
the edit cannot be made on disk as well: the whole rename is refused, nothing changed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .harness import Bridge, Pool

pytestmark = pytest.mark.integration

RENAME = {"mode": "rename", "locate": "shop/models.py@class <|>Product", "new_name": "Item",
          "format": "json"}
HUMAN_LINE = "# the human is writing this, unsaved"


def human_types(bridge: Bridge, path: Path, line: int, replace: int, text: str) -> None:
    """The human opens `path` in their window and changes lines [line, line + replace) to
    `text`, without saving."""
    bridge.lua("local path, first, count, text = ...; vim.cmd.edit(vim.fn.fnameescape(path)); "
               "vim.api.nvim_buf_set_lines(0, first, first + count, false, {text})",
               str(path), line, replace, text)
    assert bridge.modified(path)


def disk(root: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted((root / "shop").glob("*.py"))}


def imports(root: Path) -> subprocess.CompletedProcess[str]:
    """Every module of the package, imported from the disk as the agent's tests would."""
    code = "import shop.catalog, shop.checkout, shop.promotions, shop.models"
    return subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                          timeout=60, check=False)


@pytest.fixture
def bridge(bridges: Pool) -> Bridge:
    return bridges.take(("basedpyright",))


def test_the_disk_gets_the_rename_and_the_buffer_keeps_the_humans_line(bridge: Bridge) -> None:
    catalog = bridge.root / "shop" / "catalog.py"
    human_types(bridge, catalog, 0, 0, HUMAN_LINE)
    response = bridge.request(RENAME)
    assert response.ok, response.text
    on_disk = catalog.read_text()
    assert "from .models import Item" in on_disk and "Product" not in on_disk
    assert HUMAN_LINE not in on_disk, "the human's unsaved line was written"
    result = imports(bridge.root)
    assert result.returncode == 0, result.stderr
    lines = bridge.buffer_lines(catalog)
    assert lines[0] == HUMAN_LINE and "from .models import Item" in lines
    assert lines[1:] == on_disk.splitlines(), "the buffer is the disk plus the human's line"
    assert bridge.modified(catalog)
    bridge.lua("vim.cmd.checktime()")  # Neovim takes the file as it is: no reload, no prompt
    assert bridge.buffer_lines(catalog) == lines and bridge.modified(catalog)
    [entry] = [f for f in json.loads(response.text)["changed"] if f["path"] == "shop/catalog.py"]
    assert entry["saved"] and entry["beside_unsaved"] and not entry["disk_differs"]


def test_an_unsaved_change_on_a_renamed_use_refuses_the_whole_rename(bridge: Bridge) -> None:
    catalog = bridge.root / "shop" / "catalog.py"
    before = disk(bridge.root)
    human_types(bridge, catalog, 4, 1, 'CROISSANT = Product("croissant", 1.25)')
    typed = bridge.buffer_lines(catalog)
    response = bridge.request(RENAME)
    assert response.error is not None and response.error.code.value == "conflict", response.text
    assert "unsaved changes" in response.error.message
    assert disk(bridge.root) == before, "a file changed on disk"
    assert bridge.buffer_lines(catalog) == typed and bridge.modified(catalog)
    assert "class Product:" in bridge.buffer_lines(bridge.root / "shop" / "models.py")
