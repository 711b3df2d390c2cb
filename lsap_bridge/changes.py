"""Change sets: every edit the bridge applied, kept so that it can be listed and taken back
whole (`changes` and `undo` modes, doc/architecture.md, Change sets).

The edit engine calls `recording` once, around the switch of an edit's files
(`edits.apply_workspace_edit`): the set (who, when, the request, each file's text before
and after) is written first, fsynced and renamed into place, so that a crash in the
middle leaves it beside the journal that settles the edit; a switch that fails removes it
again. Sets live in `changes/` under the journal's directory, one JSON file each, the
oldest dropped past `KEEP` sets or `KEEP_BYTES` of text. The directory is Neovim's state
directory, shared by every Neovim of the user: a listing holds only the sets whose every
file is inside the asking workspace.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .jsonvalue import Params
from .surface import CLIENT, REQUEST, phrase
from .workspace import Workspace

DIRECTORY = "changes"
KEEP = 200  # change sets kept, newest first
KEEP_BYTES = 64 * 1024 * 1024  # text of all kept sets together
REQUEST_CHARS = 2000  # of the request that made a change, kept
HUMAN = "human"


@dataclass(frozen=True)
class FileText:
    """One file of a change: its text (lines, as a buffer holds them) before and after.
    `in_buffer`: the edit went into a buffer with the human's unsaved changes, not to disk."""

    path: str
    before: list[str] | None  # None: the change created it
    after: list[str]
    in_buffer: bool = False
    origin: str | None = None  # the change renamed it from there
    # The change renamed it onto an existing file (a consented overwrite): that file's text,
    # which `undo` puts back.
    overwritten: list[str] | None = None
    # The directories the change made for it (a created file's), deepest first: `undo` removes
    # them again once empty.
    made: list[str] = field(default_factory=list)
    # The review's numbers of the hunks left, in order (None: 1, 2, …): a number stays its
    # hunk's while others are decided.
    numbers: list[int] | None = None


@dataclass
class ChangeSet:
    id: str
    who: str
    when: float
    label: str
    request: str | None
    files: list[FileText]
    undoes: str | None = None  # the change set this one took back
    undone: list[str] = field(default_factory=list)  # change sets that took this one back
    reverted: list[str] = field(default_factory=list)  # its files put back (undo, rejection)
    # False: the texts were larger than KEEP_BYTES and were not kept (listed, not undoable).
    texts: bool = True

    @property
    def by_agent(self) -> bool:
        return self.who != HUMAN

    def size(self) -> int:
        return sum(len(line) + 1 for f in self.files for line in (*(f.before or ()), *f.after))


def _directory(journals: Path) -> Path:
    return journals / DIRECTORY


def _number(path: Path) -> int:
    return int(path.stem) if path.stem.isdigit() else 0


def _files(journals: Path) -> list[Path]:
    """The kept sets, newest first."""
    directory = _directory(journals)
    found = directory.glob("*.json") if directory.is_dir() else []
    return sorted((p for p in found if p.stem.isdigit()), key=_number, reverse=True)


def _write(path: Path, change: ChangeSet) -> None:
    """Atomically (written aside, fsynced, renamed): a set is never seen half written. A set
    whose texts alone pass `KEEP_BYTES` keeps its files' names only."""
    temp = path.with_suffix(".tmp")
    record = asdict(change)
    if change.size() > KEEP_BYTES:
        record["texts"] = False
        record["files"] = [{**f, "before": [], "after": []} for f in record["files"]]
    data = json.dumps(record, ensure_ascii=False).encode()
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temp, path)


def _new(journals: Path, change: ChangeSet) -> ChangeSet:
    """Write a new set under the next free number (O_EXCL: two Neovims never share one)."""
    directory = _directory(journals)
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    number = max((_number(p) for p in _files(journals)[:1]), default=0) + 1
    while True:
        try:
            os.close(os.open(directory / f"{number}.json", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            break
        except FileExistsError:
            number += 1
    change.id = str(number)
    _write(directory / f"{number}.json", change)
    _prune(journals)
    return change


def _prune(journals: Path) -> None:
    """Drop the oldest sets past `KEEP`, or past `KEEP_BYTES` of text (the newest stays)."""
    total = 0
    for index, path in enumerate(_files(journals)):
        with contextlib.suppress(OSError):
            total += path.stat().st_size
        if index and (index >= KEEP or total > KEEP_BYTES):
            path.unlink(missing_ok=True)


def _read(path: Path) -> ChangeSet | None:
    try:
        record: dict[str, Any] = json.loads(path.read_text())
        files = [FileText(**f) for f in record.pop("files")]
        return ChangeSet(files=files, **record)
    except (OSError, ValueError, TypeError, KeyError):
        return None  # a set left unreadable (by a disk fault): not one to undo


def load(journals: Path, workspace: Workspace) -> list[ChangeSet]:
    """The kept sets whose every file is inside `workspace`, newest first."""
    out = []
    for path in _files(journals):
        found = _read(path)
        if found is not None and all(workspace.contains(Path(f.path)) for f in found.files):
            out.append(found)
    return out


def find(journals: Path, workspace: Workspace, change_id: str) -> ChangeSet | None:
    path = _directory(journals) / f"{change_id}.json"
    found = _read(path) if change_id.isdigit() and path.is_file() else None
    if found is None or not all(workspace.contains(Path(f.path)) for f in found.files):
        return None
    return found


def made_since(journals: Path, by: str, since: float) -> list[str]:
    """The ids of the sets `by` made at `since` or later, oldest first: what a call of its,
    cut off before it was answered, had applied (sets read newest first, until an older one)."""
    found: list[str] = []
    for path in _files(journals):
        change = _read(path)
        if change is None:
            continue
        if change.when < since:
            break
        if change.who == by:
            found.insert(0, change.id)
    return found


def last_of(journals: Path, workspace: Workspace, by: str) -> ChangeSet | None:
    """The newest set `by` made in `workspace` (sets read newest first, until found)."""
    for path in _files(journals):
        found = _read(path)
        if found is not None and found.who == by and all(workspace.contains(Path(f.path)) for f in found.files):
            return found
    return None


def update(journals: Path, change: ChangeSet) -> None:
    """Keep what became of a set (undone, files reverted)."""
    path = _directory(journals) / f"{change.id}.json"
    if path.is_file():
        _write(path, change)


def who() -> str:
    """Who makes the change being applied: the agent's name, else the human."""
    return CLIENT.get() or HUMAN


def request_text() -> str | None:
    """The request being answered as its change set keeps it (what made the change)."""
    request = REQUEST.get()
    if request is None:
        return None
    text = json.dumps(request, ensure_ascii=False, default=str)
    return text if len(text) <= REQUEST_CHARS else text[:REQUEST_CHARS] + "…"


def begin(journals: Path, label: str, files: Sequence[FileText]) -> ChangeSet:
    """Keep the change set of an edit about to be switched (see the module docstring)."""
    return _new(journals, ChangeSet("", who(), time.time(), label, request_text(), list(files)))


def discard(journals: Path, change: ChangeSet) -> None:
    """The edit of a set just begun was not applied: the set goes."""
    (_directory(journals) / f"{change.id}.json").unlink(missing_ok=True)


def rolled_back(journals: Path, label: str, paths: Sequence[str], started: float) -> None:
    """A crash left an edit unfinished and its journal rolled it back (`journal.recover`):
    its set, begun just before the journal (same label and files), goes too."""
    for path in _files(journals)[:KEEP]:
        found = _read(path)
        if (found is not None and found.label == label and found.when <= started
                and {f.path for f in found.files} & set(paths)):
            path.unlink(missing_ok=True)
            return


SIGNED_LINES = 2000  # changed lines of a file marked in the editor, at most


def signs(change: ChangeSet) -> Params:
    """What the editor marks of an agent's change (`lua/lsap/presence.lua`): per file, the
    0-based lines of its "after" text that the change wrote."""
    files: list[Params] = []
    for file in change.files:
        matcher = difflib.SequenceMatcher(None, file.before or [], file.after, autojunk=False)
        lines = [line for tag, _i1, _i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
                 for line in range(j1, j2)]
        files.append({"path": file.path, "lines": lines[:SIGNED_LINES]})
    return {"id": change.id, "who": change.who, "label": change.label, "files": files}


def undo_hint(change_id: str) -> str:
    """The request that takes a change set back, written for the asking surface."""
    return phrase({"mode": "undo", "id": change_id}, "id")
