"""A change set whose edit a crash left unfinished, and the journal then rolled back, is not
listed as applied (issue 46): start-up's recovery drops it with the edit."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from lsap_bridge import changes
from lsap_bridge.edits.switch import recover_edits
from lsap_bridge.journal import Change, Journal
from lsap_bridge.workspace import Workspace


class Gateway:
    """The two calls recovery makes into Neovim."""

    def __init__(self, journals: Path) -> None:
        self.journals = journals
        self.reloaded: list[Any] = []

    async def call(self, name: str, *args: Any) -> Any:
        if name == "journal_dir":
            return str(self.journals)
        self.reloaded.append(args)
        return None


def test_a_set_whose_edit_was_rolled_back_after_a_crash_is_gone(tmp_path: Path) -> None:
    root, journals = tmp_path / "project", tmp_path / "state"
    root.mkdir()
    kept = root / "kept.py"
    kept.write_text("a = 1\n")
    applied = changes.begin(journals, "rename a → b", [changes.FileText(str(kept), ["a = 0"], ["a = 1"])])
    target = root / "mod.py"
    target.write_text("x = 1\n")
    label = "rename x → y"
    changes.begin(journals, label, [changes.FileText(str(target), ["x = 1"], ["y = 1"])])
    journal = Journal.prepare(journals, label, [Change(target, b"y = 1\n", None)], [root])
    os.close(journal._fd)  # the process dies here: no commit marker, nothing switched
    found = asyncio.run(recover_edits(Gateway(journals), [root]))  # type: ignore[arg-type]
    assert [r.outcome for r in found] == ["rolled back"]
    assert target.read_text() == "x = 1\n"
    assert [c.id for c in changes.load(journals, Workspace.of(root))] == [applied.id]
