"""A multi-file edit that survives a crash whole: every file ends up wholly old or wholly new.

The service writes each file's new content beside it (a temporary file, fsynced) and
keeps its old content (a hard link to it, or a copy for a file Neovim rewrites in place),
after a journal naming all of them is on disk under Neovim's state directory. Neovim then
marks the journal committed (a marker file, fsynced) and only then switches the files,
all in one main-loop call (`lua/lsap/edits.lua`). When that succeeded the leftovers and
the journal are removed.

A journal left behind by a crash is settled at the next start, editor or embedded
(`recover`): without the marker nothing had been switched, and the leftovers go; with
it the edit is completed from the new contents, file by file, so the whole set is new.
A file holding something else by then (changed by someone after the crash) is left as
it is and named. Should switching fail while the service runs (a file that cannot be
replaced), the files already switched get their old contents back (`roll_back`).

A journal is locked (`flock`) by the process applying it for as long as it runs, so that
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
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .filestate import content_hash, snapshot

LOG = logging.getLogger("lsap.journal")
RECORD = "recovered.log"  # the settled journals, newest last, for `:checkhealth lsap`
RECORD_KEEP = 50  # lines of RECORD kept
WRITERS = 8  # files written (and fsynced) at once while an edit is prepared


@dataclass(frozen=True)
class Change:
    """One file's planned state: `new` bytes (None: the file goes away), the content hash
    it has now (`old`, None: it does not exist yet), and whether Neovim writes it in place
    (a loaded buffer) rather than renaming the new content over it."""

    path: Path
    new: bytes | None
    old: str | None
    in_place: bool = False


@dataclass(frozen=True)
class Entry:
    """One file in the journal: where its new content waits and where its old one is kept."""

    path: str
    old: str | None
    new: str | None
    temp: str | None
    backup: str | None
    in_place: bool = False


def _sibling(path: Path, edit_id: str, what: str) -> Path:
    """A hidden file beside `path` (same file system, so a rename switches it atomically)."""
    return path.with_name(f".{path.name}.lsap-{edit_id}.{what}")


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        fd = os.open(path, os.O_RDONLY)
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
                os.fchown(fd, st.st_uid, st.st_gid)  # only root gets here (see edits.unwritable)
        os.fsync(fd)
    finally:
        os.close(fd)


def _keep_old(change: Change, backup: Path) -> None:
    """Keep the old content under the backup name: a hard link costs nothing and pins the
    very inode a rename replaces; a file rewritten in place (or where links are not
    supported) needs a copy."""
    if not change.in_place:
        try:
            os.link(change.path, backup)
            return
        except OSError:
            pass
    shutil.copy2(change.path, backup)


def _stage(change: Change, entry: Entry) -> None:
    """One file's new content and backup, beside it."""
    if entry.temp is not None and change.new is not None:
        _write_new(change.path, Path(entry.temp), change.new)
    if entry.backup is not None:
        _keep_old(change, Path(entry.backup))


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


class Journal:
    """The record of one multi-file edit being applied (see the module docstring)."""

    def __init__(self, path: Path, fd: int, label: str, entries: list[Entry],
                 started: float | None = None) -> None:
        self.path = path
        self._fd = fd
        self.label = label
        self.entries = entries
        self.started = started

    @property
    def marker(self) -> Path:
        """Exists once the switch began: from then on a crash completes the edit."""
        return self.path.with_suffix(".committed")

    @classmethod
    def prepare(cls, directory: Path, label: str, changes: list[Change]) -> Journal:
        """Write the journal, then every new content and backup; undone whole on failure."""
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        edit_id = secrets.token_hex(6)
        path = directory / f"{edit_id}.json"
        # Written under another name, then renamed: a journal is never seen half written.
        fd = os.open(path.with_suffix(".new"), os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        entries = [
            Entry(
                str(c.path),
                c.old,
                None if c.new is None else content_hash(c.new),
                None if c.new is None else str(_sibling(c.path, edit_id, "new")),
                None if c.old is None else str(_sibling(c.path, edit_id, "old")),
                c.in_place,
            )
            for c in changes
        ]
        journal = cls(path, fd, label, entries, time.time())
        record = {"id": edit_id, "label": label, "pid": os.getpid(), "started": journal.started,
                  "files": [asdict(e) for e in entries]}
        os.write(fd, json.dumps(record).encode())
        os.fsync(fd)
        os.rename(path.with_suffix(".new"), path)  # the lock stays: it is on the file itself
        _fsync_dir(directory)
        try:
            # Files side by side: their fsyncs wait for the disk together, not in turn.
            with ThreadPoolExecutor(WRITERS) as pool:
                list(pool.map(_stage, changes, entries))
                list(pool.map(_fsync_dir, dict.fromkeys(c.path.parent for c in changes)))
        except BaseException:
            journal.finish()
            raise
        return journal

    def finish(self) -> None:
        """Remove every new content and backup left, then the journal: the edit is done, or
        was never begun. Files Neovim rewrote in place are fsynced first (Neovim does not
        wait for the disk: until here their new content is in the journal)."""
        if self.marker.exists():
            with ThreadPoolExecutor(WRITERS) as pool:
                list(pool.map(_fsync, [e.path for e in self.entries if e.in_place]))
        for entry in self.entries:
            _remove((entry.backup, entry.temp))
        for path in (self.path, self.path.with_suffix(".new"), self.marker):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        os.close(self._fd)

    def overwritten(self) -> list[str]:
        """After switching: the files replaced by a rename whose old content changed
        meanwhile (a writer that opened the file before the switch wrote into it after):
        that write is in the backup alone, and `roll_back` brings it back."""
        return [e.path for e in self.entries
                if e.backup is not None and not e.in_place and _current(e.backup) != e.old]

    def roll_back(self, switched: Iterable[str] | None = None) -> tuple[list[str], list[str]]:
        """After switching failed part-way: put every file back as it was (see `_restore`);
        `switched`: the files that may have switched (the others were never touched, and
        are left whatever they hold now); returns the files put back here, and those that
        could not be."""
        if switched is None:
            return self._each(_restore)
        chosen = set(switched)
        return self._each(lambda entry: entry.path in chosen and _restore(entry))

    def settle(self) -> Recovery:
        """After a crash (or Neovim gone mid-switch): complete a committed edit, drop one
        that never began; logged, and recorded for `:checkhealth lsap`."""
        paths = [e.path for e in self.entries]
        if self.marker.exists():
            found = Recovery(self.label, "completed", paths, self._each(_complete)[1], self.started)
        else:
            self.finish()
            found = Recovery(self.label, "rolled back", paths, [], self.started)
        _record(self.path.parent, found)
        return found

    def _each(self, settle: Callable[[Entry], bool]) -> tuple[list[str], list[str]]:
        """`settle` each file (True: it changed it; a string error: it could not); then
        finish. Returns the files changed, and the problems."""
        changed, problems = [], []
        for entry in self.entries:
            try:
                if settle(entry):
                    changed.append(entry.path)
            except (OSError, Unsettled) as exc:
                problems.append(str(exc))
        self.finish()
        return changed, problems


class Unsettled(Exception):
    """A file that cannot be settled, and why."""


def _restore(entry: Entry) -> bool:
    """One file back to its old content, from what is on disk now: holding the new content
    (or, rewritten in place, anything but the old one: Neovim was writing it), it gets its
    backup back, or is removed if the edit created it; one still holding the old content is
    left; one holding something else was changed by someone else since, and is left."""
    now = _current(entry.path)
    if now == entry.old:
        return False  # never switched, or written back already
    if now != entry.new and not (entry.in_place and now is not None):
        raise Unsettled(f"{entry.path} was changed by someone else since: left as it is")
    if entry.backup is not None and os.path.lexists(entry.backup):
        os.rename(entry.backup, entry.path)
    elif entry.old is None:  # the edit created it
        os.unlink(entry.path)
    else:
        raise Unsettled(f"{entry.path}: its old content is lost")
    return True


def _complete(entry: Entry) -> bool:
    """One file to its new content, from what is on disk now: still holding the old one
    (or, rewritten in place, anything but the new one: Neovim was writing it), it gets
    the new content; one holding something else was changed by someone else since."""
    now = _current(entry.path)
    if now == entry.new:
        return False
    if now != entry.old and not (entry.in_place and now is not None):
        raise Unsettled(f"{entry.path} was changed by someone else since: left as it is")
    if entry.new is None:
        os.unlink(entry.path)
    elif entry.temp is not None and os.path.lexists(entry.temp):
        os.rename(entry.temp, entry.path)
    else:
        raise Unsettled(f"{entry.path}: its new content is lost")
    return True


@dataclass(frozen=True)
class Recovery:
    """What was done with a journal left behind."""

    label: str
    outcome: str  # "completed" | "rolled back"
    paths: list[str]
    problems: list[str]
    started: float | None

    @property
    def message(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.started)) if self.started else "?"
        text = (f"an edit left unfinished ({self.label}, {len(self.paths)} file"
                f"{'s' if len(self.paths) != 1 else ''}, started {when}) was {self.outcome}")
        text += {"completed": ": every file has its new content",
                 "rolled back": ": no file had been changed"}.get(self.outcome, "")
        if self.problems:
            text += "; except: " + "; ".join(self.problems)
        return text


def recover(directory: Path) -> list[Recovery]:
    """Settle every journal in `directory` that no running process holds (see the module
    docstring)."""
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
        found.append(_load(path, fd).settle())
    for leftover in [*directory.glob("*.committed"), *directory.glob("*.new")] if directory.is_dir() else []:
        if not leftover.with_suffix(".json").exists() and not _locked(leftover):
            leftover.unlink(missing_ok=True)  # a journal never begun, or a marker of a done one
    return found


def _locked(path: Path) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def _load(path: Path, fd: int) -> Journal:
    try:
        record: dict[str, Any] = json.loads(os.read(fd, os.fstat(fd).st_size) or b"null")
        return Journal(path, fd, str(record["label"]), [Entry(**e) for e in record["files"]],
                       record.get("started"))
    except (ValueError, TypeError, KeyError):
        # Torn while the journal itself was written: no file had been touched yet.
        return Journal(path, fd, "an unreadable journal", [])


def _record(directory: Path, recovery: Recovery) -> None:
    LOG.warning("lsap: %s", recovery.message)
    record = directory / RECORD
    lines = record.read_text().splitlines() if record.exists() else []
    lines.append(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {recovery.message}")
    record.write_text("\n".join(lines[-RECORD_KEEP:]) + "\n")
