"""A Python module's source as a move of top-level definitions reads and rewrites it (`ast`,
no server): its top-level imports (the names they bind, their modules made absolute, spelled
as the importer spells its own), the names statements define and use and where they are
spelled, its `__all__`, and whole-line edits composed into the one edit a file gets.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types

from .errors import ErrorCode, LsapError
from .position import Encoding, byte_column, to_lsp_character


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@dataclass(frozen=True)
class ImportedName:
    """One name bound by an import statement, with the statement's lines (0-based, inclusive)."""

    bound: str  # the name the module uses
    statement: str  # a one-name import statement that binds it
    module: str | None  # absolute module of `from X import`, None for `import X`
    spelled: str | None  # the module as written (`.models`)
    name: str
    first: int
    last: int


def top_imports(tree: ast.Module, module: str) -> list[ImportedName]:
    """Top-level imports, relative ones made absolute against `module`."""
    package = module.split(".")[:-1]
    out = []
    for node in tree.body:
        last = (node.end_lineno or node.lineno) - 1
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                text = f"import {alias.name}" + (f" as {alias.asname}" if alias.asname else "")
                out.append(ImportedName(bound, text, None, None, alias.name, node.lineno - 1, last))
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            absolute = ".".join([*base, *([node.module] if node.module else [])])
            spelled = "." * node.level + (node.module or "")
            for alias in node.names:
                bound = alias.asname or alias.name
                text = f"from {absolute} import {alias.name}" + (
                    f" as {alias.asname}" if alias.asname else ""
                )
                out.append(
                    ImportedName(bound, text, absolute, spelled, alias.name, node.lineno - 1, last)
                )
    return out


def spell(module: str, importer: str, relative: bool) -> str:
    """How `importer` should write `module`: relative like its other imports when both
    are in the same package, else absolute."""
    package, _, last = module.rpartition(".")
    return "." + last if relative and package == importer.rpartition(".")[0] else module


def respelled(i: ImportedName, module: str, importer: str, relative: bool) -> str:
    """An import statement of one name, from `module`, written the importer's way."""
    what = i.statement.split(" import ", 1)[1]
    return f"from {spell(module, importer, relative)} import {what}"


def spelled_relative(imports: list[ImportedName]) -> bool:
    return any(i.spelled and i.spelled.startswith(".") for i in imports)


def used_names(nodes: list[ast.stmt]) -> set[str]:
    return {n.id for stmt in nodes for n in ast.walk(stmt) if isinstance(n, ast.Name)}


def defined(node: ast.stmt) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


_DEFINES = re.compile(r"(?:async\s+def|def|class)\s+")


def name_positions(nodes: list[ast.stmt], lines: list[str]) -> dict[str, tuple[int, int]]:
    """Where each name the statements define is spelled (0-based line, code-point column),
    from the syntax tree: the name after `def`/`class` (not an `f` inside `def`, nor a name
    in a decorator or a default value), an assignment's target."""
    out: dict[str, tuple[int, int]] = {}
    for node in nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            line = node.lineno - 1
            keyword = _DEFINES.match(lines[line], byte_column(lines[line], node.col_offset))
            out[node.name] = (line, keyword.end() if keyword else byte_column(lines[line], node.col_offset))
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) else []
        for target in targets:
            if isinstance(target, ast.Name):
                out[target.id] = (target.lineno - 1, byte_column(lines[target.lineno - 1], target.col_offset))
    return out


def parsed(text: str, name: str) -> ast.Module:
    try:
        return ast.parse(text)
    except SyntaxError as exc:
        raise LsapError(
            ErrorCode.CONFLICT,
            f"{name} does not parse (line {exc.lineno}: {exc.msg})",
            hint="fix the syntax error first; nothing was moved",
        ) from None


def after_imports(tree: ast.Module) -> int:
    """The 0-based line where new imports go: after the last top-level import or docstring."""
    line = 0
    for node in tree.body:
        is_doc = (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and node is tree.body[0]
        )
        if isinstance(node, (ast.Import, ast.ImportFrom)) or is_doc:
            line = node.end_lineno or node.lineno
        else:
            break
    return line


def line_range(first: int, last: int) -> types.Range:
    """Lines `first` to `last` whole (each with its line end)."""
    return types.Range(types.Position(first, 0), types.Position(last + 1, 0))


def insert(line: int, text: str) -> types.TextEdit:
    """`text` put in before line `line`."""
    return types.TextEdit(line_range(line, line - 1), text)


def after_docstring(tree: ast.Module) -> int:
    """The 0-based line after the module's docstring (0 without one): where future imports go."""
    first = tree.body[0] if tree.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return first.end_lineno or first.lineno
    return 0


@dataclass(frozen=True)
class DunderAll:
    """A module's `__all__ = [...]` (or `(...)`) of string literals: its lines (0-based,
    inclusive) and their text, which entries leave and join with the file's own spelling."""

    first: int
    last: int
    text: str

    def _elements(self, text: str) -> tuple[list[tuple[int, int, str]], int]:
        """Each entry's (start, end, name) as offsets into `text`; the offset after the bracket."""
        value = ast.parse(text).body[0]
        assert isinstance(value, (ast.Assign, ast.AnnAssign)) and isinstance(value.value, (ast.List, ast.Tuple))
        lines = text.split("\n")
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line) + 1)

        def at(line: int, byte: int) -> int:
            return starts[line - 1] + byte_column(lines[line - 1], byte)

        elements = [(at(e.lineno, e.col_offset), at(e.end_lineno or e.lineno, e.end_col_offset or 0), str(e.value))
                    for e in value.value.elts if isinstance(e, ast.Constant)]
        return elements, at(value.value.lineno, value.value.col_offset) + 1

    def entries(self, names: set[str]) -> list[str]:
        """The entries of `names`, as the file spells them (`"name"`, `'name'`)."""
        return [self.text[start:end] for start, end, name in self._elements(self.text)[0] if name in names]

    def without(self, names: set[str]) -> str:
        """The statement without the entries of `names` (a line of its own goes whole)."""
        text = self.text
        while True:
            elements, _ = self._elements(text)
            index = next((k for k, e in enumerate(elements) if e[2] in names), None)
            if index is None:
                return text
            start, end, _ = elements[index]
            begins, ends = text.rfind("\n", 0, start) + 1, (text.find("\n", end) + 1 or len(text) + 1) - 1
            if not text[begins:start].strip() and text[end:ends].strip() in ("", ","):
                text = text[:begins] + text[ends + 1 :]
            elif index:
                text = text[: elements[index - 1][1]] + text[end:]
            elif len(elements) > 1:
                text = text[:start] + text[elements[1][0] :]
            else:
                text = text[:start] + text[end:].lstrip(" ").removeprefix(",")

    def adding(self, entries: list[str]) -> str:
        """The statement with `entries` after its last one (on a line of their own where the
        last one is), those it has already left out."""
        text = self.text
        for entry in entries:
            elements, opening = self._elements(text)
            if ast.literal_eval(entry) in {name for _, _, name in elements}:
                continue
            if not elements:
                text = text[:opening] + entry + ("," if text[opening - 1] == "(" else "") + text[opening:]
                continue
            start, end, _ = elements[-1]
            begins, ends = text.rfind("\n", 0, start) + 1, (text.find("\n", end) + 1 or len(text) + 1) - 1
            if not text[begins:start].strip() and text[end:ends].strip() in ("", ","):
                comma = "" if text[end:ends].strip() else ","
                text = text[:end] + comma + text[end:ends] + "\n" + text[begins:start] + entry + "," + text[ends:]
            else:
                text = text[:end] + ", " + entry + text[end:]
        return text


def dunder_all(tree: ast.Module, lines: list[str]) -> DunderAll | None:
    """The module's `__all__` when it is a bracketed list or tuple of strings, on lines of its own."""
    for node in tree.body:
        target = (node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1
                  else node.target if isinstance(node, ast.AnnAssign) else None)
        value = getattr(node, "value", None)
        if not (isinstance(target, ast.Name) and target.id == "__all__" and node.col_offset == 0
                and isinstance(value, (ast.List, ast.Tuple))):
            continue
        first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
        bracket = lines[value.lineno - 1].encode()[value.col_offset : value.col_offset + 1]
        strings = all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts)
        if not strings or bracket not in (b"[", b"("):
            return None
        return DunderAll(first, last, "\n".join(lines[first : last + 1]))
    return None


def composed(lines: list[str], edits: list[types.TextEdit]) -> list[str]:
    """The lines after whole-line edits (each replaces lines [start, end) of `lines` with its
    text), planned by the bridge on one text: they must not overlap."""
    out: list[str] = []
    at = 0
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.end.line)):
        start, end = edit.range.start.line, min(edit.range.end.line, len(lines))
        if start < at:
            raise LsapError(ErrorCode.SERVER_ERROR, "the bridge planned overlapping edits of one file "
                            f"(line {start + 1}): nothing was moved", hint="report this as a bug of lsap")
        out += lines[at:start] + edit.new_text.splitlines()
        at = max(at, end)
    return out + lines[at:]


def one_edit(old: list[str], new: list[str], encoding: Encoding) -> list[types.TextEdit]:
    """The smallest single edit that turns the lines `old` into `new` (none when equal). A
    change that reaches the end of the file ends at the last line's end, so no empty last
    line is left behind (a buffer ends its last line itself)."""
    same = 0
    while same < min(len(old), len(new)) and old[same] == new[same]:
        same += 1
    tail = 0
    while tail < min(len(old), len(new)) - same and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    removed, added = old[same : len(old) - tail], new[same : len(new) - tail]
    if not removed and not added:
        return []
    if tail:  # whole lines, before a line that stays
        return [types.TextEdit(line_range(same, len(old) - tail - 1), "".join(f"{line}\n" for line in added))]
    last = len(old) - 1
    end = types.Position(last, to_lsp_character(old[last], len(old[last]), encoding))
    if same:  # from the end of the last line that stays
        start = types.Position(same - 1, to_lsp_character(old[same - 1], len(old[same - 1]), encoding))
        return [types.TextEdit(types.Range(start, end), "".join(f"\n{line}" for line in added))]
    return [types.TextEdit(types.Range(types.Position(0, 0), end), "\n".join(added))]


def joined(remaining: list[ImportedName]) -> str:
    """Import statements for the names that stay, one statement per module."""
    if not remaining:
        return ""
    groups: dict[str | None, list[str]] = {}
    for i in remaining:
        key = i.spelled
        groups.setdefault(key, []).append(
            i.statement.split(" import ", 1)[1] if key else i.statement
        )
    out = []
    for module, parts in groups.items():
        out += (
            [f"from {module} import {', '.join(parts)}\n"] if module else [p + "\n" for p in parts]
        )
    return "".join(out)
