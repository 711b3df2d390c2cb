"""The three rename modes: `rename_preview` shows a computed rename's diff per file and keeps
it under an id, `rename_execute` applies a kept one once its files are proved unchanged,
`rename` computes and applies in one step; applying (`_apply`) goes through the edit engine
and reports the diagnostics the rename introduced."""

from __future__ import annotations

from ...changes import undo_hint
from ...diagnostics import DiagnosticDelta
from ...edits.apply import EditResult, apply_workspace_edit
from ...edits.plan import FileDiff, preview
from ...errors import ErrorCode, LsapError
from ...models import Overwritten
from ...modes import Answer, Offer, mode
from ...position import EditorLocation
from ...report.paging import PagingInfo, paged, suggest
from ...report.pieces import AnchorFields, anchor_fields, diagnostic_row, incomplete
from ...session.warm import Session
from ...workspace import path_of
from .coverage import _doubt, _guard
from .models import (
    METHOD,
    Changed,
    Diff,
    Moved,
    NewDiagnostic,
    PendingRename,
    RenameExecuteRequest,
    RenamePreviewReport,
    RenamePreviewRequest,
    RenameReport,
    RenameRequest,
    Unanalysed,
)
from .pending import Renames, _compute, _uris, keep, kept, without


def _diffs(diffs: list[FileDiff]) -> list[Diff]:
    return [Diff(path=d.path, edits=d.edits, kind=d.kind, old_path=d.old_path, diff=d.diff,
                 overwritten=d.overwritten) for d in diffs]


@mode("rename_preview", request=RenamePreviewRequest, report=RenamePreviewReport,
      summary="a rename's diff per file, and an id to apply it", method=METHOD, fallback="references",
      workspace=True, offer=Offer(picker=15))
async def rename_preview(session: Session, request: RenamePreviewRequest) -> Answer:
    resolved, pending = await _compute(session, request)
    diffs = await preview(session, pending.edit, pending.client, pending.old_name, pending.basis,
                          request.overwrite, disk_too=True, new_name=pending.new_name)
    rename_id = keep(session, pending)
    # Diffs are paged by file (`max_items`); the id applies every file, shown or not.

    async def build(request: RenamePreviewRequest, shown: list[FileDiff], paging: PagingInfo) -> Answer:
        report = RenamePreviewReport(
            **anchor_fields(resolved, session),
            old_name=pending.old_name,
            new_name=pending.new_name,
            rename_id=rename_id,
            edits=sum(d.edits for d in diffs),
            files=_diffs(shown),
            **_guard(pending),
            **paging,
            execute=suggest(RenameExecuteRequest, {"mode": "rename_execute", "rename_id": rename_id}),
        )
        return Answer(report)

    return await paged(session, request, diffs, build)


async def _stale(session: Session, pending: PendingRename) -> list[str]:
    docs = await session.texts.documents(list(pending.versions))
    return [
        session.workspace.display(p) for p, v in pending.versions.items() if docs[p].version != v
    ]


async def _apply(session: Session, pending: PendingRename, patterns: list[str],
                 request: RenameRequest | RenameExecuteRequest, head: AnchorFields,
                 rename_id: str | None = None) -> RenameReport:
    """Apply a rename, with the diagnostics before and after to show what it broke, as its
    report (`head`: the anchor's fields, or the server's and `partial` alone).

    Excluded files are checked too: they still use the old name, which is what breaks.
    """
    edit, excluded = without(pending.edit, session, patterns, pending.client.name)
    # Every file that uses the symbol, changed or not: a use the edit missed breaks there.
    watched = list(dict.fromkeys([*(path_of(u) for u in _uris(pending.edit, pending.client.name)),
                                  *(p for p, _ in pending.uses or [])]))
    before = await session.diagnostics.of([p for p in watched if p.is_file()])
    result: EditResult = await apply_workspace_edit(
        session, edit, pending.client, label=f"rename {pending.old_name} → {pending.new_name}",
        replaces=pending.old_name, basis=pending.basis, overwrite=request.overwrite,
        doubt=_doubt(pending, request), disk_too=True, new_name=pending.new_name,
    )
    moved = {
        session.workspace.resolve(old): session.workspace.resolve(new)
        for old, new in result.renamed
    }
    # The evidence `check` waits for: each server analysed the files after it read the edit.
    now = [moved.get(p, p) for p in watched if moved.get(p, p).is_file()]
    after = await session.diagnostics.after_edit(now, bool(moved), request.diagnostics_wait)
    delta = DiagnosticDelta.between(before, after)
    return RenameReport(
        **head,
        rename_id=rename_id,
        old_name=pending.old_name,
        new_name=pending.new_name,
        edits=sum(f.edits for f in result.files),
        changed=[Changed(path=f.path, edits=f.edits, saved=f.saved, disk_differs=f.disk_differs,
                         beside_unsaved=f.beside_unsaved) for f in result.files],
        unsaved=result.unsaved,
        created=result.created,
        renamed=[Moved(old=a, new=b) for a, b in result.renamed],
        overwritten=[Overwritten(path=p, lines=n) for p, n in result.overwritten],
        excluded=excluded,
        **_guard(pending),
        new_diagnostics=[
            NewDiagnostic(path=session.workspace.display(p), **diagnostic_row(d))
            for p, items in delta.new.items()
            for d in items
        ],
        pending=[Unanalysed(path=session.workspace.display(p), reason=r) for p, r in after.pending.items()],
        **incomplete(bool(after.pending)),
        change=result.change,
        undo=undo_hint(result.change) if result.change else None,
    )


def warnings(report: RenameReport) -> list[str]:
    """What an applied rename warns of, one line each, as the text format's `RENAME_TO` notes
    them: a server still indexing, the uses its edits left with the old name, files left
    unsaved (the report's template says the same in its own words; the response's file
    sections show the diagnostics after)."""
    out = [f"{report.server} was still indexing when it computed this rename: uses may be missing"] if (
        report.partial) else []
    if report.uncovered_total and report.uses is not None:
        more = report.uncovered_total - len(report.uncovered)
        out.append(
            f"{report.server}'s edits rename {report.uses.covered} of the {report.uses.found} uses of "
            f"`{report.old_name}` that `references` finds; {report.uncovered_total} keep the old name: "
            + ", ".join(f"{u.path}:{u.line}:{u.column} `{u.text}`" for u in report.uncovered)
            + (f" and {more} more" if more > 0 else ""))
    if report.unsaved:
        out.append(f"not written to disk (the buffer had unsaved changes): {', '.join(report.unsaved)}")
    return out


def _locations(report: RenameReport) -> list[EditorLocation]:
    return [{"path": f.path, "line": 1, "col": 0, "text": f"{f.edits} edits"} for f in report.changed]


@mode("rename_execute", request=RenameExecuteRequest, report=RenameReport, template="rename",
      summary="apply a previewed rename by its id", workspace=True, edits=True)
async def rename_execute(session: Session, request: RenameExecuteRequest) -> Answer:
    patterns = session.workspace.exclude_patterns(request.exclude_files)
    pending = kept(session, request.rename_id)
    stale = await _stale(session, pending)
    if stale:
        session.kept.owned(Renames).pop(request.rename_id, None)
        raise LsapError(
            ErrorCode.CONFLICT,
            "files changed since the preview: " + ", ".join(stale),
            hint="nothing was changed; run `rename_preview` again for a fresh id",
        )
    report = await _apply(session, pending, patterns, request,
                          {"server": pending.client.name, "partial": pending.partial}, request.rename_id)
    session.kept.owned(Renames).pop(request.rename_id, None)
    return Answer(report, _locations(report))


@mode("rename", request=RenameRequest, report=RenameReport,
      summary="rename a symbol across the workspace in one step", method=METHOD, fallback="references",
      workspace=True, offer=Offer(command="LsapRename", picker=16, plug=True), edits=True)
async def rename(session: Session, request: RenameRequest) -> Answer:
    patterns = session.workspace.exclude_patterns(request.exclude_files)
    resolved, pending = await _compute(session, request)
    report = await _apply(session, pending, patterns, request, anchor_fields(resolved, session))
    return Answer(report, _locations(report))
