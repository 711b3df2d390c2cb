"""A rename computed and kept: the server asked whether it renames at the anchor
(`prepareRename`), then for the edit and, to check it, the symbol's uses (`_compute`); a
previewed one kept on the session until `rename_execute` applies it (`keep`, `kept`); an
edit minus the files a request excludes (`without`)."""

from __future__ import annotations

import asyncio
import fnmatch
import hashlib
import json

from cachetools import LRUCache
from lsprotocol import types

from ...edits.workspace_edit import steps_of
from ...errors import ErrorCode, LsapError
from ...gateway import LspCall
from ...identifiers import check_new_name, declined
from ...jsonvalue import JsonObject, Params
from ...report.pieces import word_at
from ...resolve import Resolved, resolve
from ...session.targets import Target
from ...session.warm import Session
from ...surface import phrase
from ...workspace import path_of
from .coverage import _uncovered, _uses, named_elsewhere
from .models import METHOD, PREPARE, PendingRename, RenamePreviewRequest, RenameRequest

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


def _excluded(display: str, patterns: list[str]) -> bool:
    return any(
        fnmatch.fnmatchcase(display, p) or display.startswith(p.rstrip("/") + "/") for p in patterns
    )


def _uris(edit: JsonObject, server: str) -> list[str]:
    """Every file the edit names, in its order (a malformed edit is the server's error)."""
    return list(dict.fromkeys(uri for step in steps_of(edit, server) for uri in step.uris))


def without(
    edit: JsonObject, session: Session, patterns: list[str], server: str
) -> tuple[JsonObject | types.WorkspaceEdit, list[str]]:
    """The edit minus the files matching `patterns`, and the display paths left out."""
    if not patterns:
        return edit, []

    def dropped(uri: str) -> bool:
        return _excluded(session.workspace.display(path_of(uri)), patterns)

    left_out = sorted({session.workspace.display(path_of(u)) for u in _uris(edit, server) if dropped(u)})
    kept = [step.change() for step in steps_of(edit, server) if not any(dropped(u) for u in step.uris)]
    return types.WorkspaceEdit(document_changes=kept), left_out


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
    paths = [path_of(u) for u in _uris(edit, target.client.name)]
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


async def _refusal(session: Session, target: Target, params: Params) -> str | None:
    """Why the server will not rename at this position: prepareRename answered null (""),
    or an error that says why (typescript-language-server's "You cannot rename elements
    that are defined in the standard TypeScript library"); None: it will."""
    [answer] = await session.servers.lsp([LspCall(target.client.id, PREPARE, params, target.bufnr)], target)
    if answer.error:
        return str(answer.error.get("message", answer.error))
    return "" if answer.result is None else None
