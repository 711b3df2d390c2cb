"""The files an edit touches: what each was when planned (its loaded buffer and its disk,
proven to agree, and proven to be what the server computed on), what it is to become, and
whether the bridge may replace it on disk.
"""

from __future__ import annotations

import asyncio
import os
import stat as stat_module
from dataclasses import dataclass, field
from pathlib import Path

from ..diskwatch import Basis
from ..errors import ErrorCode, LsapError
from ..filestate import Snapshot, snapshot
from ..jsonvalue import Params
from ..position import Document
from ..session.warm import Session
from .text import NOTHING, decoded


def unwritable(path: Path, stat: os.stat_result | None = None) -> str | None:
    """Why the bridge may not replace `path` with a new file of the same content, if so.

    Replacing (write beside, then rename over) must change nothing but the content: the
    file must be writable by this user as it is (a read-only file stays read-only, for
    root too), keep its owner, and have no other hard links (which would keep the old
    content under another name). A new file needs a writable directory.
    """
    if stat is None:
        try:
            stat = os.stat(path)
        except FileNotFoundError:
            stat = None
    if stat is None:
        probe = path.parent
        while not probe.exists() and probe != probe.parent:
            probe = probe.parent
        return None if os.access(probe, os.W_OK | os.X_OK) else f"its directory {probe} is not writable"
    mode = stat_module.S_IMODE(stat.st_mode)
    if not mode & 0o222:
        return f"it is read-only (mode {mode:04o})"
    if not os.access(path, os.W_OK):
        return f"this user may not write it (mode {mode:04o}, or an immutable flag)"
    if stat.st_uid != os.geteuid() and os.geteuid() != 0:
        return f"it belongs to another user (uid {stat.st_uid}), and a new file would be yours"
    if stat.st_nlink > 1:
        return f"it has {stat.st_nlink} hard links, which would keep the old content"
    if not os.access(path.parent, os.W_OK | os.X_OK):
        return f"its directory {path.parent} is not writable"
    return None


@dataclass
class Disk:
    """What the disk holds under a buffer with the human's unsaved changes, as the edit's
    steps so far leave it: the edit is rebased onto it (`_rebased`) and written there
    too, so that the project on disk never holds half an edit, while the human's unsaved
    text stays in the buffer alone."""

    lines: list[str]
    breaks: list[str]
    bom: bytes

    def new_bytes(self) -> bytes:
        return self.bom + "".join(a + b for a, b in zip(self.lines, self.breaks, strict=True)).encode()


@dataclass
class File:
    """One path the edit touches: what it was when planned, and what it is to become."""

    path: Path
    disk: Snapshot | None  # the file on disk when planned (None: there was none)
    doc: Document | None  # its loaded buffer when planned (None: not loaded)
    lines: list[str]  # the text as the steps so far leave it
    breaks: list[str] | None  # the disk text's line ends (None: the edit stays in the buffer)
    bom: bytes = b""
    original: list[str] = field(default_factory=list)
    steps: list[Params] = field(default_factory=list)  # the buffer's edits, in order
    edits: int = 0
    origin: Path | None = None  # renamed from
    created: bool = False
    # Why the disk may not be what the server computed the edit on (see `proven`), if so.
    doubt: str | None = None
    # The text of the file this one replaces whole (a consented `overwrite`), if so.
    overwrote: list[str] | None = None
    # The disk's side of a buffer with the human's unsaved changes, which the edit changes
    # too (`apply_workspace_edit`'s `disk_too`); None: the edit stays in that buffer.
    under: Disk | None = None

    @property
    def unsaved(self) -> bool:
        """The human has unsaved changes in its buffer."""
        return self.doc is not None and self.doc.modified

    @property
    def buffer_only(self) -> bool:
        """The edit goes into the buffer with the human's unsaved changes, not the disk."""
        return self.unsaved and self.under is None

    @property
    def tick(self) -> int | None:
        return int(self.doc.version[5:]) if self.doc is not None else None

    @property
    def heard(self) -> int | None:
        """The buffer's version as its servers know it, which an edit's version names."""
        return self.doc.sent if self.doc is not None and self.doc.sent is not None else self.tick

    def new_bytes(self) -> bytes:
        if self.under is not None:
            return self.under.new_bytes()
        assert self.breaks is not None
        return Disk(self.lines, self.breaks, self.bom).new_bytes()



def _loaded(doc: Document) -> bool:
    return doc.bufnr is not None and doc.version.startswith("tick:")


async def load(session: Session, paths: list[Path], basis: Basis | None,
                server: str, disk_too: bool = False) -> dict[Path, File]:
    """Every existing file's buffer (if loaded) and disk content, checked to agree; a file
    no buffer holds (the server read it from disk) must be proven by `basis` to be what it
    was when the request began. `disk_too`: a buffer with unsaved changes keeps its disk's
    text beside it (`File.under`), to be edited too."""
    wanted = list(dict.fromkeys(paths))
    existing = [p for p in wanted if p.is_file()]
    docs = await session.texts.documents(existing)
    disks = await asyncio.to_thread(lambda: {p: snapshot(p) for p in wanted})
    display = session.workspace.display
    files: dict[Path, File] = {}
    for path in existing:
        doc, disk = docs[path], disks.get(path)
        buffer = doc if _loaded(doc) else None
        if buffer is not None and buffer.modified:
            files[path] = File(path, disk, buffer, list(buffer.lines), None)
            if disk_too and disk is not None:
                files[path].under = Disk(*decoded(disk, display(path)))
            continue
        if disk is None:
            raise LsapError(ErrorCode.CONFLICT, f"{display(path)} is gone from the disk", hint=NOTHING)
        lines, breaks, bom = decoded(disk, display(path))
        if buffer is not None and buffer.lines != lines:
            raise LsapError(
                ErrorCode.CONFLICT,
                f"the buffer of {display(path)} does not hold what is on disk: the file "
                "changed on disk since it was loaded, and the edit was computed on the old text",
                hint=NOTHING + "; ask again, on the text now on disk",
            )
        files[path] = File(path, disk, buffer, lines, breaks, bom)
        doubt = basis.doubt(path, disk, buffer is not None) if basis is not None else None
        if doubt:
            files[path].doubt = (f"{display(path)} may not be the text {server} computed the "
                                 f"edit on: {doubt}")
    for file in files.values():
        file.original = list(file.lines)
    return files


def proven(file: File, version: int | None) -> None:
    """A file the edit changes must be the text the server computed it on: a loaded buffer
    at the version the edit names, else (the server may have read the disk) the file as it
    was when the request began (`File.doubt`)."""
    if file.doubt and not (version is not None and file.heard is not None):
        raise LsapError(ErrorCode.CONFLICT, file.doubt,
                        hint=NOTHING + "; ask again: the server then computes it on the text "
                        "now on disk")
