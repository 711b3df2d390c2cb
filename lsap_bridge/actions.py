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
is pending) instead of letting Neovim apply them: it answers the server at once that the
edit is taken, and applies every edit the command sent through the engine once the command
has returned. So a command that fails part-way changes nothing, and the edit policy, the
checks before writing and the one undo step per buffer hold as for any other edit.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import model_validator

from .diagnostics import Diagnostic, DiagnosticDelta, DiagnosticMap
from .edits import EditResult, apply_workspace_edit, preview, preview_text
from .errors import Candidate, ErrorCode, LsapError
from .gateway import Client, Document, LspCall
from .locate.anchor import format_anchor
from .locate.matcher import Needle, find_matches
from .models import LineScope, Locate, Report, Request, Row, SymbolScope, absent
from .position import to_lsp_character
from .report.pieces import DiagnosticRow, diagnostic_row
from .resolve import resolve
from .session import EVERY_SERVER, Session, Target, ranked
from .workspace import uri_of

CODE_ACTION = "textDocument/codeAction"
RESOLVE = "codeAction/resolve"
EXECUTE = "workspace/executeCommand"
APPLY_EDIT = "workspace/applyEdit"
FORMATTING = "textDocument/formatting"
RANGE_FORMATTING = "textDocument/rangeFormatting"
ORGANIZE_IMPORTS = "source.organizeImports"
# Asked for when no kind is given: servers that offer source actions only when asked for
# them (typescript-language-server's organise imports) list them too.
EVERY_KIND = ["quickfix", "refactor", "source"]
DIAGNOSTICS_SHOWN = 20  # diagnostics of the changed files listed after an edit

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
        tree = await session.symbol_tree(first.target, first.doc)
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


@dataclass
class Action:
    """One code action as a server offered it, kept (by `id`) for `code_action_execute`."""

    id: str
    client: Client
    raw: dict[str, Any]  # the server's CodeAction (a bare Command is wrapped as one)
    path: Path
    bufnr: int
    version: str  # the file's version it was computed on

    @property
    def title(self) -> str:
        return str(self.raw.get("title") or "")

    @property
    def kind(self) -> str:
        return str(self.raw.get("kind") or "")

    @property
    def preferred(self) -> bool:
        return bool(self.raw.get("isPreferred"))

    @property
    def disabled(self) -> str | None:
        disabled = self.raw.get("disabled")
        return str(disabled.get("reason") or "disabled") if isinstance(disabled, dict) else None

    @property
    def fixes(self) -> list[str]:
        """The codes (else messages) of the diagnostics it says it fixes."""
        return [_diagnostic_label(d) for d in self.raw.get("diagnostics") or [] if isinstance(d, dict)]

    @property
    def runs_command(self) -> bool:
        return isinstance(self.raw.get("command"), dict)


def _diagnostic_label(d: dict[str, Any]) -> str:
    code = d.get("code")
    return str(code) if code not in (None, "") else str(d.get("message") or "").split("\n")[0]


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


def _lsp_range(doc: Document, first: int, last: int, client: Client) -> dict[str, Any]:
    """Whole lines `first` to `last`, in the server's units."""
    lines = doc.lines or [""]
    last = min(last, len(lines) - 1)
    end = to_lsp_character(lines[last], len(lines[last]), Session.encoding(client))
    return {"start": {"line": first, "character": 0}, "end": {"line": last, "character": end}}


def _overlaps(d: Diagnostic, first: int, last: int) -> bool:
    return d.line <= last and d.end_line >= first


async def clients_of(session: Session, target: Target, method: str,
                     server: str | None) -> list[Client]:
    """Every server attached to the target's file that has `method` (the one named, if any)."""
    attached = await session.gateway.wait_for_clients(target.bufnr, EVERY_SERVER)
    able = session.named(ranked(attached, method), server, method, target.path)
    if not able:
        raise session.unsupported(method, attached, target.path)
    await session.ready(able)
    return able


async def gather(session: Session, path: Path, lines: tuple[int, int] | None, *,
                 kind: str | None = None, diagnostic: str | None = None,
                 server: str | None = None) -> Gathered:
    """Ask every server attached to `path` for its code actions on `lines` (0-based, both
    included; None: the whole file), each with its own diagnostics there.

    `diagnostic`: a diagnostic's code or part of its message: each such diagnostic is asked
    about at its own range, from the server that reported it, and only the actions fixing
    it are kept (quick fixes that name no diagnostic count as fixing what they were asked
    about)."""
    target = await session.target(path, CODE_ACTION)
    clients = await clients_of(session, target, CODE_ACTION, server)
    # The context's diagnostics are what quick fixes are computed from; source actions and
    # refactorings (organise imports, extract) do not need them, nor the wait for them.
    needed = diagnostic is not None or kind is None or answers_kind("quickfix", kind)
    before = await session.diagnostics([path]) if needed else None
    found = before.get(path, []) if before is not None else []
    doc = target.doc or await session.document(path)
    first, last = lines if lines is not None else (0, max(0, len(doc.lines) - 1))
    here = [d for d in found if _overlaps(d, first, last)]
    # Asked by the kind's top level (`refactor` for `refactor.extract`): servers compare
    # kinds their own way (typescript-language-server offers no extraction for
    # `refactor.extract`); the answer is narrowed here (`answers_kind`).
    only = [kind.split(".")[0]] if kind else EVERY_KIND
    calls: list[LspCall] = []
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
        for client in clients:
            own = [d.lsp for d in here if d.client == client.id and d.lsp is not None]
            params = {"textDocument": {"uri": uri_of(path)},
                      "range": _lsp_range(doc, first, last, client),
                      "context": {"diagnostics": own, "triggerKind": 1, "only": only}}
            calls.append(LspCall(client.id, CODE_ACTION, params, target.bufnr))
    answers = await session.lsp(calls, target)  # guarded by the text held, if warm
    by_id = {c.id: c for c in clients}
    gathered = Gathered(target, doc, [], [c.name for c in clients], diagnostics=here, before=before)
    seen: set[str] = set()
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
            wanted = kind is None or answers_kind(action.kind, kind)
            if action.id in seen or not wanted:
                continue
            if diagnostic is not None and not (
                    any(f == diagnostic or diagnostic.lower() in f.lower() for f in action.fixes)
                    or (not action.fixes and of_kind(action.kind, "quickfix"))):
                continue
            seen.add(action.id)
            gathered.actions.append(action)
    if calls and len(gathered.errors) == len(calls):
        raise LsapError(ErrorCode.SERVER_ERROR, "; ".join(gathered.errors), hint="ask again")
    for action in gathered.actions:
        session.actions[action.id] = action
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
    action: Action | None = session.actions.get(action_id)
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
    """What a server asked of the bridge while the bridge ran its command."""

    edits: list[dict[str, Any]] = field(default_factory=list)
    remarks: list[str] = field(default_factory=list)

    def __call__(self, method: str, params: Any) -> Any:
        if method == APPLY_EDIT:
            edit = params.get("edit") if isinstance(params, dict) else None
            if not isinstance(edit, dict):
                return {"applied": False, "failureReason": "the request carries no edit"}
            self.edits.append(edit)
            return {"applied": True}
        # tsserver's `_typescript.rename`: it would have an editor start renaming what the
        # refactoring created (an extracted function's made-up name).
        where = params.get("position") if isinstance(params, dict) else None
        if isinstance(where, dict):
            self.remarks.append(
                f"the server suggests renaming what it created, at line {int(where['line']) + 1}: "
                "use `rename` with a name of your own")
        return None


@dataclass
class Ran:
    """Actions run: the engine's result for each edit applied, the servers whose edits they
    were, and remarks."""

    results: list[EditResult] = field(default_factory=list)
    servers: list[str] = field(default_factory=list)
    remarks: list[str] = field(default_factory=list)

    def add(self, result: EditResult, client: Client) -> None:
        self.results.append(result)
        self.servers.append(client.name)


async def resolved(session: Session, action: Action) -> dict[str, Any]:
    """The action with its edit, asking the server (`codeAction/resolve`) when it sent it
    without one; a server that fails here is a `server_error` and nothing changes."""
    raw = action.raw
    if raw.get("edit") or raw.get("command") or not action.client.supports(RESOLVE):
        return raw
    answer = (await session.lsp([LspCall(action.client.id, RESOLVE, raw, action.bufnr)]))[0]
    result = answer.result if isinstance(answer.result, dict) else {}
    if answer.error or not (result.get("edit") or result.get("command")):
        reason = (answer.error or {}).get("message", answer.error) if answer.error else (
            "it came back with neither an edit nor a command")
        raise LsapError(ErrorCode.SERVER_ERROR,
                        f"{action.client.name} failed to resolve {action.title!r}: {reason}",
                        hint="nothing was changed; list the actions again and ask again")
    return result


async def check_current(session: Session, action: Action) -> None:
    doc = await session.document(action.path)
    if doc.version != action.version:
        session.actions.pop(action.id, None)
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
    if isinstance(command, dict) and command.get("command"):
        taken = Taken()
        params = {"command": command["command"], "arguments": command.get("arguments") or []}
        answer = (await session.lsp([LspCall(action.client.id, EXECUTE, params, action.bufnr)],
                                    taking=taken))[0]
        if answer.error:
            done = "its edit was applied before the command, " if ran.results else ""
            raise LsapError(
                ErrorCode.SERVER_ERROR,
                f"{action.client.name} failed the command of {action.title!r}: "
                f"{answer.error.get('message', answer.error)}",
                hint=done + "nothing the command asked for was changed; ask again",
            )
        ran.remarks += taken.remarks
        for edit in taken.edits:
            ran.add(await apply(edit, action.client, label), action.client)
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
    formatter (`session.ranked`)."""
    method = RANGE_FORMATTING if lines is not None else FORMATTING
    target = await session.target(path, method, server)
    return target, target.client


async def formatting(session: Session, path: Path, lines: tuple[int, int] | None,
                     target: Target, client: Client) -> dict[str, Any]:
    """The server's formatting of the file or of `lines` now, as a WorkspaceEdit."""
    method = RANGE_FORMATTING if lines is not None else FORMATTING
    doc = await session.document(path)
    options = await session.gateway.exec_lua(
        "return require('lsap.transport').formatting_options(...)", target.bufnr)
    params: dict[str, Any] = {"textDocument": {"uri": uri_of(path)}, "options": options}
    if lines is not None:
        params["range"] = _lsp_range(doc, lines[0], lines[1], client)
    answer = (await session.lsp([LspCall(client.id, method, params, target.bufnr)]))[0]
    if answer.error:
        raise LsapError(ErrorCode.SERVER_ERROR,
                        f"{client.name} failed {method}: {answer.error.get('message', answer.error)}",
                        hint="nothing was changed; check the file parses, then ask again")
    return {"changes": {uri_of(path): answer.result or []}}


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
        found = await gather(session, place.path, None, kind=ORGANIZE_IMPORTS, server=server)
        own = [a for a in found.actions if a.client.id == client.id]
        organize = one(own or found.actions, f"of kind {ORGANIZE_IMPORTS!r}", place.where)
        try:
            done = await run_action(session, organize, apply)
        except LsapError as error:
            if error.code is not ErrorCode.NOT_FOUND:
                raise
            ran.remarks.append("the imports were already organised")
        else:
            ran.results += done.results
            ran.servers += done.servers
            ran.remarks += done.remarks
    edit = await formatting(session, place.path, place.lines, target, client)
    ran.add(await apply(edit, client, f"format {place.where} ({client.name})"), client)
    return ran


# -- the report after an edit ------------------------------------------------------------------


class Changed(Row):
    path: str
    edits: int
    saved: bool
    disk_differs: bool
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
    compared: bool  # the diagnostics before were known: `fixed` and `new_diagnostics` say
    fixed: list[FileDiagnostic]  # diagnostics there before and gone after
    new_diagnostics: list[FileDiagnostic]
    diagnostics: list[FileDiagnostic]  # every diagnostic of the changed files after (bounded)
    diagnostics_total: int
    pending: list[str]
    remarks: list[str]


async def applied(session: Session, title: str, kind: str | None,
                  work: Callable[[], Awaitable[Ran]], action_id: str | None = None,
                  watched: list[Path] | None = None,
                  before: DiagnosticMap | None = None) -> Applied:
    """Run `work` (edits through the engine) and report it: lines added and removed per
    file, the diagnostics of the changed files after, and, given those from before (as the
    request already read them, for a quick fix), which it fixed and which it introduced.
    Not read only for that: waiting for a server's diagnostics is most of such a request."""
    watched = [p for p in watched or [] if p.is_file()]
    before_docs = await session.documents(watched)
    ran = await work()
    display = session.workspace.display
    paths = list(dict.fromkeys([*watched, *(session.workspace.resolve(f.path)
                                            for r in ran.results for f in r.files)]))
    after_docs = await session.documents([p for p in paths if p.is_file()])
    after = await session.diagnostics([p for p in paths if p.is_file()])
    changed = []
    for result in ran.results:
        for f in result.files:
            path = session.workspace.resolve(f.path)
            old = before_docs[path].lines if path in before_docs else []
            new = after_docs[path].lines if path in after_docs else []
            added, removed = _line_counts(old, new)
            changed.append(Changed(path=f.path, edits=f.edits, saved=f.saved,
                                   disk_differs=f.disk_differs, added=added, removed=removed))

    def rows(found: dict[Path, list[Diagnostic]]) -> list[FileDiagnostic]:
        return [FileDiagnostic(path=display(p), **diagnostic_row(d)) for p, items in found.items()
                for d in items]

    every = rows({p: after.get(p, []) for p in paths})
    return Applied(
        title=title, kind=kind, server=", ".join(dict.fromkeys(ran.servers)), action_id=action_id,
        changed=changed,
        unsaved=[u for r in ran.results for u in r.unsaved],
        created=[c for r in ran.results for c in r.created],
        compared=before is not None,
        fixed=rows(DiagnosticDelta.between(after, before).new) if before is not None else [],
        new_diagnostics=rows(DiagnosticDelta.between(before, after).new) if before is not None else [],
        diagnostics=every[:DIAGNOSTICS_SHOWN], diagnostics_total=len(every),
        pending=[f"{display(p)} ({reason})" for p, reason in after.pending.items()],
        remarks=ran.remarks,
    )


def _line_counts(old: list[str], new: list[str]) -> tuple[int, int]:
    added = removed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return added, removed
