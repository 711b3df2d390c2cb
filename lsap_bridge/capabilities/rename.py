"""`rename_preview`, `rename_execute`, `rename`: a workspace-wide rename, previewed or applied.

The preview shows each file's diff and an id; executing the id applies exactly what was
previewed (refused if a file changed since), minus `exclude_files`. Application goes
through `edits.apply.apply_workspace_edit` (checked twice, one undo step per buffer, all or
nothing), and the report ends with the diagnostics the rename introduced, so a broken
rename is visible.

Guard rail: the server is asked for the symbol's `references` along with the rename. A
rename whose edits leave uses with the old name (a server answering 1 edit where it finds
5 uses: basedpyright renames in the declaring file only once its index of the other files
went stale) is not written: it is refused, naming the uses it misses, or under
`edit_policy = 'ask'` the human is asked with them shown; `allow_uncovered` writes it
anyway (the uses are then listed in the report). Every file that uses the symbol has its
diagnostics checked afterwards, not only the files that changed.
"""

from __future__ import annotations

import asyncio
import fnmatch
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, TypedDict

from cachetools import LRUCache
from lsprotocol import types
from pydantic import Field

from ..changes import undo_hint
from ..decode import is_range, locations, walk
from ..diagnostics import DiagnosticDelta
from ..diskwatch import Basis
from ..edits.apply import EditResult, apply_workspace_edit
from ..edits.plan import FileDiff, preview
from ..errors import ErrorCode, LsapError
from ..gateway import Client, LspCall
from ..identifiers import check_new_name, declined
from ..jsonvalue import Params
from ..models import (
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
from ..modes import Answer, Offer, mode
from ..position import EditorLocation, Encoding, column_at, from_lsp_character, line_at
from ..report.paging import PagingInfo, paged, suggest
from ..report.pieces import AnchorFields, ChangedFile, DiagnosticRow, anchor_fields, diagnostic_row, incomplete, word_at
from ..resolve import Resolved, resolve
from ..session.approval import Doubt
from ..session.targets import Target, encoding_of
from ..session.warm import Session
from ..surface import phrase
from ..workspace import path_of

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

    edit: dict[str, Any]
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


RENAMES = 32  # previewed renames kept for `rename_execute`


class Renames(LRUCache[str, PendingRename]):
    """Previewed renames by `rename_id`, kept on the session (`Kept.owned`); their file
    versions are checked when one is executed."""

    def __init__(self) -> None:
        super().__init__(RENAMES)


def keep(session: Session, pending: PendingRename) -> str:
    """Keep a previewed rename on the session; its id is a digest of the edit and the name,
    with the workspace's own paths left out, so that a report reads the same wherever the
    project is checked out."""
    text = json.dumps([pending.edit, pending.new_name], sort_keys=True)
    for root in session.workspace.roots:
        text = text.replace(root.as_uri(), "")
    rename_id = hashlib.sha1(text.encode()).hexdigest()[:10]
    session.kept.owned(Renames)[rename_id] = pending
    return rename_id


def kept(session: Session, rename_id: str) -> PendingRename:
    pending = session.kept.owned(Renames).get(rename_id)
    if pending is None:
        raise LsapError(
            ErrorCode.NOT_FOUND,
            f"no previewed rename has the id {rename_id!r} (unknown, applied or expired)",
            hint="run `rename_preview` again, or `rename` to rename in one step",
        )
    return pending


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


def _excluded(display: str, patterns: list[str]) -> bool:
    return any(
        fnmatch.fnmatchcase(display, p) or display.startswith(p.rstrip("/") + "/") for p in patterns
    )


def _uris(edit: dict[str, Any]) -> list[str]:
    return list(dict.fromkeys(uri for step in walk(edit) for uri in step.uris))


def without(
    edit: dict[str, Any], session: Session, patterns: list[str]
) -> tuple[dict[str, Any], list[str]]:
    """The edit minus the files matching `patterns`, and the display paths left out."""
    if not patterns:
        return edit, []

    def dropped(uri: str) -> bool:
        return _excluded(session.workspace.display(path_of(uri)), patterns)

    left_out = sorted({session.workspace.display(path_of(u)) for u in _uris(edit) if dropped(u)})
    kept = [step.change() for step in walk(edit) if not any(dropped(u) for u in step.uris)]
    return {"documentChanges": kept}, left_out


async def _compute(
    session: Session, request: RenamePreviewRequest | RenameRequest
) -> tuple[Resolved, PendingRename]:
    """Resolve the anchor and ask the server for the rename's WorkspaceEdit (and, to check
    it, for the symbol's references)."""
    check_new_name(request.new_name, request.locate.file_path)
    resolved = await resolve(session, request.locate, METHOD)
    target = resolved.target
    params = session.servers.position_params(target, resolved.doc, resolved.line, resolved.column)
    old_name = word_at(resolved.line_text, resolved.column)
    prepared = target.client.supports(PREPARE)
    refusal = await _refusal(session, target, params) if prepared else None
    if refusal is not None:
        raise LsapError(
            ErrorCode.INVALID_REQUEST,
            f"{target.client.name} cannot rename `{old_name}` at {resolved.anchor}"
            + (f": {refusal}" if refusal else ""),
            hint="point the anchor at a symbol defined in the workspace, not a keyword",
        )
    # The rename's answer whole: what the server told the human meanwhile is its reason.
    answer, uses = await asyncio.gather(
        session.servers.answer(target, METHOD, {**params, "newName": request.new_name}),
        _uses(session, target, params),
    )
    edit = answer.result
    if not isinstance(edit, dict) or not (edit.get("changes") or edit.get("documentChanges")):
        if prepared:  # the position can be renamed: it is the name the server refuses
            raise declined(target.client.name, old_name, request.new_name, answer.said)
        raise LsapError(
            ErrorCode.NOT_FOUND,
            f"{target.client.name} found nothing to rename for `{old_name}` at {resolved.anchor}",
            hint="check where the anchor lands: "
                 f"`{phrase({'mode': 'locate', 'locate': request.locate.model_dump(exclude_none=True)})}`",
        )
    paths = [path_of(u) for u in _uris(edit)]
    docs = await session.texts.documents(
        [p for p in paths if session.workspace.contains(p) and p.is_file()]
    )
    versions = {p: d.version for p, d in docs.items()}
    uncovered = await _uncovered(session, target, edit, uses or [], old_name)
    named = await asyncio.to_thread(named_elsewhere, session, paths, old_name, {p for p, _ in uses or []})
    pending = PendingRename(
        edit, target.client, old_name, request.new_name, versions, target.partial, uses,
        uncovered, named, session.texts.basis(),
    )
    return resolved, pending


IMPORTING = ("import", "require", "include")


def _defines(path: Path, pattern: re.Pattern[str]) -> bool:
    try:
        return pattern.search(path.read_text(errors="replace")) is not None
    except OSError:
        return False
SEARCHED = 5000  # code files a rename's text search reads at most


def named_elsewhere(session: Session, edited: list[Path], old_name: str,
                    reported: set[Path]) -> list[Uncovered]:
    """The coverage check the server's `references` cannot give for a file it has not
    indexed (created a moment ago): the code files of the edited files' languages that the
    edit leaves alone (and `references` did not name) with a line that still names the
    symbol through a module the edit changes and that defines it at its top level: the old
    name and the module's name on an import line, or `module.old_name`. Such a file keeps
    the old name and breaks."""
    workspace = session.workspace
    defines = re.compile(rf"^(export\s+)?(default\s+)?(async\s+)?(def|class|function|const|let|var|interface|"
                         rf"type|enum)\s+{re.escape(old_name)}\b|^{re.escape(old_name)}\s*[:=]", re.MULTILINE)
    # Only a module that defines the name at its top level can be imported from for it (a
    # method, a local or a parameter is not named through a module).
    modules = {p.parent.name if p.stem == "__init__" else p.stem for p in edited if _defines(p, defines)}
    suffixes = {p.suffix for p in edited}
    if not modules:
        return []
    word = re.compile(rf"\b{re.escape(old_name)}\b")
    module = re.compile(r"\b(" + "|".join(map(re.escape, sorted(modules))) + r")\b")
    dotted = re.compile(r"\b(" + "|".join(map(re.escape, sorted(modules))) + rf")\.{re.escape(old_name)}\b")
    skip = set(edited) | reported
    out: list[Uncovered] = []
    for root in workspace.roots:
        for path in workspace.walk(root, limit=SEARCHED, max_size=session.gateway.max_file_size).files:
            if path.suffix not in suffixes or path in skip:
                continue
            try:
                lines = path.read_text(errors="replace").splitlines()
            except OSError:
                continue
            for number, line in enumerate(lines):
                found = word.search(line)
                if found and (dotted.search(line) or (
                        module.search(line) and any(w in line for w in IMPORTING))):
                    out.append(Uncovered(path=workspace.display(path), line=number + 1,
                                         column=found.start() + 1, text=line.strip()))
                    break
    return out


async def _refusal(session: Session, target: Target, params: Params) -> str | None:
    """Why the server will not rename at this position: prepareRename answered null (""),
    or an error that says why (typescript-language-server's "You cannot rename elements
    that are defined in the standard TypeScript library"); None: it will."""
    [answer] = await session.servers.lsp([LspCall(target.client.id, PREPARE, params, target.bufnr)], target)
    if answer.error:
        return str(answer.error.get("message", answer.error))
    return "" if answer.result is None else None


async def _uses(session: Session, target: Target, params: Params) -> list[tuple[Path, types.Range]] | None:
    """The symbol's uses in the workspace, declaration included; None when the server
    cannot say (the rename goes ahead unchecked)."""
    if not target.client.supports(REFERENCES):
        return None
    try:
        found = await session.servers.read(
            target, REFERENCES, {**params, "context": {"includeDeclaration": True}}, locations
        )
    except LsapError:
        return None
    return [(p, use.range) for use in found if session.workspace.contains(p := path_of(use.uri))]


def _edit_ranges(edit: dict[str, Any]) -> dict[Path, list[Mapping[str, object]]]:
    """Every text edit of a WorkspaceEdit, by file."""
    out: dict[Path, list[Mapping[str, object]]] = {}
    for step in walk(edit):
        if step.op is None:
            out.setdefault(path_of(step.uri), []).extend(step.edits)
    return out


def _renames(item: Mapping[str, object], start: types.Position, old_name: str, encoding: Encoding) -> bool:
    """Whether a text edit renames the use starting at `start`: it spans the use, and,
    where it rewrites whole lines (jedi sends the whole file), the use's line no longer
    has the old name there (its column in the new text read through the codec: `start`
    counts the server's units)."""
    rng = item.get("range")
    if not is_range(rng):
        return False
    first, last = rng["start"], rng["end"]
    key = (start.line, start.character)
    if not ((first["line"], first["character"]) <= key < (last["line"], last["character"])):
        return False
    if first["line"] == last["line"]:
        return True
    row = start.line - first["line"]
    lines = str(item.get("newText") or "").split("\n")
    if row >= len(lines):
        return True
    # The new text's line `row` starts at the edit's start on its first line, at column 0 after.
    column = from_lsp_character(lines[row], start.character - (first["character"] if row == 0 else 0), encoding)
    return lines[row][column:column + len(old_name)] != old_name


async def _uncovered(session: Session, target: Target, edit: dict[str, Any],
                     uses: list[tuple[Path, types.Range]], old_name: str) -> list[Uncovered]:
    """The uses `references` found that no edit of the rename renames."""
    edits = _edit_ranges(edit)
    encoding = encoding_of(target.client)
    missed = [
        (path, rng) for path, rng in uses
        if not any(_renames(item, rng.start, old_name, encoding) for item in edits.get(path, []))
    ]
    docs = await session.texts.documents(list(dict.fromkeys(p for p, _ in missed if p.is_file())))
    out = []
    for path, rng in missed:
        lines = docs[path].lines if path in docs else []
        line = rng.start.line
        text = line_at(lines, line)
        out.append(Uncovered(
            path=session.workspace.display(path),
            line=line + 1,
            column=column_at(lines, line, rng.start.character, encoding) + 1,
            text=text.strip(),
        ))
    return out


class GuardFields(TypedDict):
    """The fields of `Guarded`."""

    uses: Uses | None
    uncovered: list[Uncovered]
    uncovered_total: int


def _guard(pending: PendingRename) -> GuardFields:
    """The report's part on uses the edit leaves alone."""
    if pending.uses is None:
        return {"uses": None, "uncovered": [], "uncovered_total": 0}
    return {
        "uses": Uses(found=len(pending.uses), files=len({p for p, _ in pending.uses}),
                     covered=len(pending.uses) - len(pending.uncovered)),
        "uncovered": pending.uncovered[:UNCOVERED_SHOWN],
        "uncovered_total": len(pending.uncovered),
    }


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


def _gap(pending: PendingRename) -> str:
    """The uses a rename's edits leave with the old name, as the human is asked about them."""
    assert pending.uses is not None
    shown = pending.uncovered[:UNCOVERED_SHOWN]
    more = len(pending.uncovered) - len(shown)
    return "\n".join([
        f"# {pending.client.name}'s edits rename {len(pending.uses) - len(pending.uncovered)} of the "
        f"{len(pending.uses)} uses of `{pending.old_name}` that `references` finds; "
        f"{len(pending.uncovered)} would keep the old name:",
        *(f"#   {u.path}:{u.line}:{u.column} `{u.text}`" for u in shown),
        *([f"#   … and {more} more"] if more > 0 else []),
    ])


def _doubt(pending: PendingRename, request: RenameRequest | RenameExecuteRequest) -> Doubt | None:
    """A rename that misses uses `references` finds, or files that still name the symbol
    through its module (`named_elsewhere`), needs a yes (`edits.apply.apply_workspace_edit`):
    without `allow_uncovered` it is refused, naming the files and the way on."""
    if not (pending.uncovered or pending.named) or request.allow_uncovered:
        return None
    anyway = suggest(type(request), {**request.model_dump(mode="json", exclude_defaults=True),
                                     "mode": request.mode, "allow_uncovered": True})
    server = pending.client.name
    if not pending.uncovered:
        return _unindexed(pending, anyway)
    files = list(dict.fromkeys(u.path for u in pending.uncovered))
    first = pending.uncovered[0]
    count = len(pending.uncovered)
    return Doubt(_gap(pending), LsapError(
        ErrorCode.DENIED,
        f"the rename `{pending.old_name}` → `{pending.new_name}` was not applied: {server}'s edits "
        f"miss {count} of the {len(pending.uses or [])} uses its `references` finds, in "
        f"{', '.join(files)} (first: {first.path}:{first.line}:{first.column} `{first.text}`), "
        "which would keep the old name and break",
        hint=f"nothing was changed; {server}'s index of those files may be stale (a restarted "
             f"server may rename them all; ask again then); `{anyway}` writes these edits anyway, "
             f"leaving the {count} use{'s' if count != 1 else ''} for you to rename",
    ))


def _unindexed(pending: PendingRename, anyway: str) -> Doubt:
    """The refusal of a rename whose edit leaves files that name the symbol alone, files its
    server's `references` did not name either (not indexed yet: created a moment ago)."""
    lines = [f"{u.path}:{u.line}:{u.column} `{u.text}`" for u in pending.named[:UNCOVERED_SHOWN]]
    files = ", ".join(dict.fromkeys(u.path for u in pending.named))
    server = pending.client.name
    return Doubt("\n".join([
        f"# {server}'s edits leave alone {len(pending.named)} file(s) that still name `{pending.old_name}` "
        "through its module:", *(f"#   {line}" for line in lines)]), LsapError(
        ErrorCode.DENIED,
        f"the rename `{pending.old_name}` → `{pending.new_name}` was not applied: {server}'s edits leave "
        f"{files} alone, which still name `{pending.old_name}` through its module (first: {lines[0]}) "
        "and would break",
        hint=f"nothing was changed; {server} may not have indexed those files yet (created a moment "
             f"ago?): ask again in a moment; `{anyway}` writes these edits anyway",
    ))


async def _apply(session: Session, pending: PendingRename, patterns: list[str],
                 request: RenameRequest | RenameExecuteRequest, head: AnchorFields,
                 rename_id: str | None = None) -> RenameReport:
    """Apply a rename, with the diagnostics before and after to show what it broke, as its
    report (`head`: the anchor's fields, or the server's and `partial` alone).

    Excluded files are checked too: they still use the old name, which is what breaks.
    """
    edit, excluded = without(pending.edit, session, patterns)
    # Every file that uses the symbol, changed or not: a use the edit missed breaks there.
    watched = list(dict.fromkeys([*(path_of(u) for u in _uris(pending.edit)),
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
