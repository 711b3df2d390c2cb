"""`diagnostics`: a file's or the workspace's diagnostics, filtered by severity, paged.

Built on `Diagnostics.of`, so the text analysed is what is in the buffers now, and a
file a server has not analysed yet is named as such instead of passing for a clean one.
"""

from __future__ import annotations

from itertools import groupby
from pathlib import Path
from typing import Any, Literal

from ..diagnostics import SEVERITIES, Diagnostic, severity_rank
from ..models import Line, Paged, Request, Row
from ..modes import Answer, Offer, mode
from ..position import EditorLocation
from ..report.files import expand
from ..report.paging import PagingInfo, paged
from ..report.pieces import DiagnosticRow, diagnostic_row, editor_location, excerpt, fence_language
from ..session.warm import Session

Severity = Literal["error", "warning", "information", "hint"]
WORKSPACE_LIMIT = 200  # files checked for a workspace request: each is opened for its server


class DiagnosticsRequest(Request):
    mode: Literal["diagnostics"] = "diagnostics"
    file_path: str | None = None  # a file, a directory or a glob; none = the whole workspace
    min_severity: Severity = "hint"
    # Just after the bridge's own edits (the text format's response after its commands): a
    # file counts as analysed once each server's pass over the files is over and it published
    # for the text written, within the session's `diagnostics_wait` (`Diagnostics.after_edit`,
    # the wait of every edit's diagnostics after; else pending). The servers heard of the files
    # as the edits wrote them, so the disk is not synced first: that news would wait for a
    # publish a server does not make for a buffer it already has.
    settled: bool = False

    @property
    def syncs_disk(self) -> bool:
        return not self.settled


class Shown(DiagnosticRow):
    end_line: int  # where its range ends (1-based, the column after it): what it is about
    end_column: int
    lines: list[Line]


class FileDiagnostics(Row):
    path: str
    language: str
    diagnostics: list[Shown]


class Unanalysed(Row):
    path: str
    reason: str


class DiagnosticsReport(Paged):
    scope: str
    min_severity: str
    counts: dict[str, int]  # by severity, those with any
    files: int
    checked: int
    skipped: bool  # the walk stopped at `limit` files
    outside: int
    too_large: int
    limit: int
    max_file_size: int
    pending: list[Unanalysed]  # no server had analysed them yet
    quiet: list[Unanalysed]  # their server published nothing new: the earlier diagnostics stand
    groups: list[FileDiagnostics]


async def collect(session: Session, request: DiagnosticsRequest) -> dict[str, Any]:
    """Every diagnostic at or above the severity, and what could not be checked."""
    max_size = session.gateway.max_file_size
    walked = (
        expand(session.workspace, request.file_path, True, WORKSPACE_LIMIT, max_size)
        if request.file_path
        else session.workspace.walk(session.workspace.root, True, WORKSPACE_LIMIT, max_size)
    )
    found = await (session.diagnostics.after_edit(walked.files) if request.settled
                   else session.diagnostics.of(walked.files))
    items = sorted(
        (
            (path, d)
            for path, diags in found.items()
            for d in diags
            if d.at_least(request.min_severity)
        ),
        # Errors first across all pages, then warnings…: a file's errors are never pages
        # behind another file's warnings (a file may head two groups: its errors, its warnings).
        key=lambda pair: (severity_rank(pair[1].severity), session.workspace.display(pair[0]),
                          pair[1].line, pair[1].col),
    )
    return {
        "items": items,
        "checked": len(found),
        "skipped": walked.more,
        "outside": walked.outside,
        "too_large": walked.too_large,
        "pending": [
            {"path": session.workspace.display(p), "reason": r} for p, r in found.pending.items()
        ],
        "quiet": [
            {"path": session.workspace.display(p), "reason": r} for p, r in found.quiet.items()
        ],
    }


@mode("diagnostics", request=DiagnosticsRequest, report=DiagnosticsReport,
      summary="a file's or the workspace's errors and warnings", workspace=True,
      offer=Offer(command="LsapDiagnostics", picker=12, plug=True))
async def diagnostics(session: Session, request: DiagnosticsRequest) -> Answer:
    kept = session.kept.page(request)
    facts: dict[str, Any] = kept[0] if kept else await collect(session, request)
    items: list[tuple[Path, Diagnostic]] = facts["items"]

    async def build(request: DiagnosticsRequest, shown: list[tuple[Path, Diagnostic]],
                    paging: PagingInfo) -> Answer:
        docs = await session.texts.documents([p for p, _ in shown])
        groups = []
        locations: list[EditorLocation] = []
        for path, in_file in groupby(shown, key=lambda pair: pair[0]):
            doc = docs[path]
            display = session.workspace.display(path)
            entries = []
            for _, d in in_file:
                entries.append(Shown(**diagnostic_row(d), end_line=d.end_line + 1, end_column=d.end_col + 1,
                                     lines=excerpt(doc, d.line, d.line, request.context_lines)))
                summary = f"{d.severity}: {d.message.splitlines()[0] if d.message else ''}"
                locations.append({**editor_location(display, doc, d.line, d.col), "text": summary})
            groups.append(FileDiagnostics(path=display, language=fence_language(doc), diagnostics=entries))
        counts = {s: 0 for s in SEVERITIES}
        for _, d in items:
            counts[d.severity] += 1
        report = DiagnosticsReport(
            scope=request.file_path or "the workspace",
            min_severity=request.min_severity,
            counts={s: n for s, n in counts.items() if n},
            files=len({p for p, _ in items}),
            checked=facts["checked"],
            skipped=facts["skipped"],
            outside=facts["outside"],
            too_large=facts["too_large"],
            limit=WORKSPACE_LIMIT,
            max_file_size=session.gateway.max_file_size,
            pending=facts["pending"],
            quiet=facts["quiet"],
            groups=groups,
            **paging,
        )
        return Answer(report, locations)

    # Later pages reuse this analysis and its notes, not only the items.
    return await paged(session, request, items, build, whole=[facts])
