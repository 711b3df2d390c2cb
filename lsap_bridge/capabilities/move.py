"""`move`: lines of a file moved to another file, imports and exports fixed (the text
format's `MOVE_TO_FILE`).

Where a server has a move refactoring (typescript-language-server: tsserver's "Move to
file"), the bridge asks it for the edits through `typescript.tsserverRequest` and applies
them itself, so the change stays all-or-nothing and goes to disk like every other edit
(had the server applied it with `workspace/applyEdit`, Neovim would have changed buffers
the bridge never checked). Python servers have no such refactoring: the bridge moves
whole top-level definitions itself, with the `ast` module for imports and the server's
references for the modules that use the moved names. What the bridge reads
and rewrites of the Python source is `pysource.py`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from lsprotocol import types
from pydantic import model_validator

from ..actions.applied import Applied, applied
from ..actions.lsp_calls import TSSERVER, TsLocation, refactor_edits, tsserver_refactor
from ..actions.place import WhereRequest, place_of
from ..actions.run import Ran
from ..editor import Client
from ..edits.apply import EditResult, apply_workspace_edit
from ..errors import ErrorCode, LsapError
from ..gateway import LspCall
from ..jsonvalue import Params
from ..lsp import SHAPE_ERRORS, malformed, result_of
from ..models import Waiting
from ..modes import Answer, mode
from ..position import to_lsp_character
from ..pysource import (
    DunderAll,
    ImportedName,
    after_docstring,
    after_imports,
    composed,
    defined,
    dunder_all,
    insert,
    joined,
    line_range,
    module_name,
    name_positions,
    one_edit,
    parsed,
    respelled,
    spell,
    spelled_relative,
    top_imports,
    used_names,
)
from ..session.targets import Target, encoding_of
from ..session.warm import Session
from ..workspace import path_of, uri_of

REFERENCES = "textDocument/references"


class MoveRequest(WhereRequest, Waiting):
    mode: Literal["move"] = "move"
    to_file: str  # the file the lines go to (created when it does not exist)

    @model_validator(mode="after")
    def _lines(self) -> MoveRequest:
        if self.locate is None:
            raise ValueError("give the lines to move: `locate` (a line, or with `end` a range of lines)")
        return self


@mode("move", request=MoveRequest, report=Applied, template="code_action",
      summary="move lines to another file, fixing imports and exports, through the safe edits",
      workspace=True, edits=True)
async def move(session: Session, request: MoveRequest) -> Answer:
    """The lines `locate` (to `end`) moved to `to_file`: tsserver's refactor where an attached
    server has it, else the bridge's move of Python definitions; the users of the moved names
    it could not rewrite are named, and their diagnostics shown."""
    place = await place_of(session, request, REFERENCES)
    assert place.lines is not None
    source, (start, end) = place.path, place.lines
    workspace = session.workspace
    target = workspace.resolve(request.to_file)
    if target == source:
        raise LsapError(ErrorCode.INVALID_REQUEST, "the lines are already in the file to move them to")
    doc = await session.texts.document(source)
    label = f"move lines {start + 1}-{end + 1} of {workspace.display(source)} to {workspace.display(target)}"
    at = await session.servers.target(source, REFERENCES, request.server)
    if target.exists():  # servers learn of a file when it is opened (it may be new to them)
        await session.gateway.wait_for_clients(await session.gateway.open(target), None)
    related: list[Path] = []

    async def work() -> Ran:
        ran = Ran()
        for client in at.clients:
            if TSSERVER in await session.gateway.server_commands(client.id):
                edit = await _tsserver_move(session, at, client, source, target, start, end, doc.lines)
                ran.add(await _applied_edit(session, edit, client, label), client)
                return ran
        if source.suffix not in (".py", ".pyi"):
            names = ", ".join(c.name for c in at.clients) or "no server"
            raise LsapError(
                ErrorCode.UNSUPPORTED,
                f"no attached server can move code in {workspace.display(source)} "
                f"({names}), and the bridge moves only Python definitions itself",
                hint="move the lines by hand, then fix the imports",
            )
        python = PythonMove(session, at, source, target, start, end, doc.lines)
        ran.add(await _applied_edit(session, await python.edit(), at.client, label), at.client)
        ran.remarks += python.notes
        related.extend(python.related)
        return ran

    report = await applied(session, label, None, work, watched=[source, target], wait=request.diagnostics_wait)
    if related:
        report = report.model_copy(update={"related": [workspace.display(p) for p in related]})
    return Answer(report)


def _utf16_end(line: str) -> int:
    """Where a line ends in UTF-16 units (tsserver's offsets, whatever the LSP encoding)."""
    return to_lsp_character(line, len(line), "utf-16")


async def _applied_edit(session: Session, edit: types.WorkspaceEdit, client: Client, label: str) -> EditResult:
    # The disk never holds half a move: a buffer with unsaved changes gets it on disk too.
    result = await apply_workspace_edit(session, edit, client, label=label, disk_too=True)
    if not result.files and not result.created:
        raise LsapError(ErrorCode.NOT_FOUND, f"{label} changed nothing")
    return result


async def _tsserver_move(
    session: Session,
    at: Target,
    client: Client,
    source: Path,
    target: Path,
    start: int,
    end: int,
    lines: list[str],
) -> types.WorkspaceEdit:
    """tsserver's "Move to file" edits, as an LSP WorkspaceEdit (new files created first);
    an answer of another shape is the server's error, named."""
    args: Params = {
        "file": str(source),
        "startLine": start + 1,
        "startOffset": 1,
        "endLine": end + 1,
        "endOffset": _utf16_end(lines[end]) + 1,
        "refactor": "Move to file",
        "action": "Move to file",
        "interactiveRefactorArguments": {"targetFile": str(target)},
    }

    bare = not any(line.rstrip().endswith(";") for line in lines if line.strip())
    answer = await tsserver_refactor(session, client, source, at.bufnr, lines, args,
                                     {"semicolons": "remove" if bare else "ignore"})
    by_file, reason = refactor_edits(answer)
    if not by_file:
        raise LsapError(
            ErrorCode.SERVER_ERROR,
            f"{client.name} could not move the lines: {reason}",
            hint="select whole statements or declarations",
        )
    changes: list[types.TextDocumentEdit | types.CreateFile] = []
    existing = [Path(i["fileName"]) for i in by_file if Path(i["fileName"]).exists()]
    docs = await session.texts.documents(existing)
    for item in by_file:
        path = Path(item["fileName"])
        try:
            edits = [types.TextEdit(types.Range(_position(c["start"]), _position(c["end"])), c["newText"])
                     for c in item.get("textChanges") or []]
        except SHAPE_ERRORS as exc:
            raise malformed(client.name, "getEditsForRefactor", "edit", exc) from exc
        if path in docs:
            edits = [_past_the_end(e, docs[path].lines) for e in edits]
        if item.get("isNewFile") or not path.exists():
            changes.append(types.CreateFile(uri_of(path), options=types.CreateFileOptions(ignore_if_exists=True)))
            if edits:
                edits[-1] = types.TextEdit(edits[-1].range, _no_final_newline(edits[-1].new_text))
        changes.append(types.TextDocumentEdit(types.OptionalVersionedTextDocumentIdentifier(uri_of(path)), edits))
    return types.WorkspaceEdit(document_changes=changes)


def _past_the_end(edit: types.TextEdit, lines: list[str]) -> types.TextEdit:
    """An insertion after the file's final newline (the line past the last one, where LSP
    counts an empty line and a buffer has none, or tsserver's offset just past the last
    line's end) as one at the end of the last line."""
    start = edit.range.start
    last = len(lines) - 1
    past = start.line > last or (start.line == last and start.character > _utf16_end(lines[last]))
    if not past:
        return edit
    end_of_file = types.Position(len(lines) - 1, _utf16_end(lines[-1]))
    return types.TextEdit(types.Range(end_of_file, end_of_file), "\n" + _no_final_newline(edit.new_text))


def _no_final_newline(text: str) -> str:
    """Text ending a file, without its final newline: a buffer writes that one itself, so a
    trailing "\n" would leave an empty last line behind."""
    return text[:-1] if text.endswith("\n") else text


def _position(location: TsLocation) -> types.Position:
    """tsserver's 1-based line/offset (0/0 in a new file) as an LSP position."""
    return types.Position(max(0, int(location["line"]) - 1), max(0, int(location["offset"]) - 1))


@dataclass(frozen=True)
class _Moving:
    """A move's analysis of the old file (`PythonMove._moving`)."""

    tree: ast.Module
    source_module: str
    target_module: str
    moved_nodes: list[ast.stmt]
    names: list[str]  # the names the moved code defines
    imports: list[ImportedName]  # the old file's
    used_by_moved: set[str]
    used_by_kept: set[str]
    relative: bool  # the old file spells its imports relative
    needed: list[tuple[str, str]]  # imports the moved code needs: (as in the old file, as written in the new)
    futures: list[str]  # the old file's `from __future__` imports
    exported: DunderAll | None
    entries: list[str]  # the moved names' `__all__` entries


def _new_file(moving: _Moving, body: str) -> list[types.TextEdit]:
    """A target file that does not exist yet: its future imports, the imports the moved
    code needs, its `__all__`, then the code."""
    header = [written for _, written in moving.needed]
    blocks = ["\n".join(part) for part in (moving.futures, header) if part]
    blocks += [f"__all__ = [{', '.join(moving.entries)}]"] if moving.entries else []
    text = "\n\n".join(blocks) + "\n\n\n" + body if blocks else body
    return [types.TextEdit(line_range(0, -1), _no_final_newline(text))]


class PythonMove:
    """Plan the edits of moving top-level definitions between Python modules."""

    def __init__(
        self,
        session: Session,
        at: Target,
        source: Path,
        target: Path,
        start: int,
        end: int,
        lines: list[str],
    ) -> None:
        self.session, self.at = session, at
        self.notes: list[str] = []
        self.related: list[Path] = []  # unchanged files that use moved names: their diagnostics matter
        self.source, self.target = source, target
        self.start, self.end, self.lines = start, end, lines
        self.root = session.workspace.root
        self.display = session.workspace.display
        self.source_module = ""

    async def edit(self) -> types.WorkspaceEdit:
        """The WorkspaceEdit of the move: the old file without the moved code (and imports
        only it used), its users importing from the new module, the target file made or
        extended."""
        moving = self._moving()
        changes: dict[Path, list[types.TextEdit]] = {self.source: self._source_edits(moving)}
        changes.update(await self._users_edits(moving))
        body = "\n".join(self.lines[self.start : self.end + 1]).strip("\n") + "\n"
        create: list[types.CreateFile] = []
        if self.target.exists():
            changes[self.target] = await self._into_existing(
                moving.needed, moving.names, body, moving.futures, moving.entries)
        else:
            create.append(types.CreateFile(uri_of(self.target)))
            changes[self.target] = _new_file(moving, body)
        return types.WorkspaceEdit(document_changes=[
            *create,
            *[types.TextDocumentEdit(types.OptionalVersionedTextDocumentIdentifier(uri_of(path)), items)
              for path, items in changes.items() if items],
        ])

    def _moving(self) -> _Moving:
        """What moves (the selection's top-level definitions) and what the old and new file
        need for it: the imports, the names the two files take from each other, `__all__`."""
        tree = parsed("\n".join(self.lines), self.display(self.source))
        source_module = self.source_module = module_name(self.root, self.source)
        target_module = module_name(self.root, self.target)
        moved_nodes, kept_nodes = self._split(tree)
        names = [name for node in moved_nodes for name in defined(node)]
        if not names:
            raise LsapError(
                ErrorCode.INVALID_REQUEST,
                "the selection holds no top-level definition to move",
                hint="select whole functions, classes or module-level assignments",
            )
        imports = top_imports(tree, source_module)
        used_by_moved = used_names(moved_nodes)
        kept_defs = {n for node in kept_nodes for n in defined(node)}
        relative = spelled_relative(imports)
        # Imports the moved code needs in its new file (absolute form, as written there).
        needed = [
            (
                i.statement,
                respelled(i, i.module, target_module, relative) if i.module else i.statement,
            )
            for i in imports
            if i.bound in used_by_moved
        ]
        needed += [
            (
                f"from {source_module} import {n}",
                f"from {spell(source_module, target_module, relative)} import {n}",
            )
            for n in sorted(kept_defs & used_by_moved)
        ]
        # The new file needs the old one's `from __future__` imports (`str | None` in an
        # annotation breaks Python 3.9 without them), and the moved names' `__all__` entries.
        exported = dunder_all(tree, self.lines)
        return _Moving(tree, source_module, target_module, moved_nodes, names, imports, used_by_moved,
                       used_names(kept_nodes), relative, needed,
                       [i.statement for i in imports if i.module == "__future__"],
                       exported, exported.entries(set(names)) if exported else [])

    def _source_edits(self, moving: _Moving) -> list[types.TextEdit]:
        """The old file: the lines go, imports only the moved code used go, the moved names
        come back through an import if the rest of the file uses them."""
        names, exported = set(moving.names), moving.exported
        edits = [types.TextEdit(self._cut(), "")]
        if exported and moving.entries:
            edits.append(types.TextEdit(line_range(exported.first, exported.last), exported.without(names) + "\n"))
        dropped = [i for i in moving.imports
                   if i.bound in moving.used_by_moved and i.bound not in moving.used_by_kept]
        edits += self._rewrite_imports(moving.imports, dropped, [])
        back = sorted(names & moving.used_by_kept)
        if back:
            edits.append(
                insert(
                    after_imports(moving.tree),
                    f"from {spell(moving.target_module, moving.source_module, moving.relative)} "
                    f"import {', '.join(back)}\n",
                )
            )
        # One edit for the old file, planned as its new text: the cut, the imports and the
        # names brought back never overlap, wherever the moved code was (first, last, only).
        return one_edit(self.lines, composed(self.lines, edits),
                         encoding_of(self.at.client))

    async def _users_edits(self, moving: _Moving) -> dict[Path, list[types.TextEdit]]:
        """Users elsewhere import the names from their new module; a use the bridge cannot
        rewrite is noted, its file related."""
        changes: dict[Path, list[types.TextEdit]] = {}
        positions = name_positions(moving.moved_nodes, self.lines)
        for path, found in (await files_using(self.session, self.at, positions)).items():
            if path in (self.source, self.target):
                continue
            other = parsed(
                "\n".join((await self.session.texts.document(path)).lines), self.display(path)
            )
            module = module_name(self.root, path)
            all_theirs = top_imports(other, module)
            theirs = [i for i in all_theirs if i.module == moving.source_module and i.name in found]
            readded = [respelled(i, moving.target_module, module, spelled_relative(all_theirs)) for i in theirs]
            changes[path] = self._rewrite_imports(all_theirs, theirs, readded)
            unfixed = sorted(found - {i.name for i in theirs})
            if unfixed:  # e.g. `import shop.catalog` … `shop.catalog.find()`: said, not guessed
                self.related.append(path)
                self.notes.append(
                    f"{self.display(path)} uses {', '.join(unfixed)} without a "
                    f"`from {moving.source_module} import …` the bridge could rewrite: fix it by hand"
                )
        return changes

    async def _into_existing(self, needed: list[tuple[str, str]], names: list[str], body: str,
                             futures: list[str], entries: list[str]) -> list[types.TextEdit]:
        """The edits of a target file that exists: the moved code at its end, the imports it
        needs, its `from __future__` imports and `__all__` entries."""
        existing = await self.session.texts.document(self.target)
        tree = parsed("\n".join(existing.lines), self.display(self.target))
        module = module_name(self.root, self.target)
        present = {i.statement for i in top_imports(tree, module)}
        own = [i for i in top_imports(tree, module) if i.module == self.source_module and i.name in names]
        edits = self._rewrite_imports(top_imports(tree, module), own, [])
        missing = [f for f in futures if f not in present]
        if missing:  # first, after the docstring: a future import must precede the others
            top = after_docstring(tree)
            apart = top < len(existing.lines) and existing.lines[top].strip() != "" and \
                not existing.lines[top].startswith("from __future__")
            edits.insert(0, insert(top, "\n".join(missing) + "\n" + ("\n" if apart else "")))
        wanted = [written for absolute, written in needed if absolute not in present]
        if wanted:
            edits.append(insert(after_imports(tree), "\n".join(wanted) + "\n"))
        exported = dunder_all(tree, existing.lines)
        if exported and entries:
            edits.append(types.TextEdit(line_range(exported.first, exported.last), exported.adding(entries) + "\n"))
        at_end = types.Position(len(existing.lines), 0)
        edits.append(types.TextEdit(types.Range(at_end, at_end), "\n\n\n" + _no_final_newline(body)))
        return edits

    def _cut(self) -> types.Range:
        """The lines to delete: the selection, plus enough blank lines after it that the gap
        left behind is as wide as the wider of the two around it; at the end of the file,
        the blank lines before it too."""

        def blanks(lines: list[str]) -> int:
            return next((i for i, line in enumerate(lines) if line.strip()), len(lines))

        before = blanks(self.lines[: self.start][::-1])
        after = blanks(self.lines[self.end + 1 :])
        last = len(self.lines) - 1
        if self.end + after < last or self.start - before == 0:
            return line_range(self.start, self.end + min(before, after))
        return line_range(self.start - before, last)

    def _split(self, tree: ast.Module) -> tuple[list[ast.stmt], list[ast.stmt]]:
        moved: list[ast.stmt] = []
        kept: list[ast.stmt] = []
        for node in tree.body:
            decorators = getattr(node, "decorator_list", None) or [node]
            first = min(node.lineno, decorators[0].lineno) - 1
            last = (node.end_lineno or node.lineno) - 1
            inside = self.start <= first and last <= self.end
            if not inside and first <= self.end and last >= self.start:
                raise LsapError(
                    ErrorCode.INVALID_REQUEST,
                    f"the selection (lines {self.start + 1}-{self.end + 1}) cuts the statement at lines "
                    f"{first + 1}-{last + 1} in two",
                    hint="select whole top-level definitions (functions, classes, assignments): `@]` ends "
                         "the selection with its own line, `@)` just before it (its line is left out)",
                )
            (moved if inside else kept).append(node)
        return moved, kept

    def _rewrite_imports(
        self, imports: list[ImportedName], drop: list[ImportedName], add: list[str]
    ) -> list[types.TextEdit]:
        """Edits that drop some imported names (rewriting their statements) and add others."""
        if not drop:
            return []
        edits: list[types.TextEdit] = []
        statements = sorted({(i.first, i.last) for i in drop})
        for index, (first, last) in enumerate(statements):
            remaining = [i for i in imports if (i.first, i.last) == (first, last) and i not in drop]
            text = joined(remaining)
            if index == 0 and add:
                text += "".join(a + "\n" for a in add)
            edits.append(types.TextEdit(line_range(first, last), text))
        return edits


async def files_using(session: Session, target: Target, names: dict[str, tuple[int, int]]) -> dict[Path, set[str]]:
    """The files that use each name, from the references of its spelling in the target's
    file (0-based line, code-point column; the declaration left out): a move of Python
    code fixes their imports. One round trip."""
    client = target.client_for(REFERENCES)
    if client is None:
        return {}
    doc = await session.texts.document(target.path)
    at = replace(target, client=client, partial=False, doc=None)
    calls = [LspCall(client.id, REFERENCES, {**session.servers.position_params(at, doc, line, col),
                                         "context": {"includeDeclaration": False}}, target.bufnr)
             for line, col in names.values()]
    out: dict[Path, set[str]] = {}
    for name, answer in zip(names, await session.servers.lsp(calls), strict=False):
        for location in result_of(None if answer.error else answer.result, types.ReferencesResponse,
                                  client.name, REFERENCES) or []:
            out.setdefault(path_of(location.uri).resolve(), set()).add(name)
    return out
