"""Source files of the workspace, for modes that take a directory or a glob (outline, search,
diagnostics). The walking itself, with its confinement and size rules, is `Workspace.walk`."""

from __future__ import annotations

from pathlib import Path

from ..errors import ErrorCode, LsapError
from ..workspace import GLOB_CHARS, Walk, Workspace, language_of, too_large


def is_glob(text: str) -> bool:
    return bool(GLOB_CHARS & set(text))


def _skipped(found: Walk) -> str:
    parts = [f"{found.outside} outside the workspace"] if found.outside else []
    parts += [f"{found.too_large} over the size limit"] if found.too_large else []
    return f" ({', '.join(parts)}: skipped)" if parts else ""


def expand(workspace: Workspace, file_path: str, recursive: bool, limit: int,
           max_size: int | None = None) -> Walk:
    """A file, a directory's code files, or a glob's matches (relative to the root).

    One file over `max_size` bytes is an `invalid_request`; in a directory or a glob such
    files are counted in the result, like links that lead out of the roots.
    """
    if is_glob(file_path):
        found = workspace.glob(file_path, limit, max_size)
        if not found.files:
            raise LsapError(
                ErrorCode.NOT_FOUND,
                f"no code file matches {file_path!r}{_skipped(found)}",
                hint="globs are relative to " + str(workspace.root) + "; `**` matches any depth",
            )
        return found
    path = workspace.resolve(file_path)
    if path.is_dir():
        found = workspace.walk(path, recursive, limit, max_size)
        if not found.files:
            raise LsapError(
                ErrorCode.NOT_FOUND,
                f"no code files in {workspace.display(path) or '.'}{_skipped(found)}",
                hint='add `"recursive": true` to look into subdirectories'
                if not recursive
                else None,
            )
        return found
    try:
        stat = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        raise LsapError(
            ErrorCode.NOT_FOUND,
            f"no such file or directory: {file_path}",
            hint="paths are relative to the workspace root " + str(workspace.root),
        ) from None
    if max_size is not None and stat.st_size > max_size:
        raise too_large(workspace.display(path), stat.st_size, max_size)
    return Walk({str(path): stat})


def one_per_language(workspace: Workspace, max_size: int | None = None,
                     limit: int = 5000) -> list[Path]:
    """A code file per language in the workspace: opening it starts that language's server."""
    seeds: dict[str, Path] = {}
    for path in workspace.walk(workspace.root, limit=limit, max_size=max_size).files:
        seeds.setdefault(language_of(path), path)
    return list(seeds.values())
