"""Crafted change sets beside a real bridge's (Neovim's state directory, basedpyright): an id
leading outside, a link planted as the next set's temporary file, a set that is `5`, a
`when` that is a string, a directory named like a set. `changes`, an agent's rename, its
`review` and its `undo` all answer, nothing outside the workspace changes, and each crafted
file is in rejected/ (`statefile`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lsap_bridge import changes
from lsap_bridge.edits.switch import journal_dir

from .edit_faults import as_agent
from .harness import Pool
from .test_changes import RENAME, disk

pytestmark = pytest.mark.integration


def test_crafted_change_sets_are_moved_aside_and_changes_undo_review_rename_work(
        bridges: Pool, tmp_path: Path) -> None:
    bridge = bridges.take(("basedpyright",), "shop")
    root, outside = bridge.root, tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.json").write_text("precious\n")
    directory = bridge.loop.run(journal_dir(bridge.embedded.gateway)) / changes.DIRECTORY
    directory.mkdir(parents=True, exist_ok=True)
    n = max((int(p.stem) for p in directory.glob("*.json") if p.stem.isdigit()), default=0)
    fine = {"who": "agent-7", "when": 1.0, "label": "crafted", "request": None,
            "files": [{"path": str(root / "shop" / "models.py"), "before": ["a"], "after": ["b"]}]}
    crafted = {f"{n + 1}.json": json.dumps({**fine, "id": os.path.relpath(outside / "victim", directory)}),
               f"{n + 2}.json": "5",
               f"{n + 3}.json": json.dumps({**fine, "id": str(n + 3), "when": "yesterday"})}
    for name, text in crafted.items():
        (directory / name).write_text(text)
    (directory / f"{n + 4}.json").mkdir()
    # The name the next set used to be written under first.
    (directory / f"{n + 5}.tmp").symlink_to(outside / "victim.json")
    original = disk(root)

    assert bridge.ask(mode="changes")["changes"] == []
    response = as_agent(bridge, RENAME)
    assert response.ok, response.text
    change = json.loads(response.text)["change"]
    assert bridge.ask(mode="review", id=change)["pending"] > 0
    assert bridge.ask(mode="undo", id=change)["undone"]
    assert disk(root) == original
    listed = bridge.ask(mode="changes")["changes"]
    assert [c["label"] for c in listed] == [f"undo {change} (rename Product → Item)", "rename Product → Item"]

    assert (outside / "victim.json").read_text() == "precious\n" and len(list(outside.iterdir())) == 1
    rejected = {p.name.rsplit(".", 1)[0] for p in (directory.parent / "rejected").iterdir()}
    assert {*crafted, f"{n + 4}.json", f"{n + 5}.tmp"} <= rejected
