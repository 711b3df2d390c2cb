"""Which files changed on disk, from the kernel (inotify), at a cost that grows with the
changes and not with the tree.

A `Watcher` puts an inotify watch on every directory of the roots that the walk would
enter (not `IGNORED_DIRS`, hidden ones, what `.gitignore` ignores, nor the servers'
`exclude` patterns), so `node_modules/`, `.venv/` and build trees cost nothing. Nothing
runs between requests: the kernel queues the events, and `since` drains them when a
request asks (idle cost: none), keeping each changed path with the number of the event
that last touched it (a directory moved away or deleted: its path with a trailing
separator, for the files known below it). `DiskWatch` asks it "what changed since" and
stats only those paths. One inotify instance serves the whole process (`_Kernel`).

It is not `live` (the disk watch scans instead, and the report says so) when inotify is
missing or the watches run out (`fs.inotify.max_user_watches`); a lost event queue
(`IN_Q_OVERFLOW`) makes the next `since` return None once, and the caller scans.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import json
import os
import subprocess
import weakref
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import tomllib

from .servers import registry
from .workspace import IGNORED_DIRS, Workspace

if TYPE_CHECKING:
    from inotify_simple import Event

try:
    from inotify_simple import INotify, flags
    AVAILABLE = True
except (ImportError, OSError):  # pragma: no cover - not Linux: the disk watch scans
    AVAILABLE = False

# The changes kept by path (a path repeated keeps one entry); past this many the oldest go,
# and a cursor older than what was kept is answered None (scan).
KEPT = 100_000
# `LSAP_WATCHES`: at most this many directory watches (tests force the scan with 0); by
# default `MAX_WATCHES`, so that setting them up stays a matter of a second or two.
WATCHES_ENV = "LSAP_WATCHES"
MAX_WATCHES = 100_000
MAX_WATCHES_FILE = "/proc/sys/fs/inotify/max_user_watches"


def _mask() -> int:
    return int(flags.CREATE | flags.DELETE | flags.MODIFY | flags.CLOSE_WRITE | flags.MOVED_FROM
               | flags.MOVED_TO | flags.ATTRIB | flags.DELETE_SELF | flags.MOVE_SELF | flags.ONLYDIR)


class Watcher:
    """The changed paths of a workspace's trees, numbered; see the module's docstring."""

    def __init__(self, roots: Iterable[Path], max_watches: int | None = None) -> None:
        """Watch the roots' trees now (`max_watches`: None for `LSAP_WATCHES`, else `MAX_WATCHES`)."""
        self.roots = tuple(roots)
        self.reason: str | None = None  # why not live (the report says it)
        self.seq = 0
        self._changed: OrderedDict[str, int] = OrderedDict()  # path -> number of its last event
        self._born: set[str] = set()  # paths whose first event was their creation
        self._dirs: dict[int, str] = {}  # watch descriptor -> directory
        self._watched: set[str] = set()  # the same directories
        self._alone: set[str] = set()  # of them, those watched without their subdirectories (`cover`)
        self._lost = 0  # number of the last event after which some were lost (overflow)
        self._dropped = 0  # number of the newest change no longer kept (past `KEPT`)
        self._excluded: dict[Path, tuple[set[str], list[str]]] = {}
        self._kernel: _Kernel | None = None
        if max_watches is None:
            env = os.environ.get(WATCHES_ENV)
            max_watches = int(env) if env and env.isdigit() else MAX_WATCHES
        self.max_watches = max_watches
        if not AVAILABLE:
            self.reason = "inotify is not available on this system"
            return
        try:
            self._kernel = _kernel()
        except OSError as error:
            self.reason = f"inotify could not start ({error.strerror})"
            return
        self._kernel.join(self)
        weakref.finalize(self, self._kernel.leave, id(self), self._dirs)
        for root in self.roots:
            self._excluded[root] = _excluded(root)
            self._add_tree(str(root))
            if self.reason:
                break
        if self.reason:
            self._kernel.leave(id(self), self._dirs)
            self._kernel = None
            self._watched.clear()

    @property
    def live(self) -> bool:
        return self._kernel is not None

    @property
    def watches(self) -> int:
        return len(self._dirs)

    def since(self, cursor: int) -> tuple[int, list[str]] | None:
        """The paths changed after event number `cursor`, and the number to ask from next
        time; None when that cannot be told (not live, events lost): scan instead."""
        if self._kernel is None:
            return None
        self._drain()
        if self._lost > cursor or self._dropped > cursor:
            return None
        paths: list[str] = []
        for path in reversed(self._changed):
            if self._changed[path] <= cursor:
                break
            paths.append(path)
        return self.seq, paths

    def mark(self) -> int | None:
        """The number to ask `since` from after a scan that starts now (events lost before
        it no longer matter); None when not live."""
        if self._kernel is None:
            return None
        self._drain()
        return self.seq

    def covers(self, path: str) -> bool:
        """Whether a change to the file at `path` would be seen (its directory is watched)."""
        return self._kernel is not None and os.path.dirname(path) in self._watched

    def cover(self, path: str) -> None:
        """Watch the directory of a file outside the watched trees (a loaded buffer's: a
        library's source the servers pointed to), alone, so that `covers` holds for it."""
        directory = os.path.dirname(path)
        if self._kernel is None or directory in self._watched:
            return
        if self.max_watches is not None and len(self._dirs) >= self.max_watches:
            return
        try:
            self._dirs[self._kernel.add(self, directory)] = directory
        except OSError:
            return  # gone, unreadable, or out of watches: its buffer keeps being synced
        self._watched.add(directory)
        self._alone.add(directory)

    def born(self, path: str) -> bool:
        """Whether the first event of `path` was its creation (it did not exist before)."""
        return path in self._born

    # -- inside ---------------------------------------------------------------------

    def _drain(self) -> None:
        assert self._kernel is not None
        self._kernel.drain()

    def _overflow(self) -> None:
        self._lost = self.seq = self.seq + 1

    def _event(self, event: Event) -> None:
        """One event of a directory this watcher watches (`_Kernel.drain` hands them out)."""
        directory = self._dirs.get(event.wd)
        if directory is None:
            return
        if event.mask & flags.IGNORED:
            del self._dirs[event.wd]
            self._watched.discard(directory)
            self._alone.discard(directory)
            return
        path = os.path.join(directory, event.name) if event.name else directory
        created = bool(event.mask & (flags.CREATE | flags.MOVED_TO))
        if not event.mask & flags.ISDIR and event.name:
            self._note(path, created)
        elif created:
            if directory not in self._alone and self._wanted(path):
                self._add_tree(path, new=True)
        elif event.mask & (flags.MOVED_FROM | flags.DELETE):
            self._forget(path)  # its files are checked again by who knows them
            self._note(path + os.sep, False)

    def _forget(self, top: str) -> None:
        """Stop watching a directory moved away or deleted (a watch follows the directory,
        whose events would carry its old path)."""
        assert self._kernel is not None
        below = top + os.sep
        for wd, directory in list(self._dirs.items()):
            if directory == top or directory.startswith(below):
                del self._dirs[wd]
                self._watched.discard(directory)
                self._alone.discard(directory)
                self._kernel.remove(id(self), wd)

    def _note(self, path: str, created: bool) -> None:
        self.seq += 1
        if path not in self._changed and created:
            self._born.add(path)
        self._changed[path] = self.seq
        self._changed.move_to_end(path)
        while len(self._changed) > KEPT:
            gone, self._dropped = self._changed.popitem(last=False)
            self._born.discard(gone)

    def _add_tree(self, top: str, new: bool = False) -> None:
        """Watch `top` and the directories below it the walk enters; in a directory that is
        `new` (created or moved in after the watch began), every file is a change."""
        assert self._kernel is not None
        stack = [top]
        while stack:
            directory = stack.pop()
            if self.max_watches is not None and len(self._dirs) >= self.max_watches:
                self.reason = f"the directory watches ran out ({WATCHES_ENV}={self.max_watches})"
                return
            try:
                self._dirs[self._kernel.add(self, directory)] = directory
                self._watched.add(directory)
            except OSError as error:
                if error.errno == errno.ENOSPC:
                    self.reason = ("the inotify watches ran out (fs.inotify.max_user_watches = "
                                   f"{_read(MAX_WATCHES_FILE)})")
                    return
                continue  # gone meanwhile, or unreadable: the walk skips it too
            try:
                with os.scandir(directory) as scan:
                    for entry in scan:
                        if entry.is_dir(follow_symlinks=False):
                            if self._wanted(entry.path):
                                stack.append(entry.path)
                        elif new:
                            self._note(entry.path, True)
            except OSError:
                continue

    def _wanted(self, directory: str) -> bool:
        """The walk's rules for a directory (workspace.Workspace._walk), `.gitignore`'s and
        the servers' `exclude` patterns."""
        name = os.path.basename(directory)
        if name in IGNORED_DIRS or name.startswith("."):
            return False
        for root, (ignored, patterns) in self._excluded.items():
            if directory.startswith(str(root) + os.sep):
                relative = os.path.relpath(directory, root)
                if relative in ignored or any(fnmatch.fnmatch(relative, p) or fnmatch.fnmatch(name, p)
                                              for p in patterns):
                    return False
        return True


class _Kernel:
    """The process's one inotify instance (`fs.inotify.max_user_instances` is 128 for all of
    a user's processes), whose events go to the watchers of each directory: two watchers on
    one directory share its watch descriptor, removed when neither needs it."""

    def __init__(self) -> None:
        self.inotify = INotify(nonblocking=True)
        self.watchers: dict[int, weakref.ref[Watcher]] = {}
        self.owners: dict[int, set[int]] = {}  # watch descriptor -> ids of its watchers

    def join(self, watcher: Watcher) -> None:
        self.watchers[id(watcher)] = weakref.ref(watcher)

    def add(self, watcher: Watcher, directory: str) -> int:
        wd: int = self.inotify.add_watch(directory, _mask())
        self.owners.setdefault(wd, set()).add(id(watcher))
        return wd

    def remove(self, ident: int, wd: int) -> None:
        owners = self.owners.get(wd)
        if owners is None:
            return
        owners.discard(ident)
        if not owners:
            del self.owners[wd]
            with contextlib.suppress(OSError):  # already gone with its directory
                self.inotify.rm_watch(wd)

    def leave(self, ident: int, dirs: dict[int, str]) -> None:
        """A watcher is gone (or gave up): its watches no other watcher shares are removed."""
        self.watchers.pop(ident, None)
        for wd in list(dirs):
            self.remove(ident, wd)
        dirs.clear()

    def drain(self) -> None:
        while events := self.inotify.read(timeout=0):
            for event in events:
                overflow = bool(event.mask & flags.Q_OVERFLOW)
                idents = list(self.watchers) if overflow else list(self.owners.get(event.wd, ()))
                for ident in idents:
                    ref = self.watchers.get(ident)
                    watcher = ref() if ref is not None else None
                    if watcher is None:
                        continue
                    if overflow:
                        watcher._overflow()
                    else:
                        watcher._event(event)
                if event.mask & flags.IGNORED:
                    self.owners.pop(event.wd, None)


_KERNEL: list[_Kernel] = []


def _kernel() -> _Kernel:
    """The one instance, made when first needed."""
    if not _KERNEL:
        _KERNEL.append(_Kernel())
    return _KERNEL[0]


def _read(path: str) -> str:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return "unknown"


def _excluded(root: Path) -> tuple[set[str], list[str]]:
    """The directories below `root` that git ignores (relative paths, from `git ls-files`:
    nested `.gitignore` files and the global excludes included), and the servers' `exclude`
    patterns (pyrightconfig.json, pyproject.toml's [tool.pyright]/[tool.basedpyright],
    tsconfig.json), as globs without their leading `**/` and trailing `/**`."""
    ignored: set[str] = set()
    if not any((directory / ".git").exists() for directory in (root, *root.parents)):
        return ignored, _patterns(root)  # not in a repository: no git to ask
    try:
        listed = subprocess.run(
            ["git", "ls-files", "--others", "--ignored", "--exclude-standard", "--directory", "-z"],
            cwd=root, capture_output=True, timeout=30, check=False,
        )
        if listed.returncode == 0:
            ignored = {p.rstrip("/") for p in listed.stdout.decode(errors="replace").split("\0") if p.endswith("/")}
    except (OSError, subprocess.SubprocessError):
        pass
    return ignored, _patterns(root)


def _patterns(root: Path) -> list[str]:
    patterns: list[str] = []
    for raw in _server_excludes(root):
        pattern = raw.strip().removeprefix("./").removeprefix("**/").removesuffix("/**").rstrip("/")
        if pattern:
            patterns.append(pattern)
    return patterns


def _server_excludes(root: Path) -> list[str]:
    found: list[str] = []
    files, tools = registry.exclude_sources()
    for name in files:
        try:
            data = json.loads((root / name).read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("exclude"), list):
            found += [p for p in data["exclude"] if isinstance(p, str)]
    try:
        tools = tomllib.loads((root / "pyproject.toml").read_text()).get("tool", {})
    except (OSError, ValueError):
        return found
    for tool in tools:
        section = tools.get(tool)
        if isinstance(section, dict) and isinstance(section.get("exclude"), list):
            found += [p for p in section["exclude"] if isinstance(p, str)]
    return found


_SHARED: weakref.WeakValueDictionary[tuple[Path, ...], Watcher] = weakref.WeakValueDictionary()


def shared(workspace: Workspace) -> Watcher:
    """The one watcher of a workspace's roots, shared by every disk watch on them (each
    keeps its own cursor); closed when the last of them is gone."""
    watcher = _SHARED.get(workspace.roots)
    if watcher is None:
        watcher = _SHARED[workspace.roots] = Watcher(workspace.roots)
    return watcher
