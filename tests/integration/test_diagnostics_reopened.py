"""`diagnostics` of a file closed, then opened again and edited, behind a server that is slow
to publish (`delay_server.py`): when a buffer is wiped, basedpyright clears the file with a
publish that names no version, for which Neovim makes a new (unloaded) buffer, diagnosed and
empty. Opened again, that buffer's server had not published for its text yet, and its silence
passed for `quiet`: the typed-in errors were reported as none (test_views under load)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from .harness import Bridge
from .test_check_settled import delayed_bridge

pytestmark = pytest.mark.integration

SHOP = Path(__file__).resolve().parents[2] / "examples" / "shop"
DELAY = 5.0  # seconds the proxy holds back catalog.py's diagnostics: longer than `diagnostics_quiet`
BAD_LINES = [f'bad_{i}: int = "not a number {i}"' for i in range(4)]


@pytest.fixture(scope="module")
def bridge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    root = tmp_path_factory.mktemp("reopened") / "shop"
    shutil.copytree(SHOP, root)
    bridge = delayed_bridge(root, "/shop/catalog", DELAY)
    yield bridge
    bridge.close()


# Wait (in Neovim, off the request path: a test's scene) for the clearing publish to make
# its buffer; the bound is for a hang only (the proxy's delay, 5x).
CLEARED = ("local path = ...; return vim.wait(" + str(int(DELAY * 5000))
           + ", function() return vim.fn.bufnr(path) ~= -1 end, 50)")


def test_a_reopened_file_s_typed_errors_are_awaited_not_taken_for_quiet(bridge: Bridge) -> None:
    path = bridge.root / "shop" / "catalog.py"
    assert bridge.ask(mode="diagnostics", file_path="shop/catalog.py")["pending"] == []
    bridge.lua("vim.cmd('bwipeout! ' .. vim.fn.bufnr(...))", str(path))
    assert bridge.lua(CLEARED, str(path))
    bufnr = bridge.lua("local b = vim.fn.bufadd(...); vim.fn.bufload(b); return b", str(path))
    count = bridge.lua("return vim.api.nvim_buf_line_count(...)", bufnr)
    bridge.lua("local b, n, lines = ...; vim.api.nvim_buf_set_lines(b, n, n, false, lines)",
               bufnr, count, BAD_LINES)
    data = bridge.ask(mode="diagnostics", file_path="shop/catalog.py")
    errors = [d["line"] for g in data["groups"] for d in g["diagnostics"] if d["severity"] == "error"]
    assert data["quiet"] == [] and data["pending"] == [], (data["quiet"], data["pending"])
    assert errors == list(range(count + 1, count + 1 + len(BAD_LINES)))
