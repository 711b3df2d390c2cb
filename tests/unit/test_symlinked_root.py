"""A workspace reached through a symbolic link: a path named through the link is the
workspace's (shown relative to the root, keyed by its real path), and a link leading out of
the roots is still outside."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsap_bridge.capabilities.references import _confined
from lsap_bridge.workspace import Workspace, linked_root_note


@pytest.fixture
def linked(tmp_path: Path) -> Path:
    """tmp_path/link/proj, where link -> real; proj holds pkg/a.py and a link out to /etc."""
    proj = tmp_path / "real" / "proj"
    (proj / "pkg").mkdir(parents=True)
    (proj / "pkg" / "a.py").write_text("x = 1\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.py").write_text("y = 2\n")
    (proj / "out").symlink_to(tmp_path / "outside", target_is_directory=True)
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    return tmp_path / "link" / "proj"


def test_a_path_through_the_link_is_inside_and_shown_relative_to_the_root(linked: Path) -> None:
    workspace = Workspace.of(linked)
    real = linked.resolve()
    assert workspace.root == real
    assert workspace.local(linked / "pkg" / "a.py") == real / "pkg" / "a.py"
    assert workspace.display(linked / "pkg" / "a.py") == "pkg/a.py"
    assert workspace.display(real / "pkg" / "a.py") == "pkg/a.py"
    assert workspace.display(linked) == "."


def test_a_link_out_of_the_roots_stays_outside_however_it_is_reached(linked: Path) -> None:
    workspace = Workspace.of(linked)
    for secret in (linked / "out" / "secret.py", linked.resolve() / "out" / "secret.py"):
        assert workspace.local(secret) is None and not workspace.contains(secret)
    assert workspace.display(linked / "out" / "secret.py") == str(linked / "out" / "secret.py")  # not the workspace's
    with pytest.raises(Exception, match="outside the workspace"):
        workspace.resolve(str(linked / "out" / "secret.py"))


def test_references_named_through_the_link_are_kept_once_and_outside_ones_counted(linked: Path) -> None:
    workspace = Workspace.of(linked)
    real = linked.resolve() / "pkg" / "a.py"
    through = linked / "pkg" / "a.py"
    secret = linked / "out" / "secret.py"
    items = [(through, (0, 0, 0, 1)), (through, (2, 0, 2, 1)), (real, (0, 0, 0, 1)), (secret, (0, 0, 0, 1))]
    scope = _confined(workspace, sorted(items))
    assert scope.items == [(real, (0, 0, 0, 1)), (real, (2, 0, 2, 1))]
    assert (scope.files, scope.external) == (1, 1)


def test_a_server_rooted_through_a_link_is_noted_one_rooted_at_the_real_path_is_not(linked: Path) -> None:
    note = linked_root_note("basedpyright", str(linked))
    assert note is not None and f"really {linked.resolve()}" in note and "start basedpyright from the real path" in note
    assert linked_root_note("basedpyright", str(linked.resolve())) is None
    assert linked_root_note("basedpyright", str(linked.resolve()) + "/") is None
    assert linked_root_note("basedpyright", None) is None
    assert linked_root_note("basedpyright", str(linked / "gone")) is None
