"""Files' texts (the buffers', else the disk's), the notes an answer carries about them, and
what the request being run holds (texts answered from without a round trip, to be
confirmed) and proves edits against (`Basis`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from ..decode import location_units
from ..diskwatch import Basis
from ..editor import Client, Editor
from ..lsp import Locations
from ..position import Document, column_at
from ..symbols import Units
from ..workspace import Workspace
from .targets import Location, encoding_of

V = TypeVar("V")

# The notes of the request being answered about texts that differ from the disk, by path.
_NOTES: ContextVar[dict[Path, str] | None] = ContextVar("lsap_disk_notes", default=None)
# Inside `Session.run`: the held texts a warm request answered from that no guarded LSP
# call has confirmed yet, by path (None outside a run: nothing is taken on trust).
_HELD: ContextVar[dict[Path, Document] | None] = ContextVar("lsap_held_texts", default=None)
# Inside `Session.run`: the held texts a guarded LSP call of this request found current, by
# path: read again by nobody while the gateway holds them still (`documents`).
_CURRENT: ContextVar[dict[Path, Document] | None] = ContextVar("lsap_current_texts", default=None)
# Inside `Session.run`: what the files on disk were when the request began (edits/files.py proves
# the files a server's edit touches against it).
_BASIS: ContextVar[Basis | None] = ContextVar("lsap_basis", default=None)


@contextmanager
def _set(var: ContextVar[V | None], value: V) -> Iterator[V]:
    """`var` is `value` while the block runs (the request's own: a context variable)."""
    token = var.set(value)
    try:
        yield value
    finally:
        var.reset(token)


def disk_notes() -> AbstractContextManager[dict[Path, str]]:
    """Collect, while one request runs, a note for each buffer it answered from whose file
    differs on disk (`Document.disk_differs`): the answer is the buffer's, and says so."""
    return _set(_NOTES, {})


def disk_note(display: str, disk_differs: str) -> str:
    how = "was deleted" if disk_differs == "deleted" else "differs"
    return f"the buffer of {display} has unsaved changes and the file on disk {how}"


@dataclass
class Texts:
    """Files' texts (the buffers', else the disk's), the notes an answer carries about them,
    and what the request being run holds and proves them against."""

    gateway: Editor
    workspace: Workspace

    async def documents(self, paths: Sequence[Path],
                        have: dict[Path, Document] | None = None) -> dict[Path, Document]:
        """Texts of files in one round trip; `have`: ones this request already read (kept).

        Inside a warm run, a text a guarded call of this run found current, which the
        gateway still holds, is not read again: the file the anchor is in, whose text the
        request's LSP answers were computed from (inspect's definition, a definition in the
        same file), costs no round trip (doc/architecture.md, Costs)."""
        have = {**have} if have else {}
        current = _CURRENT.get() or {}
        for path in dict.fromkeys(paths):
            doc = current.get(path)
            if path not in have and doc is not None and self.gateway.held(path) is doc:
                have[path] = doc
                self.noted(doc)
        unique = [p for p in dict.fromkeys(paths) if p not in have]
        read = await self.gateway.read(unique) if unique else {}
        for doc in read.values():
            self.noted(doc)
        return {p: have[p] if p in have else read[p] for p in dict.fromkeys(paths)}

    def note(self, key: Path, text: str | None) -> None:
        """A note on the answer of the request being run (one per key), if any."""
        notes = _NOTES.get()
        if notes is not None and text:
            notes[key] = text

    def noted(self, doc: Document) -> None:
        """The note on the answer when `doc` is a buffer whose file differs on disk."""
        notes = _NOTES.get()
        if notes is not None and doc.disk_differs:
            notes[doc.path] = disk_note(self.workspace.display(doc.path), doc.disk_differs)

    async def document(self, path: Path) -> Document:
        return (await self.documents([path]))[path]

    def proving(self, basis: Basis) -> AbstractContextManager[Basis]:
        """Run a request (the warm path's, or the text format's) against `basis`."""
        return _set(_BASIS, basis)

    def basis(self) -> Basis | None:
        """What the files on disk were when this request began (see `diskwatch.Basis`);
        None outside a request (nothing to prove against)."""
        return _BASIS.get()

    def changed_by_bridge(self, paths: Sequence[Path]) -> None:
        """The bridge itself just changed these texts (an edit applied, or rolled back): a held
        text of them is no reason to run the capability again, which would repeat the edit."""
        held, current = _HELD.get(), _CURRENT.get()
        for path in paths:
            if held is not None:
                held.pop(path, None)
            if current is not None:
                current.pop(path, None)

    @property
    def warm(self) -> bool:
        """Whether held texts may be answered from (inside `run`, where they are checked)."""
        return _HELD.get() is not None

    @contextmanager
    def holding(self) -> Iterator[dict[Path, Document]]:
        """Run a warm request: the held texts it answers from (`hold`) that no guarded call
        confirmed (`confirmed`) are left in the dict for its caller to check."""
        with _set(_CURRENT, {}), _set(_HELD, {}) as held:
            yield held

    def hold(self, path: Path, doc: Document) -> None:
        """A held text the request being run answers from, without a round trip."""
        held = _HELD.get()
        if held is not None:
            held.setdefault(path, doc)

    def confirmed(self, doc: Document) -> None:
        """A guarded call found the held text `doc` current: it needs no check at the end."""
        held, current = _HELD.get(), _CURRENT.get()
        if held is not None and held.get(doc.path) == doc:
            del held[doc.path]
        if current is not None:
            current[doc.path] = doc

    async def locations(self, answer: Locations, client: Client,
                        texts: dict[Path, Document] | None = None) -> list[Location]:
        """A location answer (lsp.Locations) as Locations with code-point columns, in
        the server's order (a short answer: every file is read; a long one pages
        `decode.location_files` and converts the page with `located`).

        `texts`, if given: documents this request already read (reused), and it receives
        the ones read on the way, for `documents(have=)`.
        """
        found = location_units(answer)
        paths = dict.fromkeys(path for path, _ in found)
        docs = await self.documents([p for p in paths if self.workspace.contains(p)], have=texts)
        if texts is not None:
            texts.update(docs)
        return self.located(found, client, docs)

    def located(self, found: Sequence[tuple[Path, Units]], client: Client,
                docs: dict[Path, Document]) -> list[Location]:
        """Ranges in the server's units as Locations in code points, from the texts in `docs`
        (a file not read, outside the workspace: column 0)."""
        encoding = encoding_of(client)
        out = []
        for path, (first, start, last, end) in found:
            doc = docs.get(path)
            lines = doc.lines if doc else []
            out.append(Location(path, first, column_at(lines, first, start, encoding),
                                last, column_at(lines, last, end, encoding)))
        return out
