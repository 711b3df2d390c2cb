"""`lsap hook install claude-code|codex [--project] [--print]`: `lsap hook` added to the
harness's settings for its file-editing tools' PreToolUse and PostToolUse, merged with what
is there: a user's own hooks are never dropped, and installing twice adds nothing.

Claude Code reads JSON (`~/.claude/settings.json`, `.claude/settings.json` in a project);
Codex reads TOML (`~/.codex/config.toml`, `.codex/config.toml`), its `[[hooks.<Event>]]`
matcher groups of `[[hooks.<Event>.hooks]]` handlers (codex-rs/config/src/hook_config.rs).
TOML is appended as text, so a user's comments and layout stay as they were.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import TypedDict

from .client import project_root

COMMAND = "lsap hook"
HARNESS_TIMEOUT = 330  # seconds the harness gives the hook: a human's approval (300 s) and more
MATCHERS = {"claude-code": "Edit|MultiEdit|Write|NotebookEdit", "codex": "apply_patch"}
EVENTS = ("PreToolUse", "PostToolUse")


def settings_path(harness: str, project: bool) -> Path:
    base = project_root(Path.cwd()) if project else Path.home()
    return base / ".claude" / "settings.json" if harness == "claude-code" else base / ".codex" / "config.toml"


class Handler(TypedDict):
    type: str
    command: str
    timeout: int


class Group(TypedDict):
    """A harness's matcher group: the tools it matches and the hook commands they run."""

    matcher: str
    hooks: list[Handler]


def _group(harness: str) -> Group:
    return {"matcher": MATCHERS[harness],
            "hooks": [{"type": "command", "command": COMMAND, "timeout": HARNESS_TIMEOUT}]}


def _ours(group: object) -> bool:
    """Whether a matcher group runs `lsap hook` already."""
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(hooks, list) and any(isinstance(h, dict) and h.get("command") == COMMAND for h in hooks)


def merged_json(text: str, harness: str) -> str | None:
    """Claude Code's settings with the hook added (None: it is there already)."""
    settings = json.loads(text) if text.strip() else {}
    if not isinstance(settings, dict) or not isinstance(settings.setdefault("hooks", {}), dict):
        raise ValueError("its `hooks` is not a JSON object")
    hooks = settings["hooks"]
    added = False
    for event in EVENTS:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise ValueError(f"its `hooks.{event}` is not a list")
        if not any(_ours(g) for g in groups):
            groups.append(_group(harness))
            added = True
    return json.dumps(settings, indent=2, ensure_ascii=False) + "\n" if added else None


def toml_snippet(harness: str) -> str:
    group = _group(harness)
    handler = group["hooks"][0]
    return "".join(
        f'\n[[hooks.{event}]]\nmatcher = "{group["matcher"]}"\n\n[[hooks.{event}.hooks]]\n'
        f'type = "command"\ncommand = "{COMMAND}"\ntimeout = {handler["timeout"]}\n'
        for event in EVENTS)


def merged_toml(text: str, harness: str) -> str | None:
    """Codex's config with the hook appended (None: it is there already). Checked by
    parsing where Python has `tomllib`: the user's hooks are all still there, ours added."""
    before = _toml_hooks(text)
    if before is not None and all(any(_ours(g) for g in before.get(e, [])) for e in EVENTS):
        return None
    if before is None and f'command = "{COMMAND}"' in text:
        return None  # no parser to tell; the command line is there
    after = text + ("" if not text or text.endswith("\n") else "\n") + toml_snippet(harness)
    parsed = _toml_hooks(after)
    if before is not None and (parsed is None or any(
            len(parsed.get(e, [])) != len(before.get(e, [])) + 1 for e in EVENTS)):
        raise ValueError("its hooks are written in a form the snippet cannot be appended to")
    return after


def _toml_hooks(text: str) -> dict[str, list[object]] | None:
    """The `[hooks]` table of a TOML text (None: no parser in this Python)."""
    if sys.version_info < (3, 11):
        return None
    import tomllib

    hooks = tomllib.loads(text).get("hooks", {})
    if not isinstance(hooks, dict):
        return {}
    return {str(event): groups for event, groups in hooks.items() if isinstance(groups, list)}


def write(path: Path, text: str) -> None:
    """Atomically: the harness never reads a half-written settings file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        if path.exists():
            os.chmod(temp, path.stat().st_mode & 0o777)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def main(words: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="lsap hook install",
                                     description="Add `lsap hook` to a harness's hooks, keeping the others.")
    parser.add_argument("harness", choices=sorted(MATCHERS))
    parser.add_argument("--project", action="store_true", help="the project's settings, not the user's")
    parser.add_argument("--print", action="store_true", help="print the snippet instead of writing it")
    args = parser.parse_args(words)
    if args.print:
        snippet = (json.dumps({"hooks": {e: [_group(args.harness)] for e in EVENTS}}, indent=2)
                   if args.harness == "claude-code" else toml_snippet(args.harness).lstrip())
        print(snippet)
        return 0
    path = settings_path(args.harness, args.project)
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    try:
        new = merged_json(text, args.harness) if args.harness == "claude-code" else merged_toml(text, args.harness)
    except ValueError as exc:
        print(f"lsap: {path} was left as it is: {exc}; add the hook by hand "
              f"(`lsap hook install {args.harness} --print`)", file=sys.stderr)
        return 1
    if new is None:
        print(f"lsap hook is already in {path}")
        return 0
    write(path, new)
    print(f"added lsap hook to {path} ({', '.join(EVENTS)} of {MATCHERS[args.harness]})")
    return 0
