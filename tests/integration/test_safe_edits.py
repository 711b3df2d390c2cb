"""No edit ever overwrites what it did not read, on a real Neovim with real servers.

An agent's own disk edit between a query and a rename is kept (renamed, or the rename is
refused with `conflict`); the world changing while the edit policy asks (the file
rewritten, made read-only, a directory swapped for a symlink out of the workspace)
refuses the edit with nothing changed anywhere; the human's unsaved buffer over a file
that changed on disk keeps both texts apart; a rename whose edits miss uses that
`references` finds says so.
"""

from __future__ import annotations

import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE

from .edit_faults import as_agent, during_approval
from .harness import Bridge, Pool

pytestmark = pytest.mark.integration

RENAME = {"mode": "rename", "locate": "shop/models.py@class <|>Product", "new_name": "Item"}
AGENT_LINES = '\n\ndef loyalty_points(product: Product) -> int:\n    return int(product.price)\n'


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under `root` (links as what they point at), hidden ones included."""
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


@pytest.fixture(params=["basedpyright", "pylsp"])
def python_bridge(request: pytest.FixtureRequest, bridges: Pool) -> Bridge:
    return bridges.take((request.param,))


@pytest.fixture
def shop_bridge(bridges: Pool) -> Bridge:
    return bridges.take(("basedpyright",))


def agent_edits(path: Path) -> str:
    """An agent adds a use of Product with its own tools (rewriting the file on disk)."""
    text = path.read_text() + AGENT_LINES
    path.write_text(text)
    return text


@pytest.mark.parametrize("held", ["hidden buffer", "human's window"])
def test_an_agents_disk_edit_before_a_rename_is_never_lost(python_bridge: Bridge, held: str) -> None:
    bridge, root = python_bridge, python_bridge.root
    models = root / "shop" / "models.py"
    if held == "human's window":
        bridge.lua("vim.cmd.edit(vim.fn.fnameescape(...))", str(models))
    assert bridge.ask(mode="references", locate="shop/models.py:Product")["total"] > 0
    others = {p: t for p, t in snapshot(root).items() if p != "shop/models.py"}
    edited = agent_edits(models)

    response = bridge.request({**RENAME, "format": "json"})

    on_disk = models.read_text()
    if response.ok:  # the bridge saw the agent's edit, and renamed it too
        assert "def loyalty_points(product: Item) -> int:" in on_disk
        assert not re.search(r"\bProduct\b", on_disk.replace('"Product"', ""))
        assert bridge.buffer_lines(models) == on_disk.splitlines()
        assert not bridge.modified(models)
    else:  # or it refused, changing nothing
        assert response.error is not None and response.error.code.value == "conflict", response.text
        assert "shop/models.py" in response.error.message
        assert on_disk == edited
        assert {p: t for p, t in snapshot(root).items() if p != "shop/models.py"} == others


def test_an_agents_edit_of_a_file_no_buffer_holds_is_never_lost(python_bridge: Bridge) -> None:
    """The agent shifts every line of catalog.py (which no buffer holds) and adds a use: the
    rename's positions are either the new ones, or the rename is refused."""
    bridge, root = python_bridge, python_bridge.root
    catalog = root / "shop" / "catalog.py"
    assert bridge.ask(mode="references", locate="shop/models.py:Product")["total"] > 0
    assert bridge.buffer_lines(catalog) == []
    edited = "# moved down by the agent\n\n" + catalog.read_text() + AGENT_LINES
    catalog.write_text(edited)
    response = bridge.request(RENAME)
    on_disk = catalog.read_text()
    if response.ok:
        assert on_disk == re.sub(r"\bProduct\b", "Item", edited)
    else:
        assert response.error is not None and response.error.code.value == "conflict", response.text
        assert on_disk == edited


def test_the_disk_changed_while_the_human_decides(shop_bridge: Bridge) -> None:
    """edit_policy = 'ask': the file changes while the prompt is open; the approval does not
    make the rename go over it."""
    bridge, root = shop_bridge, shop_bridge.root
    catalog = root / "shop" / "catalog.py"
    bridge.ask(mode="references", locate="shop/models.py:Product")
    before_prompt = snapshot(root)
    # Meanwhile another agent (or git) writes a file of the rename.
    with during_approval(bridge, lambda: agent_edits(catalog)) as asked:
        response = as_agent(bridge, RENAME)
    assert asked == ["agent-7: rename Product → Item: 18 edits in 4 files"]
    assert response.error is not None and response.error.code.value == "conflict", response.text
    assert response.error.message == (
        "shop/catalog.py changed on disk after the edit was planned"
    )
    assert snapshot(root) == {**before_prompt, "shop/catalog.py": catalog.read_bytes()}
    assert catalog.read_text().endswith(AGENT_LINES)
    for rel in ("shop/models.py", "shop/catalog.py"):  # no buffer took the rename either
        lines = bridge.buffer_lines(root / rel)
        assert not any("Item" in line for line in lines) and not bridge.modified(root / rel)


def test_a_target_made_read_only_during_the_prompt(shop_bridge: Bridge) -> None:
    bridge, root = shop_bridge, shop_bridge.root
    checkout = root / "shop" / "checkout.py"
    before = snapshot(root)
    with during_approval(bridge, lambda: checkout.chmod(0o444)) as asked:
        response = as_agent(bridge, RENAME)
    assert asked, "the edit policy was asked"
    assert response.error is not None and response.error.code.value == "conflict", response.text
    assert response.error.message == (
        "shop/checkout.py cannot be written any more: it is read-only (mode 0444) after the "
        "edit was planned"
    )
    assert snapshot(root) == before
    checkout.chmod(0o644)
    assert bridge.request(RENAME).ok


def test_the_human_types_in_a_target_during_the_prompt(shop_bridge: Bridge) -> None:
    """The human changes models.py (a loaded buffer the edit was planned on) while the prompt
    is open: nothing is applied, and the human's typing stays, unsaved."""
    bridge, root = shop_bridge, shop_bridge.root
    models = root / "shop" / "models.py"
    bridge.lua("vim.cmd.edit(vim.fn.fnameescape(...))", str(models))
    before = snapshot(root)
    typing = bridge.embedded.gateway.exec_lua(
        "vim.api.nvim_buf_set_lines(vim.fn.bufnr(...), 0, 0, false, {'# typed meanwhile'})",
        str(models))
    with during_approval(bridge, lambda: typing) as asked:
        response = as_agent(bridge, RENAME)
    assert asked
    assert response.error is not None and response.error.code.value == "conflict", response.text
    assert response.error.message == (
        "rename Product → Item was not applied: shop/models.py changed while the edit was prepared"
    )
    assert snapshot(root) == before
    lines = bridge.buffer_lines(models)
    assert lines[0] == "# typed meanwhile" and "class Product:" in lines and bridge.modified(models)
    assert not any("Item" in line for rel in ("catalog.py", "checkout.py")
                   for line in bridge.buffer_lines(root / "shop" / rel))


def test_a_directory_swapped_for_a_symlink_out_of_the_workspace(
    shop_bridge: Bridge, tmp_path: Path
) -> None:
    """During the prompt, `shop/` becomes a link to a copy outside the workspace: nothing
    is written there, nor inside."""
    bridge, root = shop_bridge, shop_bridge.root
    package, outside = root / "shop", tmp_path / "outside"

    def swap() -> None:
        shutil.copytree(package, outside)
        package.rename(root / "shop.real")
        package.symlink_to(outside, target_is_directory=True)

    with during_approval(bridge, swap) as asked:
        response = as_agent(bridge, RENAME)
    assert asked
    assert response.error is not None, response.text
    assert response.error.code.value == "outside_workspace", response.text
    assert "a symlink changed after the edit was planned" in response.error.message
    assert "class Product:" in (outside / "models.py").read_text()
    assert not any(b"Item" in data for data in snapshot(outside).values())
    assert not any(b"Item" in data for data in snapshot(root / "shop.real").values())


def test_unsaved_changes_and_a_different_disk_stay_apart(python_bridge: Bridge) -> None:
    """The human typed in promotions.py (unsaved) and an agent then rewrote the file on
    disk, with a use of the old name the buffer does not have: the rename, computed on the
    buffer, would leave the disk half renamed, so it is refused whole; the disk keeps the
    agent's version, the buffer the human's."""
    bridge, root = python_bridge, python_bridge.root
    promotions = root / "shop" / "promotions.py"
    bridge.lua(
        "vim.cmd.edit(vim.fn.fnameescape(...)); "
        "vim.api.nvim_buf_set_lines(0, 0, 0, false, {'# the human is writing this'})",
        str(promotions),
    )
    on_disk = agent_edits(promotions)
    response = bridge.request({**RENAME, "format": "json"})
    if bridge.servers == ["pylsp"]:
        # jedi rewrites promotions.py whole, from a text without the human's line: refused.
        assert response.error is not None and response.error.code.value == "conflict"
        assert "would replace all of shop/promotions.py, which has unsaved changes" in (
            response.error.message)
        assert promotions.read_text() == on_disk
        return
    assert response.error is not None and response.error.code.value == "conflict", response.text
    assert "shop/promotions.py on disk holds `Product` at line 21, a line its buffer (with unsaved " \
        "changes) does not have" in response.error.message
    assert promotions.read_text() == on_disk  # the agent's version, untouched
    lines = bridge.buffer_lines(promotions)
    assert lines[0] == "# the human is writing this" and bridge.modified(promotions)
    assert "from .models import Product" in lines and "loyalty_points" not in "\n".join(lines)


FILTER = Path(__file__).with_name("filter_server.py")


@pytest.fixture
def filtered(tmp_path: Path) -> Iterator[Bridge]:
    """basedpyright behind a proxy that keeps only the rename's edits of the file asked
    about, as basedpyright did once (1 edit where references found 5 uses in 2 files)."""
    root = tmp_path / "shop"
    shutil.copytree(EXAMPLE, root)
    bridge = Bridge(root, ["none"])
    bridge.lua(
        "local python, filter, root = ...;"
        "vim.lsp.config('filtered', {cmd = {python, filter, 'basedpyright-langserver', '--stdio'},"
        "  filetypes = {'python'}, root_dir = root});"
        "vim.lsp.enable('filtered')",
        sys.executable, str(FILTER), str(root),
    )
    yield bridge
    bridge.close()


def test_a_rename_that_misses_uses_says_so(filtered: Bridge) -> None:
    bridge, root = filtered, filtered.root
    preview = bridge.ask(mode="rename_preview", locate="shop/models.py@class <|>Product",
                         new_name="Item")
    assert [f["path"] for f in preview["files"]] == ["shop/models.py"]
    uses = preview["uses"]
    assert uses["files"] == 4 and uses["covered"] == 5 and uses["found"] == 18
    missed = {(u["path"], u["line"]) for u in preview["uncovered"]}
    assert ("shop/catalog.py", 3) in missed and ("shop/checkout.py", 4) in missed
    assert all(u["path"] != "shop/models.py" for u in preview["uncovered"])
    text = bridge.request({"mode": "rename_preview", "locate": "shop/models.py@class <|>Product",
                           "new_name": "Item"}).text
    assert ("> filtered's edits rename 5 of the 18 uses of `Product` that `references` finds "
            "(4 files); 13 keep the old name:") in text
    assert "> - shop/catalog.py:3:21 `from .models import Product`" in text
    assert ("Applying it is refused while it leaves uses with the old name (asked about under "
            "`edit_policy = 'ask'`); `\"allow_uncovered\": true` writes it anyway.") in text, text

    # Not written as it is: the uses it misses would break.
    before = {p: p.read_text() for p in sorted(root.rglob("*.py"))}
    refused = bridge.request({"mode": "rename_execute", "rename_id": preview["rename_id"]})
    assert refused.error is not None and refused.error.code.value == "denied", refused.text
    assert ("filtered's edits miss 13 of the 18 uses its `references` finds, in shop/catalog.py, "
            "shop/checkout.py, shop/promotions.py") in refused.error.message, refused.error.message
    assert refused.error.hint is not None and refused.error.hint.startswith("nothing was changed")
    assert '"allow_uncovered":true' in refused.error.hint, refused.error.hint
    assert {p: p.read_text() for p in sorted(root.rglob("*.py"))} == before
    # The explicit consent writes it, and the report still lists what it left.
    done = bridge.ask(mode="rename_execute", rename_id=preview["rename_id"], allow_uncovered=True)
    assert done["uncovered_total"] == 13
    # The files the edit left alone broke, and the report's diagnostics show it.
    broken = {d["path"] for d in done["new_diagnostics"]}
    assert {"shop/catalog.py", "shop/checkout.py", "shop/promotions.py"} <= broken | {
        p["path"] for p in done["pending"]}
    assert "class Item:" in (root / "shop" / "models.py").read_text()
