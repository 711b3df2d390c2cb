"""Change sets and one-step undo on a real Neovim with basedpyright: an agent's rename across
five files (two open in the human's windows, one with the human's unsaved text, two not
loaded) taken back whole by `:Lsap undo`, byte for byte on disk and in the buffers, one
undo step each; a file edited since is a `conflict` that changes nothing (or is left out
with `partial`); the sets survive a restart, are bounded, and hold no file outside."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge import changes
from lsap_bridge.edits.switch import journal_dir
from lsap_bridge.workspace import Workspace

from .edit_faults import as_agent
from .harness import Bridge, Pool

pytestmark = pytest.mark.integration

RENAME = {"mode": "rename", "locate": "shop/models.py@class <|>Product", "new_name": "Item", "format": "json"}
REPORTS = '''"""Sales reports."""

from .models import Product


def total(products: list[Product]) -> float:
    return sum(p.price for p in products)
'''
HUMAN_LINE = "# a note the human is writing"


def with_reports(root: Path) -> None:
    (root / "shop" / "reports.py").write_text(REPORTS)  # a fifth file that uses Product


@pytest.fixture
def bridge(bridges: Pool) -> Bridge:
    """basedpyright reset for each test (warm: `Bridge.reset` has it list the workspace's
    files again, without which after a rename and its undo it renames in the declaring file
    only). The SIGKILL test closes it itself: the pool starts a new one after it."""
    return bridges.take(("basedpyright",), "shop+reports", prepare=with_reports)


def disk(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*.py")) if "__pycache__" not in p.parts}


def seq(bridge: Bridge, path: Path) -> int:
    """The newest entry of the buffer's undo tree."""
    return int(bridge.lua("local b = vim.fn.bufnr(...); return vim.api.nvim_buf_call(b, "
                          "function() return vim.fn.undotree().seq_last end)", str(path)))


def command(bridge: Bridge, line: str, title: str) -> list[str]:
    """Run `:Lsap …` in Neovim as the human types it (none: it ran); the report it shows."""
    if line:
        bridge.lua("vim.cmd(...)", line)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        shown = bridge.lua("local b = vim.fn.bufnr('lsap://report'); "
                           "return b > 0 and vim.api.nvim_buf_get_lines(b, 0, -1, false) or {}")
        if shown and shown[0].startswith(title):
            return list(shown)
        time.sleep(0.1)
    raise AssertionError(f"no report titled {title!r}")


def open_files(bridge: Bridge) -> tuple[Path, Path, Path]:
    """models.py and catalog.py in the human's windows; promotions.py with unsaved text."""
    root = bridge.root / "shop"
    models, catalog, promotions = root / "models.py", root / "catalog.py", root / "promotions.py"
    bridge.lua("vim.cmd.edit(vim.fn.fnameescape(...))", str(models))
    bridge.lua("vim.cmd('vsplit ' .. vim.fn.fnameescape(...))", str(catalog))
    bridge.lua("local path, line = ...; local b = vim.fn.bufadd(path); vim.fn.bufload(b); "
               "vim.api.nvim_buf_set_lines(b, 0, 0, false, {line})", str(promotions), HUMAN_LINE)
    return models, catalog, promotions


def agent_rename(bridge: Bridge) -> dict[str, Any]:
    response = as_agent(bridge, RENAME)
    assert response.ok, response.text
    data: dict[str, Any] = json.loads(response.text)
    assert len(data["changed"]) == 5, data["changed"]
    return data


def test_an_agents_five_file_rename_is_undone_whole_by_lsap_undo(bridge: Bridge) -> None:
    root = bridge.root
    original = disk(root)
    models, catalog, promotions = open_files(bridge)
    loaded = {p: bridge.buffer_lines(p) for p in (models, catalog, promotions)}
    assert bridge.buffer_lines(root / "shop" / "checkout.py") == []  # not loaded
    assert bridge.buffer_lines(root / "shop" / "reports.py") == []

    data = agent_rename(bridge)
    assert data["unsaved"] == []  # promotions.py on disk too; its buffer keeps the human's line
    assert data["undo"] == json.dumps({"mode": "undo", "id": data["change"]}, separators=(",", ":"))
    assert disk(root) != original
    renamed = {p: seq(bridge, p) for p in loaded}

    shown = command(bridge, "Lsap undo", "# Undo")
    assert shown[0].startswith(f"# Undo {data['change']}: rename Product → Item"), shown
    assert "By agent-7" in "\n".join(shown)

    assert disk(root) == original  # every file byte for byte, the two never loaded included
    for path, lines in loaded.items():
        assert bridge.buffer_lines(path) == lines, path
        assert seq(bridge, path) == renamed[path] + 1, path  # one undo-tree entry each
    assert bridge.buffer_lines(promotions)[0] == HUMAN_LINE and bridge.modified(promotions)
    assert not bridge.modified(models) and not bridge.modified(catalog)

    listed = bridge.ask(mode="changes")
    assert [c["id"] for c in listed["changes"][:2]] == [str(int(data["change"]) + 1), data["change"]]
    assert listed["changes"][1]["state"].startswith("undone by")
    assert listed["changes"][0]["who"] == "human"

    # Undoing the undo redoes the rename; undoing that again leaves everything as it was.
    again = bridge.ask(mode="undo", id=listed["changes"][0]["id"])
    assert len(again["undone"]) == 5 and disk(root) != original
    bridge.ask(mode="undo", id=again["change"])
    assert disk(root) == original
    assert bridge.buffer_lines(promotions)[0] == HUMAN_LINE


def test_a_file_edited_since_is_a_conflict_unless_partial(bridge: Bridge) -> None:
    root = bridge.root
    original = disk(root)
    data = agent_rename(bridge)
    checkout = root / "shop" / "checkout.py"
    edited = checkout.read_text() + "\n# the human's edit after the rename\n"
    checkout.write_text(edited)  # edited since, on disk
    after = disk(root)

    refused = as_agent(bridge, {"mode": "undo", "id": data["change"]})
    assert refused.error is not None and refused.error.code.value == "conflict", refused.text
    assert "shop/checkout.py" in refused.error.message and "edited since" in refused.error.message
    assert '"partial":true' in (refused.error.hint or "")
    assert disk(root) == after  # nothing changed

    done = json.loads(as_agent(bridge, {"mode": "undo", "id": data["change"], "partial": True,
                                        "format": "json"}).text)
    assert sorted(done["undone"]) == sorted(p for p in (f["path"] for f in data["changed"])
                                            if p != "shop/checkout.py")
    assert [c["path"] for c in done["conflicts"]] == ["shop/checkout.py"]
    now = disk(root)
    assert now["shop/checkout.py"] == edited.encode()  # the human's edit is never overwritten
    assert {k: v for k, v in now.items() if k != "shop/checkout.py"} == {
        k: v for k, v in original.items() if k != "shop/checkout.py"}
    checkout.write_bytes(original["shop/checkout.py"])


def test_change_sets_survive_a_sigkill_and_a_restart(bridge: Bridge) -> None:
    root = bridge.root
    original = disk(root)
    data = agent_rename(bridge)
    renamed = disk(root)
    bridge.loop.run(bridge.embedded.track())  # its servers' groups, ended by close()
    bridge.embedded.conn.process.kill()  # SIGKILL: Neovim gets no chance to save anything
    bridge.close()
    again = Bridge(root, ["basedpyright"])
    try:
        listed = again.ask(mode="changes")["changes"]
        assert listed[0]["id"] == data["change"] and listed[0]["who"] == "agent-7"
        assert listed[0]["label"] == "rename Product → Item" and listed[0]["count"] == 5
        assert disk(root) == renamed
        again.ask(mode="undo")
        assert disk(root) == original
    finally:
        again.close()


def test_change_sets_are_bounded_and_hold_no_file_outside(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    inside, outside = tmp_path / "inside", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    where = tmp_path / "journal"
    changes.begin(where, "there", [changes.FileText(str(outside / "a.py"), ["a"], ["b"])])
    monkeypatch.setattr(changes, "KEEP", 3)
    for n in range(5):
        changes.begin(where, f"edit {n}", [changes.FileText(str(inside / "a.py"), ["a"], ["b"])])
    # Another workspace sharing the state directory sees none of them, nor finds them by id.
    assert changes.load(where, Workspace.of(outside)) == []
    kept = changes.load(where, Workspace.of(inside))
    assert [c.label for c in kept] == ["edit 4", "edit 3", "edit 2"]  # past KEEP the oldest go
    assert changes.find(where, Workspace.of(outside), kept[0].id) is None
    monkeypatch.setattr(changes, "KEEP_BYTES", 1)
    changes.begin(where, "edit 5", [changes.FileText(str(inside / "a.py"), ["a"], ["b"])])
    [alone] = changes.load(where, Workspace.of(inside))  # past KEEP_BYTES, only the newest
    # and a set larger than the bound on its own keeps its files' names, not their texts.
    assert alone.label == "edit 5" and not alone.texts and alone.files[0].after == []


TALLY = '''"""Tallies."""


class Tally:
    pass


first = Tally()


second = Tally()
'''


def test_rejecting_one_hunk_reverts_exactly_it_and_accepting_clears_the_signs(bridge: Bridge) -> None:
    root = bridge.root
    tally = root / "shop" / "tally.py"
    tally.write_text(TALLY)
    bridge.lua("vim.cmd.edit(vim.fn.fnameescape(...))", str(tally))
    signed = "return require('lsap.presence').signed(vim.fn.bufnr(...))"
    response = as_agent(bridge, {"mode": "rename", "locate": "shop/tally.py@class <|>Tally", "new_name": "Count",
                                 "format": "json"})
    assert response.ok, response.text
    change = json.loads(response.text)["change"]
    renamed = TALLY.replace("Tally()", "Count()").replace("class Tally", "class Count")
    assert tally.read_text() == renamed
    assert bridge.lua(signed, str(tally)) == [3, 7, 10]  # the three lines the agent wrote

    # `:Lsap changes`, <CR> on the change's row: its review, three hunks.
    shown = command(bridge, "Lsap changes", "# Changes")
    row = next(n for n, text in enumerate(shown, 1) if text.startswith(f"- **{change}**"))
    bridge.lua("vim.api.nvim_set_current_win(vim.fn.bufwinid('lsap://report')); "
               "vim.api.nvim_win_set_cursor(0, {...}); require('lsap.report').jump()", row, 0)
    review = command(bridge, "", f"# Review {change}")
    assert "3 hunks left to decide" in review[2], review

    # `x` on the second hunk's diff rejects it.
    line = next(n for n, text in enumerate(review, 1) if text == "+first = Count()")
    bridge.lua("vim.api.nvim_win_set_cursor(vim.fn.bufwinid('lsap://report'), {...}); "
               "vim.api.nvim_win_call(vim.fn.bufwinid('lsap://report'), function() "
               "require('lsap.report').decide('reject') end)", line, 0)
    again = command(bridge, "", f"# Review {change}")
    deadline = time.monotonic() + 30
    while "2 hunks left" not in again[2] and time.monotonic() < deadline:
        again = command(bridge, "", f"# Review {change}")
    assert "rejected hunk 2 of shop/tally.py" in again[2], again
    data = bridge.ask(mode="review", id=change)
    expected = renamed.replace("first = Count()", "first = Tally()")
    assert tally.read_text() == expected  # exactly that hunk, on disk
    assert bridge.buffer_lines(tally) == expected.splitlines() and not bridge.modified(tally)
    assert [h["number"] for h in data["files"][0]["hunks"]] == [1, 3] and data["pending"] == 2  # numbers stay
    assert bridge.lua(signed, str(tally)) == [3, 10]

    done = bridge.ask(mode="review", id=change, file_path="shop/tally.py", decision="accept")
    assert done["pending"] == 0 and done["files"] == []
    assert bridge.lua(signed, str(tally)) == []
    assert tally.read_text() == expected
    listed = {c["id"]: c for c in bridge.ask(mode="changes")["changes"]}
    assert listed[change]["state"] == "reviewed" and listed[change]["undo"] is None

    # A text-format edit is a change set too (the human's here), undone the same way.
    catalog = root / "shop" / "catalog.py"
    before = catalog.read_bytes()
    response = bridge.text("shop/catalog.py", '@@ CAFE = Product("café crème", 2.5)', "! CAFE RENAME_TO COFFEE")
    assert response.ok and b"COFFEE" in catalog.read_bytes(), response.text
    newest = bridge.ask(mode="changes")["changes"][0]
    assert newest["who"] == "human" and "shop/catalog.py" in newest["files"]
    kept = changes.find(bridge.loop.run(journal_dir(bridge.embedded.gateway)), bridge.service.workspace, newest["id"])
    assert kept is not None and "RENAME_TO COFFEE" in (kept.request or "")
    bridge.ask(mode="undo", id=newest["id"])
    assert catalog.read_bytes() == before
