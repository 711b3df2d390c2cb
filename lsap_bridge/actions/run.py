"""Running one code action: resolved when the server sent it bare, its edit applied through
the engine, its command run with the edits it sends back taken (`Taken`), checked as they
come, and applied as one edit once it returned.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..editor import Client
from ..edits.apply import EditResult
from ..edits.plan import preview, preview_text
from ..edits.text import NOTHING
from ..edits.workspace_edit import check_edit, merged
from ..errors import ErrorCode, LsapError
from ..gateway import LspCall
from ..jsonvalue import Jsonable, JsonObject
from ..session.warm import Session
from ..workspace import Workspace
from .gather import Action, Actions
from .lsp_calls import APPLY_EDIT, EDITOR_RENAME, EXECUTE, RESOLVE, tsserver_configure

# Applies one WorkspaceEdit of a server (the engine, or the text format's tracker of lines).
Apply = Callable[[object, Client, str], Awaitable[EditResult]]


@dataclass
class Taken:
    """What a server asked of the bridge while the bridge ran its command: its edits, each
    checked as it comes (well formed, inside the workspace) and answered at once (the server
    waits for the answer before it goes on); the first refused one refuses the rest, and
    none of them is applied (`run_action`)."""

    workspace: Workspace
    server: str
    edits: list[JsonObject] = field(default_factory=list)
    refused: list[LsapError] = field(default_factory=list)
    remarks: list[str] = field(default_factory=list)

    def __call__(self, method: str, params: object) -> Jsonable:
        if method == APPLY_EDIT:
            edit = params.get("edit") if isinstance(params, dict) else None
            try:
                check_edit(self.workspace, edit, self.server)
            except LsapError as error:
                self.refused.append(error)
            if self.refused:
                return {"applied": False, "failureReason": self.refused[0].message}
            assert isinstance(edit, dict)
            self.edits.append(edit)
            return {"applied": True}
        # tsserver's `_typescript.rename`: it would have an editor start renaming what the
        # refactoring created (an extracted function's made-up name).
        self.remarks += renaming(params.get("position") if isinstance(params, dict) else None)
        return None


def renaming(where: object) -> list[str]:
    """The remark for a server's wish that the editor start renaming at `where` (an LSP
    position): the agent renames with a name of its own."""
    if not isinstance(where, dict) or not isinstance(where.get("line"), int):
        return []
    return [f"the server suggests renaming what it created, at line {where['line'] + 1}: "
            "use `rename` with a name of your own"]


@dataclass
class Ran:
    """Actions run: the engine's result for each edit applied, the servers whose edits they
    were, and remarks."""

    results: list[EditResult] = field(default_factory=list)
    servers: list[str] = field(default_factory=list)
    remarks: list[str] = field(default_factory=list)
    # A later step that failed after earlier ones were applied: what was and was not done.
    stopped: str | None = None

    def add(self, result: EditResult, client: Client) -> None:
        self.results.append(result)
        self.servers.append(client.name)


async def resolved(session: Session, action: Action) -> dict[str, Any]:
    """The action with its edit, asking the server (`codeAction/resolve`) when it sent it
    without one; a server that fails here is a `server_error` and nothing changes."""
    raw = action.raw
    # A command beside `data` runs after the edit still to resolve (vtsls's refactorings:
    # `_typescript.didApplyRefactoring`); a command alone is the action.
    if raw.get("edit") or (raw.get("command") and "data" not in raw) or not action.client.supports(RESOLVE):
        return raw
    # The resolved edit holds the refactoring's code (vtsls's extractions): in the file's indent.
    lines = (await session.texts.document(action.path)).lines
    configure = await tsserver_configure(session, action.client, action.path, action.bufnr, lines)
    calls = ([configure] if configure is not None else []) + [LspCall(action.client.id, RESOLVE, raw, action.bufnr)]
    answer = (await session.servers.lsp(calls))[-1]
    result = answer.result if isinstance(answer.result, dict) else {}
    if answer.error or not (result.get("edit") or result.get("command")):
        reason = (answer.error or {}).get("message", answer.error) if answer.error else (
            "it came back with neither an edit nor a command")
        raise LsapError(ErrorCode.SERVER_ERROR,
                        f"{action.client.name} failed to resolve {action.title!r}: {reason}",
                        hint="nothing was changed; list the actions again and ask again")
    return result


async def check_current(session: Session, action: Action) -> None:
    doc = await session.texts.document(action.path)
    if doc.version != action.version:
        session.kept.owned(Actions).pop(action.id, None)
        raise LsapError(
            ErrorCode.CONFLICT,
            f"{session.workspace.display(action.path)} changed since the action was listed",
            hint="nothing was changed; list the actions again for a fresh id",
        )


async def run_action(session: Session, action: Action, apply: Apply) -> Ran:
    """Run an action: its edit, then its command, whose edits are applied once it returned."""
    if action.disabled is not None:
        raise LsapError(ErrorCode.INVALID_REQUEST,
                        f"{action.title!r} is disabled: {action.disabled}",
                        hint="choose another action, or change the code first")
    await check_current(session, action)
    raw = await resolved(session, action)
    label = f"{action.title} ({action.client.name})"
    ran = Ran()
    if isinstance(raw.get("edit"), dict):
        ran.add(await apply(raw["edit"], action.client, label), action.client)
    command = raw.get("command")
    if isinstance(command, dict) and command.get("command") == EDITOR_RENAME:
        # vtsls's refactorings end with the editor's own command (VS Code's): start renaming
        # what they created, at [uri, position]. Not the server's to run: a remark.
        where = (command.get("arguments") or [[]])[0]
        ran.remarks += renaming(where[1] if isinstance(where, list) and len(where) > 1 else None)
        command = None
    if isinstance(command, dict) and command.get("command"):
        taken = Taken(session.workspace, action.client.name)
        params = {"command": command["command"], "arguments": command.get("arguments") or []}
        # A refactoring's command computes its code now: in the file's indent, first told
        # (a round trip of its own: a command of the batch that `taking` covers would end
        # the taking when it returns).
        lines = (await session.texts.document(action.path)).lines
        configure = await tsserver_configure(session, action.client, action.path, action.bufnr, lines)
        if configure is not None:
            await session.servers.lsp([configure])
        answer = (await session.servers.lsp([LspCall(action.client.id, EXECUTE, params, action.bufnr)],
                                    taking=taken))[0]
        done = "its edit was applied before the command; " if ran.results else ""
        sent = len(taken.edits) + len(taken.refused)
        if answer.error:
            raise LsapError(
                ErrorCode.SERVER_ERROR,
                f"{action.client.name} failed the command of {action.title!r}: "
                f"{answer.error.get('message', answer.error)}",
                hint=done + f"nothing the command asked for was changed (of the {sent} edit"
                f"{'s' if sent != 1 else ''} it sent, none was applied); ask again",
            )
        if taken.refused:
            first = taken.refused[0]
            raise LsapError(
                first.code,
                f"the command of {action.title!r} sent {sent} edit{'s' if sent != 1 else ''}, "
                f"applied whole or not at all: {first.message}",
                hint=done + "nothing the command asked for was changed; "
                + ((first.hint or "").removeprefix(NOTHING).lstrip("; ") or "choose another action"),
            )
        ran.remarks += taken.remarks
        if taken.edits:  # one edit: one check, one journal, one undo step per buffer
            ran.add(await apply(merged(taken.edits), action.client, label), action.client)
    if not ran.servers:  # neither an edit nor a command's: the report says nothing changed
        ran.servers.append(action.client.name)
    return ran


async def diff_preview(session: Session, action: Action) -> str | None:
    """The diff the action's edit would make, or None when a command computes it."""
    raw = await resolved(session, action)
    if not isinstance(raw.get("edit"), dict):
        return None
    return preview_text(await preview(session, raw["edit"], action.client))
