"""`check`'s records kept on disk per root and checker, so that a daemon's restart (its
idle timeout, `lsap daemon stop`) continues the checks instead of recording a new baseline
that already holds the agent's breakage.

Saved after each answered check (not one whose answer was lost): the diagnostics each
checked file had and the content hash of the file on disk then. Loaded when a session's
first check starts: a file whose bytes differ now (or that is gone) counts as changed since
the last check, so its new diagnostics are reported as new. Files created while no daemon
ran are not known to it (a check reports them when given, or when they use a changed file).

One JSON file per root and checker (an agent, or the human and the CLI) in `checks/` beside
the edit journal (Neovim's state directory), bounded: at most `MAX_FILES` files of
`MAX_DIAGNOSTICS` diagnostics each (a file past that is left out, so the next check treats
it as not seen before), `MAX_BYTES` a record, the `KEEP` records saved last, and none
older than `MAX_AGE`. A record is read and written like every state file (`statefile`):
one that fails its checks (its schema, a file outside the root) is moved to `rejected/`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import stat
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import ConfigDict, TypeAdapter

from . import statefile
from .diagnostics import Diagnostic
from .filestate import content_hash
from .jsonvalue import JsonObject
from .statefile import REJECTED, Location, Unusable
from .workspace import Workspace

LOG = logging.getLogger("lsap.check_store")

DIRECTORY = "checks"
VERSION = 1
MAX_FILES = 200  # as many as one check compares (check.FILES_LIMIT)
MAX_DIAGNOSTICS = 500  # of one file
MAX_BYTES = 8 * 1024 * 1024  # of one root's record
KEEP = 100  # roots whose records are kept, the most recently saved
MAX_AGE = 12 * 3600  # seconds: an older record is not continued (the next check is a baseline)


@dataclass
class Saved:
    """A root's record as the last check left it, with what changed on disk since."""

    seen: dict[Path, list[Diagnostic]]
    number: int  # checks made so far
    at: float  # when the last one ran (time.time())
    changed: dict[Path, str] = field(default_factory=dict)  # "changed" | "deleted" since then
    left_out: int = 0  # files the last check saw that the record could not keep (caps)


class Resumable(Protocol):
    """What of `check`'s Record a saved record continues."""

    seen: dict[Path, list[Diagnostic]]
    number: int
    at: float
    unreported: dict[Path, str]


def resume(record: Resumable, saved: Saved | None) -> None:
    """Continue a session's checks from `saved`: its diagnostics are the ones compared
    with, and the files changed on disk since it are the changes to report."""
    if saved is None:
        return
    record.seen, record.number, record.at = saved.seen, saved.number, saved.at
    record.unreported.update(saved.changed)


def record_path(directory: Path, root: Path, who: str | None = None) -> Path:
    """The record of `root` for one checker (`who`: an agent's client name; None, the
    human and the CLI): one file each, named by a hash of both."""
    key = str(root) if who is None else f"{root}\0{who}"
    name = hashlib.blake2b(key.encode(), digest_size=10).hexdigest()
    return directory / DIRECTORY / f"{name}.json"


def _hash(path: Path) -> str | None:
    try:
        return content_hash(path.read_bytes())
    except OSError:
        return None


def save(directory: Path, root: Path, seen: Mapping[Path, list[Diagnostic]], number: int, at: float,
         who: str | None = None) -> int:
    """Keep the record of `root` (for `who`) after a check (written whole, then renamed
    into place); returns how many files the caps left out."""
    files: JsonObject = {}
    left_out = 0
    size = 0
    for path, items in sorted(seen.items()):
        digest = _hash(path)
        if digest is None or len(files) >= MAX_FILES or len(items) > MAX_DIAGNOSTICS:
            left_out += 1
            continue
        entry: JsonObject = {"hash": digest, "diagnostics": [_dump(d) for d in items]}
        size += len(json.dumps(entry))
        if size > MAX_BYTES:
            left_out += 1
            continue
        files[str(path)] = entry
    data = {"version": VERSION, "root": str(root), "number": number, "at": at,
            "left_out": left_out, "files": files}
    target = record_path(directory, root, who)
    statefile.private(directory)
    statefile.write(target, json.dumps(data).encode())
    _prune(target.parent)
    return left_out


_STRICT = ConfigDict(strict=True, extra="forbid")


@dataclass(frozen=True)
class _Item:
    """A diagnostic as `save` keeps it (`_dump`)."""

    __pydantic_config__ = _STRICT

    line: int
    col: int
    end_line: int
    end_col: int
    severity: str
    message: str
    code: str | None
    source: str | None
    lsp: dict[str, Any] | None


@dataclass(frozen=True)
class _Kept:
    __pydantic_config__ = _STRICT

    hash: str
    diagnostics: list[_Item]


@dataclass(frozen=True)
class _Record:
    """A record as `save` writes it, checked strictly (`statefile.parsed`)."""

    __pydantic_config__ = _STRICT

    version: int
    root: str
    number: int
    at: float
    left_out: int
    files: dict[Location, _Kept]


_SCHEMA = TypeAdapter(_Record)


def _read(path: Path, root: Path) -> _Record | None:
    """The record in `path` if it is one of `root`, checked; one that fails is moved to
    rejected/ beside the journals."""
    try:
        fd = statefile.open_regular(path)
        try:
            record = statefile.parsed(statefile.read(fd, 2 * MAX_BYTES), _SCHEMA)
        finally:
            os.close(fd)
        if record.root != str(root):
            return None  # another root's, under a name of the same hash
        workspace = Workspace.of(root)
        outside = next((name for name in record.files if not workspace.contains(Path(name))), None)
        if outside is not None:
            raise Unusable(f"it names {outside}, outside its root")
        return record
    except Unusable as exc:
        statefile.reject(path, path.parent.parent / REJECTED, "check record", str(exc))
    except OSError as exc:
        if not isinstance(exc, FileNotFoundError):
            LOG.warning("lsap: check record %s could not be read: %s", path.name, exc)
    return None


def load(directory: Path, root: Path, who: str | None = None) -> Saved | None:
    """The record of `root` (for `who`), if one was saved (and is readable), with the files
    that changed on disk since; None: the next check is a baseline."""
    data = _read(record_path(directory, root, who), root)
    if data is None or data.version != VERSION or time.time() - data.at > MAX_AGE:
        return None
    saved = Saved(seen={}, number=data.number, at=data.at, left_out=data.left_out)
    for name, entry in data.files.items():
        path = Path(name)
        saved.seen[path] = [Diagnostic(**asdict(d)) for d in entry.diagnostics]
        digest = _hash(path)
        if digest != entry.hash:
            saved.changed[path] = "deleted" if digest is None and not path.exists() else "changed"
    return saved


def _dump(d: Diagnostic) -> JsonObject:
    out = asdict(d)
    out.pop("client", None)  # a client id means nothing to the next daemon
    return out


def _prune(folder: Path) -> None:
    """Keep the `KEEP` records saved last."""
    found = []
    for path in folder.glob("*.json"):
        with contextlib.suppress(OSError):
            kept = os.lstat(path)
            if stat.S_ISREG(kept.st_mode):  # anything else is no record (`_read` rejects it)
                found.append((kept.st_mtime, path))
    for _, old in sorted(found, reverse=True)[KEEP:]:
        with contextlib.suppress(OSError):
            old.unlink()
