"""Which files `outline` reads for a file, a directory or a glob, and the one workspace walk
with its confinement and size rules (no Neovim needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsap_bridge.errors import LsapError
from lsap_bridge.report.files import expand, one_per_language
from lsap_bridge.workspace import Walk, Workspace


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


def names(workspace: Workspace, found: Walk | list[Path]) -> list[str]:
    return [workspace.display(p) for p in (found.files if isinstance(found, Walk) else found)]


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
    limited = expand(workspace, "app", True, 2)
    assert len(limited.files) == 2 and limited.more


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


@pytest.fixture
def links(workspace: Workspace, tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """Links inside the workspace: to a file and a directory outside, and to a file inside."""
    outside = tmp_path_factory.mktemp("outside")
    (outside / "secret.py").write_text("SECRET = 1\n")
    root = workspace.root
    (root / "app" / "passwd.py").symlink_to("/etc/passwd")
    (root / "app" / "vendor").symlink_to(outside, target_is_directory=True)
    (root / "app" / "alias.py").symlink_to(root / "app" / "sub" / "c.py")
    return workspace


def test_the_walk_skips_links_leading_out_and_counts_them(links: Workspace) -> None:
    found = links.walk(links.root)
    # a link to a file inside is listed where the link is, by the file's real path, once
    assert names(links, found) == ["app/a.py", "app/sub/c.py", "app/b.ts"]
    assert found.outside == 2 and found.skipped == 2
    # the glob and the directory listing go through the same rules
    assert names(links, expand(links, "app/*.py", False, 100)) == ["app/a.py", "app/sub/c.py"]
    assert expand(links, "app/*.py", False, 100).outside == 1
    with pytest.raises(LsapError, match="outside the workspace"):
        expand(links, "app/vendor/*.py", False, 100)
    assert names(links, one_per_language(links)) == ["app/a.py", "app/b.ts"]


def test_files_over_the_size_limit_are_counted_not_listed(workspace: Workspace) -> None:
    big = workspace.root / "app" / "big.py"
    big.write_text("x = 1\n" * 100)
    found = workspace.walk(workspace.root, max_size=100)
    assert "app/big.py" not in names(workspace, found) and found.too_large == 1
    assert names(workspace, workspace.glob("app/*.py", max_size=100)) == ["app/a.py"]
    with pytest.raises(LsapError, match="is 600 bytes, over the 100 bytes limit") as refused:
        expand(workspace, "app/big.py", False, 100, max_size=100)
    assert refused.value.code.value == "invalid_request"
    assert "app/big.py" in refused.value.message
