"""A server's WorkspaceEdit read, before any file is: checked well formed, every file it names
confined to the workspace, walked as ordered steps; several edits merged as one.
"""

from __future__ import annotations

import json
from pathlib import Path

from lsprotocol import types

from ..decode import Step, is_range, typed_steps, walk
from ..errors import ErrorCode, LsapError
from ..jsonvalue import JsonObject
from ..workspace import Workspace, path_of
from .text import NOTHING


def steps_of(edit: object, server: str = "the server") -> list[Step]:
    """A WorkspaceEdit as ordered steps, decoded (`decode.walk`: lsprotocol's types, columns
    still in the server's units), every part of it checked first (`_malformed`): a
    server's garbage is its error, named, before anything is read or planned. One the
    bridge built (`types.WorkspaceEdit`) is its steps as they are."""
    if isinstance(edit, types.WorkspaceEdit):
        return list(typed_steps(edit))
    problem = _malformed(edit)
    if problem or not isinstance(edit, dict):  # _malformed: only a dict is well formed
        raise LsapError(ErrorCode.SERVER_ERROR, f"{server} sent a malformed edit: {problem}",
                        hint=NOTHING + "; report this to the language server")
    return list(walk(edit))


def _malformed(edit: object) -> str | None:
    """What is wrong with a server's WorkspaceEdit, if anything: ranges with negative,
    missing or non-integer positions, edits without text, URIs that are not strings."""
    if not isinstance(edit, dict):
        return "it is not a WorkspaceEdit"

    def text_edits(uri: object, items: object, version: object = None) -> str | None:
        if not isinstance(uri, str) or not uri.startswith("file:"):
            return f"a document URI is not a file URI ({uri!r})"
        if version is not None and (type(version) is not int or version < 0):
            return f"the version of {uri} is not a number ({version!r})"
        if not isinstance(items, list):
            return f"the edits of {uri} are not a list"
        for item in items:
            if not isinstance(item, dict) or not is_range(item.get("range")):
                where = item.get("range") if isinstance(item, dict) else item
                return f"an edit of {uri} has no valid range ({json.dumps(where, default=str)[:120]})"
            text = item.get("newText")
            snippet = item.get("snippet")
            if not isinstance(text, str) and not (isinstance(snippet, dict)
                                                  and isinstance(snippet.get("value"), str)):
                return f"an edit of {uri} has no text ({text!r})"
        return None

    changes, documents = edit.get("changes"), edit.get("documentChanges")
    if documents:
        if not isinstance(documents, list):
            return "documentChanges is not a list"
        for change in documents:
            if not isinstance(change, dict):
                return f"a document change is not an object ({change!r})"
            kind = change.get("kind")
            if kind is None:
                document = change.get("textDocument")
                if not isinstance(document, dict):
                    return "a text document edit names no document"
                problem = text_edits(document.get("uri"), change.get("edits"), document.get("version"))
                if problem:
                    return problem
            elif kind == "rename":
                if not all(isinstance(change.get(k), str) and change[k].startswith("file:")
                           for k in ("oldUri", "newUri")):
                    return "a rename of a file does not name both files"
            elif not isinstance(change.get("uri"), str) or not change["uri"].startswith("file:"):
                return f"a {kind} of a file names no file"
        return None
    if changes is not None and not isinstance(changes, dict):
        return "changes is not an object"
    for uri, items in (changes or {}).items():
        problem = text_edits(uri, items)
        if problem:
            return problem
    return None


def check_edit(workspace: Workspace, edit: object, server: str) -> None:
    """What can be known of a server's edit without reading a file: well formed, every
    file inside the workspace; else the `LsapError` planning it would raise."""
    for step in steps_of(edit, server):
        for uri in step.uris:
            inside(workspace, uri)


def merged(edits: list[JsonObject]) -> object:
    """Several WorkspaceEdits, each on the text the ones before it leave, as one: applied
    whole or not at all, one undo step per buffer (a server command's applyEdits)."""
    if len(edits) == 1:
        return edits[0]
    return types.WorkspaceEdit(document_changes=[step.change() for edit in edits for step in steps_of(edit)])


def inside(workspace: Workspace, uri: str) -> Path:
    """A path of the edit, resolved and confined (the same check as every request's)."""
    path = path_of(uri)
    resolved = path.resolve() if path.exists() else path.parent.resolve() / path.name
    if not workspace.contains(resolved):
        raise LsapError(
            ErrorCode.OUTSIDE_WORKSPACE,
            f"the edit would change {path}, outside the workspace",
            hint="nothing was changed; edits may only touch files under "
            + ", ".join(str(r) for r in workspace.roots),
        )
    return resolved
