"""The LSP methods and commands that code actions and formatting use, whole lines as an LSP
range, a buffer's formatting options, and the calls to tsserver behind
typescript-language-server (`configure` with the file's indent, a refactoring's edits).
"""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict, cast

from .. import indentation
from ..editor import Client
from ..gateway import LspAnswer, LspCall
from ..jsonvalue import Params, obj
from ..position import Document, to_lsp_character
from ..session.targets import encoding_of
from ..session.warm import Session

CODE_ACTION = "textDocument/codeAction"
RESOLVE = "codeAction/resolve"
EXECUTE = "workspace/executeCommand"
EDITOR_RENAME = "editor.action.rename"
APPLY_EDIT = "workspace/applyEdit"
FORMATTING = "textDocument/formatting"
RANGE_FORMATTING = "textDocument/rangeFormatting"
TSSERVER = "typescript.tsserverRequest"  # typescript-language-server's way to tsserver
ORGANIZE_IMPORTS = "source.organizeImports"
REMOVE_UNUSED_IMPORTS = "source.removeUnusedImports"  # typescript-language-server's


def lsp_range(doc: Document, first: int, last: int, client: Client) -> Params:
    """Whole lines `first` to `last`, in the server's units."""
    lines = doc.lines or [""]
    last = min(last, len(lines) - 1)
    end = to_lsp_character(lines[last], len(lines[last]), encoding_of(client))
    return {"start": {"line": first, "character": 0}, "end": {"line": last, "character": end}}


async def formatting_options(session: Session, bufnr: int, lines: list[str]) -> indentation.Options:
    """The `FormattingOptions` of a buffer (its settings, else its code's indent): for
    formatting, and for servers that write new code (tsserver's `configure`)."""
    settings = await session.gateway.call("indent_settings", bufnr)
    return indentation.options(settings if isinstance(settings, dict) else {}, lines)


async def tsserver_configure(session: Session, client: Client, path: Path, bufnr: int, lines: list[str],
                             more: Params | None = None) -> LspCall | None:
    """tsserver's `configure` for a file: its indent (tsserver's default is 4 spaces), for
    the code a refactoring writes (extract, "Move to file"), and the format options in
    `more`; None when the server is no typescript-language-server. Sent just before the
    request that writes the code: typescript-language-server configures a file itself
    only when its own options for it change."""
    if TSSERVER not in await session.gateway.server_commands(client.id):
        return None
    indent = await formatting_options(session, bufnr, lines)
    options = {"indentSize": indent["tabSize"], "tabSize": indent["tabSize"],
               "convertTabsToSpaces": indent["insertSpaces"], **(more or {})}
    params: Params = {"command": TSSERVER, "arguments": ["configure", {"file": str(path), "formatOptions": options}]}
    return LspCall(client.id, EXECUTE, params, bufnr)


async def tsserver_refactor(session: Session, client: Client, path: Path, bufnr: int, lines: list[str],
                            arguments: Params, style: Params) -> LspAnswer:
    """tsserver's edits for a refactoring (`getEditsForRefactor`: "Move to file"), in one
    round trip with the `configure` before it (the file's indent and `style`: the code it
    writes follows the file's) and, after `semicolons: remove`, the one that puts tsserver's
    default ("ignore") back. For a typescript-language-server (`TSSERVER`)."""
    configure = await tsserver_configure(session, client, path, bufnr, lines, style)
    assert configure is not None  # the caller checked the server has TSSERVER

    def command(name: str, args: Params) -> LspCall:
        return LspCall(client.id, EXECUTE, {"command": TSSERVER, "arguments": [name, args]}, bufnr)

    calls = [configure, command("getEditsForRefactor", arguments)]
    if style.get("semicolons") == "remove":
        calls.append(command("configure", {"file": str(path), "formatOptions": {"semicolons": "ignore"}}))
    return (await session.servers.lsp(calls))[1]


class TsLocation(TypedDict):
    """tsserver's position: 1-based line and UTF-16 offset (0/0 in a new file)."""

    line: int
    offset: int


class TsTextChange(TypedDict):
    start: TsLocation
    end: TsLocation
    newText: str


class _FileEdits(TypedDict):
    fileName: str


class TsFileEdits(_FileEdits, total=False):
    """A file's edits in a refactoring's answer (`FileCodeEdits`)."""

    textChanges: list[TsTextChange]
    isNewFile: bool


def refactor_edits(answer: LspAnswer) -> tuple[list[TsFileEdits], str]:
    """A `getEditsForRefactor` answer's edits by file (tsserver's `RefactorEditInfo`, as
    tsserver sends it: not checked further), or none and why."""
    result = obj(answer.result)
    edits = obj(result.get("body")).get("edits")
    if answer.error or not isinstance(edits, list) or not edits:
        return [], str((answer.error or {}).get("message") or result.get("message") or "no edits")
    return cast(list[TsFileEdits], edits), ""
