"""The report after an action or a formatting (`Applied`): what each file got, and the
diagnostics of the changed files after it, settled, compared with those before.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from pydantic import Field

from ..changes import undo_hint
from ..diagnostics import Diagnostic, DiagnosticDelta, DiagnosticMap
from ..models import Overwritten, Report, Wait, absent
from ..report.pieces import ChangedFile, DiagnosticRow, diagnostic_row, incomplete
from ..session.warm import Session
from .run import Ran

DIAGNOSTICS_SHOWN = 20  # diagnostics of the changed files listed after an edit


class Changed(ChangedFile):
    """A file the action or formatting changed, with the lines it added and removed."""

    added: int  # lines
    removed: int


class FileDiagnostic(DiagnosticRow):
    path: str


class Applied(Report):
    """What an action or a formatting changed, and the diagnostics of the changed files."""

    title: str
    kind: str | None
    server: str
    action_id: str | None = absent()
    changed: list[Changed]
    unsaved: list[str]
    created: list[str]
    renamed: list[str] = Field(default_factory=list)  # `old → new`
    overwritten: list[Overwritten] = Field(default_factory=list)  # existing files a consented overwrite replaced
    compared: bool  # the diagnostics before were known: `fixed` and `new_diagnostics` say
    fixed: list[FileDiagnostic]  # diagnostics there before and gone after
    new_diagnostics: list[FileDiagnostic]
    diagnostics: list[FileDiagnostic]  # every diagnostic of the changed files after (bounded)
    diagnostics_total: int
    pending: list[str]
    remarks: list[str]
    undo: list[str]  # the requests that take its change sets back, in order
    stopped: str | None = absent()  # a step failed after earlier ones were applied (`Ran.stopped`)
    # Files it did not change whose diagnostics matter: users of moved names it could not rewrite.
    related: list[str] | None = absent()


async def applied(session: Session, title: str, kind: str | None,
                  work: Callable[[], Awaitable[Ran]], action_id: str | None = None,
                  watched: list[Path] | None = None,
                  before: DiagnosticMap | None = None, wait: Wait | None = None) -> Applied:
    """Run `work` (edits through the engine) and report it: lines added and removed per
    file, the diagnostics of the changed files after, and, given those from before (as the
    request already read them, for a quick fix), which it fixed and which it introduced.
    Line counts are the engine's (what it wrote, not a reread that a later write could
    change); the diagnostics after are the servers' on the text written, as far as they
    confirmed them within `wait` (the request's `diagnostics_wait`;
    `Diagnostics.after_edit`), else the file is named `pending`."""
    watched = [p for p in watched or [] if p.is_file()]
    ran = await work()
    display = session.workspace.display
    paths = list(dict.fromkeys([*watched, *(session.workspace.resolve(f.path)
                                            for r in ran.results for f in r.files)]))
    # The evidence `check` waits for: each server analysed the files after it read the edit.
    now = [p for p in paths if p.is_file()]
    structural = any(r.created or r.renamed for r in ran.results)
    if session.diagnostics.is_deferred:  # the caller reads them after all its edits
        after, before = DiagnosticMap(), None
    else:
        after = await session.diagnostics.after_edit(now, structural, wait)
    changed = [Changed(path=f.path, edits=f.edits, saved=f.saved, disk_differs=f.disk_differs,
                       beside_unsaved=f.beside_unsaved, added=f.added, removed=f.removed)
               for result in ran.results for f in result.files]

    def rows(found: dict[Path, list[Diagnostic]]) -> list[FileDiagnostic]:
        return [FileDiagnostic(path=display(p), **diagnostic_row(d)) for p, items in found.items()
                for d in items]

    every = rows({p: after.get(p, []) for p in paths})
    return Applied(
        title=title, kind=kind, server=", ".join(dict.fromkeys(ran.servers)), action_id=action_id,
        changed=changed,
        unsaved=[u for r in ran.results for u in r.unsaved],
        created=[c for r in ran.results for c in r.created],
        renamed=[f"{a} → {b}" for r in ran.results for a, b in r.renamed],
        overwritten=[Overwritten(path=p, lines=n) for r in ran.results for p, n in r.overwritten],
        compared=before is not None,
        fixed=rows(DiagnosticDelta.between(after, before).new) if before is not None else [],
        new_diagnostics=rows(DiagnosticDelta.between(before, after).new) if before is not None else [],
        diagnostics=every[:DIAGNOSTICS_SHOWN], diagnostics_total=len(every),
        pending=[f"{display(p)} ({reason})" for p, reason in after.pending.items()],
        **incomplete(bool(after.pending)),
        undo=[undo_hint(r.change) for r in ran.results if r.change],
        remarks=ran.remarks,
        stopped=ran.stopped,
    )
