"""`check` after the bridge's own edits (issue 44, item 1): a rename or a move through the
bridge, then `check`, compares every changed file and its users (nothing "not analysed"),
and reports the caller the edit broke.

The cause it guards: the bridge's writes were told to the servers again at the next disk
sync (`workspace/didChangeWatchedFiles` of files whose buffers already held that text),
which moved the evidence mark past what the servers had published for the edit, while they,
with nothing new to read, published nothing more: every file stayed "not analysed", at
every check (`DiskWatch.told` now records the bridge's writes as seen).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .harness import Bridge, Pool

pytestmark = [pytest.mark.integration, pytest.mark.slow]

# A caller a rename of `find` to `search` breaks: its local `search` shadows the new name.
LOOKUP = '''"""Finding by name."""

from .catalog import find
from .models import Product


def lookup(name: str, products: list[Product]) -> Product | None:
    search = len(name)
    return find(name, products) if search else None
'''
# A caller a move of `everything` out of catalog.py breaks: it reaches it through the module.
LISTING = '''"""Listing by module."""

from . import catalog


def names() -> list[str]:
    return [p.name for p in catalog.everything()]
'''


# A caller a move of `round` out of pricing.ts breaks: tsserver rewrites imports and
# `pricing.round`, not a use through another name of the module.
REPORT_TS = 'import * as pricing from "./pricing";\n\nconst prices: typeof pricing = pricing;\n\n' \
            'export function fee(): number {\n  return prices.round(2.5);\n}\n'
TS_SHOP = Path(__file__).resolve().parent.parent / "fixtures" / "ts_shop"


def callers(root: Path) -> None:
    (root / "shop" / "lookup.py").write_text(LOOKUP)
    (root / "shop" / "listing.py").write_text(LISTING)


@pytest.fixture(scope="module")
def bridge(bridges: Pool) -> Bridge:
    return bridges.take(("basedpyright", "ruff"), "shop+own-edits", prepare=callers)


def settled_check(bridge: Bridge) -> dict[str, Any]:
    """A check that compared everything: the record the edit is then compared with (a cold
    start may leave files for the next check; three are plenty)."""
    for _ in range(3):
        report = bridge.ask(mode="check")
        if not report["pending"]:
            return report
    raise AssertionError(f"files still not analysed: {report['pending']}")


def new_errors(report: dict[str, Any]) -> set[str]:
    return {g["path"] for g in report["groups"] if g["status"] == "new"
            for d in g["diagnostics"] if d["severity"] == "error"}


def test_check_after_a_bridge_rename_compares_every_file(bridge: Bridge) -> None:
    settled_check(bridge)
    renamed = bridge.ask(mode="rename", locate="shop/catalog.py:find", new_name="search")
    assert {c["path"] for c in renamed["changed"]} >= {"shop/catalog.py", "shop/checkout.py", "shop/lookup.py"}
    report = bridge.ask(mode="check")
    assert report["pending"] == [], report["pending"]
    assert {c["path"] for c in report["changed"]} >= {"shop/catalog.py", "shop/lookup.py"}
    assert "shop/lookup.py" in new_errors(report), report["groups"]
    # And the next one has nothing left to compare late.
    again = bridge.ask(mode="check")
    assert again["pending"] == [] and new_errors(again) == set()


def moved_then_checked(bridge: Bridge, first: str, last: str, to_file: str, broken: str) -> dict[str, Any]:
    """A settled check, the bridge's move of the lines `first` to `last` (of one file) to
    `to_file`, then a check: nothing pending, and the caller the move breaks reported."""
    settled_check(bridge)
    source, find = first.split("@", 1)
    bridge.ask(mode="move", locate=first, end={"file_path": source, "find": last}, to_file=to_file)
    assert find.split()[-1] in (bridge.root / to_file).read_text()
    report = bridge.ask(mode="check")
    assert report["pending"] == [], report["pending"]
    assert broken in new_errors(report), report["groups"]
    return report


def test_check_after_a_bridge_move_compares_every_file(bridge: Bridge) -> None:
    report = moved_then_checked(bridge, "shop/catalog.py@def everything", "return [CROISSANT, CAFE]",
                                "shop/promotions.py", "shop/listing.py")
    assert {"path": "shop/promotions.py", "how": "changed"} in report["changed"]


@pytest.fixture(scope="module")
def ts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    root = tmp_path_factory.mktemp("own-edits-ts") / "ts_shop"
    shutil.copytree(TS_SHOP, root)
    (root / "src" / "report.ts").write_text(REPORT_TS)
    bridge = Bridge(root, ["ts_ls"])
    yield bridge
    bridge.close()


def test_check_after_a_typescript_move_compares_every_file(ts: Bridge) -> None:
    """typescript-language-server: tsserver's "Move to file" through the bridge (a new
    file, its importers rewritten), then `check`."""
    moved_then_checked(ts, "src/pricing.ts@export function round",
                       "return Math.round(value * factor) / factor;\n}", "src/maths.ts", "src/report.ts")


# A buffer given a new name the way the edit engine moves a file (`noautocmd file`), then
# announced with Neovim's handler, then without it (its group gone): what the servers heard.
ANNOUNCE = """
local compat = require('lsap.compat')
local path, moved = ...
local buf = require('lsap.transport.disk').open(path)
_G.lsap_test_heard = {}
_G.lsap_test_listen = vim.api.nvim_create_autocmd('LspNotify', { callback = function(ev)
  local doc = ev.data.params and ev.data.params.textDocument or {}
  local name = vim.fn.fnamemodify(vim.uri_to_fname(doc.uri or 'file:///'), ':t')
  table.insert(_G.lsap_test_heard, ev.data.method .. ' ' .. name)
end })
vim.api.nvim_buf_call(buf, function() vim.cmd('noautocmd keepalt file ' .. vim.fn.fnameescape(moved)) end)
local native = compat.announce_write(buf)
local group = ('nvim.lsp.b_%d_save'):format(buf)
vim.api.nvim_del_augroup_by_name(group)
local ok, fallback = pcall(compat.announce_write, buf)
local asking = 0
for _, c in ipairs(vim.lsp.get_clients({ bufnr = buf })) do
  if vim.tbl_get(c.server_capabilities, 'textDocumentSync', 'save') then asking = asking + 1 end
end
return { native = native, ok = ok, fallback = fallback, asking = asking,
         clients = #vim.lsp.get_clients({ bufnr = buf }) }
"""
# What the servers were sent meanwhile (`LspNotify` runs on a later turn of the loop).
HEARD = "vim.api.nvim_del_autocmd(_G.lsap_test_listen); return _G.lsap_test_heard"


def test_a_moved_buffer_is_announced_under_its_new_name(bridge: Bridge) -> None:
    """compat.announce_write: Neovim's own handler closes the old name and opens the new one
    for every server; its fallback (no `nvim.lsp.b_<n>_save` group) raises nothing and sends
    didSave only to servers that ask for it (neither basedpyright nor ruff does)."""
    bridge.ask(mode="diagnostics", file_path="shop/promotions.py")  # its servers attached
    told = bridge.lua(ANNOUNCE, str(bridge.root / "shop" / "promotions.py"), str(bridge.root / "shop" / "deals.py"))
    told["heard"] = bridge.lua(HEARD)
    assert told["native"] is True and told["clients"] == 2
    assert told["heard"].count("textDocument/didClose promotions.py") == 2, told["heard"]
    assert told["heard"].count("textDocument/didOpen deals.py") == 2, told["heard"]
    assert told["ok"] and told["fallback"] is False
    assert sum(h.startswith("textDocument/didSave") for h in told["heard"]) == told["asking"]
