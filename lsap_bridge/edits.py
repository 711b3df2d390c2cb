"""Applying an LSP WorkspaceEdit safely: checked first, previewable, all or nothing.

Every edit an agent causes (rename, move, code actions) goes through here, so that the
rules hold in one place: nothing outside the workspace, nothing against a stale buffer,
one undo step per buffer, the human's unsaved work never written behind their back, and
either every file changes or none does. Positions are turned into code points (for the
preview) and byte columns (for `lua/lsap/edits.lua`) using the server's offset encoding.
"""

from __future__ import annotations

import difflib
import itertools
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ErrorCode, LsapError
from .gateway import Client, Document
from .position import Encoding, from_lsp_character
from .session import Session
from .workspace import path_of


@dataclass(frozen=True)
class FileDiff:
    """One file's change as a unified diff (display paths)."""

    path: str
    diff: str
    edits: int
    kind: str = "edit"  # edit | create | rename
    old_path: str | None = None


@dataclass(frozen=True)
class FileChange:
    path: str
    edits: int
    saved: bool  # written to disk; False when the human's unsaved changes kept it in the buffer


@dataclass
class EditResult:
    label: str
    files: list[FileChange] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)

    @property
    def changed(self) -> list[str]:
        return [f.path for f in self.files]

    @property
    def unsaved(self) -> list[str]:
        return [f.path for f in self.files if not f.saved]


@dataclass
class _Plan:
    ops: list[dict[str, Any]]
    diffs: list[FileDiff]
    counts: dict[Path, int]
    created: list[Path]
    renamed: list[tuple[Path, Path]]


def _skip_existing(change: dict[str, Any], what: str) -> bool:
    """A create or rename whose target exists: overwrite it (False), skip the operation
    (`ignoreIfExists`: True), or refuse the whole edit as LSP says."""
    options = change.get("options") or {}
    if options.get("overwrite"):
        return False
    if options.get("ignoreIfExists"):
        return True
    raise LsapError(ErrorCode.CONFLICT, f"{what}, which already exists", hint="nothing was changed")


def _lsp_edits(change: dict[str, Any]) -> list[dict[str, Any]]:
    """TextEdit, AnnotatedTextEdit and SnippetTextEdit all carry a range and new text."""
    out = []
    for item in change.get("edits") or []:
        text = item.get("newText")
        if text is None and isinstance(item.get("snippet"), dict):
            text = item["snippet"].get("value", "")
        out.append({"range": item["range"], "newText": str(text or "")})
    return out


def _steps(edit: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """A WorkspaceEdit as ordered steps: ("edit" | "create" | "rename" | "delete", payload)."""
    if not isinstance(edit, dict):
        raise LsapError(ErrorCode.SERVER_ERROR, "the server's edit is not a WorkspaceEdit")
    if edit.get("documentChanges"):
        steps: list[tuple[str, dict[str, Any]]] = []
        for change in edit["documentChanges"]:
            kind = change.get("kind")
            steps.append((kind, change) if kind else ("edit", change))
        return steps
    return [
        ("edit", {"textDocument": {"uri": uri, "version": None}, "edits": edits})
        for uri, edits in (edit.get("changes") or {}).items()
    ]


def _position(lines: list[str], pos: dict[str, Any], encoding: Encoding) -> tuple[int, int]:
    """(line, code-point column), clamped to the text."""
    line = int(pos["line"])
    if line >= len(lines):
        return len(lines) - 1, len(lines[-1])
    return line, from_lsp_character(lines[line], int(pos["character"]), encoding)


@dataclass(frozen=True)
class _Spliced:
    lines: list[str]
    byte_edits: list[list[Any]]  # [line, byte, end line, end byte, new lines], last first
    append: bool  # an empty line was appended for positions after the final newline
    fix_eol: bool  # a trailing empty line left by the edits is the final newline: drop it


def _splice(
    lines: list[str], edits: list[dict[str, Any]], encoding: Encoding, name: str
) -> _Spliced:
    """Apply text edits to lines, as Neovim's buffer will get them.

    A file's text ends with a newline that is not a line of the buffer: an edit at the line
    after the last one (appending to the file) works on an extra empty line, and a trailing
    empty line left at the end is that final newline again (as in `vim.lsp.util`). An empty
    file ([""]) has no final newline yet, so the same holds for it.
    """
    empty = lines == [""]
    append = not empty and any(
        int(item["range"][end]["line"]) >= len(lines) for item in edits for end in ("start", "end")
    )
    work = [*lines, ""] if append else list(lines)
    spans = []
    for index, item in enumerate(edits):
        start = _position(work, item["range"]["start"], encoding)
        end = _position(work, item["range"]["end"], encoding)
        if end < start:
            raise LsapError(
                ErrorCode.SERVER_ERROR,
                f"the server sent an edit of {name} whose range ends before it starts",
            )
        spans.append((start, end, index, item["newText"].replace("\r\n", "\n")))
    spans.sort(key=lambda s: (s[0], s[1], s[2]))
    for before, after in itertools.pairwise(spans):
        if after[0] < before[1]:
            raise LsapError(
                ErrorCode.SERVER_ERROR,
                f"the server sent overlapping edits of {name}",
                hint="nothing was changed; report this to the language server",
            )
    byte_edits = []
    for (sl, sc), (el, ec), _index, text in reversed(spans):
        byte_edits.append(
            [sl, len(work[sl][:sc].encode()), el, len(work[el][:ec].encode()), text.split("\n")]
        )
        work[sl : el + 1] = (work[sl][:sc] + text + work[el][ec:]).split("\n")
    fix_eol = append or empty
    if fix_eol and len(work) > 1 and work[-1] == "":
        work.pop()
    return _Spliced(work, byte_edits, append, fix_eol)


def _replaces_all(edits: list[dict[str, Any]], lines: list[str]) -> bool:
    """Whether one edit rewrites (about) the whole text, as jedi's renames do from the file on
    disk. It starts at the top and reaches the last line or beyond: a text with lines the
    server did not know (the human's) ends its range early, on the buffer's last line."""
    for item in edits:
        start, end = item["range"]["start"], item["range"]["end"]
        if (start["line"], start["character"]) == (0, 0) and end["line"] >= len(lines) - 1 > 0:
            return True
    return False


def _writable(path: Path) -> bool:
    """Whether the file (or, for a new file, its nearest existing directory) can be written."""
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return os.access(probe, os.W_OK)


def _diff(name: str, old: list[str], new: list[str], old_name: str | None = None) -> str:
    lines = difflib.unified_diff(old, new, f"a/{old_name or name}", f"b/{name}", lineterm="", n=1)
    return "\n".join(lines)


class _Files:
    """The text of every file the edit touches, as it will be after each step."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.text: dict[Path, list[str]] = {}
        self.original: dict[Path, list[str]] = {}
        self.docs: dict[Path, Document] = {}

    def inside(self, uri: str) -> Path:
        path = path_of(uri)
        resolved = path.resolve() if path.exists() else path.parent.resolve() / path.name
        if not self.session.workspace.contains(resolved):
            raise LsapError(
                ErrorCode.OUTSIDE_WORKSPACE,
                f"the edit would change {path}, outside the workspace",
                hint="nothing was changed; edits may only touch files under "
                + ", ".join(str(r) for r in self.session.workspace.roots),
            )
        return resolved

    async def load(self, paths: list[Path]) -> None:
        on_disk = [p for p in dict.fromkeys(paths) if p not in self.text and p.is_file()]
        self.docs.update(await self.session.documents(on_disk))
        for path in on_disk:
            self.text[path] = list(self.docs[path].lines)
            self.original[path] = list(self.docs[path].lines)


async def _plan(session: Session, edit: dict[str, Any], client: Client) -> _Plan:
    """Check the whole edit before anything changes, and compute the new texts."""
    files = _Files(session)
    steps = _steps(edit)
    paths: list[Path] = []
    for kind, change in steps:
        if kind == "edit":
            paths.append(files.inside(change["textDocument"]["uri"]))
        elif kind in ("create", "delete"):
            paths.append(files.inside(change["uri"]))
        elif kind == "rename":
            paths += [files.inside(change["oldUri"]), files.inside(change["newUri"])]
    await files.load(paths)

    display = session.workspace.display
    ops: list[dict[str, Any]] = []
    counts: dict[Path, int] = {}
    created: list[Path] = []
    renamed: list[tuple[Path, Path]] = []
    renamed_from: dict[Path, Path] = {}
    for kind, change in steps:
        if kind == "edit":
            path = files.inside(change["textDocument"]["uri"])
            if path not in files.text:
                raise LsapError(
                    ErrorCode.CONFLICT,
                    f"the edit changes {display(path)}, which does not exist",
                    hint="nothing was changed; ask again once the file exists",
                )
            doc = files.docs.get(path)
            version = change["textDocument"].get("version")
            tick = int(doc.version.split(":")[1]) if doc and doc.bufnr is not None else None
            if (
                version
                and tick is not None
                and path not in renamed_from.values()
                and tick > int(version)
            ):
                raise LsapError(
                    ErrorCode.CONFLICT,
                    f"{display(path)} changed after the server computed the edit",
                    hint="nothing was changed; ask again",
                )
            lsp = _lsp_edits(change)
            if doc is not None and doc.modified and _replaces_all(lsp, files.text[path]):
                raise LsapError(
                    ErrorCode.CONFLICT,
                    f"{client.name} would replace all of {display(path)}, which has unsaved "
                    "changes: a whole-file replacement may be based on the saved file and lose "
                    "them",
                    hint="nothing was changed; save (or undo) that buffer's changes and ask again",
                )
            spliced = _splice(files.text[path], lsp, session.encoding(client), display(path))
            files.text[path] = spliced.lines
            # The buffer must still be at the version read here when Lua applies the first step.
            first = path not in counts and path not in created and path not in renamed_from.values()
            counts[path] = counts.get(path, 0) + len(lsp)
            ops.append(
                {
                    "kind": "edit",
                    "path": str(path),
                    "edits": spliced.byte_edits,
                    "append": spliced.append,
                    "fix_eol": spliced.fix_eol,
                    "tick": tick if first else None,
                }
            )
        elif kind == "create":
            path = files.inside(change["uri"])
            if path in files.text and _skip_existing(change, f"the edit creates {display(path)}"):
                continue
            files.text[path] = [""]
            created.append(path)
            ops.append({"kind": "create", "path": str(path)})
        elif kind == "rename":
            old, new = files.inside(change["oldUri"]), files.inside(change["newUri"])
            if new in files.text and _skip_existing(change, f"the edit renames onto {display(new)}"):
                continue
            if old not in files.text:
                raise LsapError(
                    ErrorCode.CONFLICT, f"the edit renames {display(old)}, which does not exist"
                )
            files.text[new] = files.text.pop(old)
            files.original[new] = files.original.pop(old)
            renamed.append((old, new))
            renamed_from[old] = new
            ops.append({"kind": "rename", "old": str(old), "path": str(new)})
        else:
            raise LsapError(
                ErrorCode.UNSUPPORTED,
                f"the edit would {kind} a file, which the bridge does not do",
                hint="nothing was changed; make that change by hand",
            )

    touched = [
        p for p in dict.fromkeys(paths) if p in counts or p in created or p in renamed_from.values()
    ]
    for path in dict.fromkeys([*touched, *renamed_from]):
        if not _writable(path):
            raise LsapError(
                ErrorCode.DENIED,
                f"{display(path)} cannot be written",
                hint="nothing was changed; make the file writable and ask again",
            )

    old_name = {new: old for old, new in renamed}
    diffs = []
    for path in touched:
        original = files.original.get(path, [])
        before = old_name.get(path)
        diffs.append(
            FileDiff(
                path=display(path),
                diff=_diff(
                    display(path), original, files.text[path], display(before) if before else None
                ),
                edits=counts.get(path, 0),
                kind="create" if path in created else "rename" if before else "edit",
                old_path=display(before) if before else None,
            )
        )
    return _Plan(ops, diffs, counts, created, renamed)


async def preview(session: Session, edit: dict[str, Any], client: Client) -> list[FileDiff]:
    """The diff each file would get, without changing anything."""
    return (await _plan(session, edit, client)).diffs


def preview_text(diffs: list[FileDiff]) -> str:
    return "\n".join(d.diff for d in diffs if d.diff)


async def apply_workspace_edit(
    session: Session, edit: dict[str, Any], client: Client, *, label: str
) -> EditResult:
    """Check, ask the edit policy, then apply every file's edits or none of them."""
    plan = await _plan(session, edit, client)
    if not plan.ops:
        return EditResult(label)
    edits, files = sum(plan.counts.values()), len(plan.diffs)
    summary = f"{label}: {edits} edit{'s' if edits != 1 else ''} in {files} file" + (
        "s" if files != 1 else ""
    )
    if not await session.approve_edit(summary, preview_text(plan.diffs)):
        raise LsapError(
            ErrorCode.DENIED,
            f"the edit was not approved ({summary})",
            hint="the editor's edit policy refused it; nothing was changed",
        )
    outcome = await session.gateway.apply_edits(plan.ops)
    if outcome.get("busy"):
        raise LsapError(
            ErrorCode.CONFLICT,
            f"{label} was not applied: {outcome.get('error')}",
            hint="nothing was changed; ask again once the human has left Insert mode",
        )
    if not outcome.get("ok"):
        problems = outcome.get("rollback") or []
        raise LsapError(
            ErrorCode.CONFLICT if not problems else ErrorCode.SERVER_ERROR,
            f"applying {label} failed: {outcome.get('error')}; "
            + (
                "every change was rolled back"
                if not problems
                else "rolling back failed for: " + "; ".join(problems)
            ),
            hint="fix the cause (e.g. make the file writable) and ask again",
        )
    saved = {Path(p): bool(v.get("saved")) for p, v in (outcome.get("files") or {}).items()}
    display = session.workspace.display
    return EditResult(
        label,
        files=[FileChange(display(p), n, saved.get(p, True)) for p, n in plan.counts.items()],
        created=[display(p) for p in plan.created],
        renamed=[(display(a), display(b)) for a, b in plan.renamed],
    )
