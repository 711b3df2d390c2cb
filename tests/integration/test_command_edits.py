"""A server command is one edit (issue 27, item 3): every `workspace/applyEdit` it sends,
until its reply and in a short grace window after it, is collected, checked as it comes,
and applied as one edit through the engine, or none of it is.

The server is tests/integration/command_server.py: its code actions are commands that send
an edit inside the workspace and then one outside, or fail after their edit, or send their
edits after replying, or edit two files properly.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .harness import Bridge

pytestmark = pytest.mark.integration

SERVER = Path(__file__).with_name("command_server.py")
A, B, C = "x = 1\n", "y = 2\n", "z = 3\nw = 4\n"


@pytest.fixture(scope="module")
def bridge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    base = tmp_path_factory.mktemp("commands")
    root = base / "proj"
    root.mkdir()
    (root / "a.fault").write_text(A)
    (root / "b.fault").write_text(B)
    outside = base / "outside.py"
    bridge = Bridge(root, ["none"])
    bridge.lua(
        "local path, python, server, outside, root = ...;"
        "local buf = require('lsap.transport.disk').open(path);"
        "vim.lsp.start({name = 'faulty', cmd = {python, server, outside}, root_dir = root}, {bufnr = buf})",
        str(root / "a.fault"), sys.executable, str(SERVER), str(outside), str(root))
    yield bridge
    bridge.close()


@pytest.fixture
def outside(bridge: Bridge) -> Iterator[Path]:
    """The file outside the workspace the commands try to edit, reset with the files."""
    path = bridge.root.parent / "outside.py"
    path.write_text("precious = 1\n")
    answers = path.with_suffix(".answers")
    answers.unlink(missing_ok=True)
    for name, text in (("a.fault", A), ("b.fault", B), ("c.fault", C)):
        (bridge.root / name).write_text(text)
    bridge.lua("require('lsap.transport.disk').fresh(vim.fn.bufnr(...))", str(bridge.root / "a.fault"))
    # A file written in the very clock tick a request begins in is not proven to be what its
    # server read (diskwatch.Basis): the files were written by the test, before it asks.
    time.sleep(0.02)
    yield path


def answers(outside: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in outside.with_suffix(".answers").read_text().splitlines()]


def run(bridge: Bridge, command: str, **more: object) -> tuple[bool, str]:
    """The code action `run <command>` on a.fault; its answer does not wait for diagnostics
    (the server publishes only for the documents it is sent, not for a file a command
    creates or renames on disk: the default wait would run out for nothing)."""
    response = bridge.request({"mode": "code_action", "file_path": "a.fault",
                               "title": f"run {command}", "diagnostics_wait": 0, **more})
    return response.ok, response.text


def unchanged(bridge: Bridge, outside: Path) -> None:
    assert (bridge.root / "a.fault").read_text() == A
    assert (bridge.root / "b.fault").read_text() == B
    assert outside.read_text() == "precious = 1\n"
    assert bridge.buffer_lines(bridge.root / "a.fault") == ["x = 1"]
    assert not bridge.modified(bridge.root / "a.fault")


def test_an_edit_inside_then_one_outside_changes_nothing(bridge: Bridge, outside: Path) -> None:
    ok, text = run(bridge, "inside_outside")
    assert not ok and "outside_workspace" in text, text
    assert "sent 2 edits, applied whole or not at all" in text, text
    assert "nothing the command asked for was changed" in text, text
    unchanged(bridge, outside)
    assert answers(outside)[0] == {"applied": True}
    assert answers(outside)[1]["applied"] is False  # the refused one is told so


def test_an_edit_then_a_failed_command_changes_nothing(bridge: Bridge, outside: Path) -> None:
    ok, text = run(bridge, "inside_fails")
    assert not ok and "server_error" in text and "it broke" in text, text
    assert "of the 1 edit it sent, none was applied" in text, text
    unchanged(bridge, outside)


def test_edits_sent_after_the_reply_are_the_commands_too(bridge: Bridge, outside: Path) -> None:
    """They used to fall to Neovim's own handler: the edit inside applied behind the
    bridge's back, and the one outside the workspace too."""
    ok, text = run(bridge, "after_reply")
    assert not ok and "outside_workspace" in text, text
    unchanged(bridge, outside)
    assert [a["applied"] for a in answers(outside)] == [True, False]


def test_a_command_whose_edits_are_all_valid_is_one_edit(bridge: Bridge, outside: Path) -> None:
    ok, text = run(bridge, "two_files")
    assert ok, text
    a, b = bridge.root / "a.fault", bridge.root / "b.fault"
    assert a.read_text() == "# two_files\n" + A and b.read_text() == "# two_files\n" + B
    assert "a.fault · +1" in text and "b.fault · +1" in text, text
    assert outside.read_text() == "precious = 1\n"
    # One undo step in the loaded buffer takes the command's edit back.
    bridge.lua("vim.api.nvim_buf_call(vim.fn.bufnr(...), function() vim.cmd('silent undo') end)", str(a))
    assert bridge.buffer_lines(a) == ["x = 1"]


def test_a_rename_onto_an_existing_file_needs_the_requests_consent(bridge: Bridge, outside: Path) -> None:
    """Issue 27, item 3: the server's `overwrite` alone used to destroy b.fault and report
    "Nothing to change"; now it is refused unless the request says `overwrite: true`."""
    b, c = bridge.root / "b.fault", bridge.root / "c.fault"
    ok, text = run(bridge, "overwrite_b")
    assert not ok and "conflict" in text and "overwrite: true" in text, text
    assert b.read_text() == B and c.read_text() == C, "nothing may change without consent"
    assert answers(outside)[0]["applied"] is True  # taken; the whole command is then refused

    ok, text = run(bridge, "overwrite_b", overwrite=True)
    assert ok, text
    assert b.read_text() == C and not c.exists()
    assert "c.fault → b.fault (file renamed)" in text, text
    assert "b.fault was overwritten (1 line)" in text, text
    assert "Nothing to change" not in text, text

    change = re.search(r'"mode":"undo","id":"(\d+)"', text)
    assert change, text
    time.sleep(0.02)  # the files the edit wrote are older than the undo's clock tick (see `outside`)
    undo = bridge.request({"mode": "undo", "id": change[1]})
    assert undo.ok, undo.text
    assert b.read_text() == B and c.read_text() == C, "undo puts back both files"
    assert bridge.buffer_lines(b) in ([], ["y = 2"]), "a buffer of b.fault holds its text again"


def test_an_overwrite_over_buffers(bridge: Bridge, outside: Path) -> None:
    """The renamed file loaded (its buffer takes the new name) and the replaced one held:
    by a buffer of the human's it is refused, nothing changed; by the bridge's own hidden
    buffer that buffer goes, and the renamed buffer is b.fault, unmodified, in step."""
    b, c = bridge.root / "b.fault", bridge.root / "c.fault"
    bridge.lua("require('lsap.transport.disk').open(...)", str(c))
    bridge.lua("vim.cmd.edit(...)", str(b))  # the human's: shown in the window
    try:
        ok, text = run(bridge, "overwrite_b", overwrite=True)
        assert not ok and "conflict" in text and "b.fault is open in a buffer" in text, text
        assert b.read_text() == B and c.read_text() == C
        assert bridge.buffer_lines(c) == ["z = 3", "w = 4"] and bridge.buffer_lines(b) == ["y = 2"]
    finally:
        bridge.lua("vim.cmd.enew(); vim.cmd.bwipeout(...)", str(b))
    bridge.lua("require('lsap.transport.disk').open(...)", str(b))  # now the bridge's own
    time.sleep(0.02)  # the files the refused edit put back are older than the next request's clock tick
    ok, text = run(bridge, "overwrite_b", overwrite=True)
    assert ok, text
    assert b.read_text() == C and not c.exists()
    assert "b.fault was overwritten (1 line)" in text, text
    assert bridge.buffer_lines(b) == ["z = 3", "w = 4"] and not bridge.modified(b)
    assert bridge.lua("return vim.fn.bufnr(...)", str(c)) == -1, "no buffer names c.fault any more"


def test_an_overwrite_is_consent_for_what_the_file_held_when_asked(bridge: Bridge, outside: Path) -> None:
    """b.fault written after the request began (here by the server itself, before its
    edit): the consent was for what it held then, so nothing is overwritten."""
    b, c = bridge.root / "b.fault", bridge.root / "c.fault"
    bridge.lua("local b = vim.fn.bufnr(...); if b > 0 then vim.api.nvim_buf_delete(b, {force = true}) end", str(b))
    ok, text = run(bridge, "overwrite_changed_b", overwrite=True)
    assert not ok and "conflict" in text and "changed on disk since the request began" in text, text
    assert b.read_text() == "changed = 1\n" and c.read_text() == C


def test_a_file_rename_is_reported_and_undone(bridge: Bridge, outside: Path) -> None:
    """A rename of a file alone changes no line: it used to be "Nothing to change", and its
    undo "rename it back by hand"."""
    c, d = bridge.root / "c.fault", bridge.root / "d.fault"
    d.unlink(missing_ok=True)
    ok, text = run(bridge, "rename_c")
    assert ok and "c.fault → d.fault (file renamed)" in text and "Nothing to change" not in text, text
    assert d.read_text() == C and not c.exists()
    change = re.search(r'"mode":"undo","id":"(\d+)"', text)
    assert change, text
    time.sleep(0.02)  # the files the edit wrote are older than the undo's clock tick (see `outside`)
    undo = bridge.request({"mode": "undo", "id": change[1]})
    assert undo.ok, undo.text
    assert c.read_text() == C and not d.exists()
