"""A file and the server chosen to answer about it (`Target`), the servers ranked for a method,
what an anchor resolved to (`Resolved`) and a location in code points; a server's offset
encoding (`encoding_of`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from ..editor import Attached, Client
from ..locate.matches import Match, Tier
from ..position import Document, Encoding


@dataclass(frozen=True)
class Target:
    """A file with its buffer and the server chosen to answer about it."""

    path: Path
    bufnr: int
    client: Client
    clients: tuple[Client, ...]
    partial: bool  # the server was still indexing when we gave up waiting
    # Set on a target taken from the cache: the text held for the file, which requests
    # computed from it are guarded by (`Servers.call` raises `StaleText` if it changed).
    doc: Document | None = field(default=None, compare=False)

    def client_for(self, method: str) -> Client | None:
        """The chosen server if it has `method`, else the attached server best for it."""
        if self.client.supports(method):
            return self.client
        return next(iter(ranked(self.clients, method)), None)


EVERY_SERVER = "*"  # `wait_for_clients`: every server the enabled configs attach to the file


# What a language's main analysis server answers: the more of these a server has, the more
# it knows of the code (basedpyright before `ruff server`, whose hover explains its codes).
ANALYSIS = frozenset({
    "textDocument/definition", "textDocument/references", "textDocument/documentSymbol",
    "textDocument/hover", "textDocument/rename", "textDocument/completion",
    "textDocument/typeDefinition", "textDocument/implementation", "textDocument/signatureHelp",
    "textDocument/prepareCallHierarchy", "workspace/symbol",
})
# What a dedicated tool answers best: the formatter, the server with the fewest of the above.
TOOLING = frozenset({"textDocument/formatting", "textDocument/rangeFormatting"})
# Seconds after which the servers attached are taken to be all that come, when nothing says
# which to expect (`Attached.known`) or an expected one did not come (its root did not
# match, it failed to start): the choice is then kept, not asked again at each request.
ATTACH_GRACE = 10.0


def ranked(clients: Sequence[Client], method: str) -> list[Client]:
    """The servers that have `method`, best first, by what the request needs: formatting
    from the formatter, everything else from the main analysis server; in attach order
    among equals. Decided per request from the servers attached now."""
    def analysis(client: Client) -> int:
        return len(ANALYSIS & client.methods)

    able = [c for c in clients if c.supports(method)]
    return sorted(able, key=analysis if method in TOOLING else (lambda c: -analysis(c)))


def all_came(clients: Sequence[Client]) -> bool:
    """Whether these are all the servers that will attach (a choice between them may be
    kept): every expected one came, or each has been attached for `ATTACH_GRACE`."""
    if not isinstance(clients, Attached) or clients.complete:
        return True
    return all((c.age() or ATTACH_GRACE) >= ATTACH_GRACE for c in clients)


@dataclass(frozen=True)
class Resolved:
    """Where an anchor points, with what the report needs to say about it."""

    target: Target
    doc: Document
    line: int  # 0-based
    column: int  # code points
    symbol_path: str | None  # enclosing symbol, dotted
    match: Match | None
    anchor: str  # the string form of what was asked
    note: str | None = None  # how a pasted line number was used ("line 17 is now line 19")
    overloads: str | None = None  # a symbol's overloads, when its implementation was taken

    @property
    def path(self) -> Path:
        return self.target.path

    @property
    def line_text(self) -> str:
        return self.doc.line(self.line)

    @property
    def approximate(self) -> bool:
        return self.match is not None and self.match.tier is not Tier.EXACT


@dataclass(frozen=True)
class Location:
    path: Path
    line: int  # 0-based
    col: int  # code points
    end_line: int
    end_col: int


def encoding_of(client: Client) -> Encoding:
    """A server's offset encoding (UTF-16, LSP's default, unless it said another)."""
    return cast(Encoding, client.offset_encoding if client.offset_encoding in
                ("utf-8", "utf-16", "utf-32") else "utf-16")
