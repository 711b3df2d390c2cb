"""A workspace reached through a symbolic link (the project, or a directory above it, is a
link): every answer is the one a copy of the project would give, paths shown relative to
the root the user gave, and nothing dropped silently."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from lsap_bridge.watchdog import command as watchdog_command
from tests.integration.harness import Bridge

pytestmark = pytest.mark.integration

USERS = 6  # modules that use `Widget`, each in its own file


def build(base: Path) -> Path:
    """base/real/proj, reached as base/link/proj (link -> real): that path."""
    real = base / "real" / "proj"
    (real / "pkg").mkdir(parents=True)
    (real / "pyproject.toml").write_text("[project]\nname = 'proj'\nversion = '0'\n")
    (real / "pkg" / "__init__.py").write_text("")
    (real / "pkg" / "base.py").write_text(
        "class Widget:\n    def size(self) -> int:\n        return 1\n")
    for n in range(USERS):
        (real / "pkg" / f"use{n}.py").write_text(
            "from pkg.base import Widget\n\n\n"
            f"class Part{n}(Widget):\n    pass\n\n\n"
            f"def make{n}() -> Widget:\n    return Widget()\n")
    (base / "link").symlink_to(base / "real", target_is_directory=True)
    return base / "link" / "proj"


@pytest.fixture(scope="module")
def linked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    bridge = Bridge(build(tmp_path_factory.mktemp("symlinked")), ["basedpyright"])
    yield bridge
    bridge.close()


def test_references_through_a_symlinked_root_are_all_there(linked: Bridge) -> None:
    data = linked.ask(mode="references", locate="pkg/base.py:Widget", include_declaration=False)
    paths = sorted({group["path"] for group in data["groups"]})
    assert paths == sorted(f"pkg/use{n}.py" for n in range(USERS)), json.dumps(data)[:2000]
    assert data["total"] == 4 * USERS  # the import, the base, the annotation, the call
    assert data["external"] == 0


def test_definition_and_types_through_a_symlinked_root_show_the_given_root(linked: Bridge) -> None:
    definition = linked.ask(mode="definition", locate="pkg/use0.py:Part0")
    assert [d["path"] for d in definition["definitions"]] == ["pkg/use0.py"], definition
    down = linked.ask(mode="types", locate="pkg/base.py:Widget", direction="subtypes")
    rows = down["sections"][0]["rows"]
    assert sorted((r["name"], r["path"]) for r in rows) == [(f"Part{n}", f"pkg/use{n}.py") for n in range(USERS)]


def test_rename_through_a_symlinked_root_edits_every_file(linked: Bridge) -> None:
    data = linked.ask(mode="rename", locate="pkg/base.py:Widget", new_name="Gadget")
    assert sorted(f["path"] for f in data["changed"]) == ["pkg/base.py", *(f"pkg/use{n}.py" for n in range(USERS))]
    real = linked.root.resolve()
    for n in range(USERS):
        assert "Widget" not in (real / "pkg" / f"use{n}.py").read_text()


@pytest.fixture(scope="module")
def editor_linked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    """As a human's editor does when opened on the link: its server rooted at the symlinked
    path (the bridge's own servers take the real root)."""
    bridge = Bridge(build(tmp_path_factory.mktemp("editor_linked")), ["basedpyright"])
    bridge.loop.run(bridge.embedded.gateway.call(
        "enable_servers", str(bridge.root), ["basedpyright"], watchdog_command()))
    yield bridge
    bridge.close()


def test_a_server_rooted_through_a_symlink_is_said_to_be_possibly_incomplete(editor_linked: Bridge) -> None:
    data = editor_linked.ask(mode="references", locate="pkg/base.py:Widget", include_declaration=False)
    assert data["total"] == 4 * USERS or any(
        "reached through a symbolic link" in note for note in data.get("notes", [])), json.dumps(data)[:2000]
    assert all(group["path"].startswith("pkg/") for group in data["groups"])  # relative to the root given
    text = editor_linked.request({"mode": "references", "locate": "pkg/base.py:Widget"}).text
    assert data["total"] == 4 * USERS or "reached through a symbolic link" in text, text
