"""What the language servers were last told about the workspace's files on disk.

Servers read the files nobody has open from disk and keep what they read; most do not
watch the disk themselves, and Neovim offers them no file watching on Linux. Before a
request whose answer spans the workspace, the bridge compares each code file's
`DiskStamp` with the one it saw last, and tells the servers what was created, changed or
deleted (`workspace/didChangeWatchedFiles`), as a watching editor would.

The paths to look at come from the workspace's `watcher.Watcher` (inotify), so a request
costs what changed, on any tree size; where it cannot watch (the watches ran out), a stat
scan of up to `WATCH_LIMIT` code files per root, and `scanning` says why.

Files over `max_file_size` are not watched (the bridge never opens them for servers), and
a file is read only while its stamp is racy (written within the last two seconds; a
stamp further in the future than that is trusted: any write changes it), in chunks.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISREG
from typing import NamedTuple

from .filestate import RACY_NS, DiskStamp, Snapshot
from .lsp import FileEventData
from .watcher import Watcher, shared
from .workspace import CODE_SUFFIXES, Workspace, uri_of

# Code files a scan compares per root (a few microseconds each: the baseline, and the
# fallback where the watcher cannot watch); there, files past it are still read fresh,
# but the servers are not told when they change.
WATCH_LIMIT = 10_000
CREATED, CHANGED, DELETED = 1, 2, 3  # LSP FileChangeType
CHUNK = 1 << 20  # bytes read at a time to hash a file


class Seen(NamedTuple):
    stamp: DiskStamp
    digest: str | None  # content hash, kept while the stamp alone proves nothing (racy)

    def differs(self, now: Seen) -> bool:
        return self.stamp != now.stamp or (None not in (self.digest, now.digest) and self.digest != now.digest)


def fs_now_ns() -> int:
    """Now, as the file system's clock tells it: a file written after this moment has an
    mtime (and ctime) at or after it. Linux stamps files from its coarse clock, which lags
    the fine one by up to a tick; elsewhere a margin stands in for it."""
    if sys.platform == "linux":
        return time.clock_gettime_ns(5)  # CLOCK_REALTIME_COARSE
    return time.time_ns() - 50_000_000


@dataclass(frozen=True)
class Basis:
    """What the files no buffer holds were when a server began computing an edit: servers
    read those from disk, so an edit of one is proven only if the file is still what it was
    then. `seen`: the disk watch's record taken for the request (what the servers were told),
    if it took one; `at_ns`: when the request began (`fs_now_ns`)."""

    at_ns: int
    seen: Mapping[str, Seen] | None = None
    # Files the bridge itself wrote since (a text-format block's earlier steps): their
    # content hashes, which the servers were told of.
    written: dict[str, str] = field(default_factory=dict)
    # Files this request opened for its servers before asking them (`Servers.target`): they
    # computed on the buffer (sent to them as it was loaded or changed), not on the disk.
    opened: set[str] = field(default_factory=set)
    # `seen` is the watcher's record: it hears every write, but not every change of a
    # file's metadata (`chattr` sends no event), so a stamp that differs from it in its
    # change time alone, from before the request began, is metadata, not a new text.
    watched: bool = False

    def doubt(self, path: Path, disk: Snapshot, loaded: bool = False) -> str | None:
        """Why `disk` may not be the text the edit was computed on, or None. `loaded`: a
        buffer holds the file, with the disk's text."""
        if loaded and str(path) in self.opened:
            return None
        if str(path) in self.written:
            same = self.written[str(path)] == disk.digest
            return None if same else "it changed on disk after the bridge's own edit of it"
        seen = self.seen.get(str(path)) if self.seen is not None else None
        if seen is not None:
            # The change time alone moved: the same bytes (the content hash proves it), or,
            # before the request began, metadata the watcher is not told of.
            metadata = seen.stamp._replace(ctime_ns=disk.stamp.ctime_ns) == disk.stamp and (
                seen.digest == disk.digest or (self.watched and disk.stamp.ctime_ns < self.at_ns))
            if (seen.stamp != disk.stamp and not metadata) or seen.digest not in (None, disk.digest):
                return "it changed on disk after the request began"
            return None
        if max(disk.stamp.mtime_ns, disk.stamp.ctime_ns) >= self.at_ns:
            return "it was written after the request began"
        return None


@dataclass
class DiskWatch:
    workspace: Workspace
    # Files larger than this many bytes (`max_file_size`, as Neovim says when the gateway
    # starts) are neither watched nor read; None: no limit.
    max_size: Callable[[], int | None]
    limit: int = WATCH_LIMIT
    _known: dict[str, Seen] | None = field(default=None, repr=False)
    watcher: Watcher | None = field(default=None, repr=False)  # None: the workspace's shared one
    _cursor: int | None = field(default=None, repr=False)  # the watcher's event number, last call
    # The last call was answered by the watcher, and nothing at all (no file of any kind)
    # had changed under the roots: loaded buffers there are as their files.
    quiet: bool = field(default=False, repr=False)
    # Files the servers were last told are deleted: one that comes back is created again.
    _deleted: set[str] = field(default_factory=set, repr=False)

    def __post_init__(self) -> None:
        if self.watcher is None:
            self.watcher = shared(self.workspace)

    @property
    def scanning(self) -> str | None:
        """Why changes are found by a scan (bounded: a tree past `limit` code files per root
        is seen in part), or None: the watcher tells them."""
        assert self.watcher is not None
        return self.watcher.reason if not self.watcher.live else None

    def covers(self, path: str) -> bool:
        """Whether a change on disk to the file at `path` would be seen at once."""
        assert self.watcher is not None
        return self.watcher.covers(path)

    def cover(self, path: str) -> None:
        """Watch a file outside the watched trees (a library's source in a buffer) from now on."""
        assert self.watcher is not None
        self.watcher.cover(path)
    # When a call last found changes (time.monotonic()): the servers' indexes may lag it.
    changed_at: float | None = None

    def changes(self) -> list[FileEventData]:
        """LSP `FileEvent`s for what changed on disk since the last call; the first call
        (when the session starts) takes the baseline and returns none."""
        assert self.watcher is not None
        known = self._known
        if known is not None and self._cursor is not None:
            told = self.watcher.since(self._cursor)
            if told is not None:
                self._cursor, paths = told
                self.quiet = not paths
                if not paths:
                    return []
                # A new record: a `Basis` taken from the last one must never change under it.
                self._known = known = dict(known)
                return self._recheck(known, paths)
        self._cursor, self.quiet = self.watcher.mark(), False
        now: dict[str, Seen] = {}
        at = time.time_ns()
        for root in self.workspace.roots:
            for path, stat in self.workspace.walk(
                    root, limit=self.limit, max_size=self.max_size()).stats.items():
                stamp = DiskStamp.of_stat(stat)
                now[path] = _seen(path, stamp, known.get(path) if known else None, at)
        self._known = now
        if known is None:
            return []
        events = [_event(p, CREATED) for p in now if p not in known]
        events += [_event(p, CHANGED) for p, seen in now.items() if p in known and known[p].differs(seen)]
        events += [_event(p, DELETED) for p in known if p not in now]
        if events:
            self.changed_at = time.monotonic()
        return events

    def told(self, seen: Mapping[str, DiskStamp | None]) -> None:
        """The bridge itself just wrote these files (their stamps then) or removed them
        (None), and the servers heard of it as it happened (their buffers changed and were
        written, or `workspace/didChangeWatchedFiles` of files no buffer holds): recorded as
        seen, so the next `changes` does not tell the servers again. Told again, a change
        they have already read moves the evidence that diagnostics are of the new text
        (`when_diagnosed`) past what they published for it, and, with nothing new to read,
        they publish nothing more: every file stayed "not analysed" (issue 44). Only the
        files the watch keeps a record of (`_tracks`): one it never looks at again would keep
        this stamp, and a later write by someone else would look to every `Basis` as a change
        since the request began."""
        if self._known is None:
            return
        known = self._known = dict(self._known)  # a new record, as `changes` makes (`basis`)
        at, limit = time.time_ns(), self.max_size()
        for path, stamp in seen.items():
            if not self._tracks(path) or (stamp is not None and limit is not None and stamp.size > limit):
                continue
            if stamp is None:
                known.pop(path, None)
                self._deleted.add(path)
            else:
                known[path] = _seen(path, stamp, None, at)
                self._deleted.discard(path)

    def basis(self, at_ns: int) -> Basis:
        """The record the last `changes` took (replaced, never changed, by the next one)."""
        assert self.watcher is not None
        return Basis(at_ns, self._known, watched=self.watcher.live and self._cursor is not None)

    def _inside(self, path: str) -> bool:
        """Under a root: a watched directory outside them (`Watcher.cover`) is for buffers only."""
        return path.startswith(tuple(str(root) + os.sep for root in self.workspace.roots))

    def _tracks(self, path: str) -> bool:
        """Whether the watch keeps a record of the file at `path`: a code file under a root
        (what the scan walks, and `_recheck` looks at)."""
        return os.path.splitext(path)[1] in CODE_SUFFIXES and self._inside(path)

    def _recheck(self, known: dict[str, Seen], paths: list[str]) -> list[FileEventData]:
        """Events for the paths the watcher saw change (a directory gone: the files known
        below it), each compared with what was seen of it before, as the scan does."""
        assert self.watcher is not None
        at, limit = time.time_ns(), self.max_size()
        files: list[str] = []
        for path in paths:
            if path.endswith(os.sep) and self._inside(path):
                files += [p for p in known if p.startswith(path)]
            elif self._tracks(path):
                files.append(path)
        events: list[FileEventData] = []
        for path in dict.fromkeys(files):
            before = known.get(path)
            stamp = _stamp(path, limit)
            if stamp is None:
                # Not seen before: told only if it is gone and existed when the watch began
                # (past the scan's limit); an oversized one never was watched.
                if known.pop(path, None) is not None or not (
                        path in self._deleted or self.watcher.born(path) or os.path.lexists(path)):
                    events.append(_event(path, DELETED))
                    self._deleted.add(path)
                continue
            seen = known[path] = _seen(path, stamp, before, at)
            if before is None:
                # Created: new since the watch began, or back after the servers heard it deleted.
                created = self.watcher.born(path) or path in self._deleted
                self._deleted.discard(path)
                events.append(_event(path, CREATED if created else CHANGED))
            elif before.differs(seen):
                events.append(_event(path, CHANGED))
        return events


def _stamp(path: str, limit: int | None) -> DiskStamp | None:
    """The file's stamp, or None if it is not a regular file within `limit` bytes (the walk's
    rules: such a file is not watched)."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    if not S_ISREG(stat.st_mode) or (limit is not None and stat.st_size > limit):
        return None
    return DiskStamp.of_stat(stat)


def _seen(path: str, stamp: DiskStamp, before: Seen | None, at: int) -> Seen:
    """The file as seen now; its content is hashed only while its stamp is racy, and
    compared when the stamp is the same as a racy one before."""
    racy = _racy(stamp, at)
    if not racy and (before is None or before.digest is None or before.stamp != stamp):
        return Seen(stamp, None)
    try:
        digest = _digest(path)
    except OSError:
        return Seen(stamp, None)
    if not racy and before is not None and before.digest == digest:
        return Seen(stamp, None)  # settled: the same content, and old enough to trust
    return Seen(stamp, digest)


def _racy(stamp: DiskStamp, at: int) -> bool:
    """Racy, and not in the future beyond the same margin (a clock far ahead, `touch -d`):
    such a stamp changes with any write, and hashing it would read the file on every call."""
    return stamp.racy(at) and stamp.mtime_ns - at < RACY_NS


def _digest(path: str) -> str:
    """`filestate.content_hash` of the file's bytes, read a chunk at a time."""
    hashed = hashlib.blake2b(digest_size=16)
    with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb", buffering=0) as file:
        while chunk := file.read(CHUNK):
            hashed.update(chunk)
    return hashed.hexdigest()


def _event(path: str, kind: int) -> FileEventData:
    return {"uri": uri_of(Path(path)), "type": kind}
