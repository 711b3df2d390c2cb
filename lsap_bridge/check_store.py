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
older than `MAX_AGE`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Protocol

from .diagnostics import Diagnostic
from .filestate import content_hash
from .jsonvalue import JsonObject, to_int

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
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, temp = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as out:
            json.dump(data, out)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    _prune(target.parent)
    return left_out


def load(directory: Path, root: Path, who: str | None = None) -> Saved | None:
    """The record of `root` (for `who`), if one was saved (and is readable), with the files
    that changed on disk since; None: the next check is a baseline."""
    try:
        data = json.loads(record_path(directory, root, who).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != VERSION or data.get("root") != str(root):
        return None
    if time.time() - float(data.get("at") or 0.0) > MAX_AGE:
        return None
    saved = Saved(seen={}, number=int(data.get("number") or 0), at=float(data.get("at") or 0.0),
                  left_out=int(data.get("left_out") or 0))
    for name, entry in (data.get("files") or {}).items():
        path = Path(name)
        try:
            saved.seen[path] = [_load(d) for d in entry.get("diagnostics") or []]
        except (KeyError, TypeError, ValueError):
            return None  # not a record this version wrote: start over
        digest = _hash(path)
        if digest != entry.get("hash"):
            saved.changed[path] = "deleted" if digest is None and not path.exists() else "changed"
    return saved


def _dump(d: Diagnostic) -> JsonObject:
    out = asdict(d)
    out.pop("client", None)  # a client id means nothing to the next daemon
    return out


def _load(raw: JsonObject) -> Diagnostic:
    code, source, lsp = raw.get("code"), raw.get("source"), raw.get("lsp")
    return Diagnostic(
        line=to_int(raw["line"]), col=to_int(raw["col"]),
        end_line=to_int(raw["end_line"]), end_col=to_int(raw["end_col"]),
        severity=str(raw["severity"]), message=str(raw["message"]),
        code=None if code is None else str(code), source=None if source is None else str(source),
        lsp=lsp if isinstance(lsp, dict) else None)


def _prune(folder: Path) -> None:
    """Keep the `KEEP` records saved last."""
    records = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in records[KEEP:]:
        with contextlib.suppress(OSError):
            old.unlink()
