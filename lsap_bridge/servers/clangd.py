"""clangd: what it needs to see a C or C++ project whole, a compilation database.

Without one clangd indexes only the files open in the editor, so references, rename and
calls silently miss the rest of the project; the answer says so, and how to make one.
"""

from __future__ import annotations

from pathlib import Path

from .adapter import CROSS_FILE, Adapter

# What clangd looks for in a file's folder and each folder above it (and their `build/`).
DATABASES = ("compile_commands.json", "compile_flags.txt")


def has_database(path: Path) -> bool:
    """Whether clangd finds a compilation database for `path`, where clangd looks."""
    return any((folder / name).is_file() or (folder / "build" / name).is_file()
               for folder in path.parents for name in DATABASES)


def database_note(method: str, path: Path, display: str) -> tuple[Path, str] | None:
    """The note for a cross-file answer (`method`) on a file clangd has no compilation
    database for, keyed by the database it misses (one note per folder)."""
    if method not in CROSS_FILE or has_database(path):
        return None
    return path.parent / DATABASES[0], (
        f"clangd has no compilation database for {display}: its cross-file results "
        "(references, rename, calls) cover the files open in the editor only. To make one, "
        "write compile_commands.json at the project root: `cmake -DCMAKE_EXPORT_COMPILE_COMMANDS=ON`, "
        "or `bear -- make`; or put the compiler flags, one per line, in compile_flags.txt")


ADAPTER = Adapter(names=("clangd",), config_files=(".clangd", "compile_commands.json"),
                  index_note=database_note)
