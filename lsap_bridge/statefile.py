"""State files (edit journals and change sets, under Neovim's state directory): read, checked
and written so that no file put there by someone else can be turned against the user.

The directory is readable by this user alone and theirs (`private`). A file is read only
when it is a regular file, never through a symbolic link, and only up to a bound (`read`);
its record is checked against a strict schema before use (`parsed`: the record's own
dataclass, no type coerced, no field unknown); what fails is moved aside to `rejected/`
with a log line (`reject`), never read again and never fatal. New content is written under
a fresh name (O_CREAT|O_EXCL|O_NOFOLLOW), fsynced and renamed into place (`write`). No path
is ever built from a record's text: ids come from file names, checked.
"""

from __future__ import annotations

import logging
import os
import secrets
import stat
from pathlib import Path
from typing import Annotated, TypeVar

from pydantic import AfterValidator, TypeAdapter, ValidationError

from .errors import LsapBaseError

LOG = logging.getLogger("lsap.state")
REJECTED = "rejected"  # beside the journals and changes/: files that failed the checks

T = TypeVar("T")


class Unusable(LsapBaseError):
    """A state file that is not one this code wrote, and why."""


def _absolute(path: str) -> str:
    """An absolute, normalised path (no `..`, no `//`), not the file system's root."""
    if not (os.path.isabs(path) and os.path.normpath(path) == path and path != "/"):
        raise ValueError("not an absolute, normalised path")
    return path


# A path in a state file: only ever compared with a session's roots, never trusted as is.
Location = Annotated[str, AfterValidator(_absolute)]


def private(directory: Path) -> None:
    """`directory`, made if need be: this user's own directory (not a link to one), 0700."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    found = os.lstat(directory)
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.geteuid():
        raise PermissionError(f"{directory} is not a directory of this user's own")
    if stat.S_IMODE(found.st_mode) != 0o700:
        os.chmod(directory, 0o700)


def open_regular(path: Path, flags: int = os.O_RDONLY) -> int:
    """A descriptor of `path` when it is a regular file (FileNotFoundError when it is gone);
    a symbolic link, a directory, a FIFO is `Unusable`."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise Unusable(f"it cannot be opened as a state file ({exc.strerror})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise Unusable("it is not a regular file")
    return fd


def read(fd: int, limit: int) -> bytes:
    """The content of an open state file, refused past `limit` bytes (a sparse file of
    a gigabyte is never read)."""
    size = os.fstat(fd).st_size
    if size > limit:
        raise Unusable(f"it holds {size:,} bytes, over the {limit:,} a state file may")
    chunks, left = [], limit + 1
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    if left <= 0:
        raise Unusable(f"it grew past the {limit:,} bytes a state file may hold")
    return b"".join(chunks)


def parsed(data: bytes, schema: TypeAdapter[T]) -> T:
    """The record in `data`, checked by `schema` (strict: see the module docstring)."""
    try:
        return schema.validate_json(data, strict=True)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(part) for part in first["loc"]) or "the record"
        raise Unusable(f"{where}: {first['msg']} ({exc.error_count()} problem"
                       f"{'s' if exc.error_count() != 1 else ''})") from None


def reject(path: Path, rejected: Path, what: str, why: str) -> None:
    """Move a state file that fails the checks into `rejected`, never to be read again;
    logged, never fatal."""
    try:
        private(rejected)
        os.rename(path, rejected / f"{path.name}.{secrets.token_hex(3)}")
        LOG.warning("lsap: %s %s was moved to %s, not used: %s", what, path.name, rejected, why)
    except OSError as exc:
        LOG.warning("lsap: %s %s is not used (%s), and could not be moved aside: %s",
                    what, path, why, exc)


def write(path: Path, data: bytes) -> None:
    """`data` into `path` atomically (a fresh file beside it, fsynced, renamed over it): a
    reader never sees it half written, and a name planted beside it is never written
    through."""
    temp = _written_beside(path, data)
    try:
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def create(path: Path, data: bytes) -> bool:
    """`data` as the new file `path`, whole from the moment the name exists (a fresh file
    beside it, linked to the name, which fails when the name is taken): False, nothing
    written, when it is. A name claimed empty and written later would be read meanwhile as
    an empty, broken record (and moved aside by a reader)."""
    temp = _written_beside(path, data)
    try:
        os.link(temp, path)
        return True
    except FileExistsError:
        return False
    finally:
        temp.unlink(missing_ok=True)


def _written_beside(path: Path, data: bytes) -> Path:
    """A fresh hidden file beside `path` (O_EXCL|O_NOFOLLOW, 0600) holding `data`, fsynced."""
    private(path.parent)
    while True:
        temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            break
        except FileExistsError:
            continue
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return temp
