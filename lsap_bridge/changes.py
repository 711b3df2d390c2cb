"""Change sets: every edit the bridge applied, kept so that it can be listed and taken back
whole (`changes` and `undo` modes, doc/architecture.md, Change sets).

The edit engine calls `recording` once, around the switch of an edit's files
(`edits.apply.apply_workspace_edit`): the set (who, when, the request, each file's text before
and after) is written first, fsynced and renamed into place, so that a crash in the
middle leaves it beside the journal that settles the edit; a switch that fails removes it
again. Sets live in `changes/` under the journal's directory, one JSON file each, the
oldest dropped past `KEEP` sets or `KEEP_BYTES` of text. The directory is Neovim's state
directory, shared by every Neovim of the user: a listing holds only the sets whose every
file is inside the asking workspace.

A set is checked before use like a journal (`statefile`): a regular file of at most
`MAX_BYTES`, named by its id (a decimal number), of exactly these fields and types, every
path absolute. Anything else in changes/ is moved aside to `rejected/` beside it, with a
log line; listing, undo, review and edits go on without it.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import logging
import os
import re
import stat
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated

from pydantic import ConfigDict, Field, StringConstraints, TypeAdapter

from . import statefile
from .jsonvalue import Params
from .statefile import REJECTED, Location, Unusable
from .surface import CLIENT, REQUEST, phrase
from .workspace import Workspace

LOG = logging.getLogger("lsap.changes")
DIRECTORY = "changes"
KEEP = 200  # change sets kept, newest first
KEEP_BYTES = 64 * 1024 * 1024  # text of all kept sets together
MAX_BYTES = 2 * KEEP_BYTES  # of one set's file: a larger one is not read (rejected)
MAX_FILES = 10_000  # files of one set with their texts (a larger edit keeps its first names only)
REQUEST_CHARS = 2000  # of the request that made a change, kept
HUMAN = "human"
# A set's id: a decimal number, the name of its file (`<id>.json`).
Id = Annotated[str, StringConstraints(pattern=r"^[1-9][0-9]{0,15}$")]
_NAME = re.compile(r"[1-9][0-9]{0,15}\.json")
# The editor's key of a merge (`FileText.merged`): its Neovim's pid and a clock.
MergeKey = Annotated[str, StringConstraints(pattern=r"^[0-9a-z-]{1,64}$")]
# A set read is checked exactly (`statefile.parsed`): these types, no other field.
_STRICT = ConfigDict(strict=True, extra="forbid")


@dataclass(frozen=True)
class FileText:
    """One file of a change: its text (lines, as a buffer holds them) before and after.
    `in_buffer`: the edit went into a buffer with the human's unsaved changes, not to disk."""

    __pydantic_config__ = _STRICT

    path: Location
    before: list[str] | None  # None: the change created it
    after: list[str]
    in_buffer: bool = False
    origin: Location | None = None  # the change renamed it from there
    # The change renamed it onto an existing file (a consented overwrite): that file's text,
    # which `undo` puts back.
    overwritten: list[str] | None = None
    # The directories the change made for it (a created file's), deepest first: `undo` removes
    # them again once empty.
    made: list[str] = field(default_factory=list)
    # The review's numbers of the hunks left, in order (None: 1, 2, …): a number stays its
    # hunk's while others are decided.
    numbers: list[int] | None = None
    # A disk change merged into a buffer with the human's unsaved text (lua/lsap/transport/
    # merge.lua): the editor's key of that merge (None: no merge). `before` is the text the
    # buffer was read from, `after` the disk's; the buffer holds `after`'s hunks beside the
    # human's text, but those in `conflicts`.
    merged: MergeKey | None = None
    # Per conflict of the merge (in its order): the numbers of the hunks it holds, shown as a
    # conflict and decided in the buffer (keep mine / take theirs / both); [] once decided.
    conflicts: list[list[int]] = field(default_factory=list)


@dataclass
class ChangeSet:
    __pydantic_config__ = _STRICT

    id: Id
    who: str
    when: float
    label: str
    request: str | None
    files: Annotated[list[FileText], Field(max_length=MAX_FILES)]
    undoes: Id | None = None  # the change set this one took back
    undone: list[Id] = field(default_factory=list)  # change sets that took this one back
    reverted: list[Location] = field(default_factory=list)  # its files put back (undo, rejection)
    # False: the texts were larger than KEEP_BYTES and were not kept (listed, not undoable).
    texts: bool = True

    @property
    def by_agent(self) -> bool:
        return self.who != HUMAN

    def size(self) -> int:
        return sum(len(line) + 1 for f in self.files for line in (*(f.before or ()), *f.after))


_SCHEMA = TypeAdapter(ChangeSet)


def _directory(journals: Path) -> Path:
    """changes/, this user's own and 0700; anything else found there (a link, a file) is
    moved aside and a new one made."""
    directory = journals / DIRECTORY
    statefile.private(journals)
    try:
        statefile.private(directory)
    except (PermissionError, FileExistsError, NotADirectoryError) as exc:
        statefile.reject(directory, journals / REJECTED, "change sets' directory", str(exc))
        statefile.private(directory)
    return directory


def _path(journals: Path, change_id: str) -> Path:
    """The file of the set `change_id`: a checked id, never a path made of other text."""
    name = f"{change_id}.json"
    if not _NAME.fullmatch(name):
        raise ValueError(f"{change_id!r} is not a change set's id")
    return journals / DIRECTORY / name


def _number(path: Path) -> int:
    return int(path.stem) if _NAME.fullmatch(path.name) else 0


def _files(directory: Path) -> list[Path]:
    """What changes/ holds, the sets newest first, but a writer's temporary files (hidden:
    `statefile.write`)."""
    return sorted((p for p in directory.iterdir() if not p.name.startswith(".")), key=_number, reverse=True)


def _write(path: Path, change: ChangeSet) -> None:
    """Atomically (`statefile.write`): a set is never seen half written."""
    statefile.write(path, _record(change))


def _record(change: ChangeSet) -> bytes:
    """The set as its file holds it. A set whose texts alone pass `KEEP_BYTES` (or whose
    files pass `MAX_FILES`) keeps its files' names only."""
    record = asdict(change)
    data = json.dumps(record, ensure_ascii=False).encode()
    if change.size() > KEEP_BYTES or len(change.files) > MAX_FILES or len(data) > MAX_BYTES:
        record["texts"] = False
        record["files"] = [{**f, "before": [], "after": [], "overwritten": None}
                           for f in record["files"][:MAX_FILES]]
        data = json.dumps(record, ensure_ascii=False).encode()
    return data


def _new(journals: Path, change: ChangeSet) -> ChangeSet:
    """Write a new set under the next free number, whole from the moment its name exists
    (`statefile.create`: two Neovims never share a number, and a reader listing the sets
    meanwhile never finds it empty)."""
    directory = _directory(journals)
    number = max((_number(p) for p in _files(directory)[:1]), default=0) + 1
    while True:
        change.id = str(number)
        if statefile.create(directory / f"{number}.json", _record(change)):
            break
        number += 1
    _prune(directory)
    return change


def _regular(path: Path) -> os.stat_result | None:
    with contextlib.suppress(OSError):
        found = os.lstat(path)
        if stat.S_ISREG(found.st_mode):
            return found
    return None


def _prune(directory: Path) -> None:
    """Drop the oldest sets past `KEEP`, or past `KEEP_BYTES` of text (the newest stays);
    what is not a regular file is no set, and is left to `load` to move aside."""
    total = index = 0
    for path in _files(directory):
        found = _regular(path)
        if found is None or not _NAME.fullmatch(path.name):
            continue
        total += found.st_size
        if index and (index >= KEEP or total > KEEP_BYTES):
            path.unlink(missing_ok=True)
        index += 1


def _read(path: Path) -> ChangeSet | None:
    """The set in `path`, checked (`statefile`); one that fails is moved to rejected/, and
    one that cannot be read now (gone, a disk fault) is skipped."""
    if path.parent.name != DIRECTORY:  # a caller's slip must never move other state aside
        raise ValueError(f"{path} is not in a change sets' directory")
    try:
        if not _NAME.fullmatch(path.name):
            raise Unusable("its name is not a change set's (a decimal number)")
        fd = statefile.open_regular(path)
        try:
            data = statefile.read(fd, MAX_BYTES)
        finally:
            os.close(fd)
        found = statefile.parsed(data, _SCHEMA)
        if found.id != path.stem:
            raise Unusable(f"its id {found.id} is not its file name")
        return found
    except Unusable as exc:
        statefile.reject(path, path.parent.parent / REJECTED, "change set", str(exc))
    except OSError as exc:
        LOG.warning("lsap: change set %s could not be read: %s", path.name, exc)
    return None


def _inside(change: ChangeSet, workspace: Workspace) -> bool:
    """Every file of the set inside `workspace` (another's sets share the directory)."""
    return all(workspace.contains(Path(p)) for f in change.files
               for p in (f.path, f.origin) if p is not None)


def load(journals: Path, workspace: Workspace) -> list[ChangeSet]:
    """The kept sets whose every file is inside `workspace`, newest first."""
    out = []
    for path in _files(_directory(journals)):
        found = _read(path)
        if found is not None and _inside(found, workspace):
            out.append(found)
    return out


def find(journals: Path, workspace: Workspace, change_id: str) -> ChangeSet | None:
    try:
        path = _path(journals, change_id)
    except ValueError:
        return None
    found = _read(path) if os.path.lexists(path) else None
    return found if found is not None and _inside(found, workspace) else None


def made_since(journals: Path, by: str, since: float) -> list[str]:
    """The ids of the sets `by` made at `since` or later, oldest first: what a call of its,
    cut off before it was answered, had applied (sets read newest first, until an older one)."""
    found: list[str] = []
    for path in _files(_directory(journals)):
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
    for path in _files(_directory(journals)):
        found = _read(path)
        if found is not None and found.who == by and all(workspace.contains(Path(f.path)) for f in found.files):
            return found
    return None


def update(journals: Path, change: ChangeSet) -> None:
    """Keep what became of a set (undone, files reverted)."""
    path = _path(journals, change.id)
    if _regular(path) is not None:
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


def begin(journals: Path, label: str, files: Sequence[FileText], by: str | None = None) -> ChangeSet:
    """Keep the change set of an edit about to be switched (see the module docstring); `by`:
    who made it, when not the asker (a disk change the editor merged: its writer)."""
    request = request_text() if by is None else None
    return _new(journals, ChangeSet("", by or who(), time.time(), label, request, list(files)))


def merges(journals: Path, key: str, scan: int = 50) -> ChangeSet | None:
    """The set of the editor's merge `key` (`FileText.merged`), among the newest `scan`."""
    for path in _files(_directory(journals))[:scan]:
        found = _read(path)
        if found is not None and any(f.merged == key for f in found.files):
            return found
    return None


def writer(journals: Path, path: str, after: list[str], scan: int = 20) -> ChangeSet | None:
    """The newest of the last `scan` sets that wrote `after` to `path` on disk (an agent's
    edit, a hook-recorded one): who made a disk change the editor then merged."""
    for candidate in _files(_directory(journals))[:scan]:
        found = _read(candidate)
        if found is not None and any(f.path == path and f.after == after and not f.in_buffer
                                     and f.merged is None for f in found.files):
            return found
    return None


def discard(journals: Path, change: ChangeSet) -> None:
    """The edit of a set just begun was not applied: the set goes."""
    _path(journals, change.id).unlink(missing_ok=True)


def rolled_back(journals: Path, label: str, paths: Sequence[str], started: float) -> None:
    """A crash left an edit unfinished and its journal rolled it back (`journal.recover`):
    its set, begun just before the journal (same label and files), goes too."""
    for path in _files(_directory(journals))[:KEEP]:
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
