"""A stand-in for Neovim behind the `Editor` protocol, for unit tests of the real session and
capabilities: files come from disk, language servers' answers from a recording (or a
function), and nothing runs but Python.

Recordings (`tests/fixtures/recorded/*.json`) are what real servers answered on
`examples/shop` (`python -m tests.record` writes them): each is a list of
`{"method", "params", "result", "error"}` with paths relative to the root (`$ROOT`), and an
LSP call is answered by the recorded one with the same method and params.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsap_bridge.editor import Client, ServerRequests
from lsap_bridge.filestate import read_disk
from lsap_bridge.gateway import MAX_FILE_SIZE, LspAnswer, LspCall
from lsap_bridge.lsp import FileEventData
from lsap_bridge.models import DEFAULT_MAX_TOKENS, DIAGNOSTICS_WAIT, Wait
from lsap_bridge.position import Document
from lsap_bridge.session.warm import Session
from lsap_bridge.workspace import Workspace

RECORDED = Path(__file__).resolve().parent / "fixtures" / "recorded"
ROOT_MARK = "$ROOT"

METHODS = frozenset({
    "textDocument/references", "textDocument/definition", "textDocument/declaration",
    "textDocument/typeDefinition", "textDocument/implementation", "textDocument/hover",
    "textDocument/documentSymbol", "workspace/symbol", "textDocument/prepareCallHierarchy",
    "callHierarchy/incomingCalls", "callHierarchy/outgoingCalls", "textDocument/inlayHint",
    "textDocument/signatureHelp", "textDocument/completion", "textDocument/rename",
    "textDocument/prepareRename",
})


def client(name: str = "basedpyright", methods: frozenset[str] = METHODS, id: int = 1) -> Client:
    return Client(id, name, "utf-16", methods, filetypes=frozenset({"python"}))


def _portable(value: Any, root: str) -> Any:
    """A value with the root's path (in paths and file URIs) written as `$ROOT`."""
    return json.loads(json.dumps(value).replace(root, ROOT_MARK))


def _local(value: Any, root: str) -> Any:
    return json.loads(json.dumps(value).replace(ROOT_MARK, root))


@dataclass
class FakeEditor:
    """`lsap_bridge.editor.Editor` without Neovim: no buffer is loaded, files are read from
    disk, and `answer` gives each LSP call's answer."""

    answer: Callable[[LspCall], LspAnswer]
    clients: list[Client] = field(default_factory=lambda: [client()])
    workspace: Workspace | None = None
    max_file_size: int = MAX_FILE_SIZE
    max_tokens: int = DEFAULT_MAX_TOKENS
    diagnostics_wait: Wait = DIAGNOSTICS_WAIT
    gone: set[int] = field(default_factory=set)
    stats: Counter[str] = field(default_factory=Counter)
    state: dict[str, Any] = field(default_factory=dict)  # what `editor()` reports
    asked: list[LspCall] = field(default_factory=list)
    indexing: bool = False  # the servers still report work in progress
    _buffers: dict[Path, int] = field(default_factory=dict)

    async def read(self, paths: list[Path]) -> dict[Path, Document]:
        return {path: read_disk(path) for path in paths}

    def held(self, path: Path) -> Document | None:
        return None

    async def open(self, path: Path) -> int:
        return self._buffers.setdefault(path, len(self._buffers) + 1)

    def oversized(self, path: Path) -> int | None:
        return None

    async def reconfigure(self, changes: list[FileEventData]) -> list[str]:
        return [c.name for c in self.clients]

    async def sync(self, changes: list[FileEventData]) -> list[str] | None:
        return None

    async def wait_for_clients(self, bufnr: int, method: str | None) -> list[Client]:
        return list(self.clients)

    async def working(self, client_ids: list[int]) -> list[int]:
        return list(client_ids) if self.indexing else []

    async def wait_until_idle(self, client_ids: list[int]) -> bool:
        return not self.indexing

    async def lsp(self, calls: list[LspCall], timeout: float | None = None,
                  guard: Document | None = None,
                  taking: ServerRequests | None = None) -> list[LspAnswer]:
        self.stats["lsp_requests"] += len(calls)
        self.asked += calls
        return [self.answer(call) for call in calls]

    async def editor(self) -> dict[str, Any]:
        return self.state

    async def show_report(self, text: str, locations: list[dict[str, Any]], options: dict[str, Any]) -> None:
        pass

    async def symbols_for_completion(self, path: str, paths: list[str], cmdline: str) -> None:
        pass

    async def all_clients(self) -> list[Client]:
        return list(self.clients)

    async def servers_expected(self, bufnrs: list[int]) -> list[bool]:
        return [True for _ in bufnrs]

    async def pushed_diagnostics(self, bufnrs: list[int], exclude_clients: list[int],
                                 after_sync: bool = False, until: float | None = None) -> dict[int, dict[str, Any]]:
        return {b: {"bufnr": b, "analysed": True, "items": []} for b in bufnrs}

    async def server_commands(self, client_id: int) -> list[str]:
        return []

    async def apply_edits(self, plan: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True}

    async def call(self, name: str, *args: Any) -> Any:
        if name == "journal_dir":  # the state directory's journals, change sets and checks
            if self.journals is None:  # removed with the editor
                self.journals = tempfile.TemporaryDirectory(prefix="lsap-fake-journal-")
            return self.journals.name
        return None

    journals: tempfile.TemporaryDirectory[str] | None = None


class Recording:
    """LSP answers recorded from real servers, replayed by method and params."""

    def __init__(self, name: str, root: Path) -> None:
        self.root = str(root)
        entries = json.loads((RECORDED / f"{name}.json").read_text())
        self.answers = {self.key(e["method"], _local(e["params"], self.root)): e for e in entries}
        # What the recorded server was asked: the methods a fake client of it supports.
        self.methods = frozenset(e["method"] for e in entries)

    @staticmethod
    def key(method: str, params: Any) -> str:
        return method + json.dumps(params, sort_keys=True)

    def __call__(self, call: LspCall) -> LspAnswer:
        found = self.answers.get(self.key(call.method, call.params))
        if found is None:
            raise AssertionError(f"no recorded answer to {call.method} {call.params}: "
                                 "run `python -m tests.record` again")
        return LspAnswer(_local(found["result"], self.root), found.get("error"))


def fake_session(root: Path, answer: Callable[[LspCall], LspAnswer], **editor: Any) -> Session:
    """A real session over a `FakeEditor` for the workspace at `root`."""
    return Session(FakeEditor(answer, **editor), Workspace.of(root))


def portable(entries: list[dict[str, Any]], root: Path) -> list[dict[str, Any]]:
    """Recorded calls with the root written as `$ROOT` (see `tests.record`)."""
    return [_portable(entry, str(root)) for entry in entries]
