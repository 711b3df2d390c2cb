"""Files' symbol trees, asked of the servers many files at a time and cached per file version.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cachetools import LRUCache

from ..editor import Client, Editor
from ..gateway import LspCall
from ..jsonvalue import Json
from ..lsp import decoded
from ..position import Document
from ..symbols import SymbolTree, build_tree, document_symbols
from ..workspace import uri_of
from .calls import Servers
from .targets import Target, encoding_of
from .texts import Texts

SYMBOLS = "textDocument/documentSymbol"


@dataclass
class Symbols:
    """Files' symbol trees, cached per file version."""

    gateway: Editor
    texts: Texts
    servers: Servers
    _trees: LRUCache[Path, tuple[str, SymbolTree]] = field(default_factory=lambda: LRUCache(4096))

    async def of(
        self, paths: Sequence[Path], client: Client, docs: dict[Path, Document]
    ) -> dict[Path, SymbolTree]:
        """Symbol trees of many files, cached per file version: the servers are asked about
        all of them in one round trip (and once more, together, about files they did not
        know, after opening those one by one)."""
        out: dict[Path, SymbolTree] = {}
        missing = []
        for path in dict.fromkeys(paths):
            cached = self._trees.get(path)
            if cached and cached[0] == docs[path].version:
                out[path] = cached[1]
            elif docs[path].bufnr is None and self.gateway.oversized(path) is not None:
                out[path] = SymbolTree([])  # a server would read all of it: not asked
            else:
                missing.append(path)
        if not missing:
            return out
        calls = [
            LspCall(client.id, "textDocument/documentSymbol",
                    {"textDocument": {"uri": uri_of(p)}}, docs[p].bufnr, packed=True)
            for p in missing
        ]
        answers = await self.servers.lsp(calls)
        retry = []
        for path, answer in zip(missing, answers, strict=True):
            # An error, or nothing for a file not loaded: the server does not know the file
            # (it needs didOpen, or the file appeared after the server started).
            if answer.error or (not answer.result and docs[path].bufnr is None):
                retry.append(path)
                continue
            out[path] = self._cache(path, docs[path], answer.result, client)
        if retry:
            # Open them as hidden buffers (a call each), then ask about all of them at once.
            bufnrs = [await self.gateway.open(path) for path in retry]
            fresh = await self.texts.documents(retry)
            method = "textDocument/documentSymbol"
            answers = await self.servers.lsp([
                LspCall(client.id, method, {"textDocument": {"uri": uri_of(path)}}, bufnr, packed=True)
                for path, bufnr in zip(retry, bufnrs, strict=True)
            ])
            for path, answer in zip(retry, answers, strict=True):
                result = None if answer.error else answer.result
                out[path] = self._cache(path, fresh[path], result, client)
        return out

    def _cache(self, path: Path, doc: Document, result: Json, client: Client) -> SymbolTree:
        """The file's tree from the server's answer, decoded here (`document_symbols`; a
        malformed one is the server's error), kept for this version of its text."""
        tree = build_tree(decoded(document_symbols, result, client.name, SYMBOLS), doc.lines, encoding_of(client))
        self._trees[path] = (doc.version, tree)
        return tree

    async def tree(self, target: Target, doc: Document) -> SymbolTree:
        """The file's symbols from the server best for them, whichever answers the request
        (a format of `messy.py:f` is ruff's, its symbol `f` basedpyright's); none: empty."""
        client = target.client_for(SYMBOLS)
        if client is None:
            return SymbolTree([])
        return (await self.of([target.path], client, {target.path: doc}))[target.path]
