"""`hook`: an agent harness's own file edits (Claude Code's Edit/Write, Codex's apply_patch)
told to lsap by `lsap hook` (lsap_bridge/hook.py), so that they get what the bridge's own
edits get: a change set, the agent's signs in the editor, and the errors they made pushed
back to the agent (doc/agents.md, Hooks).

`pre` (the harness's PreToolUse) keeps the text of the files the tool is about to write and
has `check` look at them and their users now: the state the edit is compared with. `post`
(PostToolUse) records the edit as a change set by the harness's session (each file's text
before and after: `undo` takes it back) and runs `check` again: the disk's changes are
announced to the servers (its disk sync) and the new errors in those files and their users
are the answer, bounded for the agent's context. What `check` could not confirm in time
stays pending in its record and comes with the next `post` (the `check` record's rules).
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, NamedTuple

from pydantic import Field

from .. import changes
from ..edits.switch import journal_dir
from ..errors import ErrorCode, LsapError
from ..filestate import read_disk
from ..models import Report, Request, StrictModel, absent
from ..modes import Answer, Offer, mode
from ..pipeline import ask
from ..report.budget import estimate
from ..session.approval import HUMAN_APPROVED
from ..session.warm import Session
from ..surface import CLIENT, phrase

CALLS_KEPT = 32  # PreToolUse states kept per agent, waiting for their PostToolUse
FILES_LIMIT = 8  # files of one tool call whose users a PreToolUse looks at
CONTEXT_TOKENS = 400  # the most a PostToolUse adds to the agent's context
SHOWN_LIMIT = 50  # findings asked of `check` per answer (the rest are counted)
MARGIN = 0.5  # seconds kept back from the budget to answer in time


class Replace(StrictModel):
    """One replacement an editing tool is about to make (Claude Code's Edit, MultiEdit)."""

    path: str
    old: str
    new: str
    all: bool = False


class HookRequest(Request):
    mode: Literal["hook"] = "hook"
    event: Literal["pre", "post"]
    tool: str  # the harness's tool name (Edit, Write, apply_patch, …)
    files: list[str]  # the files the tool writes (absolute, or inside the workspace)
    call: str | None = None  # the harness's tool_use_id: pairs a PostToolUse with its PreToolUse
    budget: float = 8.0  # seconds to answer in, whatever the servers do
    # What a PreToolUse's tool is about to write, for the human's approval: its replacements
    # in order, a whole new text (Write: of the first file), or a patch shown as it is.
    replace: list[Replace] = Field(default_factory=list)
    content: str | None = None
    patch: str | None = None

    positional: ClassVar[str] = "tool"
    file_from_cursor: ClassVar[bool] = False


class HookReport(Report):
    event: str
    tool: str
    files: list[str]
    errors: int  # new errors found (all of them, shown or not)
    shown: int
    context: str | None = absent()  # what the agent is told (None: nothing new broke)
    pending: list[str] = Field(default_factory=list)  # files the servers had not analysed in time: in the next answer
    change: str | None = absent()  # the change set recording the edit
    timed_out: bool = False  # the check did not finish within the budget: in the next answer
    decision: str | None = absent()  # PreToolUse: allow (a human said yes) or deny
    reason: str | None = absent()


@dataclass
class Calls:
    """One agent's PreToolUse states: per tool call, each file's text before (None: absent)."""

    before: OrderedDict[str, dict[Path, list[str] | None]] = field(default_factory=OrderedDict)
    carried: list[Entry] = field(default_factory=list)  # new errors a PreToolUse's check found


class Hooks(dict[str | None, Calls]):
    """The hook states of every agent (`Kept.owned`), by its connection's name."""


def _paths(session: Session, files: list[str]) -> list[Path]:
    """The request's files inside the workspace (others are not the servers' to check)."""
    found: list[Path] = []
    for name in files:
        with contextlib.suppress(LsapError):
            found.append(session.workspace.resolve(name))
    return list(dict.fromkeys(found))


async def _texts(session: Session, paths: list[Path]) -> dict[Path, list[str] | None]:
    """The files as the disk holds them (None: absent), where the tool reads and writes them:
    a buffer with the human's unsaved text is not what it changed. Files past the size limit
    are left out (no change set keeps them)."""
    def read() -> dict[Path, list[str] | None]:
        return {p: read_disk(p).lines if p.is_file() else None for p in paths
                if session.gateway.oversized(p) is None}

    return await asyncio.to_thread(read)


async def _check(session: Session, deadline: float, **fields: Any) -> dict[str, Any] | None:
    """A `check` of this agent's record (its report as JSON), within the deadline; None when
    it did not finish (its changes stay unreported: the next check compares them)."""
    request = {"mode": "check", "min_severity": "error", "max_items": SHOWN_LIMIT, "format": "json", **fields}
    try:
        answer = await asyncio.wait_for(ask(session, request), max(0.1, deadline - time.monotonic()))
    except (TimeoutError, LsapError):
        return None
    return answer.report.model_dump(mode="json")


class Entry(NamedTuple):
    """One error the agent is told of: its file, its text, and where `check`'s list of this
    answer has it (1-based; None: found by an earlier PreToolUse's check)."""

    path: str
    text: str
    at: int | None = None


def _entries(report: dict[str, Any], created: set[str]) -> list[Entry]:
    """The errors a check found that the edit made: new ones, and those of a file it created
    (no check had seen it), or of the files the agent's edits touched when the check was its
    first (a baseline lists only those), each with its code line."""
    out = []
    index = report.get("start") or 1
    for group in report.get("groups", []):
        told = group["status"] == "new" or (group["status"] == "current" and (
            report.get("baseline") or group["path"] in created))
        lines = {line["number"]: line["text"] for line in group["lines"]}
        for d in group["diagnostics"]:
            code = f" [{d['code']}]" if d.get("code") else ""
            text = lines.get(d["line"], "").strip()
            if told:
                out.append(Entry(group["path"], f"- {group['path']}:{d['line']}: {d['message'].splitlines()[0]}{code}"
                                 + (f"\n    {d['line']}| {text}" if text else ""), index))
            index += 1
    return out


def _context(tool: str, entries: list[Entry], report: dict[str, Any] | None) -> tuple[str | None, int]:
    """What the agent is told, within `CONTEXT_TOKENS`: as many errors as fit, the rest
    counted with the `check` page that lists them. The number shown."""
    if not entries:
        return None, 0
    beyond = max(0, report["total"] - report["end"]) if report is not None and report.get("end") else 0
    head = f"lsap: after your {tool}, {len(entries) + beyond} new error{'s' if len(entries) + beyond != 1 else ''}:"
    first = entries[0].path
    tail = f"Next: fix them; `{phrase({'mode': 'diagnostics', 'file_path': first}, 'file_path')}` lists {first}'s."
    shown = len(entries)
    while True:
        left = len(entries) - shown + beyond
        more = f"{left} more not shown" if left else ""
        resume = next((e.at for e in entries[shown:] if e.at is not None),
                      report["end"] + 1 if beyond and report is not None else None)
        if more and resume is not None and report is not None and report.get("pagination_id"):
            rest = {"mode": "check", "min_severity": "error", "pagination_id": report["pagination_id"],
                    "start_index": resume}
            more += ": `" + phrase(rest, "file_path") + "` lists them"
        text = "\n".join([head, *(e.text for e in entries[:shown]), *([more] if more else []), tail])
        if estimate(text) <= CONTEXT_TOKENS or shown == 0:
            return text, shown
        shown -= 1


def _preview(session: Session, request: HookRequest, before: dict[Path, list[str] | None]) -> str:
    """The diff the tool is about to make, as the approval shows the bridge's own edits'."""
    if request.patch is not None:
        return request.patch
    after = {p: "\n".join(lines or []) for p, lines in before.items()}
    for step in request.replace:
        with contextlib.suppress(LsapError):
            path = session.workspace.resolve(step.path)
            if path in after:
                after[path] = after[path].replace(step.old, step.new, -1 if step.all else 1)
    if request.content is not None and before:
        after[next(iter(before))] = request.content
    diffs = ["\n".join(difflib.unified_diff(
        lines or [], after[p].splitlines(), f"a/{session.workspace.display(p)}", f"b/{session.workspace.display(p)}",
        lineterm="", n=2)) for p, lines in before.items()]
    return "\n".join(d for d in diffs if d) or f"{request.tool}: no preview of this tool's edit"


async def _approval(session: Session, request: HookRequest, before: dict[Path, list[str] | None]) -> HookReport:
    """The edit policy's answer (the approval float under `ask`): a decision only when a
    human was asked, or the edit is refused."""
    names = [session.workspace.display(p) for p in before]
    report = HookReport(event="pre", tool=request.tool, files=names, errors=0, shown=0)
    try:
        await session.approve_edit(f"{request.tool} {', '.join(names)}", _preview(session, request, before))
    except LsapError as exc:
        if exc.code not in (ErrorCode.DENIED, ErrorCode.APPROVAL_TIMEOUT):
            raise
        return report.model_copy(update={"decision": "deny", "reason": f"{exc.message}; {exc.hint}"})
    if HUMAN_APPROVED.get():
        return report.model_copy(update={"decision": "allow", "reason": "the human approved it in Neovim"})
    return report


async def _pre(session: Session, request: HookRequest, calls: Calls, paths: list[Path], budget: float) -> HookReport:
    before = await _texts(session, paths)
    report = await _approval(session, request, before)
    if report.decision == "deny":
        return report
    deadline = time.monotonic() + budget  # counted from the answer: the human takes their time
    calls.before[request.call or ""] = before
    while len(calls.before) > CALLS_KEPT:
        calls.before.popitem(last=False)
    # One file at a time: `check` looks for the users of one file given, not of several.
    for path in [p for p in paths if p.is_file()][:FILES_LIMIT]:
        found = await _check(session, deadline, file_path=str(path))
        if found is None:
            break
        calls.carried += [e._replace(at=None) for e in _entries(found, set())]  # not in the next list
    return report


async def _record(session: Session, request: HookRequest, before: dict[Path, list[str] | None],
                  paths: list[Path]) -> str | None:
    """The tool's edit as a change set by the agent (its files' texts before and after),
    signed in the editor; None when it changed nothing."""
    after = await _texts(session, list(dict.fromkeys([*before, *paths])))
    files = [changes.FileText(str(p), before.get(p), now or []) for p, now in after.items()
             if before.get(p) != now]
    if not files:
        return None
    label = f"{request.tool} " + ", ".join(session.workspace.display(Path(f.path)) for f in files[:3])
    change = await asyncio.to_thread(changes.begin, await journal_dir(session.gateway), label, files)
    session.edited.note(Path(f.path) for f in files)  # compared by the agent's next check, even a baseline
    with contextlib.suppress(LsapError):
        # Loaded buffers nobody edits take the disk's text first (`gateway.read`): the signs
        # go on the lines the tool wrote, not where they were before the buffer reloads.
        await session.texts.documents([p for p in after if p.is_file()])
        await session.gateway.call("presence_changed", changes.signs(change))
    return change.id


async def _post(session: Session, request: HookRequest, calls: Calls, paths: list[Path],
                deadline: float) -> HookReport:
    before = calls.before.pop(request.call or "", None)
    change = await _record(session, request, before, paths) if before is not None else None
    created = {session.workspace.display(p) for p in paths if before is not None and before.get(p) is None}
    report = await _check(session, deadline)
    entries = [*calls.carried, *(_entries(report, created) if report is not None else [])]
    calls.carried = []
    context, shown = _context(request.tool, entries, report)
    return HookReport(event="post", tool=request.tool, files=[session.workspace.display(p) for p in paths],
                      errors=len(entries), shown=shown, context=context, change=change,
                      pending=[p["path"] for p in report["pending"]] if report else [],
                      timed_out=report is None)


@mode("hook", request=HookRequest, report=HookReport,
      summary="an agent harness's own edit (`lsap hook`): recorded as a change set, checked for what it broke",
      offer=Offer(listed=False))
async def hook(session: Session, request: HookRequest) -> Answer:
    budget = max(0.5, request.budget - MARGIN)
    calls = session.kept.owned(Hooks).setdefault(CLIENT.get(), Calls())
    paths = _paths(session, request.files)
    if request.event == "post":
        return Answer(await _post(session, request, calls, paths, time.monotonic() + budget))
    if not paths:
        return Answer(HookReport(event="pre", tool=request.tool, files=[], errors=0, shown=0))
    return Answer(await _pre(session, request, calls, paths, budget))
