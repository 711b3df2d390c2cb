"""`lsap hook` (issue 45) fed the harnesses' documented hook events on stdin, in a subprocess,
as Claude Code and Codex run it, against the embedded daemon with basedpyright: the callers an
edit broke come back in `additionalContext`, a harmless edit prints nothing, the edit is a
change set `undo` takes back; a bad payload, a dead session, a session that never answers:
exit 0, nothing printed, within the bound.

The payloads carry the documented fields: Claude Code's PreToolUse/PostToolUse input
(session_id, transcript_path, cwd, permission_mode, hook_event_name, tool_name, tool_input,
tool_use_id; tool_response after the tool ran; code.claude.com/docs/en/hooks), Codex's
(the same, plus model and turn_id: codex-rs/hooks/schema/generated/*.command.input.schema.json),
whose apply_patch input is `{"command": <the patch>}`.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge.discovery import SessionInfo, runtime_dir

pytestmark = pytest.mark.integration

PRICE = "    price: float\n"
STOCK = "    price: float\n    stock: int\n"  # a required field: both Product(...) calls in catalog.py break


def lsap(cwd: Path, *args: str, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lsap_bridge", *args], cwd=cwd, capture_output=True,
                          text=True, input=stdin, timeout=120,
                          env={**os.environ, "LSAP_SERVERS": "basedpyright", **env})


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """examples/shop with a warm embedded daemon, stopped at the end."""
    import shutil

    from tests.conftest import EXAMPLE

    root = tmp_path_factory.mktemp("hook") / "shop"
    shutil.copytree(EXAMPLE, root)
    assert lsap(root, "daemon", "start", "--idle-timeout", "300").returncode == 0
    try:
        assert lsap(root, "outline", "shop/models.py").returncode == 0  # the servers warm
        yield root
    finally:
        lsap(root, "daemon", "stop")


def claude(root: Path, event: str, session: str, call: str, tool: str, tool_input: dict[str, Any]) -> str:
    payload: dict[str, Any] = {
        "session_id": session, "transcript_path": str(root / "t.jsonl"), "cwd": str(root),
        "permission_mode": "default", "hook_event_name": event, "tool_name": tool,
        "tool_input": tool_input, "tool_use_id": call}
    if event == "PostToolUse":
        payload["tool_response"] = {"filePath": tool_input.get("file_path"), "success": True}
    return json.dumps(payload)


def hook(root: Path, payload: str, **env: str) -> subprocess.CompletedProcess[str]:
    done = lsap(root, "hook", stdin=payload, **env)
    assert done.returncode == 0, done.stderr
    return done


def edit(path: Path, old: str, new: str) -> None:
    """The harness's tool writing the file."""
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def claude_edit(root: Path, session: str, call: str, rel: str, old: str, new: str) -> str:
    """PreToolUse, the Edit itself, PostToolUse: what the hook printed after the edit."""
    tool_input = {"file_path": str(root / rel), "old_string": old, "new_string": new, "replace_all": False}
    assert hook(root, claude(root, "PreToolUse", session, call, "Edit", tool_input)).stdout == ""
    edit(root / rel, old, new)
    return hook(root, claude(root, "PostToolUse", session, call, "Edit", tool_input)).stdout


def context(stdout: str) -> str:
    out = json.loads(stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    text: str = out["hookSpecificOutput"]["additionalContext"]
    return text


def test_an_edit_that_breaks_two_callers_names_them_and_is_a_change_set(shop: Path) -> None:
    original = (shop / "shop" / "models.py").read_bytes()
    told = context(claude_edit(shop, "3f2a9c1e-0001", "toolu_01", "shop/models.py", PRICE, STOCK))
    assert "shop/catalog.py:5:" in told and "shop/catalog.py:6:" in told, told
    assert 'Argument missing for parameter "stock"' in told
    assert 'CROISSANT = Product("croissant", 1.2)' in told  # the code line
    assert "lsap diagnostics shop/" in told  # what to call next

    listed = lsap(shop, "changes").stdout
    assert "claude-code 3f2a" in listed and "Edit shop/models.py" in listed, listed
    review = lsap(shop, "review", listed.split("**")[1])
    assert review.returncode == 0 and "+    stock: int" in review.stdout, review.stdout
    undone = lsap(shop, "undo")
    assert undone.returncode == 0, undone.stdout
    assert (shop / "shop" / "models.py").read_bytes() == original


def test_a_harmless_edit_prints_nothing(shop: Path) -> None:
    doc = '    """Something the shop sells."""\n'
    assert claude_edit(shop, "77aa0000-0002", "toolu_02", "shop/models.py", doc,
                       '    """Something the shop sells, by name."""\n') == ""
    edit(shop / "shop" / "models.py", '    """Something the shop sells, by name."""\n', doc)


def test_undo_of_a_hook_edit_the_human_changed_since_is_a_conflict(shop: Path) -> None:
    models = shop / "shop" / "models.py"
    context(claude_edit(shop, "c0ff0000-0003", "toolu_03", "shop/models.py", PRICE, STOCK))
    edit(models, STOCK, "    price: float\n    stock: int = 0\n")  # the human, since
    listed = lsap(shop, "changes", "claude-code c0ff").stdout
    change = listed.split("**")[1]
    undone = lsap(shop, "undo", change)
    assert undone.returncode != 0 and "conflict" in undone.stdout and "shop/models.py" in undone.stdout, undone.stdout
    assert "stock: int = 0" in models.read_text()  # left as the human made it
    edit(models, "    price: float\n    stock: int = 0\n", PRICE)


PATCH = """*** Begin Patch
*** Update File: shop/models.py
@@ class Product:
     name: str
     price: float
+    stock: int
*** Add File: shop/bakery.py
+from .models import Product
+
+BREAD = Product("bread", 2.0)
*** End Patch
"""


def codex(root: Path, event: str, patch: str) -> str:
    payload: dict[str, Any] = {
        "session_id": "0199a7c4-5e1d-7000-8000-00000000c0de", "transcript_path": None, "cwd": str(root),
        "model": "gpt-5-codex", "permission_mode": "default", "hook_event_name": event,
        "turn_id": "turn-1", "tool_name": "apply_patch", "tool_input": {"command": patch},
        "tool_use_id": "call-apply-patch"}
    if event == "PostToolUse":
        payload["tool_response"] = "Success. Updated the following files:\nA shop/bakery.py\nM shop/models.py\n"
    return json.dumps(payload)


def test_a_codex_patch_touching_two_files_one_added(shop: Path) -> None:
    assert hook(shop, codex(shop, "PreToolUse", PATCH)).stdout == ""
    edit(shop / "shop" / "models.py", PRICE, STOCK)
    (shop / "shop" / "bakery.py").write_text('from .models import Product\n\nBREAD = Product("bread", 2.0)\n')
    told = context(hook(shop, codex(shop, "PostToolUse", PATCH)).stdout)
    assert "shop/catalog.py:5:" in told and "shop/bakery.py:3:" in told, told
    listed = lsap(shop, "changes", "codex 0199").stdout
    assert "apply_patch" in listed and "2 files" in listed, listed
    (shop / "shop" / "bakery.py").unlink()
    edit(shop / "shop" / "models.py", STOCK, PRICE)


def test_a_bad_payload_prints_nothing_and_exits_0(shop: Path) -> None:
    for payload in ("", "{not json", "[]", json.dumps({"hook_event_name": "PostToolUse"}),
                    json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Edit", "cwd": "relative",
                                "tool_input": {"file_path": "x.py"}})):
        assert hook(shop, payload).stdout == ""


@pytest.fixture
def silent_session(tmp_path: Path) -> Iterator[Path]:
    """A session that takes the connection and never answers (a server that hangs), for a
    directory of its own."""
    root = tmp_path / "silent"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("x = 1\n")
    path = str(runtime_dir() / "silent-test.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(8)
    info = SessionInfo("silent-test", "daemon", os.getpid(), path, [str(root)])
    info.publish()
    try:
        yield root
    finally:
        info.withdraw()
        listener.close()


def test_a_session_that_never_answers_is_exit_0_within_the_bound(silent_session: Path) -> None:
    root = silent_session
    payload = claude(root, "PostToolUse", "5105", "toolu_09", "Write",
                     {"file_path": str(root / "pkg" / "a.py"), "content": "x = 2\n"})
    started = time.monotonic()
    done = hook(root, payload, LSAP_HOOK_TIMEOUT="2")
    # Hang detection only (the bound is 2 s; Python's start and exit add under a second).
    assert time.monotonic() - started < 20
    assert done.stdout == ""


def test_a_dead_session_is_exit_0_and_a_log_line(tmp_path: Path) -> None:
    """The directory's daemon died (its discovery file and socket left behind): the hook
    starts none (LSAP_HOOK_START is not set), prints nothing and says why in lsap.log."""
    root = tmp_path / "p"
    root.mkdir()
    dead = SessionInfo("daemon-dead-test", "daemon", 2**22 + 7, str(runtime_dir() / "dead.sock"), [str(root)])
    dead.publish()
    payload = claude(root, "PostToolUse", "dead", "toolu_10", "Write",
                     {"file_path": str(root / "a.py"), "content": "x = 2\n"})
    assert hook(root, payload, LSAP_HOOK_TIMEOUT="3").stdout == ""
    assert not dead.file.exists()  # found dead
    log = Path(os.environ["XDG_STATE_HOME"]) / "nvim" / "lsap.log"
    assert f"lsap hook: failed: ClientError: no lsap session serves {root}" in log.read_text()
