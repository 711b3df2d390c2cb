"""Which files `outline` reads for a file, a directory or a glob (no Neovim needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsap_bridge.capabilities.files import expand, one_per_language
from lsap_bridge.errors import LsapError
from lsap_bridge.workspace import Workspace


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    for name in (
        "app/a.py",
        "app/b.ts",
        "app/notes.md",
        "app/sub/c.py",
        "node_modules/x/d.ts",
        ".venv/lib/e.py",
        "app/sub/data.json",
    ):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")
    return Workspace.of(tmp_path)


def names(workspace: Workspace, paths: list[Path]) -> list[str]:
    return [workspace.display(p) for p in paths]


def test_a_directory_lists_its_code_files_and_recursive_goes_deeper(workspace: Workspace) -> None:
    assert names(workspace, expand(workspace, "app", False, 100)) == ["app/a.py", "app/b.ts"]
    assert names(workspace, expand(workspace, "app", True, 100)) == [
        "app/a.py",
        "app/b.ts",
        "app/sub/c.py",
    ]
    assert names(workspace, expand(workspace, ".", True, 100)) == [
        "app/a.py",
        "app/b.ts",
        "app/sub/c.py",
    ]
    assert len(expand(workspace, "app", True, 2)) == 2


def test_a_glob_is_relative_to_the_root_and_skips_tool_directories(workspace: Workspace) -> None:
    assert names(workspace, expand(workspace, "**/*.py", False, 100)) == [
        "app/a.py",
        "app/sub/c.py",
    ]
    assert names(workspace, expand(workspace, "**/*.ts", False, 100)) == ["app/b.ts"]
    for bad in ("../*.py", "/etc/*.conf"):
        with pytest.raises(LsapError, match="relative to the root"):
            expand(workspace, bad, False, 100)
    with pytest.raises(LsapError, match="no code file matches"):
        expand(workspace, "**/*.go", False, 100)


def test_a_file_outside_or_missing_is_refused(workspace: Workspace) -> None:
    assert names(workspace, expand(workspace, "app/notes.md", False, 100)) == ["app/notes.md"]
    with pytest.raises(LsapError, match="outside the workspace"):
        expand(workspace, "../elsewhere", False, 100)
    with pytest.raises(LsapError, match="no such file or directory"):
        expand(workspace, "app/nope.py", False, 100)


def test_one_file_per_language(workspace: Workspace) -> None:
    assert names(workspace, one_per_language(workspace)) == ["app/a.py", "app/b.ts"]
