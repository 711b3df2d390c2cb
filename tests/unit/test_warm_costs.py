"""What every warm request does before and after its capability's own work (the fixed cost,
doc/architecture.md, Costs) is done once where it can be, and still sees what it is for."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from lsap_bridge.filestate import DiskStamp
from lsap_bridge.lsp import FileEventData
from lsap_bridge.session import calls
from lsap_bridge.session.warm import Session
from lsap_bridge.workspace import Workspace, uri_of
from tests.fakes import FakeEditor


class Told(FakeEditor):
    """A fake editor that keeps what the servers were told of their configuration files."""

    def __init__(self) -> None:
        super().__init__(lambda call: None)
        self.told: list[list[FileEventData]] = []

    async def reconfigure(self, changes: list[FileEventData]) -> list[str]:
        self.told.append(changes)
        return await super().reconfigure(changes)


def test_configuration_files_are_stamped_by_paths_made_once_and_each_change_is_told(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    editor = Told()
    servers = Session(editor, Workspace.of(one, two)).servers
    stamped: list[list[int]] = []
    real = DiskStamp.of

    def of(path: Path | str) -> DiskStamp | None:
        stamped[-1].append(id(path))
        return real(path)

    monkeypatch.setattr(DiskStamp, "of", of)

    def reconfigure() -> bool:
        stamped.append([])
        return asyncio.run(servers.reconfigure())

    assert not reconfigure()  # the baseline
    assert not reconfigure()
    # Every root's every configuration file, by the same path objects at every request.
    assert len(stamped[0]) == 2 * len(calls.CONFIG_FILES) and stamped[1] == stamped[0]
    pyproject, tsconfig = two / "pyproject.toml", one / "tsconfig.json"
    pyproject.write_text("[tool.basedpyright]\n")
    tsconfig.write_text("{}")
    assert reconfigure()
    pyproject.write_text("[tool.basedpyright]\ntypeCheckingMode = 'strict'\n")
    assert reconfigure()
    os.remove(tsconfig)
    assert reconfigure()
    assert not reconfigure()
    # created (1), changed (2), deleted (3): each once, each of its own file
    assert editor.told == [
        [{"uri": uri_of(tsconfig.resolve()), "type": 1}, {"uri": uri_of(pyproject.resolve()), "type": 1}],
        [{"uri": uri_of(pyproject.resolve()), "type": 2}],
        [{"uri": uri_of(tsconfig.resolve()), "type": 3}],
    ]
