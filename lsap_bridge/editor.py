"""The `Editor` protocol: what the service needs of the editor (doc/architecture.md, Layers),
and the data the editor answers in: the language servers attached to a buffer (`Client`,
`Attached`), where the human is (`Cursor`, `EditorState`), a buffer's published diagnostics
(`Pushed`), an edit's switch (`Applied`) and the human's answer to an agent's edit
(`Decision`). `gateway.EditorGateway` implements it over Neovim, `tests/fakes.FakeEditor`
without one.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypedDict

from .jsonvalue import Json, Jsonable, JsonObject, Packable
from .lsp import FileEventData
from .lspcall import LspAnswer, LspCall
from .models import Wait
from .position import Document, EditorLocation
from .servers.registry import adapter_for
from .workspace import Workspace

# Answers a request a server sends while the bridge runs its command: (method, params) -> result.
ServerRequests = Callable[[str, Json], Jsonable]


@dataclass(frozen=True)
class Client:
    """A language server attached to a buffer, as Neovim sees it."""

    id: int
    name: str
    offset_encoding: str
    methods: frozenset[str]
    root_dir: str | None = None
    filetypes: frozenset[str] = frozenset()  # what the server was configured for
    # When it attached (time.monotonic()), if it attached after the service started.
    started: float | None = field(default=None, compare=False)

    def supports(self, method: str) -> bool:
        """Whether it serves `method`: announced, and not one its adapter says it lacks."""
        return method in self.methods and adapter_for(self.name).supports(method)

    def age(self) -> float | None:
        """Seconds since the server attached, when known."""
        return None if self.started is None else time.monotonic() - self.started


class Cursor(TypedDict, total=False):
    """Where the human is (`cursor` in lua/lsap/transport/editor.lua): a buffer's name,
    the cursor's 0-based line and byte column, and that line's text."""

    path: str
    bufnr: int
    line: int
    col: int
    text: str


class SelectionState(TypedDict, total=False):
    """The visual selection: 0-based lines, byte columns, end inclusive, and its text."""

    active: bool
    type: str  # "charwise", "linewise" or "blockwise"
    start_line: int
    start_col: int
    end_line: int
    end_col: int
    text: list[str]


class EditorState(Cursor, total=False):
    """What the human is looking at (`editor` in lua/lsap/transport/editor.lua)."""

    modified: bool
    filetype: str
    buftype: str
    top: int  # the first and last visible lines, 0-based
    bottom: int
    selection: SelectionState


class Pushed(TypedDict, total=False):
    """A buffer's entry in the transport's answer to `when_diagnosed`
    (lua/lsap/transport/seen.lua): its `vim.diagnostic` items, and whether they are current."""

    bufnr: int
    items: list[JsonObject]  # `vim.diagnostic.get()` items (0-based lines, byte columns)
    analysed: bool  # every server published for the buffer's latest change
    quiet: bool  # diagnosed before, nothing new published since the change


class Applied(TypedDict, total=False):
    """The transport's answer to `apply_edits` (lua/lsap/edits.lua)."""

    ok: bool
    stamps: dict[str, Json]  # path -> its stamp right after the switch (false: none)
    switched: list[str]  # the files switched before a failure, to roll back
    error: str
    busy: bool  # the human is in Insert mode
    conflict: bool


class Attached(list[Client]):
    """The servers on a buffer (`wait_for_clients`), and whether they are all the ones
    expected: a choice between them made while others were still attaching is not kept.
    `known`: False when nothing says which servers to expect (none started by
    `vim.lsp.enable`)."""

    def __init__(self, clients: Iterable[Client] = (), complete: bool = True, known: bool = True) -> None:
        super().__init__(clients)
        self.complete = complete
        self.known = known


class Editor(Protocol):
    """What the service needs of the editor: `EditorGateway` over Neovim, or a test's fake
    (tests/fakes.py). Capabilities reach it through the session: its methods, or
    `session.gateway`."""

    workspace: Workspace | None
    max_file_size: int
    max_tokens: int
    diagnostics_wait: Wait
    gone: set[int]
    stats: Counter[str]

    async def read(self, paths: list[Path]) -> dict[Path, Document]: ...
    def held(self, path: Path) -> Document | None: ...
    async def open(self, path: Path) -> int: ...
    def oversized(self, path: Path) -> int | None: ...
    async def sync(self, changes: list[FileEventData]) -> list[str] | None: ...
    async def reconfigure(self, changes: list[FileEventData]) -> list[str]: ...
    async def wait_for_clients(self, bufnr: int, method: str | None) -> list[Client]: ...
    async def working(self, client_ids: list[int]) -> list[int]: ...
    async def wait_until_idle(self, client_ids: list[int]) -> bool: ...
    async def lsp(self, calls: list[LspCall], timeout: float | None = None,
                  guard: Document | None = None,
                  taking: ServerRequests | None = None) -> list[LspAnswer]: ...
    async def editor(self) -> EditorState: ...
    async def show_report(self, text: str, locations: list[EditorLocation],
                          options: Mapping[str, Jsonable]) -> None: ...
    async def symbols_for_completion(self, path: str, paths: list[str], cmdline: str) -> None: ...
    async def all_clients(self) -> list[Client]: ...
    async def servers_expected(self, bufnrs: list[int]) -> list[bool]: ...
    async def pushed_diagnostics(self, bufnrs: list[int], exclude_clients: list[int],
                                 after_sync: bool = False, until: float | None = None) -> dict[int, Pushed]: ...
    async def server_commands(self, client_id: int) -> list[str]: ...
    async def apply_edits(self, plan: Mapping[str, Packable]) -> Applied: ...
    async def call(self, name: str, *args: Packable) -> Json: ...


DECISIONS = ("apply", "refuse", "deny", "timeout", "withheld")


@dataclass(frozen=True)
class Decision:
    """How the human answered an agent's edit: `apply`, `refuse` (they said no), `deny`
    (`edit_policy = 'deny'`), `timeout` (no answer within `waited` seconds) or `withheld`
    (an edit in doubt under `edit_policy = 'allow'`: nobody was asked)."""

    decision: str
    waited: float = 0.0

    @property
    def applied(self) -> bool:
        return self.decision == "apply"

    @property
    def asked(self) -> bool:
        """Whether a human was asked: Neovim says how long the question could wait only then."""
        return self.waited > 0
