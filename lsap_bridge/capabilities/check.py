"""`check`: the agent's guard rail after its own edits — what they broke and what they fixed.

An agent edits files with its own tools; the servers analyse the change in the background
and nothing tells the agent that a caller three files away no longer type-checks. `check`
finds the files changed on disk since the session's last check (its own `DiskWatch`, so
other requests' syncs do not swallow them), adds the files that depend on them (references
of their top-level symbols, asked of their server), waits for the servers to finish their
work (bounded), and compares those files' diagnostics with the ones the last check saw:
what is new, errors first, and what is gone. The first check of a session records the
baseline (the workspace's first `FILES_LIMIT` code files, or the files given); the files the
asker's edits touched before it (`Session.edited`) are compared in any check, and a baseline
lists their diagnostics rather than record an edit's breaks as if they had always been there.
"""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from itertools import groupby
from pathlib import Path
from typing import Any, ClassVar, Literal

from .. import check_store
from ..decode import locations
from ..diagnostics import SEVERITIES, Diagnostic, DiagnosticDelta, settled, severity_rank
from ..diskwatch import DiskWatch
from ..edits.switch import journal_dir
from ..errors import LsapError
from ..gateway import LspCall
from ..jsonvalue import JsonObject
from ..lsp import decoded
from ..models import Line, Paged, Request, Row, absent
from ..modes import Answer, Offer, mode
from ..position import EditorLocation
from ..report.files import expand
from ..report.paging import PagingInfo, keep, paged, suggest
from ..report.pieces import DiagnosticRow, diagnostic_row, editor_location, excerpt, fence_language, incomplete
from ..session.warm import Session
from ..surface import CLIENT
from ..workspace import path_of

Severity = Literal["error", "warning", "information", "hint"]
FILES_LIMIT = 200  # files a check compares (the baseline: the workspace's first ones)
SYMBOLS_LIMIT = 50  # top-level symbols of a changed file whose references are asked
USERS_LIMIT = 20  # changed files whose users are looked for
USERS_NAMED = 3  # users compared named in the report (more: counted, named on request)
REFERENCES = "textDocument/references"
SYMBOLS = "textDocument/documentSymbol"


class CheckRequest(Request):
    mode: Literal["check"] = "check"
    # More files to check besides those changed on disk (a file, a directory or a glob).
    file_path: str | None = None
    # The findings listed: new errors by default; those below it are counted, and listed by
    # the same check's `pagination_id` with a lower one (the report gives that request).
    min_severity: Severity = "error"
    # List the users compared by name (by default their count; the JSON lists them always).
    list_users: bool = False

    positional: ClassVar[str] = "file_path"
    file_from_cursor: ClassVar[bool] = False  # `:LsapCheck` checks what changed, not the buffer

    def result_fields(self) -> JsonObject:
        """A check's findings at another `min_severity`, or its users listed, are that same
        check's (its `pagination_id`), not a new check."""
        return {k: v for k, v in super().result_fields().items() if k not in ("min_severity", "list_users")}


class Changed(Row):
    path: str
    how: str  # created | changed | deleted | given


class Group(Row):
    """The findings of one status in one file."""

    status: str  # new | gone | current (a file no earlier check had seen)
    path: str
    language: str
    diagnostics: list[DiagnosticRow]
    lines: list[Line]  # the lines they are on now (none for gone ones: their lines moved on)


class Unanalysed(Row):
    path: str
    reason: str


class CheckReport(Paged):
    number: int  # this session's checks, this one included
    baseline: bool  # the first check: it records, nothing to compare with
    since: str | None  # when the previous check ran (local time)
    changed: list[Changed]
    dependents: list[str]  # the users compared (the Markdown counts them unless `list_users`)
    list_users: bool  # the users compared are named (asked for, or a few)
    users_listing: str | None = absent()  # the request that lists them
    checked: int
    skipped: int  # files past FILES_LIMIT, not checked
    min_severity: str
    counts: dict[str, dict[str, int]]  # new / gone / current, by severity (those with any)
    unlisted: dict[str, int]  # new and current findings below `min_severity`, by severity
    listing: str | None = absent()  # the request that lists them (this check's, not a new one)
    baseline_counts: dict[str, int]  # the baseline's diagnostics by severity
    busy: list[str]  # servers still working when the wait for them ended
    steady: bool  # the diagnostics held when asked again (else: still changing)
    capped: list[str]  # changed files with more top-level symbols than were asked about
    unsearched: list[str]  # changed files no attached server finds the users of
    users_skipped: int  # changed files past USERS_LIMIT, whose users were not looked for
    pending: list[Unanalysed]
    # The files the asker's edits touched since its last answered check (`Session.edited`),
    # compared: in a baseline, their diagnostics are listed (`current`), not only recorded.
    edited: list[str]
    not_compared: int  # files not compared: `pending`, and those past FILES_LIMIT (not in a baseline)
    groups: list[Group]


@dataclass
class Update:
    """What one check learnt: applied to the record once its answer reached the asker
    (`Answer.commit`, `pipeline.delivering`), never before: a check that ends in an error,
    a timeout or the session's end leaves the record as it was, so the next one reports
    every change since the last answered check."""

    seen: dict[Path, list[Diagnostic]]
    deleted: set[Path]
    users: dict[Path, set[Path]]
    flagged: set[Path]
    reported: set[Path]  # the changes it answered for
    at: float
    mark: int = 0  # `Edited.since` when it began
    edited: set[Path] = field(default_factory=set)  # the files of the asker's edits it compared


@dataclass
class Record:
    """What the session's answered checks saw (`Checks`). A check compares with it and
    changes it only by `apply`, once answered: `Session.run` may run a check once more (a
    text it answered from changed meanwhile), and both runs compare with the same record."""

    watch: DiskWatch
    seen: dict[Path, list[Diagnostic]] = field(default_factory=dict)  # per file checked
    users: dict[Path, set[Path]] = field(default_factory=dict)  # dependents found, per file
    flagged: set[Path] = field(default_factory=set)  # files with new diagnostics last time
    unreported: dict[Path, str] = field(default_factory=dict)  # changes no check answered for
    number: int = 0
    at: float = 0.0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def start(self) -> None:
        """Take the disk's changes since the last look into the changes not reported yet."""
        for event in self.watch.changes():  # the first call takes the disk's baseline
            path, how = path_of(event["uri"]), HOW[event["type"]]
            before = self.unreported.get(path)
            if before == "created" and how == "deleted":
                del self.unreported[path]  # it came and went between two checks
            elif before == "deleted" and how == "created":
                self.unreported[path] = "changed"
            elif before != "created":
                self.unreported[path] = how

    def apply(self, done: Update) -> None:
        """An answered check's findings become what the next one compares with."""
        self.seen.update(done.seen)
        for path in done.deleted:
            self.seen.pop(path, None)
        self.users.update(done.users)
        self.flagged = done.flagged
        for path in done.reported:
            self.unreported.pop(path, None)
        self.number += 1
        self.at = done.at


class Checks(dict[str | None, Record]):
    """What the last `check` saw, one record per agent (its connection's name; None: the
    human's and the CLI's), kept on the session (`Kept.owned`)."""


HOW = {1: "created", 2: "changed", 3: "deleted"}


@dataclass
class Users:
    """The files that use each changed file, and what limited the search for them."""

    found: dict[Path, set[Path]] = field(default_factory=dict)
    capped: list[str] = field(default_factory=list)  # more top-level symbols than were asked about
    unsearched: list[str] = field(default_factory=list)  # no server lists their symbols' references
    skipped: int = 0  # changed files past USERS_LIMIT: not searched


async def dependents(session: Session, paths: list[Path]) -> Users:
    """Files that use the top-level symbols of `paths` (the first `USERS_LIMIT`):
    references, asked of each file's server in one round trip per file."""
    users = Users(skipped=max(0, len(paths) - USERS_LIMIT))
    for path in paths[:USERS_LIMIT]:
        try:
            target = await session.servers.target(path, SYMBOLS)
        except LsapError:
            target = None  # no server for it, or none that lists its symbols
        client = target.client_for(REFERENCES) if target is not None else None
        if target is None or client is None:
            users.unsearched.append(session.workspace.display(path))
            continue
        doc = await session.texts.document(path)
        symbols = (await session.symbols.tree(target, doc)).top_level()
        if len(symbols) > SYMBOLS_LIMIT:
            users.capped.append(session.workspace.display(path))
        calls = []
        for symbol in symbols[:SYMBOLS_LIMIT]:
            params = session.servers.position_params(target, doc, symbol.selection.start_line,
                                             symbol.selection.start_col)
            params["context"] = {"includeDeclaration": False}
            calls.append(LspCall(client.id, REFERENCES, params, target.bufnr))
        found = users.found[path] = set()
        for answer in await session.servers.lsp(calls):
            uses = [] if answer.error else decoded(locations, answer.result, client.name, REFERENCES)
            for use in map(path_of, {use.uri for use in uses}):
                if use != path and session.workspace.contains(use) and use.is_file():
                    found.add(use)
    return users


IMPORTS = ("import", "require", "include")


def importers(session: Session, modules: list[Path], known: dict[Path, list[Diagnostic]]) -> set[Path]:
    """The files checked before whose text imports a changed or deleted module by its name (a
    line with the module's name as a word and `import`, `require` or `include`): users of it
    whatever a server's references say: no server can be asked the references of a file that
    is gone, and a server's references of a changed one are the only other evidence of its
    users (one without references has none; `record.users` keeps only the last answer)."""
    found: set[Path] = set()
    names = {p.stem for p in modules if p.stem != "__init__"} | {p.parent.name for p in modules if p.stem == "__init__"}
    if not names:
        return found
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, sorted(names))) + r")\b")
    for path in known:
        if path in modules or not path.is_file() or session.gateway.oversized(path) is not None:
            continue
        try:
            lines = path.read_text(errors="replace").splitlines()
        except OSError:
            continue
        if any(pattern.search(line) and any(word in line for word in IMPORTS) for line in lines):
            found.add(path)
    return found


Finds = list[tuple[str, Path, Diagnostic]]  # (new | current | gone, file, diagnostic)


def ordered(findings: Finds, display: Callable[[Path], str]) -> Finds:
    """New before current before gone; within each, the files with errors first, and in a
    file its errors first, then by line."""
    rank = {"new": 0, "current": 1, "gone": 2}
    worst: dict[tuple[str, Path], int] = {}
    for status, path, d in findings:
        worst[status, path] = min(worst.get((status, path), 9), severity_rank(d.severity))
    return sorted(findings, key=lambda f: (rank[f[0]], worst[f[0], f[1]], display(f[1]),
                                           severity_rank(f[2].severity), f[2].line, f[2].col))


async def compare(session: Session, record: Record, request: CheckRequest) -> tuple[dict[str, Any], Update]:
    """One check against the record: its facts, and what it learnt (for `Record.apply`)."""
    workspace = session.workspace
    record.start()
    baseline = record.number == 0
    mark, edited = session.edited.since(CLIENT.get())
    touched = [p for p in edited if p.is_file()]
    changed, given = _changed(session, record, request)
    files, searched, users = await _to_check(session, record, changed, given, baseline, touched)
    skipped = max(0, len(files) - FILES_LIMIT)
    files = files[:FILES_LIMIT]
    busy = await idle(session, files)
    found, steady = await settled(lambda: session.diagnostics.of(files, after_sync=True), structural=any(
        how in ("created", "deleted") for how in changed.values()))
    # A file no server analysed in time is not compared: its empty list proves nothing.
    analysed = {p: items for p, items in found.items() if p not in found.pending}
    deleted = {p for p in changed if not p.is_file()}
    # A baseline records, but lists what the asker's edits before it did to the files they
    # touched: their breaks are not swallowed into it.
    findings: Finds = [("current", p, d) for p in touched if p in analysed for d in analysed[p]] if baseline \
        else _findings(record, analysed, deleted)
    # What could not be confirmed is not taken as seen: the changes stay unreported and
    # the files unconfirmed are looked at again by the next check, against the old record.
    unconfirmed = set(found.pending)
    learnt = Update(
        seen=analysed, deleted=deleted, users=searched.found,
        flagged={p for status, p, d in findings if status in ("new", "current") and d.at_least("warning")}
        | unconfirmed,
        reported=set() if unconfirmed else set(record.unreported), at=time.time(),
        mark=mark, edited={p for p in edited if p in analysed or not p.is_file()})
    baseline_counts = {s: sum(1 for items in found.values() for d in items if d.severity == s)
                       for s in SEVERITIES} if baseline else {}
    return {
        "id": uuid.uuid4().hex[:12],  # the key of this check's pages
        "number": record.number + 1,
        "baseline": baseline,
        "since": time.strftime("%H:%M:%S", time.localtime(record.at)) if record.at else None,
        "changed": [{"path": workspace.display(p), "how": how} for p, how in changed.items()],
        "dependents": sorted(workspace.display(p) for p in users if p not in changed),
        "checked": len(found),
        "skipped": skipped,
        "busy": busy,
        "steady": steady,
        "capped": searched.capped,
        "unsearched": searched.unsearched,
        "users_skipped": searched.skipped,
        "baseline_counts": {s: n for s, n in baseline_counts.items() if n},
        "pending": [{"path": workspace.display(p), "reason": r} for p, r in found.pending.items()],
        "edited": [workspace.display(p) for p in touched],
        "not_compared": len(found.pending) + (0 if baseline else skipped),
        "items": ordered(findings, workspace.display),
    }, learnt


def _changed(session: Session, record: Record, request: CheckRequest) -> tuple[dict[Path, str], list[Path]]:
    """What changed since the last check (path: how), with the files the request gives
    ("given"); and those files."""
    changed = dict(record.unreported)
    given: list[Path] = []
    if request.file_path:
        given = expand(session.workspace, request.file_path, True, FILES_LIMIT,
                       session.gateway.max_file_size).files
        for path in given:
            changed.setdefault(path, "given")
    return changed, given


async def _to_check(session: Session, record: Record, changed: dict[Path, str], given: list[Path],
                    baseline: bool, touched: list[Path]) -> tuple[list[Path], Users, set[Path]]:
    """The files to check (past the cap too), the users searched for, and the users found:
    for a baseline every file of the workspace; else what changed and its users. The files
    the asker's edits touched (`Session.edited`) always, a baseline's first: whatever the cap."""
    workspace = session.workspace
    if baseline and not given:
        # Walked past the cap, so that the answer says how many files the baseline left out.
        walked = workspace.walk(workspace.root, True, max_size=session.gateway.max_file_size).files
        return list(dict.fromkeys([*touched, *walked])), Users(), set()
    # The users of what changed on disk, and of one file given; a directory or a glob
    # given is only compared (its files' users would cost references of them all).
    existing = [p for p in changed if p.is_file()]
    looked_for = [p for p in existing if changed[p] != "given" or len(given) == 1]
    searched = await dependents(session, looked_for)
    users: set[Path] = set().union(*searched.found.values())
    for path in changed:
        users |= record.users.get(path, set())
    # Off the event loop: it reads every file checked before, at each check.
    users |= await asyncio.to_thread(importers, session, [*looked_for, *(p for p in changed if not p.is_file())],
                                     record.seen)
    users |= record.flagged | set(touched)
    files = [p for p in dict.fromkeys([*existing, *sorted(users)]) if p.is_file()]
    return files, searched, users


def _findings(record: Record, analysed: dict[Path, list[Diagnostic]], deleted: set[Path]) -> Finds:
    """The diagnostics against the record: new in a file checked before, current in one
    not, gone from either, and everything seen in a deleted file gone."""
    delta = DiagnosticDelta.between({p: record.seen[p] for p in analysed if p in record.seen}, analysed)
    findings: Finds = []
    for path, items in analysed.items():
        known = path in record.seen
        findings += [("new" if known else "current", path, d)
                     for d in (delta.new.get(path, []) if known else items)]
        findings += [("gone", path, d) for d in delta.gone.get(path, [])]
    for path in deleted:  # what was seen in it is gone
        findings += [("gone", path, d) for d in record.seen.get(path, [])]
    return findings


async def idle(session: Session, files: list[Path]) -> list[str]:
    """Wait (bounded) until the servers have finished the work they report (`$/progress`);
    the names of those still busy when the wait ended."""
    clients = {c.id: c for c in await session.gateway.all_clients()}
    if not files or not clients or await session.gateway.wait_until_idle(list(clients)):
        return []
    return sorted({c.name for c in clients.values()})


async def record_of(session: Session, journals: Path) -> Record:
    """The asking checker's record (its agent's, or the human's and the CLI's), made on its
    first check: a restarted daemon continues its last check (lsap_bridge/check_store.py)."""
    agent = CLIENT.get()
    checks = session.kept.owned(Checks)
    if agent not in checks:
        record = checks[agent] = Record(DiskWatch(session.workspace, lambda: session.gateway.max_file_size))
        saved = await asyncio.to_thread(check_store.load, journals, session.workspace.root, agent)
        check_store.resume(record, saved)
    return checks[agent]


def tallies(items: Finds, min_severity: str) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
    """The findings by status and severity (those with any), and the new and current ones
    below `min_severity`, which the report counts and does not list."""
    counts: dict[str, dict[str, int]] = {}
    unlisted: dict[str, int] = {}
    for status, _, d in items:
        by = counts.setdefault(status, {})
        by[d.severity] = by.get(d.severity, 0) + 1
        if status != "gone" and not d.at_least(min_severity):
            unlisted[d.severity] = unlisted.get(d.severity, 0) + 1
    return ({status: {s: by[s] for s in SEVERITIES if s in by} for status, by in counts.items()},
            {s: unlisted[s] for s in SEVERITIES if s in unlisted})


async def _groups(session: Session, shown: Finds, context_lines: int) -> tuple[list[Group], list[EditorLocation]]:
    """A page's findings grouped by status and file, each with its code lines, and where the
    editor jumps for each."""
    docs = await session.texts.documents([p for status, p, _ in shown if status != "gone" and p.is_file()])
    groups = []
    locations: list[EditorLocation] = []
    for (status, path), in_group in groupby(shown, key=lambda f: (f[0], f[1])):
        display = session.workspace.display(path)
        doc = docs.get(path) if status != "gone" else None
        rows: list[DiagnosticRow] = []
        lines: dict[int, Line] = {}
        for _, _, d in in_group:  # errors first, then by line (see `ordered`)
            rows.append(DiagnosticRow(**diagnostic_row(d)))
            if doc is not None:
                lines |= {line.number: line for line in excerpt(doc, d.line, d.line, context_lines)}
                summary = f"{status} {d.severity}: {d.message.splitlines()[0] if d.message else ''}"
                locations.append({**editor_location(display, doc, d.line, d.col), "text": summary})
        groups.append(Group(status=status, path=display, language=fence_language(doc) if doc else "",
                            diagnostics=rows, lines=[lines[n] for n in sorted(lines)]))
    return groups, locations


@mode("check", request=CheckRequest, report=CheckReport, workspace=True,
      summary="after your edits: the diagnostics they added or removed, in the changed files and their users",
      offer=Offer(command="LsapCheck", picker=13))
async def check(session: Session, request: CheckRequest) -> Answer:
    kept = session.kept.page(request)
    commit = None
    if kept:
        facts: dict[str, Any] = kept[0]  # a later page of a check made before: not a new check
    else:
        journals, agent = await journal_dir(session.gateway), CLIENT.get()
        record = await record_of(session, journals)
        async with record.lock:
            facts, learnt = await compare(session, record, request)

        async def commit() -> None:
            """Once answered: the record moves on, in memory and on disk."""
            record.apply(learnt)
            session.edited.compared(agent, learnt.mark, learnt.edited)
            await asyncio.to_thread(check_store.save, journals, session.workspace.root, record.seen,
                                    record.number, record.at, agent)
    # Counted: warnings and worse (and what a lower `min_severity` asks for); listed: from it.
    floor = SEVERITIES[max(severity_rank(request.min_severity), severity_rank("warning"))]
    items: Finds = [f for f in facts["items"] if f[2].at_least(floor)]
    listed = [f for f in items if f[2].at_least(request.min_severity)]

    async def build(request: CheckRequest, shown: Finds, paging: PagingInfo) -> Answer:
        # Kept whole under this check's page key (its id: a later check, of anyone, does not
        # replace it), as `page` keeps it, and here even for one page: its listings name it. A
        # later page shows this check's findings, at any severity; it never runs a new check,
        # which would compare with this one.
        page_id = keep(session, request, [facts], answer=facts["id"])
        groups, locations = await _groups(session, shown, request.context_lines)
        counts, unlisted = tallies(items, request.min_severity)
        lower = next((s for s in SEVERITIES if s in unlisted), None)  # the worst not listed
        same = {"mode": "check", "pagination_id": page_id}
        named = request.list_users or len(facts["dependents"]) <= USERS_NAMED
        # Files not compared, or changed files whose users were not looked for: the answer
        # says so first and gives the check that completes it (`Report.status`).
        short = facts["not_compared"] or facts["users_skipped"] or facts["unsearched"]
        report = CheckReport(
            **{k: v for k, v in facts.items() if k not in ("items", "id")},
            **incomplete(bool(short)),
            min_severity=request.min_severity, list_users=named,
            users_listing=None if named else suggest(CheckRequest, {**same, "list_users": True}),
            counts=counts, unlisted=unlisted,
            listing=suggest(CheckRequest, {**same, "min_severity": lower}) if lower else None,
            groups=groups,
            **paging,
        )
        return Answer(report, locations)

    answer = await paged(session, request, listed, build, answer=facts["id"], whole=[facts])
    return replace(answer, commit=commit) if commit is not None else answer
