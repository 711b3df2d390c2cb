"""What a file on disk is right now: its identity, and a hash of its content.

The world changes under the bridge (agents, git and formatters write files at any time).
Reads compare what the bridge holds with a file's `DiskStamp` before answering from it, and
edits record the stamp (and content hash) they were planned against and check both again
right before writing. One definition, so that "the file changed" means the same everywhere.
A file's text read from disk (`read_disk`: what the editor gateway answers for a file no
buffer holds) is kept while its stamp says it is unchanged.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat as stat_module
import time
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from .errors import ErrorCode, LsapError
from .position import Document

# Two writes closer together than a file system's timestamp granularity (FAT: 2 s; others a
# clock tick) can leave size and mtime alike: a stamp taken this soon after the file's last
# write does not prove that a later equal stamp means equal content ("racily clean", as git
# calls it), and the content hash has the last word.
RACY_NS = 2_000_000_000


class DiskStamp(NamedTuple):
    """A file's identity as `stat` sees it; equal stamps mean "very likely unchanged".

    A named tuple: the disk watch builds and compares one per code file of the workspace
    before each request that spans it.

    Size, mtime and inode together catch in-place writes, atomic replacements (a new inode)
    and truncations; the change time (`ctime`, which every write and `os.utime` set to now
    and no call sets back) catches a rewrite whose mtime was put back. Two writes within
    the file system's timestamp granularity that keep the size are not told apart: where
    that matters (a stamp taken in the racy window, an edit about to be written), compare
    the content hash as well.
    """

    size: int
    mtime_ns: int
    ino: int
    dev: int
    mode: int
    uid: int
    ctime_ns: int = 0

    @classmethod
    def of(cls, path: Path | str) -> DiskStamp | None:
        """The stamp of a regular file (symlinks followed), or None when there is none."""
        try:
            st = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        if not stat_module.S_ISREG(st.st_mode):
            return None
        return cls.of_stat(st)

    @classmethod
    def of_stat(cls, st: os.stat_result) -> DiskStamp:
        """The stamp from a `stat` already made (a walk of the workspace has one per file)."""
        return cls(st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev, st.st_mode, st.st_uid,
                   st.st_ctime_ns)

    def racy(self, seen_ns: int | None = None) -> bool:
        """Whether this stamp, taken at `seen_ns` (`time.time_ns()`, default now), is too
        close to the file's last write to tell a rewrite of the same size apart."""
        last = max(self.mtime_ns, self.ctime_ns)
        return (time.time_ns() if seen_ns is None else seen_ns) - last < RACY_NS

    @property
    def token(self) -> str:
        """A compact cache key (what `Document.version` holds for a file read from disk)."""
        return f"disk:{self.dev}:{self.ino}:{self.mtime_ns}:{self.ctime_ns}:{self.size}"


def content_hash(data: bytes) -> str:
    """The hash that settles whether a file's bytes are the ones an edit was planned on."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class Snapshot(NamedTuple):
    """A file's bytes together with the stamp they were read under."""

    stamp: DiskStamp
    data: bytes

    @property
    def digest(self) -> str:
        return content_hash(self.data)


def snapshot(path: Path | str) -> Snapshot | None:
    """The file's stamp and bytes, read consistently (None when there is no regular file).

    The stamp comes from the open file itself, before and after reading: a write that lands
    while the bytes are read shows as a changed stamp, and the read is tried again.
    """
    for _ in range(3):
        try:
            # Non-blocking: a FIFO named like a source file must not hang the read.
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        with os.fdopen(fd, "rb") as file:
            st = os.fstat(fd)
            if not stat_module.S_ISREG(st.st_mode):
                return None
            before = DiskStamp.of_stat(st)
            data = file.read()
            after = DiskStamp.of_stat(os.fstat(fd))
        if before == after:
            return Snapshot(before, data)
    raise OSError(f"{path} kept changing while it was read")


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def read_disk(path: Path, cached: Document | None = None) -> Document:
    """A file's text from disk; `cached` is reused while the file's stamp is the same (and,
    when that stamp was racy, its content hash too)."""
    stamp = DiskStamp.of(path)
    if stamp is None:
        if path.is_dir():
            raise LsapError(ErrorCode.INVALID_REQUEST, f"{path} is a directory, not a file")
        raise LsapError(
            ErrorCode.NOT_FOUND,
            f"no such file: {path}",
            hint="check the path: it is relative to the workspace root",
        )
    version, racy = stamp.token, stamp.racy()
    unchanged = cached is not None and cached.version == version
    if unchanged and cached is not None and cached.digest is None:
        return cached
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return read_disk(path)  # deleted between the stat and the read: say so
    digest = content_hash(data) if racy or unchanged else None
    if unchanged and cached is not None and digest == cached.digest:
        return replace(cached, digest=digest if racy else None)
    text = data.decode("utf-8", errors="replace")
    # Lines end where LSP and Neovim end them (\n, \r\n, \r), not at str.splitlines()'s
    # form feeds and U+2028, which would shift every line number after them.
    lines = _LINE_BREAK.split(text)
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return Document(path, lines, version, digest=digest if racy else None)
