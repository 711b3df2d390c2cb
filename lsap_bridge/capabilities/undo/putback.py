"""Writing a change set back through the edit engine: whole files to their "before" text
(`revert`, recorded as a change set of its own, which redoes the change when undone), or
rejected hunks into the text the files hold now, the human's edits elsewhere in them kept
(`_put_back`); why a file cannot go back (`_conflict`)."""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import os
from pathlib import Path

from lsprotocol import types

from ... import changes
from ...changes import ChangeSet, FileText
from ...editor import Client
from ...edits.apply import apply_workspace_edit
from ...edits.switch import journal_dir
from ...errors import ErrorCode, LsapError
from ...position import Document
from ...session.warm import Session
from ...workspace import uri_of

# Undo edits replace whole lines (column 0 on each side): no encoding is involved.
ENGINE = Client(0, "lsap undo", "utf-32", frozenset())
TOUCHED = "edited since, in the hunk's own lines"


def _conflict(file: FileText, doc: Document | None, whole: bool = False) -> str | None:
    """Why a file cannot be put back (None: it holds the change's text). `whole`: the
    whole file goes back (an undo, not a hunk's rejection), so a rename goes back too,
    while its old name is free."""
    if file.before is None and not whole:
        return "the change created it; undo all of it (the file goes), or the whole change"
    if file.origin is not None and not whole:
        return f"the change renamed it from {file.origin}; undo the whole change, or rename it back by hand"
    if file.origin is not None and os.path.lexists(file.origin):
        return f"the change renamed it from {file.origin}, which exists again; move that aside and ask again"
    if doc is None:
        return "it is gone from the disk"
    if doc.lines != file.after:
        if doc.modified and not file.in_buffer:
            return "edited since in the buffer (unsaved changes)"
        return "edited since"
    return None


def back_edits(now: list[str], then: list[str]) -> list[types.TextEdit]:
    """LSP text edits turning the lines `now` into `then`, replacing only the lines that
    differ (whole lines, column 0)."""
    edits: list[types.TextEdit] = []
    matcher = difflib.SequenceMatcher(None, now, then, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        edits.append(types.TextEdit(types.Range(types.Position(i1, 0), types.Position(i2, 0)),
                                    "".join(line + "\n" for line in then[j1:j2])))
    return edits


def _back(file: FileText) -> list[types.TextDocumentEdit | types.CreateFile | types.RenameFile | types.DeleteFile]:
    """The steps that put one file of a change back: its lines; a renamed file also its
    name, and the file a rename overwrote its text (the renamed one is made again at its
    old name then, so that no file is deleted)."""
    def edit(path: str, now: list[str], then: list[str]) -> types.TextDocumentEdit:
        return types.TextDocumentEdit(types.OptionalVersionedTextDocumentIdentifier(uri_of(Path(path))),
                                      back_edits(now, then))

    if file.before is None and file.origin is None:  # created by the change: it goes
        return [types.DeleteFile(uri_of(Path(file.path)))]
    if file.origin is None:
        return [edit(file.path, file.after, file.before or [])]
    if file.overwritten is None:
        return [types.RenameFile(uri_of(Path(file.path)), uri_of(Path(file.origin))),
                edit(file.origin, file.after, file.before or [])]
    return [types.CreateFile(uri_of(Path(file.origin))), edit(file.origin, [], file.before or []),
            edit(file.path, file.after, file.overwritten)]


async def revert(session: Session, change: ChangeSet, files: list[FileText], label: str) -> list[str]:
    """Put `files` of a change set back to their "before" through the engine (recorded as
    a change set of its own), and note it on the set; returns the files left unsaved."""
    journals = await journal_dir(session.gateway)
    edit = types.WorkspaceEdit(document_changes=[step for f in files for step in _back(f)])
    # What the change wrote to disk goes back on disk too, beside unsaved changes made since.
    result = await apply_workspace_edit(session, edit, ENGINE, label=label,
                                        expect={Path(f.path): f.after for f in files},
                                        disk_too=not any(f.in_buffer for f in files))
    fresh = await asyncio.to_thread(changes.find, journals, session.workspace, change.id) or change
    fresh.reverted = list(dict.fromkeys([*fresh.reverted, *(f.path for f in files)]))
    if result.change is not None:
        fresh.undone.append(result.change)
        undo = await asyncio.to_thread(changes.find, journals, session.workspace, result.change)
        if undo is not None:
            undo.undoes = change.id
            await asyncio.to_thread(changes.update, journals, undo)
    await asyncio.to_thread(changes.update, journals, fresh)
    change.undone, change.reverted = fresh.undone, fresh.reverted
    for made in (d for f in files if f.before is None for d in f.made):  # deepest first
        with contextlib.suppress(OSError):  # not empty (someone's files): it stays
            os.rmdir(made)
    # Undone: the agent's signs on those lines go, and the undo's own lines get none.
    with contextlib.suppress(LsapError):
        for file in files:
            await session.gateway.call("presence_reviewed", change.id, file.path)
        if result.change is not None:
            await session.gateway.call("presence_reviewed", result.change)
    return result.unsaved


def _rebase(after: list[str], now: list[str], spans: list[tuple[int, int]]) -> list[tuple[int, int]] | None:
    """Where the lines `spans` of `after` are in `now` (`after` with the human's edits since),
    or None when the human edited one of them: a hunk goes back only where it is untouched."""
    at: dict[int, int] = {}
    for tag, i1, i2, j1, _j2 in difflib.SequenceMatcher(None, after, now, autojunk=False).get_opcodes():
        if tag == "equal":
            at.update({i: j1 + i - i1 for i in range(i1, i2)})
    out = []
    for start, end in spans:
        if end > start:
            if any(i not in at for i in range(start, end)) or at[end - 1] - at[start] != end - 1 - start:
                return None
            out.append((at[start], at[end - 1] + 1))
        elif start in at or start == 0:
            out.append((at.get(start, 0),) * 2)
        elif start - 1 in at:
            out.append((at[start - 1] + 1,) * 2)
        else:
            return None
    return out


async def _put_back(session: Session, change: ChangeSet, written: list[FileText], whole: bool) -> str | None:
    """Write the rejected hunks back (the files `_decide` changed), through the safe edits,
    into the text the files hold now: the human's edits elsewhere in them stay. A file the
    change created, rejected whole, goes (as `undo` takes it back). The put back's change set."""
    display = session.workspace.display
    old = {f.path: f for f in change.files}
    created = [old[f.path] for f in written if old[f.path].before is None and whole]
    written = [f for f in written if not (old[f.path].before is None and whole)]
    docs = await session.texts.documents([Path(f.path) for f in written if Path(f.path).is_file()])
    edits: dict[str, list[types.TextEdit]] = {}
    expect: dict[Path, list[str]] = {}
    problems: list[str] = []
    for file in written:
        was, doc = old[file.path], docs.get(Path(file.path))
        # Gone, created or renamed by the change: `_conflict` says why; else the hunk's own lines.
        reason = _conflict(was, doc) if doc is None or was.before is None or was.origin else None
        ops = [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(
            None, was.after, file.after, autojunk=False).get_opcodes() if tag != "equal"]
        where = _rebase(was.after, doc.lines, [op[:2] for op in ops]) if doc and not reason else None
        if doc is None or where is None:
            problems.append(f"{display(Path(file.path))}: {reason or TOUCHED}")
            continue
        new = list(doc.lines)
        for (start, end), (_i1, _i2, j1, j2) in reversed(list(zip(where, ops, strict=True))):
            new[start:end] = file.after[j1:j2]
        edits[uri_of(Path(file.path))], expect[Path(file.path)] = back_edits(doc.lines, new), doc.lines
    if problems:
        raise LsapError(ErrorCode.CONFLICT, f"the hunk cannot be put back: {'; '.join(problems)}",
                        hint="nothing was changed")
    put = None
    if edits:
        # As `revert`: what the change wrote to disk goes back on disk too (a merged disk
        # change: out of the file, and out of the buffer beside the unsaved text).
        result = await apply_workspace_edit(session, types.WorkspaceEdit(changes=edits), ENGINE,
                                            label=f"reject in change {change.id}", expect=expect,
                                            disk_too=not any(old[f.path].in_buffer for f in written))
        put = result.change
        if result.change is not None:  # putting back is no agent's change to sign
            with contextlib.suppress(LsapError):
                await session.gateway.call("presence_reviewed", result.change)
    if created:
        await revert(session, change, created, f"reject in change {change.id}")
    return put
