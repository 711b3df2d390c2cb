"""Renames through the bridge on real servers (basedpyright, typescript-language-server):
applied across files with one undo step per buffer, the human's unsaved work kept out of the
disk, all or nothing when a write fails, and exclude_files kept inside the workspace.

The part-way failure is real: one target's new content vanishes after every check, right
before Neovim switches the files, so that renaming it into place fails after other files
were already switched (tests/integration/edit_faults.py).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge.diagnostics import DiagnosticDelta
from lsap_bridge.errors import LsapError
from tests.conftest import ROOT

from .edit_faults import chattr, failing_switch, immutable
from .harness import TS_SERVERS, Bridge, Pool

pytestmark = pytest.mark.integration

ANCHOR = "shop/models.py@class <|>Product"


def undo(bridge: Bridge, path: Path) -> None:
    bridge.lua(
        "vim.api.nvim_buf_call(vim.fn.bufnr(...), function() vim.cmd('silent undo') end)", str(path)
    )


def snapshot(root: Path) -> dict[Path, str]:
    return {p: p.read_text() for p in sorted(root.rglob("*.py"))}


@pytest.fixture
def shop_bridge(bridges: Pool) -> Bridge:
    """examples/shop with basedpyright, warm from the run's pool and reset to the fixture."""
    return bridges.take(("basedpyright",))


@pytest.fixture(params=["basedpyright", "pylsp"])
def python_bridge(request: pytest.FixtureRequest, bridges: Pool) -> Bridge:
    """basedpyright answers a rename with one edit per occurrence; pylsp (jedi) with one
    whole-file edit per file, computed from the disk, which the bridge refuses to lay over
    unsaved changes."""
    return bridges.take((request.param,))


def test_rename_across_files_is_clean_undoable_and_spares_unsaved_work(
    python_bridge: Bridge,
) -> None:
    bridge, root = python_bridge, python_bridge.root
    original = snapshot(root)
    promotions = root / "shop" / "promotions.py"
    # The human has typed in promotions.py and not saved.
    bridge.lua(
        "local b = vim.fn.bufadd(...); vim.fn.bufload(b); "
        "vim.api.nvim_buf_set_lines(b, 0, 0, false, {'# a note the human is writing'})",
        str(promotions),
    )
    session = bridge.service.session
    before = bridge.loop.run(session.diagnostics.of(list(original)))
    assert not before.pending

    if bridge.servers == ["pylsp"]:
        # jedi rewrites every other file whole, from the disk: applied to promotions.py it
        # would drop the human's line, so the bridge refuses and changes nothing.
        refused = bridge.request({"mode": "rename", "locate": ANCHOR, "new_name": "Item"})
        assert refused.error is not None and refused.error.code.value == "conflict"
        assert "pylsp would replace all of shop/promotions.py" in refused.error.message
        assert snapshot(root) == original
        assert bridge.buffer_lines(promotions)[0] == "# a note the human is writing"
        bridge.lua(
            "vim.api.nvim_buf_call(vim.fn.bufnr(...), function() vim.cmd('silent write') end)",
            str(promotions),
        )
        original = snapshot(root)  # saved: now the rename may go ahead
        before = bridge.loop.run(session.diagnostics.of(list(original)))

    data = bridge.ask(mode="rename", locate=ANCHOR, new_name="Item")

    changed = {f["path"] for f in data["changed"]}
    assert len(changed) >= 3 and "shop/models.py" in changed
    human = bridge.servers != ["pylsp"]  # the human's line is still unsaved in promotions.py
    assert data["unsaved"] == []  # written to disk even so: the disk is never half renamed
    assert data["new_diagnostics"] == [] and data["pending"] == []
    for path in original:
        rel = path.relative_to(root).as_posix()
        on_disk = path.read_text()
        if rel == "shop/promotions.py" and human:
            # The rename on disk too, without the human's line; the buffer holds both, unsaved.
            assert "from .models import Item" in on_disk and "# a note" not in on_disk
            lines = bridge.buffer_lines(path)
            assert lines == ["# a note the human is writing", *on_disk.splitlines()]
            assert bridge.modified(path)
        elif rel in changed:
            # jedi (pylsp) leaves string annotations (`-> "Product"`) alone.
            code = on_disk.replace('"Product"', "") if bridge.servers == ["pylsp"] else on_disk
            assert not re.search(r"\bProduct\b", code) and re.search(r"\bItem\b", on_disk)
            assert not bridge.modified(path)
        else:
            assert on_disk == original[path]
    # The report's "no new diagnostics" is checked independently, over every file.
    after = bridge.loop.run(session.diagnostics.of(list(original)))
    assert DiagnosticDelta.between(before, after).new == {} and not after.pending

    # One undo per buffer brings each back; the human's line stays.
    for rel in changed:
        undo(bridge, root / rel)
    for path in original:
        rel = path.relative_to(root).as_posix()
        if rel in changed:
            expected = original[path].splitlines()
            if rel == "shop/promotions.py" and human:
                expected = ["# a note the human is writing", *expected]
            assert bridge.buffer_lines(path) == expected, rel


def test_rename_failing_part_way_changes_nothing(shop_bridge: Bridge) -> None:
    bridge, root = shop_bridge, shop_bridge.root
    original = snapshot(root)
    preview = bridge.ask(mode="rename_preview", locate=ANCHOR, new_name="Item")
    order = [f["path"] for f in preview["files"]]
    assert len(order) >= 3
    victim = root / order[-1]  # written last: the files before it are already on disk
    with failing_switch(bridge, victim):
        response = bridge.request({"mode": "rename_execute", "rename_id": preview["rename_id"]})
    assert response.error is not None, response.text
    assert "every change was rolled back" in response.error.message
    assert order[-1] in response.error.message
    assert snapshot(root) == original
    for path in original:
        if path.relative_to(root).as_posix() in order:
            assert bridge.buffer_lines(path) == original[path].splitlines()
            assert not bridge.modified(path)


def test_unwritable_target_is_refused_before_anything_changes(shop_bridge: Bridge) -> None:
    bridge, root = shop_bridge, shop_bridge.root
    original = snapshot(root)
    victim = root / "shop" / "catalog.py"
    with immutable(victim):
        chattr("+i", victim)
        response = bridge.request({"mode": "rename", "locate": ANCHOR, "new_name": "Item"})
    assert response.error is not None and response.error.code.value == "denied", response.text
    assert "shop/catalog.py cannot be written" in response.error.message
    assert snapshot(root) == original
    assert bridge.buffer_lines(root / "shop" / "models.py") in (
        [],
        original[root / "shop" / "models.py"].splitlines(),
    )


def test_exclude_files_stays_inside_and_preview_ids_are_checked(shop_bridge: Bridge) -> None:
    bridge, root = shop_bridge, shop_bridge.root
    original = snapshot(root)
    for pattern in ("/etc/*", "../*"):
        response = bridge.request(
            {"mode": "rename", "locate": ANCHOR, "new_name": "Item", "exclude_files": [pattern]}
        )
        assert response.error is not None and response.error.code.value == "outside_workspace"
        assert pattern in response.error.message
    assert snapshot(root) == original

    preview = bridge.ask(mode="rename_preview", locate=ANCHOR, new_name="Item")
    assert "-class Product:" in "\n".join(f["diff"] for f in preview["files"])
    assert snapshot(root) == original  # a preview changes nothing
    response = bridge.request(
        {"mode": "rename_execute", "rename_id": preview["rename_id"], "exclude_files": ["/etc/*"]}
    )
    assert response.error is not None and response.error.code.value == "outside_workspace"

    done = bridge.ask(
        mode="rename_execute",
        rename_id=preview["rename_id"],
        exclude_files=["shop/checkout.py"],
    )
    assert done["excluded"] == ["shop/checkout.py"]
    assert (root / "shop" / "checkout.py").read_text() == original[root / "shop" / "checkout.py"]
    assert "class Item:" in (root / "shop" / "models.py").read_text()
    # checkout.py still imports Product: the report says what the exclusion broke.
    broken = {d["path"] for d in done["new_diagnostics"]}
    assert broken == {"shop/checkout.py"} or any(
        p["path"] == "shop/checkout.py" for p in done["pending"]
    )
    # An id is used once.
    again = bridge.request({"mode": "rename_execute", "rename_id": preview["rename_id"]})
    assert again.error is not None and again.error.code.value == "not_found"


def test_a_preview_is_refused_once_its_files_changed(shop_bridge: Bridge) -> None:
    bridge, root = shop_bridge, shop_bridge.root
    preview = bridge.ask(mode="rename_preview", locate=ANCHOR, new_name="Item")
    catalog = root / "shop" / "catalog.py"
    catalog.write_text(catalog.read_text() + "\n# changed after the preview\n")
    response = bridge.request({"mode": "rename_execute", "rename_id": preview["rename_id"]})
    assert response.error is not None and response.error.code.value == "conflict"
    assert "shop/catalog.py" in response.error.message
    assert "class Product:" in (root / "shop" / "models.py").read_text()


@pytest.fixture(params=TS_SERVERS)
def ts_bridge(request: pytest.FixtureRequest, bridges: Pool) -> Bridge:
    return bridges.take((request.param,), "ts_shop", ROOT / "tests" / "fixtures" / "ts_shop")


@pytest.mark.serial  # its diagnostics after wait on the servers' quiet: alone, not beside other workers
@pytest.mark.alone  # beside one other serial test ts_ls had not published in time
def test_typescript_rename_through_the_command(ts_bridge: Bridge) -> None:
    """typescript-language-server answers with versioned documentChanges; `:Lsap rename`
    goes through the same path as an agent's request."""
    bridge, root = ts_bridge, ts_bridge.root
    pricing, basket = root / "src" / "pricing.ts", root / "src" / "basket.ts"
    session = bridge.service.session
    before = bridge.loop.run(session.diagnostics.of([pricing, basket]))
    payload = bridge.loop.run(
        bridge.service.command_request(
            {
                "mode": "rename",
                "anchor": "src/pricing.ts@function <|>round",
                "options": {"new_name": "roundTo"},
            }
        )
    )
    data = bridge.ask(**payload)
    assert {f["path"] for f in data["changed"]} == {"src/pricing.ts", "src/basket.ts"}
    assert "round(" not in basket.read_text().replace("Math.round(", "")
    assert "roundTo(sum)" in basket.read_text()
    # Each file is analysed afresh (its buffer re-read the renamed file) or, where
    # typescript-language-server published nothing new, covered by the quiet period: none
    # is reported as not analysed.
    assert data["new_diagnostics"] == [] and data["pending"] == []
    after = bridge.loop.run(session.diagnostics.of([pricing, basket]))
    assert not after.pending
    assert DiagnosticDelta.between(before, after).new == {}
    for path in (pricing, basket):
        undo(bridge, path)
    assert "  return round(sum);" in bridge.buffer_lines(basket)
    assert "export function round(value: number, digits = 2): number {" in bridge.buffer_lines(pricing)


def test_lsap_rename_command_on_the_cursor(shop_bridge: Bridge) -> None:
    """`:LsapRename new_name=Item` with the cursor on the class name: the Ex command path."""
    from .test_editor import report_lines, wait_for

    bridge, root = shop_bridge, shop_bridge.root
    models = root / "shop" / "models.py"
    row = models.read_text().splitlines().index("class Product:") + 1
    win = bridge.lua(
        "vim.cmd.edit(vim.fn.fnameescape(...)); vim.api.nvim_win_set_cursor(0, {"
        + str(row)
        + ", 8}); return vim.api.nvim_get_current_win()",
        str(models),
    )
    bridge.lua("vim.cmd('LsapRename new_name=Item')")
    lines = wait_for(
        lambda: (
            [x for x in report_lines(bridge) if x.startswith("# Rename")] and report_lines(bridge)
        )
    )
    text = "\n".join(lines)
    assert "# Rename: `Product` → `Item`" in text and " edits in 4 files" in text
    assert "class Item:" in models.read_text()
    # The human's window still shows the file, cursor where it was.
    assert bridge.lua("return vim.api.nvim_win_get_cursor(...)", win) == [row, 8]


def test_typescript_diagnostics_of_unsaved_text(ts_bridge: Bridge) -> None:
    bridge, root = ts_bridge, ts_bridge.root
    basket = root / "src" / "basket.ts"
    assert bridge.ask(mode="diagnostics", file_path="src/basket.ts")["total"] == 0
    bridge.lua(
        "local b = vim.fn.bufadd(...); vim.fn.bufload(b); "
        "vim.api.nvim_buf_set_lines(b, 0, 0, false, {'const wrong: number = \"text\";'})",
        str(basket),
    )
    data = bridge.ask(mode="diagnostics", file_path="src/basket.ts", min_severity="error")
    errors = [d for g in data["groups"] for d in g["diagnostics"]]
    assert [(d["line"], d["severity"], d["code"]) for d in errors] == [(1, "error", "2322")]
    assert data["pending"] == [] and data["quiet"] == []
    # A clean file that stays clean: typescript-language-server publishes nothing, the bridge
    # waits its quiet period, and the report says the earlier (empty) diagnostics stand;
    # vtsls's diagnostics are asked for (lsap_bridge/tsserver.py), so its answer is plain.
    pricing = root / "src" / "pricing.ts"
    assert bridge.ask(mode="diagnostics", file_path="src/pricing.ts")["total"] == 0
    bridge.lua(
        "vim.api.nvim_buf_set_lines(vim.fn.bufnr(...), 0, 0, false, {'// note'})", str(pricing)
    )
    data = bridge.ask(mode="diagnostics", file_path="src/pricing.ts")
    assert data["total"] == 0 and data["pending"] == []
    assert data["quiet"] == ([] if bridge.servers == ["vtsls"] else [
        {"path": "src/pricing.ts", "reason": "ts_ls published nothing new since the file changed"}
    ])


def test_file_operations_apply_in_order_and_roll_back(shop_bridge: Bridge) -> None:
    """documentChanges with CreateFile, a TextDocumentEdit of the new file and a RenameFile,
    applied by the real Lua side; then the same with a later write failing."""
    from lsap_bridge.edits.apply import apply_workspace_edit

    bridge, root = shop_bridge, shop_bridge.root
    session = bridge.service.session
    models = root / "shop" / "models.py"
    client = bridge.loop.run(session.servers.target(models, "textDocument/rename")).client

    def edit(new_file: Path, old: Path, new: Path) -> dict[str, Any]:
        insert = {
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
            "newText": "FEE = 2  # café\n",
        }
        end = len(models.read_text().splitlines())
        append_to_models = {  # after the final newline: a new last line
            "range": {"start": {"line": end, "character": 0}, "end": {"line": end, "character": 0}},
            "newText": "EXTRA = 1\n",
        }
        return {
            "documentChanges": [
                {"kind": "create", "uri": new_file.as_uri()},
                {"textDocument": {"uri": new_file.as_uri(), "version": None}, "edits": [insert]},
                {"kind": "rename", "oldUri": old.as_uri(), "newUri": new.as_uri()},
                {
                    "textDocument": {"uri": models.as_uri(), "version": None},
                    "edits": [append_to_models],
                },
            ]
        }

    original = snapshot(root)
    extra, catalog, catalogue = (
        root / "shop" / "fees.py",
        root / "shop" / "catalog.py",
        root / "shop" / "catalogue.py",
    )

    with failing_switch(bridge, models), pytest.raises(LsapError) as caught:
        bridge.loop.run(
            apply_workspace_edit(session, edit(extra, catalog, catalogue), client, label="t")
        )
    assert "every change was rolled back" in caught.value.message
    assert not extra.exists() and not catalogue.exists() and snapshot(root) == original

    result = bridge.loop.run(
        apply_workspace_edit(session, edit(extra, catalog, catalogue), client, label="t")
    )
    assert result.created == ["shop/fees.py"] and result.renamed == [
        ("shop/catalog.py", "shop/catalogue.py")
    ]
    assert extra.read_text() == "FEE = 2  # café\n"
    assert not catalog.exists() and catalogue.read_text() == original[catalog]
    assert models.read_text() == original[models] + "EXTRA = 1\n"


def test_no_edit_while_the_human_types_in_a_target(shop_bridge: Bridge) -> None:
    from .test_editor import wait_for

    bridge, root = shop_bridge, shop_bridge.root
    original = snapshot(root)
    catalog = root / "shop" / "catalog.py"
    bridge.lua(
        "vim.cmd.edit(vim.fn.fnameescape(...)); vim.api.nvim_feedkeys('i', 'n', false)",
        str(catalog),
    )
    # Typed keys are taken when Neovim next reads input: wait until Insert mode is on.
    wait_for(lambda: bridge.lua("return vim.api.nvim_get_mode().mode") == "i")
    response = bridge.request({"mode": "rename", "locate": ANCHOR, "new_name": "Item"})
    assert response.error is not None and response.error.code.value == "conflict"
    assert response.error.message == (
        "rename Product → Item was not applied: the human is typing in shop/catalog.py"
    )
    assert snapshot(root) == original and not bridge.modified(catalog)
    bridge.lua("vim.api.nvim_feedkeys(vim.keycode('<Esc>'), 'n', false)")
    wait_for(lambda: bridge.lua("return vim.api.nvim_get_mode().mode") == "n")
    assert bridge.request({"mode": "rename", "locate": ANCHOR, "new_name": "Item"}).ok


def test_a_reset_bridge_renames_across_files_again(bridges: Pool) -> None:
    """The pool's reset keeps basedpyright warm: after a rename, its undo and the reset (which
    closes every buffer), the same rename changes the same files, not the declaring one only."""
    bridge = bridges.take(("basedpyright",))
    changed = {f["path"] for f in bridge.ask(mode="rename", locate=ANCHOR, new_name="Item")["changed"]}
    assert len(changed) >= 4, changed
    for rel in changed:
        undo(bridge, bridge.root / rel)
    again = bridges.take(("basedpyright",))
    assert again is bridge  # warm: reset, not started again
    assert {f["path"] for f in again.ask(mode="rename", locate=ANCHOR, new_name="Item")["changed"]} == changed
