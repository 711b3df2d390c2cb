"""The cheaper forms of per-request work (issue 6) give the answers the slow forms gave."""

from __future__ import annotations

from pathlib import Path

import pytest
from cachetools import TTLCache

from lsap_bridge.errors import LsapError
from lsap_bridge.models import Locate
from lsap_bridge.requests import anchor_of
from lsap_bridge.workspace import INSIDE_TTL, Workspace
from tests.golden import render_data


def test_display_is_relative_to_the_root_it_is_in(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    workspace = Workspace((one, two))
    assert workspace.display(one / "pkg" / "a.py") == "pkg/a.py"
    assert workspace.display(two / "b.py") == "b.py"
    assert workspace.display(one) == "."
    assert workspace.display(tmp_path / "one-more" / "c.py") == str(tmp_path / "one-more" / "c.py")
    assert Workspace((Path("/"),)).display(Path("/etc/hosts")) == "etc/hosts"


def test_a_file_not_yet_created_resolves_through_the_links_that_exist(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "real").mkdir(parents=True)
    (root / "alias").symlink_to(root / "real", target_is_directory=True)
    workspace = Workspace.of(root)
    assert workspace.resolve("alias/new.py") == root.resolve() / "real" / "new.py"
    (root / "real" / "there.py").write_text("x = 1\n")
    assert workspace.resolve("alias/there.py") == root.resolve() / "real" / "there.py"


def test_reports_lose_trailing_space_and_runs_of_blank_lines() -> None:
    text = render_data("hover", {
        "name": "f", "anchor": "a.py:f", "path": "a.py", "line": 1, "column": 5, "symbol": "f",
        "text": "def f(): ...", "server": "srv", "partial": False,
        "hover": "```python\ndef f() -> int   \n```\n\n\n\nDocs.\u00a0\n \n\n#### Returns\nint",
    })
    assert "def f() -> int\n```\n\nDocs.\n\n**Returns**\nint\n" in text
    assert "\n\n\n" not in text and not any(line != line.rstrip() for line in text.splitlines())



def test_an_anchor_string_is_parsed_once_while_its_file_checks_hold(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    workspace = Workspace.of(tmp_path)
    now = [0.0]
    anchors: TTLCache[str, Locate] = TTLCache(10, INSIDE_TTL, timer=lambda: now[0])  # as a session's
    first = anchor_of("a.py:1", workspace, anchors)
    assert anchor_of("a.py:1", workspace, anchors) is first
    assert anchor_of("a.py@x", workspace, anchors) is not first
    with pytest.raises(LsapError):  # a bad anchor is refused every time, never remembered
        anchor_of("a.py", workspace, anchors)
    now[0] += INSIDE_TTL
    again = anchor_of("a.py:1", workspace, anchors)
    assert again is not first and again == first
