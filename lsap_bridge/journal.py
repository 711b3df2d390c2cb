"""A multi-file edit that survives a crash whole: every file ends up wholly old or wholly new.

The service writes the new contents beside their targets first (temporary files, fsynced)
and pins each old content with a hard link (the backup), after a journal naming all of
them is on disk under Neovim's state directory. Only then does Neovim switch the files
(renames, in one main-loop call, see `lua/lsap/edits.lua`). Once every file is switched
the journal is marked committed, and the backups and the journal are removed.

A journal left behind by a crash is settled at the next start (editor or embedded, see
`recover`): committed ones are finished (only clean-up was left); others are rolled back,
file by file from the backups, so the set is back to where it was before the edit. A
journal is locked (`flock`) by the process applying it for as long as it runs, so that
a session starting meanwhile never settles another session's edit that is still going.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import secrets
import shutil
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .filestate import content_hash, snapshot

LOG = logging.getLogger("lsap.journal")
RECORD = "recovered.log"  # the settled journals, newest last, for `:checkhealth lsap`
RECORD_KEEP = 50  # lines of RECORD kept


@dataclass(frozen=True)
class Change:
    """One file's planned state: `new` bytes (None: the file goes away), and the content
    hash it has now (`old`, None: it does not exist yet)."""

    path: Path
    new: bytes | None
    old: str | None


@dataclass(frozen=True)
class Entry:
    """One file in the journal: where its new content waits and where its old one is kept."""

    path: str
    old: str | None
    new: str | None
    temp: str | None
    backup: str | None


def _sibling(path: Path, edit_id: str, what: str) -> Path:
    """A hidden file beside `path` (same file system, so a rename switches it atomically)."""
    return path.with_name(f".{path.name}.lsap-{edit_id}.{what}")


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _current(path: str) -> str | None:
    """The content hash of a file now (None when there is none)."""
    found = snapshot(path)
    return None if found is None else found.digest


def _write_new(target: Path, temp: Path, data: bytes) -> None:
    """The new content, fsynced, with the target's mode and owner where it exists."""
    try:
        st: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        st = None
        temp.parent.mkdir(parents=True, exist_ok=True)  # a new file in a new directory
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if st is not None:
            os.fchmod(fd, st.st_mode & 0o7777)
            if (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
                os.fchown(fd, st.st_uid, st.st_gid)  # only root gets here (see edits.writable)
        os.fsync(fd)
    finally:
        os.close(fd)


def _keep_old(target: Path, backup: Path) -> None:
    """Pin the old content under the backup name: a hard link costs nothing and keeps the
    very inode the rename replaces; a copy where links are not supported."""
    try:
        os.link(target, backup)
    except OSError:
        shutil.copy2(target, backup)


class Journal:
    """The record of one multi-file edit being applied (see the module docstring)."""

    def __init__(self, path: Path, fd: int, label: str, entries: list[Entry]) -> None:
        self.path = path
        self._fd = fd
        self.label = label
        self.entries = entries

    @property
    def id(self) -> str:
        return self.path.stem

    @property
    def marker(self) -> Path:
        return self.path.with_suffix(".committed")

    @classmethod
    def prepare(cls, directory: Path, label: str, changes: list[Change]) -> Journal:
        """Write the journal, then every new content and backup; undone whole on failure."""
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        edit_id = secrets.token_hex(6)
        path = directory / f"{edit_id}.json"
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        entries = [
            Entry(
                str(c.path),
                c.old,
                None if c.new is None else content_hash(c.new),
                None if c.new is None else str(_sibling(c.path, edit_id, "new")),
                None if c.old is None else str(_sibling(c.path, edit_id, "old")),
            )
            for c in changes
        ]
        journal = cls(path, fd, label, entries)
        record = {"id": edit_id, "label": label, "pid": os.getpid(), "started": time.time(),
                  "files": [asdict(e) for e in entries]}
        os.write(fd, json.dumps(record).encode())
        os.fsync(fd)
        _fsync_dir(directory)
        try:
            for change, entry in zip(changes, entries, strict=True):
                if entry.temp is not None and change.new is not None:
                    _write_new(change.path, Path(entry.temp), change.new)
                if entry.backup is not None:
                    _keep_old(change.path, Path(entry.backup))
            for parent in dict.fromkeys(c.path.parent for c in changes):
                _fsync_dir(parent)
        except BaseException:
            journal.roll_back()
            raise
        return journal

    def commit(self) -> None:
        """Every file is switched: from here a crash only leaves clean-up to do."""
        fd = os.open(self.marker, os.O_WRONLY | os.O_CREAT, 0o600)
        os.fsync(fd)
        os.close(fd)
        _fsync_dir(self.path.parent)

    def finish(self) -> None:
        """Remove the backups and leftovers, then the journal (after `commit`)."""
        for entry in self.entries:
            _remove((entry.backup, entry.temp))
        self._close()

    def roll_back(self) -> list[str]:
        """Put every file back as it was before the edit; returns what could not be.

        File by file, from what is on disk now: a file holding the new content gets its
        backup back (or is removed, if the edit created it); one still holding the old
        content is left; one holding neither was changed by someone else since, and is left
        as it is (and named in the answer).
        """
        problems = []
        for entry in self.entries:
            try:
                problem = _restore(entry)
            except OSError as exc:
                problem = f"{entry.path}: {exc}"
            if problem:
                problems.append(problem)
        self._close()
        return problems

    def _close(self) -> None:
        for path in (self.path, self.marker):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        os.close(self._fd)


def _restore(entry: Entry) -> str | None:
    now = _current(entry.path)
    backup = entry.backup if entry.backup and os.path.lexists(entry.backup) else None
    problem = None
    if now is not None and now == entry.new:
        if backup is not None:
            os.rename(backup, entry.path)
            backup = None
        elif entry.old is None:  # the edit created it
            os.unlink(entry.path)
        else:
            problem = f"{entry.path}: its old content is lost"
    elif now is None and entry.new is None and entry.old is not None:
        if backup is None:
            problem = f"{entry.path}: removed, and its old content is lost"
        else:
            os.rename(backup, entry.path)
            backup = None
    elif now != entry.old:
        problem = f"{entry.path} was changed by someone else since: left as it is"
    _remove((backup, entry.temp))
    return problem


def _remove(leftovers: Iterable[str | None]) -> None:
    """Remove a backup or a new content no longer needed; one that cannot be removed is
    only clutter (the file itself is settled), so it is logged, not raised."""
    for leftover in leftovers:
        if leftover is None:
            continue
        try:
            os.unlink(leftover)
        except FileNotFoundError:
            pass
        except OSError as exc:
            LOG.warning("lsap: could not remove %s: %s", leftover, exc)


@dataclass(frozen=True)
class Recovery:
    """What was done with a journal left behind."""

    label: str
    outcome: str  # "completed" | "rolled back" | "removed"
    paths: list[str]
    problems: list[str]
    started: float | None

    @property
    def message(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.started)) if self.started else "?"
        text = (f"an edit left unfinished ({self.label}, {len(self.paths)} file"
                f"{'s' if len(self.paths) != 1 else ''}, started {when}) was {self.outcome}")
        if self.outcome == "rolled back":
            text += ": every file is back as it was before it"
        if self.problems:
            text += "; except: " + "; ".join(self.problems)
        return text


def recover(directory: Path) -> list[Recovery]:
    """Settle every journal in `directory` that no running process holds (see the module
    docstring); each is logged and appended to the record `:checkhealth lsap` shows."""
    found = []
    for path in sorted(directory.glob("*.json")) if directory.is_dir() else []:
        try:
            fd = os.open(path, os.O_RDWR)
        except FileNotFoundError:
            continue  # finished meanwhile
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)  # a running session is applying it
            continue
        found.append(_settle(path, fd))
    for marker in directory.glob("*.committed") if directory.is_dir() else []:
        if not marker.with_suffix(".json").exists():
            marker.unlink(missing_ok=True)
    if found:
        _record(directory, found)
    for recovery in found:
        LOG.warning("lsap: %s", recovery.message)
    return found


def _settle(path: Path, fd: int) -> Recovery:
    try:
        record: dict[str, Any] = json.loads(os.read(fd, os.fstat(fd).st_size) or b"null")
        entries = [Entry(**e) for e in record["files"]]
    except (ValueError, TypeError, KeyError):
        # Torn while the journal itself was written: no file had been touched yet.
        Journal(path, fd, "?", [])._close()
        return Recovery("an unreadable journal", "removed", [], [], None)
    journal = Journal(path, fd, str(record.get("label")), entries)
    paths = [e.path for e in entries]
    started = record.get("started")
    if journal.marker.exists():
        journal.finish()
        return Recovery(journal.label, "completed", paths, [], started)
    return Recovery(journal.label, "rolled back", paths, journal.roll_back(), started)


def _record(directory: Path, recoveries: Iterable[Recovery]) -> None:
    record = directory / RECORD
    lines = record.read_text().splitlines() if record.exists() else []
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    lines += [f"{stamp} {r.message}" for r in recoveries]
    record.write_text("\n".join(lines[-RECORD_KEEP:]) + "\n")
