"""Planning an edit: every step of it checked against the files as they are, before anything
changes, into the new texts, the buffers' edits and the diffs a preview shows.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types

from ..decode import Step
from ..diskwatch import Basis
from ..editor import Client
from ..errors import ErrorCode, LsapError
from ..position import Encoding
from ..session.targets import encoding_of
from ..session.warm import Session
from ..workspace import size_text
from .files import File, load, proven, unwritable
from .names import check_replaced, holds_name
from .text import NOTHING, minimal, replaces_all, splice
from .workspace_edit import inside, steps_of


@dataclass(frozen=True)
class FileDiff:
    """One file's change as a unified diff (display paths)."""

    path: str
    diff: str
    edits: int
    kind: str = "edit"  # edit | create | rename
    old_path: str | None = None
    overwritten: int | None = None  # lines of the existing file a consented overwrite replaces


def _skip_existing(options: types.CreateFileOptions | types.RenameFileOptions | None, what: str,
                   consent: bool) -> bool:
    """A create or rename whose target exists: skipped (`ignoreIfExists`, True), replacing
    it (LSP's `overwrite`, False) only with the request's own consent (`overwrite: true`),
    else refused whole: what the file held would be gone, so the agent must mean it (the
    report then says so, and the change set keeps the old text for `undo`)."""
    if options is not None and options.overwrite:  # wins over ignoreIfExists, as LSP says
        if consent:
            return False
        raise LsapError(ErrorCode.CONFLICT, f"{what}, which exists, and would overwrite it",
                        hint=NOTHING + "; if what it holds is to go, ask again with "
                        "`overwrite: true` (the report names it, and `undo` brings it back)")
    if options is not None and options.ignore_if_exists:
        return True
    raise LsapError(ErrorCode.CONFLICT, f"{what}, which already exists", hint=NOTHING)


def _overwritten(target: File, what: str) -> list[str]:
    """The text of a file an overwrite replaces (consented to, see `_skip_existing`): on
    disk, proven by its hash like any file the edit writes (`File.disk`). Not one with
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


def _diff(name: str, old: list[str], new: list[str], old_name: str | None = None) -> str:
    lines = difflib.unified_diff(old, new, f"a/{old_name or name}", f"b/{name}", lineterm="", n=1)
    return "\n".join(lines)


@dataclass
class Plan:
    files: list[File]  # every file that ends up changed, in the edit's order
    removed: list[File]  # files renamed away
    diffs: list[FileDiff]

    @property
    def on_disk(self) -> list[File]:
        return [f for f in [*self.files, *self.removed] if not f.buffer_only]


def _rebased(buffer: list[str], disk: list[str], edits: list[types.TextEdit], name: str,
             replaces: str | None) -> list[types.TextEdit]:
    """A buffer's edits on the text of its file on disk, which lacks the human's unsaved
    changes: each edit's lines must be lines the two share, and move to where the disk
    has them (the same text, so the same columns in any encoding). Refused: an edit that
    touches a line the human changed (what it should change on disk is the human's to
    say), and a rename that would leave the old name in lines only the disk holds."""
    end = "\n"  # no line holds it: where both texts end, when their last lines are shared
    matcher = difflib.SequenceMatcher(None, [*disk, end], [*buffer, end], autojunk=False)
    blocks = [b for b in matcher.get_matching_blocks() if b.size]
    shared = {line for b in blocks for line in range(b.a, b.a + b.size)}
    out: list[types.TextEdit] = []
    for item in edits:
        first, last = item.range.start, item.range.end
        start, stop = min(first.line, len(buffer)), min(last.line, len(buffer))
        block = next((b for b in blocks if b.b <= start and stop < b.b + b.size), None)
        if block is None and last.character == 0 and (stop > start or first.character == 0):
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
        shift = block.a - block.b
        out.append(types.TextEdit(types.Range(types.Position(start + shift, first.character),
                                              types.Position(stop + shift, last.character)), item.new_text))
    for line, text in enumerate(disk):
        if replaces is not None and line not in shared and holds_name(text, replaces):
            raise LsapError(
                ErrorCode.CONFLICT,
                f"{name} on disk holds `{replaces}` at line {line + 1}, a line its buffer (with "
                "unsaved changes) does not have: the edit, computed on the buffer, would leave it there",
                hint=NOTHING + "; save (or undo) that buffer's changes and ask again")
    return out


@dataclass
class _Planner:
    """The edit's steps taken one by one on the files as loaded (`load`): `files` is every
    path as the steps so far leave it, `order` the files that end up changed, `removed`
    the files renamed or deleted away."""

    session: Session
    client: Client
    files: dict[Path, File]
    replaces: str | None
    overwrite: bool
    new_name: str | None
    order: dict[Path, File] = field(default_factory=dict)
    removed: list[File] = field(default_factory=list)

    def inside(self, uri: str) -> Path:
        return inside(self.session.workspace, uri)

    def display(self, path: Path) -> str:
        return self.session.workspace.display(path)

    def take(self, step: Step) -> None:
        op = step.op
        if op is None:
            self.edited(step)
        elif isinstance(op, types.CreateFile):
            self.created(self.inside(op.uri), op.options)
        elif isinstance(op, types.RenameFile):
            self.renamed(self.inside(op.old_uri), self.inside(op.new_uri), op.options)
        else:
            self.deleted(self.inside(op.uri), op.options)

    def edited(self, step: Step) -> None:
        """A text document edit: its file proven to be what the server computed on, then its
        edits checked and spliced into the buffer's text (and the disk's, `File.under`)."""
        path = self.inside(step.uri)
        file = self.files.get(path)
        if file is None:
            raise LsapError(
                ErrorCode.CONFLICT,
                f"the edit changes {self.display(path)}, which does not exist",
                hint="nothing was changed; ask again once the file exists",
            )
        self.current(file, step.version)
        lsp, encoding = self.checked_edits(file, step.edits)
        if file.under is not None:  # the same edit on disk, where the human's changes are not
            name = self.display(path)
            rebased = _rebased(file.lines, file.under.lines, lsp, name, self.replaces)
            under = splice(file.under.lines, rebased, encoding, name, file.under.breaks)
            assert under.breaks is not None
            file.under.lines, file.under.breaks = under.lines, under.breaks
        spliced = splice(file.lines, lsp, encoding, self.display(path), file.breaks)
        file.lines, file.breaks = spliced.lines, spliced.breaks
        file.steps.append({"edits": spliced.byte_edits, "append": spliced.append, "fix_eol": spliced.fix_eol})
        file.edits += len(lsp)
        self.order.setdefault(path, file)

    def current(self, file: File, version: int | None) -> None:
        """A file the step edits (not one an earlier step moved here) is the text the server
        computed on, at no later version than the one the step names."""
        if file.origin is not None:
            return
        proven(file, version)
        if version and file.heard is not None and file.heard > int(version):
            raise LsapError(
                ErrorCode.CONFLICT,
                f"{self.display(file.path)} changed after the server computed the edit",
                hint="nothing was changed; ask again",
            )

    def checked_edits(self, file: File, lsp: list[types.TextEdit]) -> tuple[list[types.TextEdit], Encoding]:
        """A step's edits as they are spliced, with their encoding: no whole-file replacement
        of a buffer with unsaved changes, a whole-file replacement cut down to its few edits
        (`minimal`), and a rename's edits each replacing the old name (`check_replaced`)."""
        name = self.display(file.path)
        whole = replaces_all(lsp, file.lines)
        if file.unsaved and whole:
            raise LsapError(
                ErrorCode.CONFLICT,
                f"{self.client.name} would replace all of {name}, which has unsaved "
                "changes: a whole-file replacement may be based on the saved file and lose "
                "them",
                hint="nothing was changed; save (or undo) that buffer's changes and ask again",
            )
        encoding = encoding_of(self.client)
        if whole:
            fewer = minimal(file.lines, file.breaks, lsp, encoding, name)
            if fewer is not None:
                lsp, encoding = fewer, "utf-32"
        if self.replaces is not None:
            check_replaced(file.lines, lsp, self.replaces, encoding, name, self.new_name if whole else None)
        return lsp, encoding

    def created(self, path: Path, options: types.CreateFileOptions | None) -> None:
        what = f"the edit creates {self.display(path)}"
        if path in self.files and _skip_existing(options, what, self.overwrite):
            return
        held = _overwritten(self.files[path], what) if path in self.files else None
        self.files[path] = self.order[path] = File(
            path, self.files[path].disk if held is not None else None, None, [""], [""],
            original=held or [], created=held is None, overwrote=held)

    def renamed(self, old: Path, new: Path, options: types.RenameFileOptions | None) -> None:
        """A rename of a file: its content (proven what the server saw) moves to `new`, over
        nothing or, consented, over what an overwrite replaces (proven by its hash)."""
        files, display = self.files, self.display
        what = f"the edit renames {display(old)} onto {display(new)}"
        if new in files and _skip_existing(options, what, self.overwrite):
            return
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
            proven(file, None)  # its content moves: it must be what the server saw
        self.order.pop(old, None)
        if file.origin is None and file.disk is not None:
            self.removed.append(File(old, file.disk, None, [], None))
        file.disk = files[new].disk if held is not None else None
        file.overwrote = held
        file.path, file.origin = new, file.origin or old
        files[new] = self.order[new] = file

    def deleted(self, path: Path, options: types.DeleteFileOptions | None) -> None:
        """A delete of the edit (an undo's of a file its change created): the file as planned
        on, proven like every file the edit writes, goes; not one with the human's unsaved text."""
        file = self.files.pop(path, None)
        name = self.display(path)
        if file is None:
            if options is not None and options.ignore_if_not_exists:
                return
            raise LsapError(ErrorCode.CONFLICT, f"the edit deletes {name}, which does not exist", hint=NOTHING)
        if file.buffer_only or path in self.order or file.origin is not None or file.disk is None:
            raise LsapError(ErrorCode.CONFLICT, f"the edit deletes {name}, which has unsaved changes or "
                            "is changed by the same edit", hint=NOTHING + "; save (or undo) that buffer and ask again")
        proven(file, None)
        self.removed.append(File(path, file.disk, None, [], None))


def _as_expected(files: dict[Path, File], expect: Mapping[Path, list[str]] | None,
                 display: Callable[[Path], str]) -> None:
    """The files that must hold a whole text (an undo's "after") hold it."""
    differ = [display(p) for p, lines in (expect or {}).items() if p not in files or files[p].lines != lines]
    if differ:
        raise LsapError(ErrorCode.CONFLICT, f"{', '.join(differ)} changed while the edit was planned",
                        hint=NOTHING + "; ask again")


def _within_size(plan: Plan, limit: int, display: Callable[[Path], str]) -> None:
    """No file the edit changes grows over `max_file_size`: it would never be written, then
    refused by every request about it."""
    for file in plan.files:
        written = file.breaks is not None or file.under is not None
        size = len(file.new_bytes()) if written else len("\n".join(file.lines))
        if size > limit:
            raise LsapError(
                ErrorCode.INVALID_REQUEST,
                f"the edit would make {display(file.path)} {size_text(size)}, over the "
                f"{size_text(limit)} limit for files opened for language servers (option "
                "`max_file_size`)",
                hint=NOTHING + "; raise `max_file_size` (bytes) in require('lsap').setup() if "
                "the file is meant to be this large",
            )


def _writable(plan: Plan, display: Callable[[Path], str]) -> None:
    for file in plan.on_disk:
        problem = unwritable(file.path)
        if problem:
            raise LsapError(
                ErrorCode.DENIED,
                f"{display(file.path)} cannot be written: {problem}",
                hint="nothing was changed; make the file writable and ask again",
            )


def _file_diff(file: File, display: Callable[[Path], str]) -> FileDiff:
    """What a preview shows of a changed file: its diff, with what a rename overwrote."""
    before = display(file.origin) if file.origin else None
    diff = _diff(display(file.path), file.original, file.lines, before)
    if before and file.overwrote is not None:  # what the file renamed onto held goes
        diff = _diff(display(file.path), file.overwrote, []) + "\n" + diff
    return FileDiff(
        path=display(file.path),
        diff=diff,
        edits=file.edits,
        kind="create" if file.created else "rename" if before else "edit",
        old_path=before,
        overwritten=None if file.overwrote is None else len(file.overwrote),
    )


async def plan_edit(session: Session, edit: object, client: Client,
                    replaces: str | None = None, basis: Basis | None = None,
                    expect: Mapping[Path, list[str]] | None = None, overwrite: bool = False,
                    disk_too: bool = False, new_name: str | None = None) -> Plan:
    """Check the whole edit before anything changes, and compute the new texts.

    `replaces`: the text each edit replaces (a rename's old name), checked against the
    text planned on. `basis`: what the files were when the edit's computation began
    (default: when this request began). `expect`: the whole text some files must hold (an
    undo's "after"). `overwrite`: the request consents to resource operations replacing
    existing files (`_skip_existing`). `disk_too`: see `apply_workspace_edit`. `new_name`:
    a rename's, which a whole-file replacement may put in place of `replaces` alone."""
    steps = steps_of(edit, client.name)
    paths = [inside(session.workspace, uri) for step in steps for uri in step.uris]
    files = await load(session, paths, basis or session.texts.basis(), client.name, disk_too)
    display = session.workspace.display
    _as_expected(files, expect, display)
    planner = _Planner(session, client, files, replaces, overwrite, new_name)
    for step in steps:
        planner.take(step)
    changed = [f for f in planner.order.values() if f.lines != f.original or f.created or f.origin]
    plan = Plan(changed, planner.removed, [])
    _within_size(plan, session.gateway.max_file_size, display)
    _writable(plan, display)
    plan.diffs.extend(_file_diff(file, display) for file in changed)
    return plan


async def preview(session: Session, edit: object, client: Client,
                  replaces: str | None = None, basis: Basis | None = None,
                  overwrite: bool = False, disk_too: bool = False,
                  new_name: str | None = None) -> list[FileDiff]:
    """The diff each file would get, without changing anything."""
    return (await plan_edit(session, edit, client, replaces, basis, overwrite=overwrite,
                            disk_too=disk_too, new_name=new_name)).diffs


def preview_text(diffs: list[FileDiff]) -> str:
    return "\n".join(d.diff for d in diffs if d.diff)
