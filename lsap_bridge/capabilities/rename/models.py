"""The rename modes' requests and reports, and `PendingRename`: a rename computed and not
applied yet, what `rename_execute` applies."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, ClassVar, Literal

from lsprotocol import types
from pydantic import Field

from ...diskwatch import Basis
from ...editor import Client
from ...jsonvalue import JsonObject
from ...models import (
    Anchored,
    LocateRequest,
    Overwriting,
    Overwritten,
    Paged,
    Report,
    Request,
    Row,
    StrictModel,
    Waiting,
    absent,
)
from ...report.pieces import ChangedFile, DiagnosticRow

METHOD = "textDocument/rename"
PREPARE = "textDocument/prepareRename"
REFERENCES = "textDocument/references"
UNCOVERED_SHOWN = 20  # uncovered uses listed in a report (the rest are counted)


class Uncovering(StrictModel):
    """The field of a request that applies a rename."""

    # Consent to write a rename whose edits leave uses `references` finds with the old
    # name: refused without it (asked about under `edit_policy = 'ask'`).
    allow_uncovered: bool = False


class RenamePreviewRequest(LocateRequest, Overwriting):
    mode: Literal["rename_preview"] = "rename_preview"
    new_name: Annotated[str, Field(min_length=1)]


class RenameExecuteRequest(Request, Overwriting, Uncovering, Waiting):
    mode: Literal["rename_execute"] = "rename_execute"
    rename_id: Annotated[str, Field(min_length=1)]
    positional: ClassVar[str] = "rename_id"  # `lsap rename_execute <id>`
    exclude_files: list[str] = Field(default_factory=list)


class RenameRequest(LocateRequest, Overwriting, Uncovering, Waiting):
    mode: Literal["rename"] = "rename"
    new_name: Annotated[str, Field(min_length=1)]
    exclude_files: list[str] = Field(default_factory=list)


@dataclass(frozen=True)
class PendingRename:
    """A previewed rename, kept so that `rename_execute` applies exactly what was shown."""

    edit: JsonObject
    client: Client
    old_name: str
    new_name: str
    versions: dict[Path, str]  # file versions the edit was computed against
    partial: bool = False  # the server was still indexing: uses may be missing
    # The symbol's uses as `references` found them (None: the server could not say), and
    # those the edit leaves alone.
    uses: list[tuple[Path, types.Range]] | None = None
    uncovered: list[Uncovered] = field(default_factory=list)
    # Lines of files the edit leaves alone that still name the symbol through a module the
    # edit changes (`named_elsewhere`), which `references` did not report.
    named: list[Uncovered] = field(default_factory=list)
    # What the files on disk were when the server was asked (`rename_execute` proves the
    # files against it, not against the later request's start).
    basis: Basis | None = None


class Uses(Row):
    found: int
    files: int
    covered: int


class Uncovered(Row):
    path: str
    line: int
    column: int
    text: str


class Guarded(Report):
    """The rename's edits checked against `references` (`_uncovered.md.j2`)."""

    uses: Uses | None  # None: the server could not say
    uncovered: list[Uncovered]
    uncovered_total: int


class Diff(Row):
    path: str
    edits: int
    kind: str
    old_path: str | None
    diff: str
    overwritten: int | None = absent()  # lines of the existing file it replaces (`overwrite`)


class RenamePreviewReport(Anchored, Paged, Guarded):
    old_name: str
    new_name: str
    rename_id: str
    edits: int
    files: list[Diff]
    execute: str  # the request that applies it


class Changed(ChangedFile):
    """A file the rename changed."""


class Moved(Row):
    old: str
    new: str


class NewDiagnostic(DiagnosticRow):
    path: str


class Unanalysed(Row):
    path: str
    reason: str


class RenameReport(Guarded):
    """An applied rename; the anchor's fields when it was one step (`rename`)."""

    anchor: str | None = absent()
    path: str | None = absent()
    line: int | None = absent()
    column: int | None = absent()
    symbol: str | None = absent()
    text: str | None = absent()
    approximate: Mapping[str, object] | None = absent()
    note: str | None = absent()
    overloads: str | None = absent()  # a function's overloads, renamed as one symbol
    rename_id: str | None = absent()
    partial: bool
    old_name: str
    new_name: str
    server: str
    edits: int
    changed: list[Changed]
    unsaved: list[str]
    created: list[str]
    renamed: list[Moved]
    overwritten: list[Overwritten] = Field(default_factory=list)  # existing files a consented overwrite replaced
    excluded: list[str]
    new_diagnostics: list[NewDiagnostic]
    pending: list[Unanalysed]
    change: str | None = absent()  # the change set recording it
    undo: str | None = absent()  # the request that takes it back whole
