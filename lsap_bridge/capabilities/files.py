"""Source files of the workspace, for modes that take a directory or a glob (outline, search)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from ..errors import ErrorCode, LsapError
from ..workspace import LANGUAGES, Workspace

# Directories nobody means when asking about "the project's code".
IGNORED_DIRS = {
    ".git",
    ".hg",
    ".svn",
    "node_modules",
    ".venv",
    "venv",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".tox",
    "dist",
    "build",
    ".idea",
    ".vscode",
}
# Code files only: configuration and docs (json, toml, markdown) have no symbols worth listing.
CODE_SUFFIXES = {s for s, lang in LANGUAGES.items() if lang not in ("json", "toml", "markdown")}
GLOB_CHARS = set("*?[")


def is_glob(text: str) -> bool:
    return bool(GLOB_CHARS & set(text))


def walk_code(directory: Path, recursive: bool) -> Iterator[Path]:
    """Code files under a directory, sorted, skipping dependency and tool directories."""
    for current, dirs, names in os.walk(directory):
        dirs[:] = (
            sorted(d for d in dirs if d not in IGNORED_DIRS and not d.startswith("."))
            if recursive
            else []
        )
        for name in sorted(names):
            if Path(name).suffix in CODE_SUFFIXES:
                yield Path(current) / name


def expand(workspace: Workspace, file_path: str, recursive: bool, limit: int) -> list[Path]:
    """A file, a directory's code files, or a glob's matches (relative to the root)."""
    if is_glob(file_path):
        if Path(file_path).is_absolute() or ".." in Path(file_path).parts:
            raise LsapError(
                ErrorCode.OUTSIDE_WORKSPACE,
                f"the glob {file_path!r} must be relative to the root and stay inside it",
                hint="e.g. `shop/*.py` or `src/**/*.ts`",
            )
        found = sorted(
            p.resolve()
            for p in workspace.root.glob(file_path)
            if p.is_file()
            and p.suffix in CODE_SUFFIXES
            and not IGNORED_DIRS & set(p.relative_to(workspace.root).parts)
            and workspace.contains(p)  # not through a symlink that leads out
        )
        if not found:
            raise LsapError(
                ErrorCode.NOT_FOUND,
                f"no code file matches {file_path!r}",
                hint="globs are relative to " + str(workspace.root) + "; `**` matches any depth",
            )
        return found[:limit]
    path = workspace.resolve(file_path)
    if path.is_dir():
        files = []
        for found_file in walk_code(path, recursive):
            if not workspace.contains(found_file):  # a symlink that leads out
                continue
            files.append(found_file)
            if len(files) >= limit:
                break
        if not files:
            raise LsapError(
                ErrorCode.NOT_FOUND,
                f"no code files in {workspace.display(path) or '.'}",
                hint='add `"recursive": true` to look into subdirectories'
                if not recursive
                else None,
            )
        return files
    if not path.exists():
        raise LsapError(
            ErrorCode.NOT_FOUND,
            f"no such file or directory: {file_path}",
            hint="paths are relative to the workspace root " + str(workspace.root),
        )
    return [path]


def one_per_language(workspace: Workspace, limit: int = 5000) -> list[Path]:
    """A code file per language in the workspace: opening it starts that language's server."""
    seeds: dict[str, Path] = {}
    for count, path in enumerate(walk_code(workspace.root, recursive=True)):
        seeds.setdefault(LANGUAGES[path.suffix], path)
        if count >= limit:
            break
    return list(seeds.values())
