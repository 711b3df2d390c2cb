"""Every attached server's code actions for a place, gathered: each server asked with its own
diagnostics there, and about each diagnostic at its own range; the actions kept by id
(`Actions`) for `code_action_execute`.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cachetools import LRUCache
from lsprotocol import types

from ..diagnostics import Diagnostic, DiagnosticMap
from ..editor import Client
from ..errors import ErrorCode, LsapError
from ..gateway import LspAnswer, LspCall
from ..jsonvalue import Jsonable, Params, items
from ..lsp import structure
from ..position import Document
from ..session.targets import EVERY_SERVER, Target, ranked
from ..session.warm import Session
from ..workspace import uri_of
from .lsp_calls import CODE_ACTION, lsp_range, tsserver_configure

# Asked for when no kind is given: servers that offer source actions only when asked for
# them (typescript-language-server's organise imports) list them too.
EVERY_KIND = ["quickfix", "refactor", "source"]


DIAGNOSTICS_ASKED = 30  # diagnostics asked about at their own range by one listing


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
    asking = _Asking(path, target.bufnr, doc, clients, kind)
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
        asking.about_diagnostics(chosen)
    else:
        asking.about_lines(here, first, last)
    # Quick fixes come with their code (an added function, a missing member): tsserver
    # writes it in the file's indent only once told.
    told = [c for c in [await tsserver_configure(session, client, path, target.bufnr, doc.lines)
                        for client in clients] if c is not None]
    calls = asking.calls
    answers = (await session.servers.lsp(told + calls, target))[len(told):]  # guarded by the text held, if warm
    gathered = Gathered(target, doc, [], [c.name for c in clients], diagnostics=here, before=before)
    _offered(gathered, asking, answers, diagnostic)
    if calls and len(gathered.errors) == len(calls):
        raise LsapError(ErrorCode.SERVER_ERROR, "; ".join(gathered.errors), hint="ask again")
    gathered.errors += asking.notes
    for action in gathered.actions:
        session.kept.owned(Actions)[action.id] = action
    return gathered


@dataclass
class _Asking:
    """The codeAction requests of one gathering, and the notes on what was not asked."""

    path: Path
    bufnr: int
    doc: Document
    clients: list[Client]
    kind: str | None
    calls: list[LspCall] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def only(self) -> list[str]:
        """Asked by the kind's top level (`refactor` for `refactor.extract`): servers compare
        kinds their own way (typescript-language-server offers no extraction for
        `refactor.extract`); the answer is narrowed after (`answers_kind`)."""
        return [self.kind.split(".")[0]] if self.kind else EVERY_KIND

    def ask(self, client_id: int, lsp_range: Jsonable, diagnostics: Sequence[Jsonable]) -> None:
        params: Params = {"textDocument": {"uri": uri_of(self.path)}, "range": lsp_range,
                  "context": {"diagnostics": diagnostics, "triggerKind": 1, "only": self.only}}
        self.calls.append(LspCall(client_id, CODE_ACTION, params, self.bufnr))

    def about_diagnostics(self, chosen: list[Diagnostic]) -> None:
        """Each diagnostic asked about, at its own range, of the server that reported it."""
        for d in chosen:
            for client in self.clients:
                if d.client == client.id and d.lsp is not None:
                    self.ask(client.id, d.lsp["range"], [d.lsp])

    def about_lines(self, here: list[Diagnostic], first: int, last: int) -> None:
        """Each diagnostic there asked about at its own range too (servers compute a quick
        fix at the diagnostic's span: tsserver's "Add import" needs the missing name's, not
        the line's), quick fixes first, as editors list them; then every server about the
        lines, with its own diagnostics there."""
        by_id = {c.id for c in self.clients}
        asked = [d for d in here if d.lsp is not None and d.client in by_id]
        if len(asked) > DIAGNOSTICS_ASKED:
            self.notes.append(f"quick fixes were asked for the first {DIAGNOSTICS_ASKED} of the "
                              f"{len(asked)} diagnostics there: ask about a line or a `diagnostic` "
                              "for the others")
            asked = asked[:DIAGNOSTICS_ASKED]
        for d in asked:
            assert d.lsp is not None and d.client is not None
            self.ask(d.client, d.lsp["range"], [d.lsp])
        for client in self.clients:
            own = [d.lsp for d in here if d.client == client.id and d.lsp is not None]
            self.ask(client.id, lsp_range(self.doc, first, last, client), own)


def _offered(gathered: Gathered, asking: _Asking, answers: list[LspAnswer], diagnostic: str | None) -> None:
    """The actions the servers answered, each once (the same action offered for the line and
    for a diagnostic is one), of the kind asked and, given a `diagnostic`, fixing it (quick
    fixes that name no diagnostic count as fixing what they were asked about); a server's
    failure, and a malformed action, are named."""
    by_id = {c.id: c for c in asking.clients}
    seen: set[str] = set()
    effects: set[str] = set()
    for call, answer in zip(asking.calls, answers, strict=True):
        client = by_id[call.client_id]
        if answer.error:
            gathered.errors.append(f"{client.name} failed {CODE_ACTION}: "
                                   f"{answer.error.get('message', answer.error)}")
            continue
        for raw in items(answer.result):
            if not isinstance(raw, dict):
                continue
            if isinstance(raw.get("command"), str):  # a bare Command
                raw = {"title": raw.get("title", raw["command"]), "command": raw}
            action = _action(client, raw, asking.path, asking.bufnr, asking.doc.version)
            try:
                action.lsp  # noqa: B018  (structured once, here: a malformed action is named, not listed)
            except LsapError as error:
                asking.notes.append(error.message)
                continue
            wanted = asking.kind is None or answers_kind(action.kind, asking.kind)
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


def _action(client: Client, raw: dict[str, Any], path: Path, bufnr: int, version: str) -> Action:
    key = json.dumps([client.name, raw.get("title"), raw.get("kind"), str(path), version,
                      raw.get("diagnostics")], sort_keys=True, default=str)
    return Action(hashlib.sha1(key.encode()).hexdigest()[:8], client, raw, path, bufnr, version)
