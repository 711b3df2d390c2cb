"""What the change-set modes are asked and answer: `changes` (a listing), `undo`, `review`
(the hunks left, each with the requests that decide it) and `merge` (the editor's
notices)."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from ... import changes
from ...models import Paged, Report, Request, Row, absent


class ChangesRequest(Request):
    mode: Literal["changes"] = "changes"
    # Only the change sets of this agent (`human`: the human's own).
    who: str | None = None

    positional: ClassVar[str] = "who"
    file_from_cursor: ClassVar[bool] = False


class UndoRequest(Request):
    mode: Literal["undo"] = "undo"
    # The change set to take back; none: the newest change of any agent not undone yet.
    id: str | None = None
    # Undo the files that still hold the change's text and list the others (else: none).
    partial: bool = False

    positional: ClassVar[str] = "id"
    file_from_cursor: ClassVar[bool] = False


class ChangeRow(Row):
    id: str
    who: str
    when: str
    label: str
    files: list[str]  # the first FILES_SHOWN
    count: int
    state: str  # applied | undone by N | partly undone | undo of N | reviewed
    undo: str | None  # the request that takes it back (None: nothing left to undo)
    review: str | None  # the request that shows its hunks, to reject or accept


class ChangesReport(Paged):
    who: str | None
    changes: list[ChangeRow]


class Conflict(Row):
    path: str
    reason: str


class UndoReport(Report):
    id: str
    label: str
    who: str
    when: str
    undone: list[str]
    unsaved: list[str]  # undone in a buffer holding the human's unsaved text, not on disk
    conflicts: list[Conflict]  # left as they are (partial)
    change: str | None  # the change set of this undo
    redo: str | None  # the request that takes the undo back


class ReviewRequest(Request):
    mode: Literal["review"] = "review"
    # The change set; none: the newest change of any agent with hunks left to decide.
    id: str | None = None
    # With `decision`: the file whose hunk is decided (none: every file of the change).
    file_path: str | None = None
    # With `decision`: the hunk of `file_path`, by its number in the review (none: every hunk of it).
    hunk: Annotated[int, Field(ge=1)] | None = None
    # reject: put the hunk back as it was (through the safe edits); accept: keep it.
    decision: Literal["reject", "accept"] | None = None

    positional: ClassVar[str] = "id"
    file_from_cursor: ClassVar[bool] = False


class Hunk(Row):
    number: int
    line: int  # where it starts in the file now, 1-based
    diff: str
    reject: str
    accept: str
    # A merged disk change's hunk in conflict with the human's unsaved text: decided in the
    # buffer (`MERGE_KEYS`), not by `decision`.
    conflict: bool | None = absent()


class ReviewFile(Row):
    path: str
    hunks: list[Hunk]


class ReviewReport(Report):
    id: str
    label: str
    who: str
    when: str
    decided: str | None  # what this request decided
    files: list[ReviewFile]
    pending: int  # hunks left to decide
    undo: str | None


class MergeRequest(Request):
    """What the editor's three-way merge (lua/lsap/transport/merge.lua) tells the service:
    `merged`, a disk change merged into a buffer with unsaved text (recorded as a change
    set); `decided`, conflicts of it decided in the buffer (keep mine, take theirs, both, or
    the buffer written over them: their hunks leave the review); `released`, conflicts
    nobody decided (the buffer reloaded or closed: their hunks are ordinary ones then)."""

    mode: Literal["merge"] = "merge"
    event: Literal["merged", "decided", "released"]
    key: changes.MergeKey  # the editor's key of the merge
    file_path: str | None = None  # merged: the file
    base: list[str] = Field(default_factory=list)  # merged: the text the buffer was read from
    theirs: list[str] = Field(default_factory=list)  # merged: the disk's text merged
    # merged: each conflict's rows of `base` (0-based, end excluded)
    regions: list[tuple[Annotated[int, Field(ge=0)], Annotated[int, Field(ge=0)]]] = Field(default_factory=list)
    conflicts: list[Annotated[int, Field(ge=1)]] = Field(default_factory=list)  # decided, released: by number

    positional: ClassVar[str] = "event"
    file_from_cursor: ClassVar[bool] = False

    @property
    def syncs_disk(self) -> bool:
        return False


class MergeReport(Report):
    event: str
    change: str | None  # the change set of the merge (None: none recorded or found)
    hunks: int  # left to decide
    conflicts: int  # of them, conflicts
