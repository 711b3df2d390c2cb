"""The rename's guard rail (the package's docstring): whether its edit renames every use of
the symbol, those the server's `references` finds (`_uncovered`) and those in files it has
not indexed that name the symbol through a module the edit changes (`named_elsewhere`), and
what the report (`_guard`) and the human (`_doubt`) are told of a gap."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TypedDict

from lsprotocol import types

from ...decode import locations
from ...edits.workspace_edit import steps_of
from ...errors import ErrorCode, LsapError
from ...jsonvalue import JsonObject, Params
from ...position import Encoding, column_at, from_lsp_character, line_at
from ...report.paging import suggest
from ...session.approval import Doubt
from ...session.targets import Target, encoding_of
from ...session.warm import Session
from ...workspace import path_of
from .models import REFERENCES, UNCOVERED_SHOWN, PendingRename, RenameExecuteRequest, RenameRequest, Uncovered, Uses

IMPORTING = ("import", "require", "include")


def _defines(path: Path, pattern: re.Pattern[str]) -> bool:
    try:
        return pattern.search(path.read_text(errors="replace")) is not None
    except OSError:
        return False
SEARCHED = 5000  # code files a rename's text search reads at most

_PYTHON_IMPORT = re.compile(r"^\s*(?:from\s+(\.*)([\w.]*)\s+import\b|import\s+([\w.]+))")
_SCRIPT_IMPORT = re.compile(r"""(?:\bfrom\s+|\brequire\(\s*|\bimport\(\s*)['"](\.{1,2}/[^'"]+)['"]""")
_SCRIPT_SUFFIXES = ("", ".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mts", ".mjs", ".cts", ".cjs",
                    "/index.ts", "/index.tsx", "/index.js")


def _imports_another_file(line: str, path: Path, roots: Sequence[Path], edited: set[Path]) -> bool:
    """Whether an import line names a module that is a file of the workspace other than the
    edited ones: `from one_letter.a import f` does not import `renames/a.py`'s `f` though
    both modules are called `a`. A module it cannot find (a package on sys.path, a path
    alias) may be an edited one: the line stays a doubt."""
    found = [p for p in _imported_files(line, path, roots) if p.is_file()]
    return bool(found) and not any(p.resolve() in edited or p in edited for p in found)


def _imported_files(line: str, path: Path, roots: Sequence[Path]) -> list[Path]:
    """The files an import line's module could be (Python's dotted or relative module,
    a script's relative specifier), existing or not."""
    python = _PYTHON_IMPORT.match(line)
    if python and path.suffix in (".py", ".pyi"):
        dots, dotted = (python.group(1), python.group(2)) if python.group(3) is None else ("", python.group(3))
        bases = [path.parents[len(dots) - 1]] if dots and len(dots) <= len(path.parents) else list(roots)
        parts = [part for part in dotted.split(".") if part]
        return [base.joinpath(*parts).with_suffix(suffix) if parts and suffix else base.joinpath(*parts, "__init__.py")
                for base in bases for suffix in (".py", ".pyi", "")]
    script = _SCRIPT_IMPORT.search(line)
    if script:
        return [Path(str((path.parent / script.group(1)).resolve()) + suffix) for suffix in _SCRIPT_SUFFIXES]
    return []


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
                        module.search(line) and any(w in line for w in IMPORTING)
                        and not _imports_another_file(line, path, workspace.roots, set(edited)))):
                    out.append(Uncovered(path=workspace.display(path), line=number + 1,
                                         column=found.start() + 1, text=line.strip()))
                    break
    return out


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


def _edit_ranges(edit: JsonObject, server: str) -> dict[Path, list[types.TextEdit]]:
    """Every text edit of a WorkspaceEdit, by file (a malformed one is the server's error:
    `steps_of`)."""
    out: dict[Path, list[types.TextEdit]] = {}
    for step in steps_of(edit, server):
        if step.op is None:
            out.setdefault(path_of(step.uri), []).extend(step.edits)
    return out


def _renames(item: types.TextEdit, start: types.Position, old_name: str, encoding: Encoding) -> bool:
    """Whether a text edit renames the use starting at `start`: it spans the use, and,
    where it rewrites whole lines (jedi sends the whole file), the use's line no longer
    has the old name there (its column in the new text read through the codec: `start`
    counts the server's units)."""
    first, last = item.range.start, item.range.end
    key = (start.line, start.character)
    if not ((first.line, first.character) <= key < (last.line, last.character)):
        return False
    if first.line == last.line:
        return True
    row = start.line - first.line
    lines = item.new_text.split("\n")
    if row >= len(lines):
        return True
    # The new text's line `row` starts at the edit's start on its first line, at column 0 after.
    column = from_lsp_character(lines[row], start.character - (first.character if row == 0 else 0), encoding)
    return lines[row][column:column + len(old_name)] != old_name


async def _uncovered(session: Session, target: Target, edit: JsonObject,
                     uses: list[tuple[Path, types.Range]], old_name: str) -> list[Uncovered]:
    """The uses `references` found that no edit of the rename renames."""
    edits = _edit_ranges(edit, target.client.name)
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
