"""Code actions and formatting from every attached server, applied by the bridge's own edit
engine (doc/architecture.md, Code actions).

What the `code_actions`/`code_action`/`format` modes and the text format's `! FIX`,
`! ORGANIZE_IMPORTS` and `! FORMAT` share: gathering the actions of every server attached
to a file (each asked with its own diagnostics of the range), choosing one by kind, title
(the anchor matcher's tiers, applied to titles) or diagnostic, and running it: resolved
through `codeAction/resolve` when the server sends it bare, its edit through
`edits.apply_workspace_edit`, its command through `workspace/executeCommand`.

A command's edits come back as `workspace/applyEdit` requests while it runs. The bridge
takes them (`EditorGateway.lsp(taking=…)`, a handler of that client only while the command
is pending and for `gateway.TAKE_GRACE` after its reply) instead of letting Neovim apply
them: each is checked as it comes (well formed, inside the workspace) and answered at once
(`applied: false` for a refused one, and for every one after it), and once the command
has returned the edits it sent are applied through the engine as ONE edit, or none of
them. So a command that fails part-way, or sends one edit the bridge refuses, changes
nothing, and the edit policy, the checks before writing and the one undo step per buffer
hold as for any other edit.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cachetools import LRUCache
from lsprotocol import types
from pydantic import Field, model_validator

from . import indentation
from .changes import undo_hint
from .diagnostics import Diagnostic, DiagnosticDelta, DiagnosticMap, settled
from .edits.apply import EditResult, apply_workspace_edit
from .edits.plan import preview, preview_text
from .edits.text import NOTHING
from .edits.workspace_edit import check_edit, merged
from .errors import Candidate, ErrorCode, LsapError
from .gateway import Client, LspAnswer, LspCall
from .jsonvalue import Params
from .locate.anchor import format_anchor
from .locate.matcher import Needle, find_matches
from .lsp import structure
from .models import LineScope, Locate, Overwritten, Report, Request, Row, SymbolScope, absent
from .position import Document, to_lsp_character
from .report.pieces import DiagnosticRow, diagnostic_row, incomplete
from .resolve import resolve
from .session.calls import Servers
from .session.targets import EVERY_SERVER, Target, ranked
from .session.warm import Session
from .workspace import Workspace, uri_of

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
# Asked for when no kind is given: servers that offer source actions only when asked for
# them (typescript-language-server's organise imports) list them too.
EVERY_KIND = ["quickfix", "refactor", "source"]
DIAGNOSTICS_SHOWN = 20  # diagnostics of the changed files listed after an edit
DIAGNOSTICS_ASKED = 30  # diagnostics asked about at their own range by one listing

# Applies one WorkspaceEdit of a server (the engine, or the text format's tracker of lines).
Apply = Callable[[dict[str, Any], Client, str], Awaitable[EditResult]]


class WhereRequest(Request):
    """Where code actions or formatting apply: the line of an anchor, the lines from
    `locate` to `end` (anchor to anchor), or a whole file (`file_path`); `server` names one
    of the attached servers (else every one is asked)."""

    locate: Locate | None = None
    end: Locate | None = None
    file_path: str | None = None
    server: str | None = None

    @model_validator(mode="after")
    def _one_place(self) -> WhereRequest:
        if (self.locate is None) == (self.file_path is None):
            raise ValueError("give `locate` (a line, or with `end` a range of lines) or "
                             "`file_path` (the whole file), not both or neither")
        if self.end is not None and self.locate is None:
            raise ValueError("`end` closes a range that `locate` opens: give `locate` too")
        return self


@dataclass(frozen=True)
class Place:
    """A request's place resolved: a file and its lines (0-based, both included; None:
    the whole file), and how to say it."""

    path: Path
    lines: tuple[int, int] | None
    where: str


async def place_of(session: Session, request: WhereRequest, method: str,
                   whole_symbol: bool = False) -> Place:
    """`whole_symbol`: a symbol anchor alone (`messy.py:f`) is the symbol's lines, not the
    line of its name (a format of `f` formats `f`)."""
    if request.locate is None:
        assert request.file_path is not None
        path = session.workspace.resolve(request.file_path)
        return Place(path, None, session.workspace.display(path))
    first = await resolve(session, request.locate, method)
    scope = request.locate.scope
    if whole_symbol and request.end is None and request.locate.find is None and isinstance(scope, SymbolScope):
        tree = await session.symbols.tree(first.target, first.doc)
        span = next(s.span for s in tree.find(scope.symbol_path)
                    if (s.selection.start_line, s.selection.start_col) == (first.line, first.column))
        return Place(first.path, (span.start_line, span.end_line),
                     f"{format_anchor(request.locate)} (lines {span.start_line + 1}-{span.end_line + 1})")
    if request.end is None and request.locate.find is None and isinstance(scope, LineScope) and (
            scope.end_line > scope.start_line + 1):  # lines of a scope (`:'<,'>LsapActions`)
        last_line = min(scope.end_line - 2, max(0, len(first.doc.lines) - 1))
        return Place(first.path, (first.line, max(first.line, last_line)),
                     f"{session.workspace.display(first.path)}:{first.line + 1}-{last_line + 1}")
    if request.end is None:
        return Place(first.path, (first.line, first.line), f"{format_anchor(request.locate)} "
                     f"(line {first.line + 1})")
    last = await resolve(session, request.end, method)
    if last.path != first.path or last.line < first.line:
        raise LsapError(
            ErrorCode.INVALID_REQUEST,
            "`end` must be in the same file as `locate`, at or after its line "
            f"({session.workspace.display(last.path)}:{last.line + 1} is not)",
            hint="give `end` an anchor further down the same file",
        )
    return Place(first.path, (first.line, last.line),
                 f"{session.workspace.display(first.path)}:{first.line + 1}-{last.line + 1}")


ACTIONS = 256  # listed code actions kept for `code_action_execute`


@dataclass
class Action:
    """One code action as a server offered it, kept (by `id`) for `code_action_execute`."""

    id: str
    client: Client
    raw: dict[str, Any]  # the server's CodeAction (a bare Command is wrapped as one)
    path: Path
    bufnr: int
    version: str  # the file's version it was computed on

    @functools.cached_property
    def lsp(self) -> types.CodeAction:
        """The action as lsprotocol types it (lsp.py), read once; `raw` is what goes back to
        the server (resolve, its `data` as sent)."""
        return structure(self.raw, types.CodeAction, self.client.name, CODE_ACTION)

    @property
    def title(self) -> str:
        return self.lsp.title

    @property
    def kind(self) -> str:
        kind = self.lsp.kind
        return "" if kind is None else kind.value if isinstance(kind, types.CodeActionKind) else kind

    @property
    def preferred(self) -> bool:
        return bool(self.lsp.is_preferred)

    @property
    def disabled(self) -> str | None:
        disabled = self.lsp.disabled
        return None if disabled is None else disabled.reason or "disabled"

    @property
    def fixes(self) -> list[str]:
        """The codes (else messages) of the diagnostics it says it fixes."""
        return [str(d.code) if d.code not in (None, "") else d.message.split("\n")[0]
                for d in self.lsp.diagnostics or []]

    @property
    def runs_command(self) -> bool:
        return self.lsp.command is not None


class Actions(LRUCache[str, Action]):
    """Listed code actions by `action_id`, kept on the session (`Kept.owned`); the file's
    version is checked when one runs."""

    def __init__(self) -> None:
        super().__init__(ACTIONS)


def of_kind(kind: str, wanted: str) -> bool:
    """Kinds are hierarchical: `source` covers `source.organizeImports.ruff`."""
    return kind == wanted or kind.startswith(wanted + ".")


def answers_kind(kind: str, wanted: str) -> bool:
    """Whether an action a server offered when asked for `wanted` is of that kind: under it,
    or labelled with a broader kind (typescript-language-server calls its extractions
    `refactor`, asked for `refactor.extract`)."""
    return bool(kind) and (of_kind(kind, wanted) or of_kind(wanted, kind))


def _matches_diagnostic(d: Diagnostic, wanted: str) -> bool:
    return d.code == wanted or (bool(wanted) and wanted.lower() in d.message.lower())


@dataclass
class Gathered:
    """The actions of every server asked, and what went wrong with some of them."""

    target: Target
    doc: Document
    actions: list[Action]
    servers: list[str]  # the servers asked
    errors: list[str] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)  # of the range, all servers
    before: DiagnosticMap | None = None  # the file's, when they were asked for


def _lsp_range(doc: Document, first: int, last: int, client: Client) -> Params:
    """Whole lines `first` to `last`, in the server's units."""
    lines = doc.lines or [""]
    last = min(last, len(lines) - 1)
    end = to_lsp_character(lines[last], len(lines[last]), Servers.encoding(client))
    return {"start": {"line": first, "character": 0}, "end": {"line": last, "character": end}}


def _overlaps(d: Diagnostic, first: int, last: int) -> bool:
    return d.line <= last and d.end_line >= first


async def clients_of(session: Session, target: Target, method: str,
                     server: str | None) -> list[Client]:
    """Every server attached to the target's file that has `method` (the one named, if any)."""
    attached = await session.gateway.wait_for_clients(target.bufnr, EVERY_SERVER)
    able = session.servers.named(ranked(attached, method), server, method, target.path)
    if not able:
        raise session.servers.unsupported(method, attached, target.path)
    await session.servers.ready(able)
    return able


async def gather(session: Session, path: Path, lines: tuple[int, int] | None, *,
                 kind: str | None = None, diagnostic: str | None = None,
                 server: str | None = None) -> Gathered:
    """Ask every server attached to `path` for its code actions on `lines` (0-based, both
    included; None: the whole file), each with its own diagnostics there, and about each
    of those diagnostics at its own range (bounded: `DIAGNOSTICS_ASKED`).

    `diagnostic`: a diagnostic's code or part of its message: each such diagnostic is asked
    about at its own range, from the server that reported it, and only the actions fixing
    it are kept (quick fixes that name no diagnostic count as fixing what they were asked
    about)."""
    target = await session.servers.target(path, CODE_ACTION)
    clients = await clients_of(session, target, CODE_ACTION, server)
    # The context's diagnostics are what quick fixes are computed from; source actions and
    # refactorings (organise imports, extract) do not need them, nor the wait for them.
    needed = diagnostic is not None or kind is None or answers_kind("quickfix", kind)
    before = await session.diagnostics.of([path]) if needed else None
    found = before.get(path, []) if before is not None else []
    doc = target.doc or await session.texts.document(path)
    first, last = lines if lines is not None else (0, max(0, len(doc.lines) - 1))
    here = [d for d in found if _overlaps(d, first, last)]
    # Asked by the kind's top level (`refactor` for `refactor.extract`): servers compare
    # kinds their own way (typescript-language-server offers no extraction for
    # `refactor.extract`); the answer is narrowed here (`answers_kind`).
    only = [kind.split(".")[0]] if kind else EVERY_KIND
    calls: list[LspCall] = []
    notes: list[str] = []
    by_id = {c.id: c for c in clients}
    if diagnostic is not None:
        chosen = [d for d in here if _matches_diagnostic(d, diagnostic)]
        if not chosen:
            listed = ", ".join(sorted({d.code or d.message.split("\n")[0] for d in here})) or "none"
            raise LsapError(
                ErrorCode.NOT_FOUND,
                f"no diagnostic {diagnostic!r} in {session.workspace.display(path)}"
                + (f" at lines {first + 1}-{last + 1}" if lines is not None else "")
                + f" (diagnostics there: {listed})",
                hint="give a diagnostic's code (`F401`, `2304`) or part of its message",
            )
        for d in chosen:
            for client in clients:
                if d.client == client.id and d.lsp is not None:
                    params = {"textDocument": {"uri": uri_of(path)}, "range": d.lsp["range"],
                              "context": {"diagnostics": [d.lsp], "triggerKind": 1, "only": only}}
                    calls.append(LspCall(client.id, CODE_ACTION, params, target.bufnr))
    else:
        # Each diagnostic there is asked about at its own range too: servers compute a quick
        # fix at the diagnostic's span (tsserver's "Add import" needs the missing name's,
        # not the line's). Quick fixes come first, as editors list them.
        asked = [d for d in here if d.lsp is not None and d.client in by_id] if needed else []
        if len(asked) > DIAGNOSTICS_ASKED:
            notes.append(f"quick fixes were asked for the first {DIAGNOSTICS_ASKED} of the "
                         f"{len(asked)} diagnostics there: ask about a line or a `diagnostic` "
                         "for the others")
            asked = asked[:DIAGNOSTICS_ASKED]
        for d in asked:
            assert d.lsp is not None and d.client is not None
            params = {"textDocument": {"uri": uri_of(path)}, "range": d.lsp["range"],
                      "context": {"diagnostics": [d.lsp], "triggerKind": 1, "only": only}}
            calls.append(LspCall(d.client, CODE_ACTION, params, target.bufnr))
        for client in clients:
            own = [d.lsp for d in here if d.client == client.id and d.lsp is not None]
            params = {"textDocument": {"uri": uri_of(path)},
                      "range": _lsp_range(doc, first, last, client),
                      "context": {"diagnostics": own, "triggerKind": 1, "only": only}}
            calls.append(LspCall(client.id, CODE_ACTION, params, target.bufnr))
    # Quick fixes come with their code (an added function, a missing member): tsserver
    # writes it in the file's indent only once told.
    told = [c for c in [await tsserver_configure(session, client, path, target.bufnr, doc.lines)
                        for client in clients] if c is not None]
    answers = (await session.servers.lsp(told + calls, target))[len(told):]  # guarded by the text held, if warm
    gathered = Gathered(target, doc, [], [c.name for c in clients], diagnostics=here, before=before)
    seen: set[str] = set()
    effects: set[str] = set()  # the same action offered for the line and for a diagnostic
    for call, answer in zip(calls, answers, strict=True):
        client = by_id[call.client_id]
        if answer.error:
            gathered.errors.append(f"{client.name} failed {CODE_ACTION}: "
                                   f"{answer.error.get('message', answer.error)}")
            continue
        for raw in answer.result or []:
            if not isinstance(raw, dict):
                continue
            if isinstance(raw.get("command"), str):  # a bare Command
                raw = {"title": raw.get("title", raw["command"]), "command": raw}
            action = _action(client, raw, path, target.bufnr, doc.version)
            try:
                action.lsp  # noqa: B018  (structured once, here: a malformed action is named, not listed)
            except LsapError as error:
                notes.append(error.message)
                continue
            wanted = kind is None or answers_kind(action.kind, kind)
            # (not its `data`: vtsls puts the range it was asked for there)
            effect = json.dumps([client.id, action.title, action.kind, raw.get("edit"),
                                 raw.get("command")], sort_keys=True, default=str)
            if action.id in seen or effect in effects or not wanted:
                continue
            if diagnostic is not None and not (
                    any(f == diagnostic or diagnostic.lower() in f.lower() for f in action.fixes)
                    or (not action.fixes and of_kind(action.kind, "quickfix"))):
                continue
            seen.add(action.id)
            effects.add(effect)
            gathered.actions.append(action)
    if calls and len(gathered.errors) == len(calls):
        raise LsapError(ErrorCode.SERVER_ERROR, "; ".join(gathered.errors), hint="ask again")
    gathered.errors += notes
    for action in gathered.actions:
        session.kept.owned(Actions)[action.id] = action
    return gathered


def _action(client: Client, raw: dict[str, Any], path: Path, bufnr: int, version: str) -> Action:
    key = json.dumps([client.name, raw.get("title"), raw.get("kind"), str(path), version,
                      raw.get("diagnostics")], sort_keys=True, default=str)
    return Action(hashlib.sha1(key.encode()).hexdigest()[:8], client, raw, path, bufnr, version)


def by_title(actions: list[Action], title: str) -> list[Action]:
    """The actions whose title the text names, by the anchor matcher's tiers (exact, then
    whitespace, unicode, fuzzy, case): the first tier with a match decides."""
    if not actions:
        return []
    result = find_matches([a.title for a in actions], Needle(title, None))
    return [actions[m.line] for m in result.matches]


def kept(session: Session, action_id: str) -> Action:
    action: Action | None = session.kept.owned(Actions).get(action_id)
    if action is None:
        raise LsapError(
            ErrorCode.NOT_FOUND,
            f"no listed code action has the id {action_id!r} (unknown, or listed too long ago)",
            hint="list them again with `code_actions`, or run one in one step with `code_action`",
        )
    return action


def one(actions: list[Action], what: str, where: str, offered: list[Action] | None = None) -> Action:
    """The action a request names: the only one, else the only preferred one; several are
    `ambiguous` (listed with their servers), none is `not_found` (listing what is `offered`
    there, when given)."""
    usable = [a for a in actions if a.disabled is None] or actions
    if len(usable) > 1:
        preferred = [a for a in usable if a.preferred]
        usable = preferred if len(preferred) == 1 else usable
    if len(usable) == 1:
        return usable[0]
    if not usable:
        raise LsapError(ErrorCode.NOT_FOUND, f"no code action {what} at {where}",
                        hint="name one of the actions listed" if offered else
                        "list what there is with `code_actions` (no `kind` or `title`)",
                        candidates=_candidates((offered or [])[:10]))
    raise LsapError(
        ErrorCode.AMBIGUOUS,
        f"{len(usable)} code actions {what} at {where}",
        hint="name one by more of its title, by its `action_id`, or by `server`",
        candidates=_candidates(usable),
    )


def _candidates(actions: list[Action]) -> list[Candidate]:
    return [Candidate(i + 1, f"{a.title} ({a.kind or 'no kind'}, {a.client.name}, id {a.id})")
            for i, a in enumerate(actions)]


def narrow(actions: list[Action], *, title: str | None) -> list[Action]:
    return by_title(actions, title) if title else actions


# -- running an action -------------------------------------------------------------------


@dataclass
class Taken:
    """What a server asked of the bridge while the bridge ran its command: its edits, each
    checked as it comes (well formed, inside the workspace) and answered at once (the server
    waits for the answer before it goes on); the first refused one refuses the rest, and
    none of them is applied (`run_action`)."""

    workspace: Workspace
    server: str
    edits: list[dict[str, Any]] = field(default_factory=list)
    refused: list[LsapError] = field(default_factory=list)
    remarks: list[str] = field(default_factory=list)

    def __call__(self, method: str, params: Any) -> Any:
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


# -- formatting ----------------------------------------------------------------------------


async def formatter(session: Session, path: Path, lines: tuple[int, int] | None,
                    server: str | None) -> tuple[Target, Client]:
    """The server that formats the file (or `lines` of it): the one named, else the
    formatter (`session.targets.ranked`)."""
    method = RANGE_FORMATTING if lines is not None else FORMATTING
    target = await session.servers.target(path, method, server)
    return target, target.client


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


async def formatting(session: Session, path: Path, lines: tuple[int, int] | None,
                     target: Target, client: Client) -> dict[str, Any]:
    """The server's formatting of the file or of `lines` now, as a WorkspaceEdit."""
    method = RANGE_FORMATTING if lines is not None else FORMATTING
    doc = await session.texts.document(path)
    options = await formatting_options(session, target.bufnr, doc.lines)
    params: dict[str, Any] = {"textDocument": {"uri": uri_of(path)}, "options": options}
    if lines is not None:
        params["range"] = _lsp_range(doc, lines[0], lines[1], client)
    answer = (await session.servers.lsp([LspCall(client.id, method, params, target.bufnr)]))[0]
    if answer.error:
        raise LsapError(ErrorCode.SERVER_ERROR,
                        f"{client.name} failed {method}: {answer.error.get('message', answer.error)}",
                        hint="nothing was changed; check the file parses, then ask again")
    return {"changes": {uri_of(path): answer.result or []}}


async def organize(session: Session, path: Path, where: str, server: str | None, apply: Apply,
                   client: Client | None = None) -> Ran:
    """Organise the imports of `path`: the organise-imports action of `client` (the
    formatting server) when it offers one, else the only one offered; then that server's
    remove-unused-imports action when it has one (typescript-language-server's organise
    only sorts and combines). The remarks say what each step changed."""
    found = await gather(session, path, None, kind="source", server=server)
    organizing = [a for a in found.actions if of_kind(a.kind, ORGANIZE_IMPORTS)]
    own = [a for a in organizing if client is not None and a.client.id == client.id]
    first = one(own or organizing, f"of kind {ORGANIZE_IMPORTS!r}", where)
    removing = [a for a in found.actions
                if a.client.id == first.client.id and of_kind(a.kind, REMOVE_UNUSED_IMPORTS)]
    ran = Ran()
    changed = await _organize_step(session, first, apply, ran)
    if removing and changed:  # listed before the first step changed the file: ask again
        again = await gather(session, path, None, kind=REMOVE_UNUSED_IMPORTS, server=first.client.name)
        removing = [a for a in again.actions if a.client.id == first.client.id]
    if removing:
        changed = await _organize_step(session, one(removing, "removing unused imports", where),
                                       apply, ran) or changed
    if not changed:
        ran.remarks.append("the imports were already organised" if removing else
                           f"the imports were already sorted ({first.client.name} offers no "
                           "action that removes unused imports: see the diagnostics)")
    return ran


async def _organize_step(session: Session, action: Action, apply: Apply, ran: Ran) -> bool:
    """Run one step of organising the imports, adding to `ran` what it did and a remark
    saying what it changed; False when it changed nothing."""
    before = (await session.texts.document(action.path)).lines
    try:
        done = await run_action(session, action, apply)
    except LsapError as error:
        if error.code is ErrorCode.NOT_FOUND and "changed nothing" in error.message:
            return False
        raise
    after = (await session.texts.document(action.path)).lines
    if before == after:  # an empty edit: nothing to report (nor to call organised, if the format fails)
        return False
    ran.results += done.results
    ran.servers += done.servers
    ran.remarks += done.remarks
    ran.remarks.append(f"{action.title} ({action.client.name}): {change_note(before, after)}")
    return True


def change_note(before: list[str], after: list[str], shown: int = 3) -> str:
    """What an edit of a few lines did, in words: the lines it removed and added (up to
    `shown` of each), or that it only reordered them."""
    gone = list((Counter(before) - Counter(after)).elements())
    came = list((Counter(after) - Counter(before)).elements())
    if not gone and not came:
        return "reordered lines"

    def some(lines: list[str]) -> str:
        listed = ", ".join(f"`{line.strip()}`" for line in lines[:shown])
        return listed + (f" and {len(lines) - shown} more" if len(lines) > shown else "")

    parts = [f"removed {some(gone)}"] if gone else []
    parts += [f"added {some(came)}"] if came else []
    return "; ".join(parts)


async def format_steps(session: Session, place: Place, organize_imports: bool,
                       server: str | None, apply: Apply | None = None) -> Ran:
    """Organise the imports (when asked: the formatting server's own action if it offers
    one, else the only one offered), then format; each step through the engine (`apply`:
    `edits.apply_workspace_edit` unless given)."""
    target, client = await formatter(session, place.path, place.lines, server)
    ran = Ran()

    async def engine(edit: dict[str, Any], by: Client, label: str) -> EditResult:
        return await apply_workspace_edit(session, edit, by, label=label)

    apply = apply or engine
    if organize_imports:
        done = await organize(session, place.path, place.where, server, apply, client)
        ran.results += done.results
        ran.servers += done.servers
        ran.remarks += done.remarks
    try:
        edit = await formatting(session, place.path, place.lines, target, client)
        ran.add(await apply(edit, client, f"format {place.where} ({client.name})"), client)
    except LsapError as error:
        if not ran.results:
            raise  # nothing was applied: the error is the whole answer
        # The imports were organised (and stay so): the report says so, and why the format was not.
        ran.stopped = f"the format was not applied ({error.code.value}: {error.message}); the imports were organised"
    return ran


# -- the report after an edit ------------------------------------------------------------------


class Changed(Row):
    path: str
    edits: int
    saved: bool
    disk_differs: bool
    beside_unsaved: bool = False  # saved, and its buffer keeps the human's unsaved changes too
    added: int  # lines
    removed: int


class FileDiagnostic(DiagnosticRow):
    path: str


class Applied(Report):
    """What an action or a formatting changed, and the diagnostics of the changed files."""

    title: str
    kind: str | None
    server: str
    action_id: str | None = absent()
    changed: list[Changed]
    unsaved: list[str]
    created: list[str]
    renamed: list[str] = Field(default_factory=list)  # `old → new`
    overwritten: list[Overwritten] = Field(default_factory=list)  # existing files a consented overwrite replaced
    compared: bool  # the diagnostics before were known: `fixed` and `new_diagnostics` say
    fixed: list[FileDiagnostic]  # diagnostics there before and gone after
    new_diagnostics: list[FileDiagnostic]
    diagnostics: list[FileDiagnostic]  # every diagnostic of the changed files after (bounded)
    diagnostics_total: int
    pending: list[str]
    remarks: list[str]
    undo: list[str]  # the requests that take its change sets back, in order
    stopped: str | None = absent()  # a step failed after earlier ones were applied (`Ran.stopped`)
    # Files it did not change whose diagnostics matter: users of moved names it could not rewrite.
    related: list[str] | None = absent()


async def applied(session: Session, title: str, kind: str | None,
                  work: Callable[[], Awaitable[Ran]], action_id: str | None = None,
                  watched: list[Path] | None = None,
                  before: DiagnosticMap | None = None) -> Applied:
    """Run `work` (edits through the engine) and report it: lines added and removed per
    file, the diagnostics of the changed files after, and, given those from before (as the
    request already read them, for a quick fix), which it fixed and which it introduced.
    Line counts are the engine's (what it wrote, not a reread that a later write could
    change); the diagnostics after are the servers' on the text written: settled
    (`Session.diagnostics(after_sync=True)`: each server published for the buffer's
    text after the write and finished its pass), else the file is named `pending`."""
    watched = [p for p in watched or [] if p.is_file()]
    ran = await work()
    display = session.workspace.display
    paths = list(dict.fromkeys([*watched, *(session.workspace.resolve(f.path)
                                            for r in ran.results for f in r.files)]))
    # The evidence `check` waits for: each server analysed the files after it read the edit.
    now = [p for p in paths if p.is_file()]
    structural = any(r.created or r.renamed for r in ran.results)
    if session.diagnostics.is_deferred:  # the caller reads them after all its edits
        after, before = DiagnosticMap(), None
    else:
        after, _ = await settled(lambda: session.diagnostics.of(now, after_sync=True), structural)
    changed = [Changed(path=f.path, edits=f.edits, saved=f.saved, disk_differs=f.disk_differs,
                       beside_unsaved=f.beside_unsaved, added=f.added, removed=f.removed)
               for result in ran.results for f in result.files]

    def rows(found: dict[Path, list[Diagnostic]]) -> list[FileDiagnostic]:
        return [FileDiagnostic(path=display(p), **diagnostic_row(d)) for p, items in found.items()
                for d in items]

    every = rows({p: after.get(p, []) for p in paths})
    return Applied(
        title=title, kind=kind, server=", ".join(dict.fromkeys(ran.servers)), action_id=action_id,
        changed=changed,
        unsaved=[u for r in ran.results for u in r.unsaved],
        created=[c for r in ran.results for c in r.created],
        renamed=[f"{a} → {b}" for r in ran.results for a, b in r.renamed],
        overwritten=[Overwritten(path=p, lines=n) for r in ran.results for p, n in r.overwritten],
        compared=before is not None,
        fixed=rows(DiagnosticDelta.between(after, before).new) if before is not None else [],
        new_diagnostics=rows(DiagnosticDelta.between(before, after).new) if before is not None else [],
        diagnostics=every[:DIAGNOSTICS_SHOWN], diagnostics_total=len(every),
        pending=[f"{display(p)} ({reason})" for p, reason in after.pending.items()],
        **incomplete(bool(after.pending)),
        undo=[undo_hint(r.change) for r in ran.results if r.change],
        remarks=ran.remarks,
        stopped=ran.stopped,
    )
