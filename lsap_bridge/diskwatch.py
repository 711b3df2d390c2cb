"""What the language servers were last told about the workspace's files on disk.

Servers read the files nobody has open from disk and keep what they read; most do not
watch the disk themselves, and Neovim offers them no file watching on Linux. Before a
request whose answer spans the workspace, the bridge compares each code file's
`DiskStamp` with the one it saw last, and tells the servers what was created, changed or
deleted (`workspace/didChangeWatchedFiles`), as a watching editor would.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from .filestate import DiskStamp, content_hash
from .workspace import Workspace, uri_of

# Code files watched per root (a scan costs a few microseconds each); files past it are
# still read fresh, but the servers are not told when they change.
WATCH_LIMIT = 10_000
CREATED, CHANGED, DELETED = 1, 2, 3  # LSP FileChangeType


class Seen(NamedTuple):
    stamp: DiskStamp
    digest: str | None  # content hash, kept while the stamp alone proves nothing (racy)

    def differs(self, now: Seen) -> bool:
        return self.stamp != now.stamp or (None not in (self.digest, now.digest) and self.digest != now.digest)


@dataclass
class DiskWatch:
    workspace: Workspace
    limit: int = WATCH_LIMIT
    _known: dict[str, Seen] | None = field(default=None, repr=False)
    # When a call last found changes (time.monotonic()): the servers' indexes may lag it.
    changed_at: float | None = None

    def changes(self) -> list[dict[str, Any]]:
        """LSP `FileEvent`s for what changed on disk since the last call; the first call
        (when the session starts) takes the baseline and returns none."""
        known = self._known
        now: dict[str, Seen] = {}
        at = time.time_ns()
        for root in self.workspace.roots:
            for path, stat in self.workspace.walk(root, limit=self.limit).stats.items():
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


def _seen(path: str, stamp: DiskStamp, before: Seen | None, at: int) -> Seen:
    """The file as seen now; its content is hashed only while its stamp is racy, and
    compared when the stamp is the same as a racy one before."""
    if not stamp.racy(at) and (before is None or before.digest is None or before.stamp != stamp):
        return Seen(stamp, None)
    try:
        digest = content_hash(Path(path).read_bytes())
    except OSError:
        return Seen(stamp, None)
    if not stamp.racy(at) and before is not None and before.digest == digest:
        return Seen(stamp, None)  # settled: the same content, and old enough to trust
    return Seen(stamp, digest)


def _event(path: str, kind: int) -> dict[str, Any]:
    return {"uri": uri_of(Path(path)), "type": kind}
