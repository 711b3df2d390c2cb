"""`lsap hook`'s reading of the harnesses' events (lsap_bridge/hook.py) and `lsap hook
install`'s merge into their settings (lsap_bridge/hook_install.py): a user's own hooks are
kept, installing twice adds nothing."""

from __future__ import annotations

import io
import json
import sys
import threading
from pathlib import Path

import pytest

from lsap_bridge import hook, hook_install

PATCH = """*** Begin Patch
*** Add File: shop/bakery.py
+BREAD = 1
*** Update File: shop/models.py
*** Move to: shop/goods.py
@@ class Product:
-    price: float
+    price: int
*** Delete File: shop/old.py
*** End Patch
"""


def test_the_files_of_each_editing_tool() -> None:
    cwd = Path("/w")
    assert hook.files({"tool_name": "Edit", "tool_input": {"file_path": "/w/a.py"}}, cwd) == ["/w/a.py"]
    assert hook.files({"tool_name": "NotebookEdit", "tool_input": {"notebook_path": "n.ipynb"}}, cwd) == ["/w/n.ipynb"]
    assert hook.files({"tool_name": "apply_patch", "tool_input": {"command": PATCH}}, cwd) == [
        "/w/shop/bakery.py", "/w/shop/models.py", "/w/shop/goods.py", "/w/shop/old.py"]
    assert hook.files({"tool_name": "Bash", "tool_input": {"command": "ls"}}, cwd) == []
    assert hook.files({"tool_name": "Edit", "tool_input": "x"}, cwd) == []


def test_who_made_it() -> None:
    assert hook.agent({"session_id": "3f2a9c1e-…", "tool_name": "Edit"}) == "claude-code 3f2a"
    assert hook.agent({"session_id": "0199-a7", "turn_id": "t", "tool_name": "Bash"}) == "codex 0199"


def test_only_file_edits_of_tool_events_become_requests() -> None:
    edit = {"hook_event_name": "PostToolUse", "cwd": "/w", "tool_name": "Write",
            "tool_input": {"file_path": "a.py", "content": ""}, "tool_use_id": "t1"}
    assert hook.request(edit, 8.0) == {"mode": "hook", "event": "post", "tool": "Write", "files": ["/w/a.py"],
                                       "call": "t1", "budget": 8.0, "format": "json"}
    assert hook.request({**edit, "hook_event_name": "Stop"}, 8.0) is None
    assert hook.request({**edit, "cwd": "relative"}, 8.0) is None
    assert hook.request({**edit, "tool_name": "Read"}, 8.0) is None


def test_only_a_post_tool_use_with_something_to_say_prints() -> None:
    post = {"hook_event_name": "PostToolUse"}
    assert hook.answer(post, {"context": "broke x"}) == {
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "broke x"}}
    assert hook.answer(post, {"context": None}) is None
    assert hook.answer({"hook_event_name": "PreToolUse"}, {"context": "x"}) is None


def test_a_bad_event_or_a_crash_says_nothing() -> None:
    for raw in ("", "{", "[1]", json.dumps({"hook_event_name": "PostToolUse"})):
        assert hook.handle(raw, 1.0) == ""
    out = io.StringIO()

    class Broken(io.StringIO):
        def read(self, size: int | None = -1) -> str:
            raise RuntimeError("boom")

    assert hook.run_event(Broken(), out, 5.0) and out.getvalue() == ""


def test_an_event_that_hangs_is_given_up_at_the_bound() -> None:
    release = threading.Event()

    class Hanging(io.StringIO):
        def read(self, size: int | None = -1) -> str:
            release.wait(30)
            return ""

    out = io.StringIO()
    assert not hook.run_event(Hanging(), out, 0.2)
    assert out.getvalue() == ""
    release.set()


USERS_JSON = {"model": "opus", "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "notify"}]}]}}


def test_claude_code_settings_keep_their_hooks_and_take_ours_once() -> None:
    merged = hook_install.merged_json(json.dumps(USERS_JSON), "claude-code")
    assert merged is not None
    settings = json.loads(merged)
    assert settings["model"] == "opus" and settings["hooks"]["Stop"] == USERS_JSON["hooks"]["Stop"]
    pre = settings["hooks"]["PreToolUse"]
    assert pre[0] == USERS_JSON["hooks"]["PreToolUse"][0]
    assert pre[1] == {"matcher": "Edit|MultiEdit|Write|NotebookEdit",
                      "hooks": [{"type": "command", "command": "lsap hook", "timeout": 330}]}
    assert settings["hooks"]["PostToolUse"] == [pre[1]]
    assert hook_install.merged_json(merged, "claude-code") is None  # idempotent
    assert json.loads(hook_install.merged_json("", "claude-code") or "")["hooks"]["PostToolUse"]
    with pytest.raises(ValueError):
        hook_install.merged_json('{"hooks": []}', "claude-code")


USERS_TOML = """# my codex config
model = "gpt-5-codex"

[[hooks.PreToolUse]]
matcher = "Bash"

[[hooks.PreToolUse.hooks]]
type = "command"
command = "guard.sh"
"""


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib")
def test_codex_config_keeps_its_hooks_and_takes_ours_once() -> None:
    import tomllib

    merged = hook_install.merged_toml(USERS_TOML, "codex")
    assert merged is not None and merged.startswith(USERS_TOML)  # the user's text as it was
    config = tomllib.loads(merged)
    assert config["model"] == "gpt-5-codex"
    pre = config["hooks"]["PreToolUse"]
    assert pre[0] == {"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}
    assert pre[1] == {"matcher": "apply_patch", "hooks": [{"type": "command", "command": "lsap hook", "timeout": 330}]}
    assert config["hooks"]["PostToolUse"] == [pre[1]]
    assert hook_install.merged_toml(merged, "codex") is None  # idempotent
    with pytest.raises(ValueError):  # an inline table the snippet cannot extend
        hook_install.merged_toml('hooks = { PreToolUse = [] }\n', "codex")


def test_install_writes_the_user_settings_and_print_writes_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(USERS_JSON))
    assert hook_install.main(["claude-code"]) == 0
    assert json.loads(settings.read_text())["hooks"]["Stop"] == USERS_JSON["hooks"]["Stop"]
    assert hook_install.main(["claude-code"]) == 0 and "already" in capsys.readouterr().out
    assert hook_install.main(["codex", "--print"]) == 0
    assert "[[hooks.PostToolUse.hooks]]" in capsys.readouterr().out
    assert not (tmp_path / ".codex").exists()


def test_the_agent_is_told_at_most_400_tokens_and_the_rest_is_counted() -> None:
    from lsap_bridge.capabilities.hook import CONTEXT_TOKENS, _context, _entries
    from lsap_bridge.report.budget import estimate
    from lsap_bridge.surface import SURFACE

    def group(status: str, path: str, lines: range) -> dict[str, object]:
        message = 'Argument missing for parameter "stock"'
        return {"status": status, "path": path,
                "lines": [{"number": n, "text": "CROISSANT = Product(1.2)"} for n in lines],
                "diagnostics": [{"line": n, "message": message, "code": "reportCallIssue"} for n in lines]}

    # check's first page (50 of 60 findings): 2 errors in a file seen before (not the edit's),
    # then 40 new ones, then 8 in a file the edit created.
    report = {"start": 1, "end": 50, "total": 60, "pagination_id": "abc123", "groups": [
        group("current", "shop/old.py", range(1, 3)), group("new", "shop/m.py", range(1, 41)),
        group("current", "shop/bakery.py", range(1, 9))]}
    entries = _entries(report, {"shop/bakery.py"})
    assert len(entries) == 48 and entries[0].at == 3 and entries[-1].at == 50
    token = SURFACE.set("cli")
    try:
        text, shown = _context("Edit", entries, report)
    finally:
        SURFACE.reset(token)
    assert text is not None and 0 < shown < len(entries) and estimate(text) <= CONTEXT_TOKENS
    assert text.startswith("lsap: after your Edit, 58 new errors:")
    assert f"{48 - shown + 10} more not shown: `lsap check" in text  # the page's rest and the next pages
    assert "pagination_id=abc123" in text and f"start_index={shown + 3}" in text
    assert "`lsap diagnostics shop/m.py`" in text
    assert _context("Edit", [], None) == (None, 0)


def test_a_pre_tool_use_carries_what_the_tool_will_write_and_answers_the_humans_decision() -> None:
    edit = {"hook_event_name": "PreToolUse", "tool_name": "MultiEdit", "tool_input": {
        "file_path": "/w/a.py", "edits": [{"old_string": "x", "new_string": "y", "replace_all": True},
                                          {"old_string": "p", "new_string": "q"}]}}
    assert hook.proposed(edit, ["/w/a.py"]) == {"replace": [
        {"path": "/w/a.py", "old": "x", "new": "y", "all": True},
        {"path": "/w/a.py", "old": "p", "new": "q", "all": False}]}
    write = {**edit, "tool_name": "Write", "tool_input": {"file_path": "/w/a.py", "content": "z\n"}}
    assert hook.proposed(write, ["/w/a.py"]) == {"content": "z\n"}
    assert hook.proposed({**edit, "tool_name": "apply_patch", "tool_input": {"command": PATCH}}, []) == {"patch": PATCH}
    assert hook.proposed({**edit, "hook_event_name": "PostToolUse"}, ["/w/a.py"]) == {}
    huge = {**write, "cwd": "/w", "tool_input": {"file_path": "/w/a.py", "content": "x" * (hook.PREVIEW_CHARS + 1)}}
    assert "content" not in (hook.request(huge, 8.0) or {})
    assert hook.answer(edit, {"decision": "deny", "reason": "the human refused the edit"}) == {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": "the human refused the edit"}}
    assert hook.answer(edit, {"decision": None}) is None


def test_the_hook_mode_is_not_offered_to_agents() -> None:
    """Only `lsap hook` sends `hook`: the schema's index and lsap_query's modes leave it out
    (an agent following the index to it got `invalid_request`)."""
    from lsap_bridge.capabilities.schema import mode_index
    from lsap_bridge.mcp_server import tools

    assert "hook" not in {entry.mode for entry in mode_index()}
    assert "references" in {entry.mode for entry in mode_index()}
    query = next(t for t in tools() if t["name"] == "lsap_query")
    assert "hook" not in query["inputSchema"]["properties"]["request"]["properties"]["mode"]["enum"]
