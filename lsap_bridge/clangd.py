"""What clangd needs to see a C or C++ project whole: a compilation database.

Without one clangd indexes only the files open in the editor, so references, rename and
calls silently miss the rest of the project; the answer says so, and how to make one.
"""

from __future__ import annotations

from pathlib import Path

from .gateway import Client

# The requests whose answers span files: those the note goes on.
CROSS_FILE = frozenset({"textDocument/references", "textDocument/rename", "textDocument/implementation",
                        "textDocument/prepareCallHierarchy", "textDocument/prepareTypeHierarchy"})
# What clangd looks for in a file's folder and each folder above it (and their `build/`).
DATABASES = ("compile_commands.json", "compile_flags.txt")


def has_database(path: Path) -> bool:
    """Whether clangd finds a compilation database for `path`, where clangd looks."""
    return any((folder / name).is_file() or (folder / "build" / name).is_file()
               for folder in path.parents for name in DATABASES)


def database_note(client: Client, method: str, path: Path, display: str) -> str | None:
    """The note for a cross-file answer (`method`) from clangd on a file it has no
    compilation database for."""
    if client.name != "clangd" or method not in CROSS_FILE or has_database(path):
        return None
    return (f"clangd has no compilation database for {display}: its cross-file results "
            "(references, rename, calls) cover the files open in the editor only. To make one, "
            "write compile_commands.json at the project root: `cmake -DCMAKE_EXPORT_COMPILE_COMMANDS=ON`, "
            "or `bear -- make`; or put the compiler flags, one per line, in compile_flags.txt")
