"""Applying an LSP WorkspaceEdit safely: checked first, previewable, all or nothing.

Every edit an agent causes (rename, move, code actions) goes through here, so that the
rules hold in one place: nothing outside the workspace, no write without proof, one undo
step per buffer, the human's unsaved work never written behind their back, and either
every file changes or none does, a crash included.

No write without proof: the plan records what each file was when the edit was computed
(the buffer's changedtick, the disk's stamp and content hash; a loaded buffer must hold
what is on disk), and right before anything changes every target is checked again (after
an `ask` approval, however long it took): the same real path inside the workspace, the
same content, writable in place. Then every new content is written beside its file
through a journal (`journal.py`), and Neovim switches files and buffers in one
main-loop call that checks the ticks and stamps once more (`lua/lsap/edits.lua`).

Who writes: the service writes the new contents (temporary files, fsynced, off Neovim's
main loop) and the journal; Neovim renames them into place for files no buffer holds, and
writes loaded buffers itself once they took the edits, so that each ends unmodified, in
step with its file, and its servers saw an ordinary change.

Positions are turned into code points (for the preview and the disk's text) and byte
columns (for the buffers) using the server's offset encoding.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import difflib
import itertools
import json
import os
import re
import stat as stat_module
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import changes
from .decode import Step, is_range, walk
from .diskwatch import Basis
from .errors import ErrorCode, LsapError
from .filestate import DiskStamp, Snapshot, content_hash, snapshot
from .gateway import Client, Editor
from .journal import Change, Journal, Recovery, recover
from .lsp import PositionData, TextEditData
from .position import Document, Encoding, from_lsp_character
from .session import Doubt, Session
from .surface import APPLIED
from .workspace import Workspace, path_of, size_text

NOTHING = "nothing was changed"
_LINE_BREAK = re.compile(r"(\r\n|\r|\n)")


@dataclass(frozen=True)
class FileDiff:
    """One file's change as a unified diff (display paths)."""

    path: str
    diff: str
    edits: int
    kind: str = "edit"  # edit | create | rename
    old_path: str | None = None
    overwritten: int | None = None  # lines of the existing file a consented overwrite replaces


@dataclass(frozen=True)
class FileChange:
    path: str
    edits: int
    saved: bool  # written to disk; False when the human's unsaved changes kept it in the buffer
    # Not saved: the file on disk was left alone, and holds other text than the buffer now.
    disk_differs: bool = False
    added: int = 0  # lines, from the text planned on to the text written
    removed: int = 0
    # Saved to disk, and its buffer, which holds the human's unsaved changes, has it too.
    beside_unsaved: bool = False


@dataclass
class EditResult:
    label: str
    files: list[FileChange] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)
    # Existing files a consented overwrite replaced whole, with the lines each held.
    overwritten: list[tuple[str, int]] = field(default_factory=list)
    change: str | None = None  # the change set that records it (`changes.py`)

    @property
    def changed(self) -> list[str]:
        return [f.path for f in self.files]

    @property
    def unsaved(self) -> list[str]:
        return [f.path for f in self.files if not f.saved]


def _skip_existing(change: dict[str, Any], what: str, consent: bool) -> bool:
    """A create or rename whose target exists: skipped (`ignoreIfExists`, True), replacing
    it (LSP's `overwrite`, False) only with the request's own consent (`overwrite: true`),
    else refused whole: what the file held would be gone, so the agent must mean it (the
    report then says so, and the change set keeps the old text for `undo`)."""
    options = change.get("options") or {}
    if options.get("overwrite"):  # wins over ignoreIfExists, as LSP says
        if consent:
            return False
        raise LsapError(ErrorCode.CONFLICT, f"{what}, which exists, and would overwrite it",
                        hint=NOTHING + "; if what it holds is to go, ask again with "
                        "`overwrite: true` (the report names it, and `undo` brings it back)")
    if options.get("ignoreIfExists"):
        return True
    raise LsapError(ErrorCode.CONFLICT, f"{what}, which already exists", hint=NOTHING)


def _overwritten(target: _File, what: str) -> list[str]:
    """The text of a file an overwrite replaces (consented to, see `_skip_existing`): on
    disk, proven by its hash like any file the edit writes (`_File.disk`). Not one with
    the human's unsaved changes (they would be lost), nor one this edit itself made or
    moved there; a buffer holding it unmodified is checked in Neovim (`lua/lsap/edits.lua`)."""
    if target.unsaved:
        raise LsapError(ErrorCode.CONFLICT, f"{what}, which has unsaved changes in a buffer",
                        hint=NOTHING + "; save (or undo) that buffer's changes and ask again")
    if target.disk is None or target.origin is not None:
        raise LsapError(ErrorCode.SERVER_ERROR, f"{what}, which the same edit made there",
                        hint=NOTHING + "; report this to the language server")
    if target.doubt:  # the consent was given for what it held when the request began
        raise LsapError(ErrorCode.CONFLICT, f"{what}, which changed on disk since the request began",
                        hint=NOTHING + "; look at it again, and ask again if it is still to go")
    return list(target.original)


def _lsp_edits(edits: list[dict[str, Any]]) -> list[TextEditData]:
    """TextEdit, AnnotatedTextEdit and SnippetTextEdit all carry a range and new text."""
    out: list[TextEditData] = []
    for item in edits:
        text = item.get("newText")
        if text is None and isinstance(item.get("snippet"), dict):
            text = item["snippet"].get("value", "")
        out.append({"range": item["range"], "newText": str(text or "")})
    return out


def _steps(edit: object, server: str = "the server") -> list[Step]:
    """A WorkspaceEdit as ordered steps (`decode.walk`), every part of it checked first
    (`_malformed`): a server's garbage is its error, named, before anything is read or
    planned."""
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
    for step in _steps(edit, server):
        for uri in step.uris:
            _inside(workspace, uri)


def merged(edits: list[dict[str, Any]]) -> dict[str, Any]:
    """Several WorkspaceEdits, each on the text the ones before it leave, as one: applied
    whole or not at all, one undo step per buffer (a server command's applyEdits)."""
    if len(edits) == 1:
        return edits[0]
    changes: list[dict[str, Any]] = []
    for edit in edits:
        changes += [step.change() for step in walk(edit)]
    return {"documentChanges": changes}


def _position(lines: list[str], pos: PositionData, encoding: Encoding) -> tuple[int, int]:
    """(line, code-point column), clamped to the text."""
    line = int(pos["line"])
    if line >= len(lines):
        return len(lines) - 1, len(lines[-1])
    return line, from_lsp_character(lines[line], int(pos["character"]), encoding)


@dataclass(frozen=True)
class _Spliced:
    lines: list[str]
    byte_edits: list[list[int | list[str]]]  # [line, byte, end line, end byte, new lines], last first
    append: bool  # an empty line was appended for positions after the final newline
    fix_eol: bool  # a trailing empty line left by the edits is the final newline: drop it
    breaks: list[str] | None = None  # the line ends of the disk's text, when given


def _splice(
    lines: list[str],
    edits: list[TextEditData],
    encoding: Encoding,
    name: str,
    breaks: list[str] | None = None,
) -> _Spliced:
    """Apply text edits to lines, as Neovim's buffer will get them.

    A file's text ends with a newline that is not a line of the buffer: an edit at the line
    after the last one (appending to the file) works on an extra empty line, and a trailing
    empty line left at the end is that final newline again (as in `vim.lsp.util`). An empty
    file ([""]) has no final newline yet, so the same holds for it.

    `breaks`: each line's end on disk (the last one "" when the file has no final
    newline), kept through the edits so that the file is rewritten byte for byte except
    where it was edited; new line breaks take the file's first kind.
    """
    empty = lines == [""] and (breaks is None or breaks == [""])
    ends_with_newline = breaks is None or breaks[-1] != ""
    append = not empty and ends_with_newline and any(
        int(item["range"][end]["line"]) >= len(lines) for item in edits for end in ("start", "end")
    )
    work = [*lines, ""] if append else list(lines)
    work_breaks = None if breaks is None else [*breaks, ""] if append else list(breaks)
    eol = next((b for b in breaks or [] if b), "\n")
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
    byte_edits: list[list[int | list[str]]] = []
    for (sl, sc), (el, ec), _index, text in reversed(spans):
        byte_edits.append(
            [sl, len(work[sl][:sc].encode()), el, len(work[el][:ec].encode()), text.split("\n")]
        )
        new = (work[sl][:sc] + text + work[el][ec:]).split("\n")
        if work_breaks is not None:
            work_breaks[sl : el + 1] = [eol] * (len(new) - 1) + [work_breaks[el]]
        work[sl : el + 1] = new
    fix_eol = append or empty
    if fix_eol and len(work) > 1 and work[-1] == "":
        work.pop()
        if work_breaks is not None:
            work_breaks.pop()
    if empty and work_breaks is not None and work != [""]:
        work_breaks[-1] = eol  # an empty file's first text ends with a newline, as `:w` does
    return _Spliced(work, byte_edits, append, fix_eol, work_breaks)


def _replaces_all(edits: list[TextEditData], lines: list[str]) -> bool:
    """Whether one edit rewrites (about) the whole text, as jedi's renames do from the file on
    disk. It starts at the top and reaches the last line or beyond: a text with lines the
    server did not know (the human's) ends its range early, on the buffer's last line."""
    for item in edits:
        start, end = item["range"]["start"], item["range"]["end"]
        if (start["line"], start["character"]) == (0, 0) and end["line"] >= len(lines) - 1 > 0:
            return True
    return False


def _minimal(file_lines: list[str], breaks: list[str] | None, lsp: list[TextEditData],
             encoding: Encoding, name: str) -> list[TextEditData] | None:
    """A whole-file replacement as the few edits that make the same text (code-point
    columns): the lines it keeps are not rewritten, so what it would put back unchanged
    cannot overwrite a change made meanwhile, and the old-name check sees each change.
    None when the replacement changes the file's final newline (kept whole then)."""
    whole = _splice(file_lines, lsp, encoding, name, breaks)
    if breaks is not None and whole.breaks is not None and (breaks[-1] == "") != (whole.breaks[-1] == ""):
        return None
    new, last = whole.lines, len(file_lines)
    out: list[TextEditData] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, file_lines, new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if i2 < last:  # whole lines, each with its line end
            start, end, text = (i1, 0), (i2, 0), "".join(line + "\n" for line in new[j1:j2])
        elif i1 < i2:  # up to the end of the last line, whose line end stays
            start, end = (i1, 0), (last - 1, len(file_lines[-1]))
            text = "\n".join(new[j1:j2])
            if j1 == j2 and i1 > 0:  # the last lines go, with the line end before them
                start = (i1 - 1, len(file_lines[i1 - 1]))
        else:  # lines added after the last one
            start = end = (last - 1, len(file_lines[-1]))
            text = "".join("\n" + line for line in new[j1:j2])
        out.append({"range": {"start": {"line": start[0], "character": start[1]},
                              "end": {"line": end[0], "character": end[1]}}, "newText": text})
    if _splice(file_lines, out, "utf-32", name, breaks).lines != new:
        return None  # never expected; the whole replacement is then applied as sent
    return out


def unwritable(path: Path, stat: os.stat_result | None = None) -> str | None:
    """Why the bridge may not replace `path` with a new file of the same content, if so.

    Replacing (write beside, then rename over) must change nothing but the content: the
    file must be writable by this user as it is (a read-only file stays read-only, for
    root too), keep its owner, and have no other hard links (which would keep the old
    content under another name). A new file needs a writable directory.
    """
    if stat is None:
        try:
            stat = os.stat(path)
        except FileNotFoundError:
            stat = None
    if stat is None:
        probe = path.parent
        while not probe.exists() and probe != probe.parent:
            probe = probe.parent
        return None if os.access(probe, os.W_OK | os.X_OK) else f"its directory {probe} is not writable"
    mode = stat_module.S_IMODE(stat.st_mode)
    if not mode & 0o222:
        return f"it is read-only (mode {mode:04o})"
    if not os.access(path, os.W_OK):
        return f"this user may not write it (mode {mode:04o}, or an immutable flag)"
    if stat.st_uid != os.geteuid() and os.geteuid() != 0:
        return f"it belongs to another user (uid {stat.st_uid}), and a new file would be yours"
    if stat.st_nlink > 1:
        return f"it has {stat.st_nlink} hard links, which would keep the old content"
    if not os.access(path.parent, os.W_OK | os.X_OK):
        return f"its directory {path.parent} is not writable"
    return None


def _diff(name: str, old: list[str], new: list[str], old_name: str | None = None) -> str:
    lines = difflib.unified_diff(old, new, f"a/{old_name or name}", f"b/{name}", lineterm="", n=1)
    return "\n".join(lines)


def _decode(disk: Snapshot, name: str) -> tuple[list[str], list[str], bytes]:
    """A file's lines as a language server counts them (\\r\\n, \\r and \\n end a line), each
    line's end, and its byte-order mark; only UTF-8 text is edited on disk."""
    data = disk.data
    bom = codecs.BOM_UTF8 if data.startswith(codecs.BOM_UTF8) else b""
    try:
        text = data[len(bom):].decode("utf-8")
    except UnicodeDecodeError:
        raise LsapError(
            ErrorCode.UNSUPPORTED,
            f"{name} is not UTF-8 text, which the bridge does not rewrite on disk",
            hint="nothing was changed; make this change in Neovim, or by hand",
        ) from None
    parts = _LINE_BREAK.split(text)
    lines, breaks = parts[0::2], [*parts[1::2], ""]
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
        breaks.pop()
    return lines, breaks, bom


@dataclass
class _Disk:
    """What the disk holds under a buffer with the human's unsaved changes, as the edit's
    steps so far leave it: the edit is rebased onto it (`_rebased`) and written there
    too, so that the project on disk never holds half an edit, while the human's unsaved
    text stays in the buffer alone."""

    lines: list[str]
    breaks: list[str]
    bom: bytes

    def new_bytes(self) -> bytes:
        return self.bom + "".join(a + b for a, b in zip(self.lines, self.breaks, strict=True)).encode()


@dataclass
class _File:
    """One path the edit touches: what it was when planned, and what it is to become."""

    path: Path
    disk: Snapshot | None  # the file on disk when planned (None: there was none)
    doc: Document | None  # its loaded buffer when planned (None: not loaded)
    lines: list[str]  # the text as the steps so far leave it
    breaks: list[str] | None  # the disk text's line ends (None: the edit stays in the buffer)
    bom: bytes = b""
    original: list[str] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)  # the buffer's edits, in order
    edits: int = 0
    origin: Path | None = None  # renamed from
    created: bool = False
    # Why the disk may not be what the server computed the edit on (see `_proven`), if so.
    doubt: str | None = None
    # The text of the file this one replaces whole (a consented `overwrite`), if so.
    overwrote: list[str] | None = None
    # The disk's side of a buffer with the human's unsaved changes, which the edit changes
    # too (`apply_workspace_edit`'s `disk_too`); None: the edit stays in that buffer.
    under: _Disk | None = None

    @property
    def unsaved(self) -> bool:
        """The human has unsaved changes in its buffer."""
        return self.doc is not None and self.doc.modified

    @property
    def buffer_only(self) -> bool:
        """The edit goes into the buffer with the human's unsaved changes, not the disk."""
        return self.unsaved and self.under is None

    @property
    def tick(self) -> int | None:
        return int(self.doc.version[5:]) if self.doc is not None else None

    @property
    def heard(self) -> int | None:
        """The buffer's version as its servers know it, which an edit's version names."""
        return self.doc.sent if self.doc is not None and self.doc.sent is not None else self.tick

    def new_bytes(self) -> bytes:
        if self.under is not None:
            return self.under.new_bytes()
        assert self.breaks is not None
        return _Disk(self.lines, self.breaks, self.bom).new_bytes()



def _loaded(doc: Document) -> bool:
    return doc.bufnr is not None and doc.version.startswith("tick:")


async def _load(session: Session, paths: list[Path], basis: Basis | None,
                server: str, disk_too: bool = False) -> dict[Path, _File]:
    """Every existing file's buffer (if loaded) and disk content, checked to agree; a file
    no buffer holds (the server read it from disk) must be proven by `basis` to be what it
    was when the request began. `disk_too`: a buffer with unsaved changes keeps its disk's
    text beside it (`_File.under`), to be edited too."""
    wanted = list(dict.fromkeys(paths))
    existing = [p for p in wanted if p.is_file()]
    docs = await session.texts.documents(existing)
    disks = await asyncio.to_thread(lambda: {p: snapshot(p) for p in wanted})
    display = session.workspace.display
    files: dict[Path, _File] = {}
    for path in existing:
        doc, disk = docs[path], disks.get(path)
        buffer = doc if _loaded(doc) else None
        if buffer is not None and buffer.modified:
            files[path] = _File(path, disk, buffer, list(buffer.lines), None)
            if disk_too and disk is not None:
                files[path].under = _Disk(*_decode(disk, display(path)))
            continue
        if disk is None:
            raise LsapError(ErrorCode.CONFLICT, f"{display(path)} is gone from the disk", hint=NOTHING)
        lines, breaks, bom = _decode(disk, display(path))
        if buffer is not None and buffer.lines != lines:
            raise LsapError(
                ErrorCode.CONFLICT,
                f"the buffer of {display(path)} does not hold what is on disk: the file "
                "changed on disk since it was loaded, and the edit was computed on the old text",
                hint=NOTHING + "; ask again, on the text now on disk",
            )
        files[path] = _File(path, disk, buffer, lines, breaks, bom)
        doubt = basis.doubt(path, disk, buffer is not None) if basis is not None else None
        if doubt:
            files[path].doubt = (f"{display(path)} may not be the text {server} computed the "
                                 f"edit on: {doubt}")
    for file in files.values():
        file.original = list(file.lines)
    return files


def _proven(file: _File, version: int | None) -> None:
    """A file the edit changes must be the text the server computed it on: a loaded buffer
    at the version the edit names, else (the server may have read the disk) the file as it
    was when the request began (`_File.doubt`)."""
    if file.doubt and not (version is not None and file.heard is not None):
        raise LsapError(ErrorCode.CONFLICT, file.doubt,
                        hint=NOTHING + "; ask again: the server then computes it on the text "
                        "now on disk")


def _inside(workspace: Workspace, uri: str) -> Path:
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


@dataclass
class _Plan:
    files: list[_File]  # every file that ends up changed, in the edit's order
    removed: list[_File]  # files renamed away
    diffs: list[FileDiff]

    @property
    def on_disk(self) -> list[_File]:
        return [f for f in [*self.files, *self.removed] if not f.buffer_only]


def _check_replaced(lines: list[str], edits: list[TextEditData], replaces: str,
                    encoding: Encoding, name: str, new_name: str | None = None) -> None:
    """A rename's edits each replace the old name: one that would replace other text was
    computed on another text than this (the file changed since the server read it).
    Whole-file replacements come here as their minimal edits (`_minimal`), with the
    `new_name`: each must be the text it replaces with some of the old name's tokens made
    the new one, and nothing else (`_renamed`): a line the text holds and the server's did
    not (a write the server did not read: jedi's parse cache keeps a file by its mtime)
    would otherwise be reverted unseen, in a hunk that also holds the name."""
    for item in edits:
        start, end = item["range"]["start"], item["range"]["end"]
        (sl, sc), (el, ec) = _position(lines, start, encoding), _position(lines, end, encoding)
        found = lines[sl][sc:] + "".join("\n" + lines[i] for i in range(sl + 1, el + 1)) \
            if el > sl else lines[sl][sc:ec]
        if el > sl:
            found = found[:len(found) - (len(lines[el]) - ec)]
        held = _holds_name(found, replaces)
        if not held or (new_name is not None
                        and not _renamed(found, item["newText"].replace("\r\n", "\n"), replaces, new_name)):
            shown = found if len(found) <= 60 and "\n" not in found else found[:57].replace("\n", "⏎") + "…"
            raise LsapError(
                ErrorCode.CONFLICT,
                f"the edit of {name} at {sl + 1}:{sc + 1} would replace `{shown}`, not "
                f"{'just ' if held else ''}`{replaces}`: the file changed since the server read it",
                hint=NOTHING + "; ask again once the server has seen the file as it is now",
            )


def _rebased(buffer: list[str], disk: list[str], edits: list[TextEditData], name: str,
             replaces: str | None) -> list[TextEditData]:
    """A buffer's edits on the text of its file on disk, which lacks the human's unsaved
    changes: each edit's lines must be lines the two share, and move to where the disk
    has them (the same text, so the same columns in any encoding). Refused: an edit that
    touches a line the human changed (what it should change on disk is the human's to
    say), and a rename that would leave the old name in lines only the disk holds."""
    end = "\n"  # no line holds it: where both texts end, when their last lines are shared
    matcher = difflib.SequenceMatcher(None, [*disk, end], [*buffer, end], autojunk=False)
    blocks = [b for b in matcher.get_matching_blocks() if b.size]
    shared = {line for b in blocks for line in range(b.a, b.a + b.size)}
    out: list[TextEditData] = []
    for item in edits:
        start, stop = (min(int(item["range"][k]["line"]), len(buffer)) for k in ("start", "end"))
        block = next((b for b in blocks if b.b <= start and stop < b.b + b.size), None)
        if block is None and item["range"]["end"]["character"] == 0 and (
                stop > start or item["range"]["start"]["character"] == 0):
            # Whole lines (or lines put in before line `stop`): line `stop` is not touched,
            # and may be the human's; the lines before it are shared (or, put in, the one above).
            block = next((b for b in blocks if b.b <= start - (stop == start) and stop == b.b + b.size), None)
        if block is None:
            raise LsapError(
                ErrorCode.CONFLICT,
                f"the edit of {name} at line {start + 1} touches lines with unsaved changes in "
                "its buffer, which the file on disk does not have: it cannot be made on disk "
                "as well, and the disk must not be left with half of it",
                hint=NOTHING + "; save (or undo) that buffer's changes and ask again")
        shift, (first, last) = block.a - block.b, (item["range"]["start"], item["range"]["end"])
        out.append({"range": {"start": {"line": start + shift, "character": first["character"]},
                              "end": {"line": stop + shift, "character": last["character"]}},
                    "newText": item["newText"]})
    for line, text in enumerate(disk):
        if replaces is not None and line not in shared and _holds_name(text, replaces):
            raise LsapError(
                ErrorCode.CONFLICT,
                f"{name} on disk holds `{replaces}` at line {line + 1}, a line its buffer (with "
                "unsaved changes) does not have: the edit, computed on the buffer, would leave it there",
                hint=NOTHING + "; save (or undo) that buffer's changes and ask again")
    return out


def _token(name: str) -> re.Pattern[str]:
    """The name as a whole token: not `f` within `def` or `fetch`."""
    return re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")


def _renamed(old: str, new: str, name: str, new_name: str) -> bool:
    """Whether `new` is `old` with some of its `name` tokens made `new_name`, and nothing
    else changed (a server may leave the name in a comment or a string alone)."""
    parts = _token(name).split(old)
    either = f"(?:{re.escape(name)}|{re.escape(new_name)})"
    return re.fullmatch(either.join(re.escape(part) for part in parts), new, re.DOTALL) is not None


def _holds_name(text: str, name: str) -> bool:
    """Whether the replaced text holds the name as a whole token: an edit of `f` that
    would replace `def` or `fetch` was computed on other text."""
    return _token(name).search(text) is not None


def _deleted(files: dict[Path, _File], order: dict[Path, _File], removed: list[_File], path: Path,
             name: str, change: dict[str, Any]) -> None:
    """A delete of the edit (an undo's of a file its change created): the file as planned on,
    proven like every file the edit writes, goes; not one with the human's unsaved text."""
    file = files.pop(path, None)
    if file is None:
        if (change.get("options") or {}).get("ignoreIfNotExists"):
            return
        raise LsapError(ErrorCode.CONFLICT, f"the edit deletes {name}, which does not exist", hint=NOTHING)
    if file.buffer_only or path in order or file.origin is not None or file.disk is None:
        raise LsapError(ErrorCode.CONFLICT, f"the edit deletes {name}, which has unsaved changes or "
                        "is changed by the same edit", hint=NOTHING + "; save (or undo) that buffer and ask again")
    _proven(file, None)
    removed.append(_File(path, file.disk, None, [], None))


async def _plan(session: Session, edit: dict[str, Any], client: Client,
                replaces: str | None = None, basis: Basis | None = None,
                expect: Mapping[Path, list[str]] | None = None, overwrite: bool = False,
                disk_too: bool = False, new_name: str | None = None) -> _Plan:
    """Check the whole edit before anything changes, and compute the new texts.

    `replaces`: the text each edit replaces (a rename's old name), checked against the
    text planned on. `basis`: what the files were when the edit's computation began
    (default: when this request began). `expect`: the whole text some files must hold (an
    undo's "after"). `overwrite`: the request consents to resource operations replacing
    existing files (`_skip_existing`). `disk_too`: see `apply_workspace_edit`. `new_name`:
    a rename's, which a whole-file replacement may put in place of `replaces` alone."""
    def inside(uri: str) -> Path:
        return _inside(session.workspace, uri)

    steps = _steps(edit, client.name)
    paths: list[Path] = []
    for step in steps:
        if step.kind in ("edit", "create", "delete", "rename"):
            paths += [inside(uri) for uri in step.uris]
    files = await _load(session, paths, basis or session.texts.basis(), client.name, disk_too)
    display = session.workspace.display
    differ = [display(p) for p, lines in (expect or {}).items() if p not in files or files[p].lines != lines]
    if differ:
        raise LsapError(ErrorCode.CONFLICT, f"{', '.join(differ)} changed while the edit was planned",
                        hint=NOTHING + "; ask again")
    order: dict[Path, _File] = {}  # files that end up changed
    removed: list[_File] = []
    for step in steps:
        kind, change = step.kind, step.op or {}
        if kind == "edit":
            path = inside(step.uri)
            file = files.get(path)
            if file is None:
                raise LsapError(
                    ErrorCode.CONFLICT,
                    f"the edit changes {display(path)}, which does not exist",
                    hint="nothing was changed; ask again once the file exists",
                )
            version = step.version
            if file.origin is None:
                _proven(file, version)
            if version and file.heard is not None and file.origin is None and file.heard > int(version):
                raise LsapError(
                    ErrorCode.CONFLICT,
                    f"{display(path)} changed after the server computed the edit",
                    hint="nothing was changed; ask again",
                )
            lsp = _lsp_edits(step.edits)
            if file.unsaved and _replaces_all(lsp, file.lines):
                raise LsapError(
                    ErrorCode.CONFLICT,
                    f"{client.name} would replace all of {display(path)}, which has unsaved "
                    "changes: a whole-file replacement may be based on the saved file and lose "
                    "them",
                    hint="nothing was changed; save (or undo) that buffer's changes and ask again",
                )
            encoding = session.servers.encoding(client)
            whole = _replaces_all(lsp, file.lines)
            if whole:
                fewer = _minimal(file.lines, file.breaks, lsp, encoding, display(path))
                if fewer is not None:
                    lsp, encoding = fewer, "utf-32"
            if replaces is not None:
                _check_replaced(file.lines, lsp, replaces, encoding, display(path), new_name if whole else None)
            if file.under is not None:  # the same edit on disk, where the human's changes are not
                under = _splice(file.under.lines, _rebased(file.lines, file.under.lines, lsp, display(path),
                                                           replaces), encoding, display(path), file.under.breaks)
                assert under.breaks is not None
                file.under.lines, file.under.breaks = under.lines, under.breaks
            spliced = _splice(file.lines, lsp, encoding, display(path), file.breaks)
            file.lines, file.breaks = spliced.lines, spliced.breaks
            file.steps.append(
                {"edits": spliced.byte_edits, "append": spliced.append, "fix_eol": spliced.fix_eol}
            )
            file.edits += len(lsp)
            order.setdefault(path, file)
        elif kind == "create":
            path = inside(step.uri)
            what = f"the edit creates {display(path)}"
            if path in files and _skip_existing(change, what, overwrite):
                continue
            held = _overwritten(files[path], what) if path in files else None
            files[path] = order[path] = _File(path, files[path].disk if held is not None else None,
                                              None, [""], [""], original=held or [],
                                              created=held is None, overwrote=held)
        elif kind == "rename":
            old, new = (inside(uri) for uri in step.uris)
            what = f"the edit renames {display(old)} onto {display(new)}"
            if new in files and _skip_existing(change, what, overwrite):
                continue
            held = _overwritten(files[new], what) if new in files else None
            file = files.pop(old, None)
            if file is None:
                raise LsapError(
                    ErrorCode.CONFLICT, f"the edit renames {display(old)}, which does not exist",
                    hint=NOTHING,
                )
            if file.unsaved or (new in files and files[new].unsaved):
                raise LsapError(
                    ErrorCode.CONFLICT,
                    f"the edit renames {display(old)} onto {display(new)}, and a buffer of them "
                    "has unsaved changes",
                    hint="nothing was changed; save (or undo) that buffer's changes and ask again",
                )
            if file.origin is None and not file.created:
                _proven(file, None)  # its content moves: it must be what the server saw
            order.pop(old, None)
            if file.origin is None and file.disk is not None:
                removed.append(_File(old, file.disk, None, [], None))
            # The new path held nothing, or what an overwrite replaces (proven by its hash).
            file.disk = files[new].disk if held is not None else None
            file.overwrote = held
            file.path, file.origin = new, file.origin or old
            files[new] = order[new] = file
        elif kind == "delete":
            path = inside(step.uri)
            _deleted(files, order, removed, path, display(path), change)
        else:
            raise LsapError(
                ErrorCode.UNSUPPORTED,
                f"the edit would {kind} a file, which the bridge does not do",
                hint="nothing was changed; make that change by hand",
            )
    changed = [f for f in order.values() if f.lines != f.original or f.created or f.origin]
    plan = _Plan(changed, removed, [])
    limit = session.gateway.max_file_size
    for file in plan.files:
        written = file.breaks is not None or file.under is not None
        size = len(file.new_bytes()) if written else len("\n".join(file.lines))
        if size > limit:  # never written, then refused by every request about it
            raise LsapError(
                ErrorCode.INVALID_REQUEST,
                f"the edit would make {display(file.path)} {size_text(size)}, over the "
                f"{size_text(limit)} limit for files opened for language servers (option "
                "`max_file_size`)",
                hint=NOTHING + "; raise `max_file_size` (bytes) in require('lsap').setup() if "
                "the file is meant to be this large",
            )
    for file in plan.on_disk:
        problem = unwritable(file.path)
        if problem:
            raise LsapError(
                ErrorCode.DENIED,
                f"{display(file.path)} cannot be written: {problem}",
                hint="nothing was changed; make the file writable and ask again",
            )
    for file in changed:
        before = display(file.origin) if file.origin else None
        diff = _diff(display(file.path), file.original, file.lines, before)
        if before and file.overwrote is not None:  # what the file renamed onto held goes
            diff = _diff(display(file.path), file.overwrote, []) + "\n" + diff
        plan.diffs.append(
            FileDiff(
                path=display(file.path),
                diff=diff,
                edits=file.edits,
                kind="create" if file.created else "rename" if before else "edit",
                old_path=before,
                overwritten=None if file.overwrote is None else len(file.overwrote),
            )
        )
    return plan


async def preview(session: Session, edit: dict[str, Any], client: Client,
                  replaces: str | None = None, basis: Basis | None = None,
                  overwrite: bool = False, disk_too: bool = False,
                  new_name: str | None = None) -> list[FileDiff]:
    """The diff each file would get, without changing anything."""
    return (await _plan(session, edit, client, replaces, basis, overwrite=overwrite,
                        disk_too=disk_too, new_name=new_name)).diffs


def preview_text(diffs: list[FileDiff]) -> str:
    return "\n".join(d.diff for d in diffs if d.diff)


def _recheck(plan: _Plan, workspace: Workspace) -> None:
    """Every file the edit writes, once more, before anything is written: the same real
    path (no directory swapped for a symlink), the same content, still writable."""
    display = workspace.display
    for file in plan.on_disk:
        path = file.path
        real = Path(os.path.realpath(path if file.disk is not None else path.parent))
        if real != (path if file.disk is not None else path.parent):
            where = real if file.disk is not None else real / path.name
            if not workspace.contains(where):
                raise LsapError(
                    ErrorCode.OUTSIDE_WORKSPACE,
                    f"{display(path)} now leads to {where}, outside the workspace (a symlink "
                    "changed after the edit was planned)",
                    hint=NOTHING,
                )
            raise LsapError(
                ErrorCode.CONFLICT,
                f"{display(path)} now leads to {display(where)} (a symlink changed after the "
                "edit was planned)",
                hint=NOTHING + "; ask again",
            )
        found = snapshot(path)
        what = None
        if file.disk is None and (found is not None or os.path.lexists(path)):
            what = "was created by someone else"
        elif file.disk is not None and found is None:
            what = "was deleted"
        elif file.disk is not None and found is not None and found.digest != file.disk.digest:
            what = "changed on disk"
        elif problem := unwritable(path, None if found is None else os.stat(path)):
            what = f"cannot be written any more: {problem}"
        if what:
            raise LsapError(
                ErrorCode.CONFLICT,
                f"{display(path)} {what} after the edit was planned",
                hint=NOTHING + "; ask again",
            )


def _changes(plan: _Plan) -> list[Change]:
    out = [Change(f.path, None, f.disk.digest if f.disk else None) for f in plan.removed]
    for file in plan.files:
        if not file.buffer_only:
            # A loaded buffer is written by Neovim, in place; other files get theirs renamed in.
            out.append(Change(file.path, file.new_bytes(), file.disk.digest if file.disk else None,
                              in_place=file.doc is not None and file.under is None))
    return out


def _ops(plan: _Plan, journal: Journal | None, now: dict[Path, Snapshot | None],
         display: Callable[[Path], str]) -> list[dict[str, Any]]:
    """What `lua/lsap/edits.lua` applies: per file, the disk switch and the buffer's edits."""
    temps = {Path(e.path): e.temp for e in journal.entries} if journal else {}

    def stamp(path: Path) -> dict[str, int] | None:
        found = now.get(path)
        return None if found is None else _lua_stamp(found.stamp)

    def content(path: Path) -> bytes | None:
        """The bytes proven, for a file whose stamp is racy: Neovim compares them right
        before the switch (two writes in one clock tick can leave the stamp alike)."""
        found = now.get(path)
        return found.data if found is not None and found.stamp.racy() else None

    ops: list[dict[str, Any]] = []
    for file in plan.removed:
        ops.append({"kind": "remove", "path": str(file.path), "name": display(file.path),
                    "dir": str(file.path.parent), "stamp": stamp(file.path),
                    "content": content(file.path)})
    for file in plan.files:
        kind = "buffer" if file.buffer_only else "write" if file.disk else "create"
        loaded = file.doc is not None
        ops.append({
            "kind": kind,
            "path": str(file.path),
            "name": display(file.path),
            "dir": str(file.path.parent),
            "temp": temps.get(file.path),
            "stamp": stamp(file.path),
            "content": None if file.buffer_only else content(file.path),
            "origin": str(file.origin) if file.origin else None,
            # The buffer keeps the human's unsaved changes beside the edit; its file gets the
            # edit on the disk's text.
            "unsaved": file.under is not None,
            # A rename onto an existing file (consented): a buffer holding that file is
            # the bridge's own, closed, or is reloaded once the file switched.
            "overwrites": file.origin is not None and file.overwrote is not None,
            "tick": file.tick,
            # A buffer loaded when planned takes the edits (then Neovim writes it, unless the
            # human has unsaved changes in it); files no buffer holds get the new content.
            "steps": file.steps if loaded else None,
            "lines": file.lines if loaded else None,
        })
    return ops


def _lua_stamp(s: DiskStamp) -> dict[str, int]:
    """A stamp as `lua/lsap/edits.lua` checks and reports it."""
    return {"size": s.size, "sec": s.mtime_ns // 10**9, "nsec": s.mtime_ns % 10**9,
            "ino": s.ino, "dev": s.dev, "csec": s.ctime_ns // 10**9, "cnsec": s.ctime_ns % 10**9}


def _told(session: Session, stamps: object) -> None:
    """The files an edit switched, as Neovim saw them right after (`stamps`: path → its
    stamp, false for none): those still so are recorded as what the servers know
    (`DiskWatch.told`): they heard of each as it was written (a buffer's didChange and save,
    didChangeWatchedFiles of the others). A file changed since is left for the next sync."""
    seen: dict[str, DiskStamp | None] = {}
    for path, given in (stamps.items() if isinstance(stamps, dict) else ()):
        now = DiskStamp.of(path)
        if (now is None and not given) or (now is not None and given == _lua_stamp(now)):
            seen[str(path)] = now
    session.servers.watch.told(seen)


def _rolled_back(problems: list[str]) -> str:
    if not problems:
        return "every change was rolled back"
    return "rolling back failed for: " + "; ".join(problems)


class Completed(LsapError):
    """The call failed (Neovim went away) after the switch began: the journal completed the
    edit, which is applied and recorded as its change set (`_recorded` keeps it)."""


async def _switch(session: Session, journal: Journal | None, ops: list[dict[str, Any]],
                  label: str) -> None:
    """Have Neovim switch files and buffers, then settle the journal whatever happened."""
    marker = str(journal.marker) if journal else None
    try:
        outcome = await session.gateway.apply_edits({"marker": marker, "ops": ops})
    except BaseException as exc:
        # Neovim went away (or failed) mid-call: complete the edit if the switch began.
        settled = await asyncio.to_thread(journal.settle) if journal else None
        if not isinstance(exc, LsapError):
            raise
        if settled is not None and settled.outcome == "completed":  # applied all the same
            raise Completed(exc.code, f"{exc.message} while {label} was applied; {settled.message}",
                            hint=exc.hint) from None
        raise LsapError(ErrorCode.SERVER_ERROR,
                        f"applying {label} failed: {exc.message}"
                        + (f"; {settled.message}" if settled else "; nothing was changed"),
                        hint="ask again") from None
    lost = await asyncio.to_thread(journal.overwritten) if journal and outcome.get("ok") else []
    if lost and journal is not None:  # a write that landed in a file as it was replaced: the edit goes back
        outcome = {"switched": await asyncio.to_thread(journal.as_switched), "conflict": True, "error": ", ".join(
            session.workspace.display(Path(p)) for p in lost) + " changed on disk as the edit replaced it"}
    if outcome.get("ok") or "switched" not in outcome:
        if journal is not None:
            await asyncio.to_thread(journal.finish)
        if outcome.get("ok"):
            _told(session, outcome.get("stamps"))
            return
        raise LsapError(
            ErrorCode.CONFLICT,
            f"{label} was not applied: {outcome.get('error')}",
            hint=NOTHING + ("; ask again once the human has left Insert mode" if outcome.get("busy")
                            else "; ask again"),
        )
    switched = outcome.get("switched")
    restored, problems = (await asyncio.to_thread(journal.roll_back, switched) if journal
                          else ([], []))
    # A buffer whose file was put back here (Neovim could not write it back) re-reads it.
    await session.gateway.call("reload", restored)
    raise LsapError(
        ErrorCode.CONFLICT if not problems else ErrorCode.SERVER_ERROR,
        f"applying {label} failed: {outcome.get('error')}; {_rolled_back(problems)}",
        hint="ask again" if outcome.get("conflict") and not problems
        else "fix the cause (e.g. make the file writable) and ask again",
    )


def _proved(plan: _Plan, display: Callable[[Path], str]) -> dict[Path, Snapshot | None]:
    """Every file the edit writes, as the last thing before Neovim switches them (the
    journal is written): the very content the edit was planned on, by its hash. Returns
    the stamps then, which Neovim checks in the same call that switches the file: any
    write since (an `os.utime` too) moves the change time."""
    now: dict[Path, Snapshot | None] = {}
    for file in plan.on_disk:
        found = snapshot(file.path)
        if (found is None) != (file.disk is None) or (
                found is not None and file.disk is not None and found.digest != file.disk.digest):
            raise LsapError(
                ErrorCode.CONFLICT,
                f"{display(file.path)} changed on disk while the edit was being applied",
                hint=NOTHING + "; ask again",
            )
        now[file.path] = found
    return now


async def _journalled(session: Session, plan: _Plan, directory: Path, label: str) -> None:
    """Write the journal and the new contents, prove the files once more (`_proved`), then
    have Neovim switch (see `_switch`)."""
    journal = None
    changes = _changes(plan)
    if changes:
        try:
            journal = await asyncio.to_thread(Journal.prepare, directory, label, changes,
                                              session.workspace.roots)
        except OSError as exc:
            raise LsapError(ErrorCode.SERVER_ERROR, f"{label} could not be prepared: {exc}",
                            hint=NOTHING) from None
    display = session.workspace.display
    try:
        now = await asyncio.to_thread(_proved, plan, display)
    except BaseException:
        if journal is not None:
            await asyncio.to_thread(journal.finish)
        raise
    await _switch(session, journal, _ops(plan, journal, now, display), label)


def _made(path: Path) -> list[str]:
    """The directories a file created at `path` makes (those missing now), deepest first."""
    missing = []
    for parent in path.parents:
        if parent.exists():
            break
        missing.append(str(parent))
    return missing


def _texts(plan: _Plan) -> list[changes.FileText]:
    """Each changed file's text before and after, for its change set."""
    return [changes.FileText(str(f.path), None if f.created else f.original, f.lines, f.buffer_only,
                             str(f.origin) if f.origin else None, f.overwrote if f.origin else None,
                             _made(f.path) if f.created else [])
            for f in plan.files]


async def _recorded(session: Session, plan: _Plan, directory: Path, label: str) -> str:
    """`_journalled`, its change set kept first (`changes.py`) and dropped if it failed;
    an agent's changed lines are marked in the editor. The set's id."""
    change = await asyncio.to_thread(changes.begin, directory, label, _texts(plan))
    applied = APPLIED.get()
    try:
        await _journalled(session, plan, directory, label)
    except Completed:  # Neovim went away mid-switch and the journal completed it: kept, told
        if applied is not None:
            applied.append(change.id)
        raise
    except BaseException:
        await asyncio.to_thread(changes.discard, directory, change)
        raise
    if applied is not None:  # an answer cut short from here on says it was applied
        applied.append(change.id)
    if change.by_agent:  # its lines get the agent's sign in the human's editor
        with contextlib.suppress(LsapError):
            await session.gateway.call("presence_changed", changes.signs(change))
    return change.id


async def applied_before(session: Session) -> changes.ChangeSet | None:
    """The change this very request made when it was sent before, if it is the asker's
    latest and was not taken back: an agent whose answer was lost (the session ended)
    sends it again, and is told it is applied rather than that its anchor is gone."""
    request = changes.request_text()
    if request is None:
        return None
    directory = await journal_dir(session.gateway)
    last = await asyncio.to_thread(changes.last_of, directory, session.workspace, changes.who())
    return last if last is not None and last.request == request and not last.undone else None


async def journal_dir(gateway: Editor) -> Path:
    """Where this Neovim keeps edit journals (under its state directory)."""
    return Path(await gateway.call("journal_dir"))


async def recover_edits(gateway: Editor, roots: Sequence[Path]) -> list[Recovery]:
    """Settle the edits a crash left unfinished in this workspace (`roots`, see
    `journal.recover`), at start-up before any request; buffers already loaded of the files
    settled re-read them."""
    directory = await journal_dir(gateway)
    found = await asyncio.to_thread(recover, directory, roots)
    for recovery in found:  # nothing of it was applied: its change set is not listed as applied
        if recovery.outcome == "rolled back" and recovery.started is not None:
            await asyncio.to_thread(changes.rolled_back, directory, recovery.label, recovery.paths,
                                    recovery.started)
    paths = [path for recovery in found for path in recovery.paths]
    if paths:
        await gateway.call("reload", paths)
    return found


@dataclass(frozen=True)
class Written:
    """A file as an applied edit left it: its lines before and after ([]: no such file)."""

    path: Path
    before: list[str]
    after: list[str]
    change: str | None = None  # the change set that records the edit (`changes.py`)


# While a text-format step runs: every file the edits applied meanwhile changed, whichever
# capability applied them (`watching`).
_WRITTEN: ContextVar[list[Written] | None] = ContextVar("lsap_written", default=None)


@contextlib.contextmanager
def watching() -> Iterator[list[Written]]:
    """Collect the files every edit applied while it lasts changed, in order: the text format
    follows its anchored lines through a rename or a fix applied by the mode's own code."""
    written: list[Written] = []
    token = _WRITTEN.set(written)
    try:
        yield written
    finally:
        _WRITTEN.reset(token)


async def apply_workspace_edit(
    session: Session, edit: dict[str, Any], client: Client, *, label: str,
    replaces: str | None = None, basis: Basis | None = None,
    expect: Mapping[Path, list[str]] | None = None, overwrite: bool = False,
    doubt: Doubt | None = None, disk_too: bool = False, new_name: str | None = None,
) -> EditResult:
    """Check, ask the edit policy, check again, then apply every file's edits or none,
    recorded as a change set.

    `replaces`: what each edit replaces (a rename's old name), `new_name` what a whole-file
    replacement may put in its place alone, see `_check_replaced`;
    `basis`: what the files were when the server began computing the edit (default: when
    this request began; a previewed rename keeps its own), see `diskwatch.Basis`;
    `expect`: the whole text files must hold, `overwrite`: consent to replacing existing
    files (see `_plan`); `doubt`: why this edit needs a human's yes (`session.Doubt`):
    refused, nothing written, unless a human is asked and applies it. `disk_too`: a file
    whose buffer holds the human's unsaved changes gets the edit on disk as well (rebased
    onto the disk's text, `_rebased`), its buffer left unsaved with both, so that the
    project on disk is never half edited (a rename, a move); refused whole where that
    cannot be done; without it the edit stays in that buffer."""
    basis = basis or session.texts.basis()
    plan = await _plan(session, edit, client, replaces, basis, expect, overwrite, disk_too, new_name)
    if not plan.files and not plan.removed:
        return EditResult(label)
    edits, count = sum(f.edits for f in plan.files), len(plan.diffs)
    summary = f"{label}: {edits} edit{'s' if edits != 1 else ''} in {count} file" + (
        "s" if count != 1 else ""
    )
    preview = preview_text(plan.diffs)
    if not await (session.approve_edit(summary, preview) if doubt is None
                  else session.approve_edit(summary, preview, doubt)):
        raise LsapError(
            ErrorCode.DENIED,
            f"the edit was not approved ({summary})",
            hint="the editor's edit policy refused it; nothing was changed",
        )
    await asyncio.to_thread(_recheck, plan, session.workspace)
    directory = await journal_dir(session.gateway)
    # Shielded: an asker who goes away (or a session that stops) must not leave the journal
    # half settled; its cancellation waits for the edit to settle, so that the answer then
    # given says whether it was applied (`surface.APPLIED`).
    recording = asyncio.ensure_future(_recorded(session, plan, directory, label))
    try:
        change = await asyncio.shield(recording)
    except asyncio.CancelledError:
        await asyncio.wait([recording])
        if not recording.cancelled():
            recording.exception()  # retrieved: the answer cut short says what it did
        raise
    finally:  # applied or rolled back, the bridge touched these texts itself
        session.texts.changed_by_bridge([f.path for f in plan.files])
    # For the asker's next check, even its first (a baseline): what its edit broke is reported.
    session.edited.note(f.path for f in plan.files if f.lines != f.original or f.created or f.origin)
    return _outcome(session, label, plan, basis, change)


def _outcome(session: Session, label: str, plan: _Plan, basis: Basis | None, change: str | None) -> EditResult:
    """What an applied edit tells its request (`_WRITTEN`, the basis its later steps prove
    against) and its caller: the files written, created, renamed and overwritten."""
    if (written := _WRITTEN.get()) is not None:
        for f in plan.files:
            if f.origin is not None:  # renamed: the old path holds nothing now
                written.append(Written(f.origin, f.original, [], change))
            written.append(Written(f.path, [] if f.created or f.origin else f.original, f.lines, change))
    for file in plan.files:
        if not file.buffer_only and basis is not None:  # proves this request's later steps
            basis.written[str(file.path)] = content_hash(file.new_bytes())
    display = session.workspace.display
    return EditResult(
        label,
        files=[
            FileChange(display(f.path), f.edits, not f.buffer_only,
                       f.buffer_only and _disk_differs(f), *_line_counts(f.original, f.lines),
                       beside_unsaved=f.under is not None)
            for f in plan.files if f.lines != f.original or f.created
        ],
        created=[display(f.path) for f in plan.files if f.created],
        renamed=[(display(f.origin), display(f.path)) for f in plan.files if f.origin],
        overwritten=[(display(f.path), len(f.overwrote)) for f in plan.files if f.overwrote is not None],
        change=change,
    )


def _line_counts(old: list[str], new: list[str]) -> tuple[int, int]:
    """Lines added and removed from `old` to `new` (a changed line is one of each)."""
    added = removed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return added, removed


def _disk_differs(file: _File) -> bool:
    """Whether the file on disk holds other text than its buffer now does."""
    if file.disk is None:
        return True
    try:
        lines, _breaks, _bom = _decode(file.disk, str(file.path))
    except LsapError:
        return True
    return lines != file.lines

