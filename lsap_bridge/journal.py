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

A journal is checked before it is settled (`_checked`): its schema and types, the roots of
the session that wrote it (one of them must be a root of the session settling it; a
journal of another workspace waits for a session of it), every file inside those roots,
and each file's new content and backup exactly the names `prepare` gives them beside it.
Anything else (a journal crafted or torn, a directory named `x.json`) is moved aside to
`rejected/` with a log line, never replayed, and the session starts all the same. The
directory is 0700 and the journals 0600: only this user reads or writes them.
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
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated

from pydantic import ConfigDict, Field, StringConstraints, TypeAdapter

from . import statefile
from .errors import LsapBaseError
from .filestate import content_hash, snapshot
from .statefile import REJECTED, Location, Unusable
from .workspace import Workspace

LOG = logging.getLogger("lsap.journal")
RECORD = "recovered.log"  # the settled journals, newest last, for `:checkhealth lsap`
RECORD_KEEP = 50  # lines of RECORD kept
RECORD_BYTES = 1024 * 1024  # of RECORD read, at most
MAX_BYTES = 64 * 1024 * 1024  # of a journal's file: a larger one is not read (rejected)
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

    __pydantic_config__ = ConfigDict(strict=True, extra="forbid")

    path: Location
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
                os.fchown(fd, st.st_uid, st.st_gid)  # only root gets here (see edits.files.unwritable)
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
                 started: float | None = None, roots: Sequence[Path] = ()) -> None:
        self.path = path
        self._fd = fd
        self.label = label
        self.entries = entries
        self.started = started
        self.roots = list(roots)

    @property
    def marker(self) -> Path:
        """Exists once the switch began: from then on a crash completes the edit."""
        return self.path.with_suffix(".committed")

    @classmethod
    def prepare(cls, directory: Path, label: str, changes: list[Change],
                roots: Sequence[Path]) -> Journal:
        """Write the journal, then every new content and backup; undone whole on failure.
        `roots`: the workspace roots of the session (every file is inside one of them)."""
        statefile.private(directory)
        edit_id = secrets.token_hex(6)
        path = directory / f"{edit_id}.json"
        # Written under another name, then renamed: a journal is never seen half written.
        fd = os.open(path.with_suffix(".new"), os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
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
        journal = cls(path, fd, label, entries, time.time(), roots)
        record = {"id": edit_id, "label": label, "pid": os.getpid(), "started": journal.started,
                  "roots": [str(r) for r in roots], "files": [asdict(e) for e in entries]}
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

    def as_switched(self) -> list[str]:
        """After a switch Neovim reported done: the files still as it left them, to roll
        back. A file rewritten in place that holds other than its new content was written
        by someone else since (Neovim's write was over): theirs, left out."""
        return [e.path for e in self.entries if not e.in_place or _current(e.path) == e.new]

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


class Unsettled(LsapBaseError):
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


def recover(directory: Path, roots: Sequence[Path]) -> list[Recovery]:
    """Settle every journal in `directory` that no running process holds and that a
    session of `roots` wrote (see the module docstring); move aside what fails the checks."""
    found: list[Recovery] = []
    if not directory.is_dir():
        return found
    workspace = Workspace.of(*roots)
    for path in sorted(directory.glob("*.json")):
        try:
            fd = statefile.open_regular(path, os.O_RDWR)
        except FileNotFoundError:
            continue  # finished meanwhile
        except Unusable as exc:  # a directory, a symlink, a FIFO: not a journal
            _reject(path, str(exc))
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)  # a running session is applying it
            continue
        journal, problem = _load(path, fd, workspace)
        if problem is not None:
            os.close(fd)
            _reject(path, problem)
        elif journal is not None:
            found.append(journal.settle())
        else:
            os.close(fd)  # another workspace's: its own session settles it
            LOG.info("lsap: %s is an edit of another workspace: left for its session", path)
    for leftover in [*directory.glob("*.committed"), *directory.glob("*.new")]:
        if leftover.with_suffix(".json").exists() or _locked(leftover):
            continue
        if leftover.is_symlink() or not leftover.is_file():
            _reject(leftover, "it is not a regular file")
        else:
            leftover.unlink(missing_ok=True)  # a journal never begun, or a marker of a done one
    return found


def _reject(path: Path, why: str) -> None:
    statefile.reject(path, path.parent / REJECTED, "journal", why)


def _locked(path: Path) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except (FileNotFoundError, IsADirectoryError):
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


@dataclass(frozen=True)
class _Record:
    """A journal as `prepare` writes it (checked strictly, `statefile.parsed`)."""

    __pydantic_config__ = ConfigDict(strict=True, extra="forbid")

    id: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{12}$")]
    label: str
    pid: int
    started: float | None
    roots: Annotated[list[Location], Field(min_length=1)]
    files: list[Entry]


_SCHEMA = TypeAdapter(_Record)


def _checked(record: _Record, name: str, workspace: Workspace) -> Journal | str | None:
    """The journal's fields (path and lock left to the caller), why it is not a journal
    this code wrote, or None when it is another workspace's (no root of it is one of
    `workspace`'s). Every root it records must be one of `workspace`'s, and every file
    inside them."""
    if name != f"{record.id}.json":
        return "its id is not its name"
    own = [Path(r) for r in record.roots]
    ours = [r for r in own if r in workspace.roots]
    if not ours:
        return None
    if len(ours) != len(own):
        return "it records a root that is not one of this session's"
    for entry in record.files:
        target = Path(entry.path)
        if target in own or not workspace.contains(target):
            return f"it names {entry.path}, outside the roots of this session"
        for what, kept, present in (("new", entry.temp, entry.new is not None),
                                    ("old", entry.backup, entry.old is not None)):
            if kept != (str(_sibling(target, record.id, what)) if present else None):
                return f"the {what} content of {entry.path} is not kept beside it as a journal's is"
    return Journal(Path(name), -1, record.label, record.files, record.started, own)


def _load(path: Path, fd: int, workspace: Workspace) -> tuple[Journal | None, str | None]:
    """The journal in `path` (opened as `fd`), checked (`_checked`): (journal, None), (None,
    why it is rejected), or (None, None) for a journal of another workspace."""
    try:
        checked = _checked(statefile.parsed(statefile.read(fd, MAX_BYTES), _SCHEMA), path.name, workspace)
    except Unusable as exc:
        return None, str(exc)
    except OSError as exc:
        return None, f"it cannot be read ({exc.strerror})"
    if checked is None or isinstance(checked, str):
        return None, checked
    return Journal(path, fd, checked.label, checked.entries, checked.started, checked.roots), None


def _record(directory: Path, recovery: Recovery) -> None:
    LOG.warning("lsap: %s", recovery.message)
    record = directory / RECORD
    lines: list[str] = []
    with contextlib.suppress(FileNotFoundError, Unusable):  # a link or a FIFO there: started anew
        fd = statefile.open_regular(record)
        try:
            lines = statefile.read(fd, RECORD_BYTES).decode(errors="replace").splitlines()
        finally:
            os.close(fd)
    lines.append(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {recovery.message}")
    statefile.write(record, ("\n".join(lines[-RECORD_KEEP:]) + "\n").encode())
