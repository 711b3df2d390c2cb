"""`lsap hook`: the command Claude Code's and Codex's hooks run (doc/agents.md, Hooks).

The harness hands one event to it as JSON on stdin (`hook_event_name`, `session_id`, `cwd`,
`tool_name`, `tool_input`, `tool_use_id`, and `tool_response` after the tool ran). For a
file-editing tool it becomes a `hook` request (capabilities/hook.py) to the session of the
event's `cwd` (the human's Neovim, or a daemon already running: a hook on every edit of every
directory starts none unless `LSAP_HOOK_START=1`), made under the agent's name (`claude-code
3f2a`: the harness and its session); what comes back is the hook's JSON on stdout, the new
errors as `hookSpecificOutput.additionalContext`. It never fails or holds the agent's tool:
a bad payload, no session, a crash or a hanging server is exit 0 with nothing printed and a
line in lsap.log, within `LSAP_HOOK_TIMEOUT` seconds (default 10).

`lsap hook install claude-code|codex [--project] [--print]` adds the hook to the harness's
settings, keeping every hook already there (`hook_install.py`).
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from .client import ClientError, answered, call_session, find_session
from .discovery import SessionInfo
from .jsonvalue import Json, JsonObject
from .logfile import log_to_file

log = logging.getLogger("lsap.hook")

BOUND = 10.0  # seconds a hook answers within, whatever the servers do (LSAP_HOOK_TIMEOUT)
OVERHEAD = 1.5  # of the bound kept for starting Python, the socket and printing
# Claude Code's file-editing tools and the field naming their file (code.claude.com/docs/en/hooks).
EDIT_TOOLS = {"Edit": "file_path", "MultiEdit": "file_path", "Write": "file_path",
              "NotebookEdit": "notebook_path"}
PATCH_TOOL = "apply_patch"  # Codex's; its `tool_input.command` is the patch
PATCH_FILE = re.compile(r"^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+?)\s*$", re.M)
EVENTS = {"PreToolUse": "pre", "PostToolUse": "post"}
PREVIEW_CHARS = 1 << 20  # of a tool's input sent for the approval's diff; past it, no diff


def bound() -> float:
    try:
        return max(1.0, float(os.environ.get("LSAP_HOOK_TIMEOUT", BOUND)))
    except ValueError:
        return BOUND


def log_path() -> Path:
    """Neovim's `stdpath('log')/lsap.log`, where the editor's lsap writes too."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / os.environ.get("NVIM_APPNAME", "nvim") / "lsap.log"


def harness(event: JsonObject) -> str:
    """Which harness sent it: Codex's events carry a `turn_id` (its hook schema requires
    one) and name its patch tool; Claude Code's do neither."""
    return "codex" if "turn_id" in event or event.get("tool_name") == PATCH_TOOL else "claude-code"


def agent(event: JsonObject) -> str:
    """The agent's name in lsap: the harness and its session's first characters."""
    short = re.sub(r"[^0-9A-Za-z]", "", str(event.get("session_id") or ""))[:4] or "?"
    return f"{harness(event)} {short}"


def files(event: JsonObject, cwd: Path) -> list[str]:
    """The files the tool writes, absolute: its path field, or the patch's file lines."""
    tool, given = event.get("tool_name"), event.get("tool_input")
    if not isinstance(given, dict):
        return []
    if tool == PATCH_TOOL:
        patch = given.get("command")
        names = PATCH_FILE.findall(patch) if isinstance(patch, str) else []
    else:
        name = given.get(EDIT_TOOLS.get(str(tool), ""))
        names = [name] if isinstance(name, str) and name else []
    return list(dict.fromkeys(str(cwd / name) for name in names))


def proposed(event: JsonObject, names: list[str]) -> JsonObject:
    """What a PreToolUse's tool is about to write, for the human's approval (`edit_policy =
    'ask'`): Edit's and MultiEdit's replacements, Write's content, apply_patch's patch."""
    given = event.get("tool_input")
    tool = event.get("tool_name")
    if not isinstance(given, dict) or event.get("hook_event_name") != "PreToolUse":
        return {}
    if tool == PATCH_TOOL:
        return {"patch": given["command"]} if isinstance(given.get("command"), str) else {}
    if tool == "Write" and isinstance(given.get("content"), str):
        return {"content": given["content"]}
    steps = given.get("edits") if tool == "MultiEdit" else [given] if tool == "Edit" else []
    replace: list[Json] = [
        {"path": names[0], "old": step["old_string"], "new": step["new_string"],
         "all": step.get("replace_all") is True}
        for step in steps if isinstance(step, dict) and isinstance(step.get("old_string"), str)
        and isinstance(step.get("new_string"), str)] if isinstance(steps, list) else []
    return {"replace": replace} if replace else {}


def request(event: JsonObject, budget: float) -> JsonObject | None:
    """The `hook` request of an event (None: not one lsap acts on)."""
    kind = EVENTS.get(str(event.get("hook_event_name")))
    cwd = event.get("cwd")
    if kind is None or not isinstance(cwd, str) or not os.path.isabs(cwd):
        return None
    names = files(event, Path(cwd))
    if not names:
        return None
    call = event.get("tool_use_id")
    shown = proposed(event, names)
    if len(json.dumps(shown)) > PREVIEW_CHARS:
        shown = {}  # a huge Write: the approval names the file, the request stays small
    return {"mode": "hook", "event": kind, "tool": str(event["tool_name"]), "files": list[Json](names),
            "call": call if isinstance(call, str) else None, "budget": budget, "format": "json", **shown}


def answer(event: JsonObject, report: JsonObject) -> JsonObject | None:
    """The hook's JSON output for the harness (None: nothing to say): after the tool, the
    errors it made; before it, the human's decision when one was taken."""
    name = event.get("hook_event_name")
    if name == "PreToolUse" and report.get("decision") in ("allow", "deny"):
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": report["decision"],
                                       "permissionDecisionReason": str(report.get("reason") or "")}}
    context = report.get("context")
    if name != "PostToolUse" or not context:
        return None
    return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": context}}


def handle(raw: str, budget: float, asking: Callable[[str], None] | None = None) -> str:
    """The stdout of one event: "" when there is nothing to say. `asking` hears the
    session's progress notes (the human's approval awaited)."""
    try:
        event = json.loads(raw)
    except ValueError as exc:
        log.warning("lsap hook: the event is not JSON (%s); ignored", exc)
        return ""
    if not isinstance(event, dict):
        log.warning("lsap hook: the event is not a JSON object; ignored")
        return ""
    payload = request(event, budget)
    if payload is None:
        return ""
    cwd = Path(str(event["cwd"]))
    start = os.environ.get("LSAP_HOOK_START") == "1"

    def found() -> SessionInfo | None:
        info = find_session(cwd, start=start)
        if info is None:
            raise ClientError(f"no lsap session serves {cwd}: open it in Neovim, or `lsap daemon start` "
                              "there (or set LSAP_HOOK_START=1)")
        return info

    result = answered(call_session(found, "request", payload, name=agent(event), surface="cli", on_progress=asking))
    if not result.get("ok"):
        log.warning("lsap hook: %s %s answered an error: %s", payload["event"], payload["tool"],
                    str(result.get("text", ""))[:300])
        return ""
    out = answer(event, json.loads(result["text"]))
    return json.dumps(out, ensure_ascii=False) + "\n" if out else ""


APPROVAL = re.compile(r"approval of .* \(up to ([0-9.]+) s")  # host.edit_policy's progress note


def run_event(stdin: TextIO, stdout: TextIO, limit: float) -> bool:
    """Answer one event within `limit` seconds, or say nothing: the work runs in a thread the
    process leaves behind when the time is up (a hanging server holds only that thread).
    While the human is asked about the edit, the bound is the approval's (`approval.timeout`)
    and `limit` more. Whether it finished in time."""
    said: list[str] = []
    ends = [time.monotonic() + limit]

    def asking(note: str) -> None:
        if found := APPROVAL.search(note):
            ends.append(time.monotonic() + float(found.group(1)) + limit)

    def work() -> None:
        try:
            said.append(handle(stdin.read(), max(0.5, limit - OVERHEAD), asking))
        except BaseException as exc:  # never the agent's problem: a log line
            log.warning("lsap hook: failed: %s: %s", type(exc).__name__, exc)

    thread = threading.Thread(target=work, name="lsap-hook", daemon=True)
    thread.start()
    while thread.is_alive() and (left := max(ends) - time.monotonic()) > 0:
        thread.join(left)
    if thread.is_alive():
        log.warning("lsap hook: no answer within %g s (LSAP_HOOK_TIMEOUT); the agent goes on", limit)
        return False
    if said and said[0]:
        stdout.write(said[0])
        stdout.flush()
    return True


def main(words: list[str]) -> int:
    """`lsap hook` (an event on stdin) or `lsap hook install …`; the event's exit is always 0."""
    if words[:1] == ["install"]:
        from .hook_install import main as install

        return install(words[1:])
    try:
        log_path().parent.mkdir(parents=True, exist_ok=True)
        log_to_file(str(log_path()), "warn")
    except OSError:
        pass  # no log: still never the agent's problem
    if not run_event(sys.stdin, sys.stdout, bound()):
        logging.shutdown()
        os._exit(0)  # the thread still waiting on the session must not hold the exit
    return 0
