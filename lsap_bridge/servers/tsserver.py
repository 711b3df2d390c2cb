"""Diagnostics pulled through tsserver's own requests, for the servers whose adapter asks
(`Adapter.pulls_through_tsserver`: vtsls).

vtsls (VS Code's TypeScript extension over LSP) publishes a file's diagnostics only when
they change, so a clean file is never published: waiting for its push cannot tell "clean"
from "not analysed yet" (15 s per file, then "Not analysed yet"). It has no LSP pull
either, but it forwards tsserver requests (its `typescript.tsserverRequest` command), and
tsserver answers the `*DiagnosticsSync` ones for the text it has now (it serves requests
in order, after the buffer's latest `didChange`): those three answers are vtsls's pull.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from ..jsonvalue import Json, JsonObject, items, to_int
from ..lspcall import LspAnswer, LspCall
from .registry import adapter_for

COMMAND = "typescript.tsserverRequest"


class Client(Protocol):
    """What the pull needs of a client (`editor.Client`)."""

    @property
    def id(self) -> int: ...

    @property
    def name(self) -> str: ...

    def supports(self, method: str) -> bool: ...

# What tsserver's editor plugins ask after each change: syntax errors, type errors, and the
# suggestions (unused names, deprecations) VS Code shows as hints.
KINDS = ("syntacticDiagnosticsSync", "semanticDiagnosticsSync", "suggestionDiagnosticsSync")
SEVERITY = {"error": 1, "warning": 2, "message": 3, "suggestion": 4}


def pulls(client: Client) -> bool:
    """Whether this client's diagnostics are pulled through tsserver (see the module)."""
    return adapter_for(client.name).pulls_through_tsserver and client.supports("workspace/executeCommand")


def calls(client: Client, path: Path, bufnr: int | None) -> list[LspCall]:
    """The requests that pull one file's diagnostics, one per kind in `KINDS`."""
    return [
        LspCall(client.id, "workspace/executeCommand",
                {"command": COMMAND, "arguments": [kind, {"file": str(path)}]}, bufnr)
        for kind in KINDS
    ]


def report(answers: list[LspAnswer]) -> LspAnswer:
    """The answers of `calls` as one LSP full diagnostic report (`textDocument/diagnostic`'s
    shape), or the first failure."""
    found: list[JsonObject] = []
    for answer in answers:
        result = answer.result if isinstance(answer.result, dict) else {}
        if answer.error or not result.get("success"):
            return LspAnswer(error=answer.error or {"message": str(result.get("message") or "tsserver failed")})
        found += [lsp_diagnostic(d) for d in items(result.get("body")) if isinstance(d, dict)]
    return LspAnswer(result={"kind": "full", "items": list[Json](found)})


def lsp_diagnostic(item: JsonObject) -> JsonObject:
    """A tsserver diagnostic (1-based lines, 1-based UTF-16 offsets) as an LSP one, as
    vtsls itself would publish it (source `ts`, unused and deprecated tags)."""
    def position(at: Json) -> JsonObject:
        at = at if isinstance(at, dict) else {}
        return {"line": to_int(at.get("line", 1)) - 1, "character": to_int(at.get("offset", 1)) - 1}

    start = item.get("start")
    tags = [1] * bool(item.get("reportsUnnecessary")) + [2] * bool(item.get("reportsDeprecated"))
    out: JsonObject = {
        "range": {"start": position(start), "end": position(item.get("end") or start)},
        "severity": SEVERITY.get(str(item.get("category")), 1),
        "message": str(item.get("text", "")),
        "source": "ts",
    }
    if item.get("code") is not None:
        out["code"] = item["code"]
    if tags:
        out["tags"] = list[Json](tags)
    return out

