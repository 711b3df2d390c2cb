"""What the bridge asks of a language server, declared once per server (`Adapter`): the rest
of the bridge asks the adapter of a client (`registry.adapter_for`), never tests its name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# The requests whose answers span files (from a server's index): those an index note goes on.
CROSS_FILE = frozenset({"textDocument/references", "textDocument/rename", "textDocument/implementation",
                        "textDocument/prepareCallHierarchy", "textDocument/prepareTypeHierarchy"})
# Seconds after a server attached (or heard of files changed on disk) during which its index
# may lag behind the files: a cross-file answer says so.
YOUNG = 10.0

# A note on a cross-file answer (`method`) for a file (`path`, shown as `display`): its key
# (one note per key) and its text, or None.
IndexNote = Callable[[str, Path, str], "tuple[Path, str] | None"]


def no_note(method: str, path: Path, display: str) -> tuple[Path, str] | None:
    return None


@dataclass(frozen=True)
class Adapter:
    """One language server's quirks. `names`: the names its client goes by in Neovim
    (`vim.lsp.config`'s, the command's); the default adapter (no names) is every other
    server's: a server that does what its capabilities say."""

    names: tuple[str, ...] = ()
    # Methods it announces but does not really serve: the bridge acts as if not announced.
    lacks: frozenset[str] = frozenset()
    # Configuration files at a root whose change reconfigures it (`Session.reconfigure`).
    config_files: tuple[str, ...] = ()
    # JSON configuration files at a root whose `exclude` list the file watcher skips too,
    # and pyproject.toml's `[tool.X]` sections read the same way.
    exclude_files: tuple[str, ...] = ()
    exclude_tools: tuple[str, ...] = ()
    # The evidence of its diagnostics: its pushes skip clean files, so they are pulled
    # through tsserver's own requests instead (`servers/tsserver.py`).
    pulls_through_tsserver: bool = False
    # Seconds after it attached during which its index may lag (`YOUNG`; more for a slow index).
    young: float = YOUNG
    # What a cross-file answer says of its index for a file (clangd: no compilation database).
    index_note: IndexNote = no_note
    # Whether a cross-file answer (references, calls) taken while it reports work in progress
    # may be short, and says so: tsserver loading a project answers from part of it. Not
    # pyright's: it searches every file of its program on demand, and its progress is the
    # analysis of the files a request just opened (every warm references answer, back to
    # back, said "may grow"); while young, references ask again until the count holds.
    short_while_working: bool = True

    def supports(self, method: str) -> bool:
        """Whether it really serves `method` when it announces it."""
        return method not in self.lacks
