"""`code_actions`, `code_action_execute`, `code_action`: the code actions of every attached
server (quick fixes, refactorings, organise imports, fix all), listed with ids and
optionally their diffs, then run through the bridge's edit engine (`lsap_bridge/actions.py`:
resolved where the server needs it, commands' `workspace/applyEdit` taken by the bridge).
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field, model_validator

from ..actions.applied import Applied, applied
from ..actions.choose import kept, narrow, one
from ..actions.gather import Action, Actions, gather
from ..actions.lsp_calls import CODE_ACTION
from ..actions.place import WhereRequest, place_of
from ..actions.run import Ran, diff_preview, run_action
from ..diagnostics import DiagnosticMap
from ..edits.apply import apply_workspace_edit
from ..errors import LsapError
from ..models import Overwriting, Paged, Request, Row, Waiting, absent
from ..modes import Answer, Offer, mode
from ..report.paging import PagingInfo, as_sent, paged, suggest
from ..session.warm import Session

PREVIEWS = 10  # diffs computed for one page at most (each may be a round trip to resolve)


class Filters(WhereRequest):
    kind: str | None = None  # `quickfix`, `source.organizeImports`, … (and the kinds under it)
    title: str | None = None  # text of the title, matched as anchors are (tiers)
    diagnostic: str | None = None  # a diagnostic's code or message text: the actions fixing it


class CodeActionsRequest(Filters):
    mode: Literal["code_actions"] = "code_actions"
    preview: bool = False  # each action's diff (resolved first where the server needs it)


class CodeActionExecuteRequest(Request, Overwriting, Waiting):
    mode: Literal["code_action_execute"] = "code_action_execute"
    action_id: Annotated[str, Field(min_length=1)]
    positional: ClassVar[str] = "action_id"


class CodeActionRequest(Filters, Overwriting, Waiting):
    mode: Literal["code_action"] = "code_action"

    @model_validator(mode="after")
    def _named(self) -> CodeActionRequest:
        if not (self.kind or self.title or self.diagnostic):
            raise ValueError("name the action by `kind`, `title` or `diagnostic` "
                             "(or list them with `code_actions`)")
        return self


class ActionRow(Row):
    id: str
    title: str
    kind: str
    server: str
    preferred: bool
    disabled: str | None
    fixes: list[str]
    command: bool  # runs as a server command: its diff is known once run
    diff: str | None


class CodeActionsReport(Paged):
    where: str
    servers: list[str]
    errors: list[str]
    filters: str | None
    actions: list[ActionRow]
    execute: str | None  # the request that runs the first action shown (a preferred one first)
    with_diffs: str | None = absent()  # the same listing with each action's diff


def _filters(request: Filters) -> str | None:
    named = [f"{k} {v!r}" for k, v in (("kind", request.kind), ("title", request.title),
                                        ("diagnostic", request.diagnostic),
                                        ("server", request.server)) if v]
    return ", ".join(named) or None


async def _row(session: Session, action: Action, diff: bool) -> ActionRow:
    shown = None
    if diff and not action.runs_command and action.disabled is None:
        try:
            shown = await diff_preview(session, action)
        except LsapError as error:
            shown = f"(no preview: {error.message})"
    return ActionRow(id=action.id, title=action.title, kind=action.kind, server=action.client.name,
                     preferred=action.preferred, disabled=action.disabled, fixes=action.fixes,
                     command=action.runs_command, diff=shown)


@mode("code_actions", request=CodeActionsRequest, report=CodeActionsReport,
      summary="the code actions of every attached server at a line, range or file, with ids",
      method=CODE_ACTION, fallback="diagnostics",
      offer=Offer(command="LsapActions", picker=18, view="actions",
                  values={"kind": ("quickfix", "refactor", "refactor.extract", "refactor.inline",
                                   "refactor.rewrite", "source", "source.organizeImports",
                                   "source.fixAll")}))
async def code_actions(session: Session, request: CodeActionsRequest) -> Answer:
    place = await place_of(session, request, CODE_ACTION)
    found = await gather(session, place.path, place.lines, kind=request.kind,
                         diagnostic=request.diagnostic, server=request.server)
    # The servers' preferred fixes first: the footer's `execute` names the first usable one.
    actions = sorted(narrow(found.actions, title=request.title), key=lambda a: not a.preferred)

    async def build(request: CodeActionsRequest, shown: list[Action], paging: PagingInfo) -> Answer:
        rows = [await _row(session, a, request.preview and i < PREVIEWS) for i, a in enumerate(shown)]
        first = next((a for a in shown if a.disabled is None), None)
        report = CodeActionsReport(
            where=place.where, servers=found.servers, errors=found.errors, filters=_filters(request),
            actions=rows, **paging,
            execute=suggest(CodeActionExecuteRequest, {"mode": "code_action_execute",
                                                       "action_id": first.id}) if first else None,
            with_diffs=None if request.preview or not rows else suggest(
                CodeActionsRequest, {**as_sent(request, frozenset({"pagination_id"})), "preview": True}),
        )
        return Answer(report)

    return await paged(session, request, actions, build)


async def _apply(session: Session, action: Action, request: CodeActionExecuteRequest | CodeActionRequest,
                 action_id: str | None = None, before: DiagnosticMap | None = None) -> Applied:
    async def work() -> Ran:
        return await run_action(session, action, lambda edit, client, label: apply_workspace_edit(
            session, edit, client, label=label, overwrite=request.overwrite))

    return await applied(session, action.title, action.kind or None, work, action_id,
                         [action.path], before, request.diagnostics_wait)


@mode("code_action_execute", request=CodeActionExecuteRequest, report=Applied,
      template="code_action", summary="run a listed code action by its id", workspace=True,
      edits=True)
async def code_action_execute(session: Session, request: CodeActionExecuteRequest) -> Answer:
    action = kept(session, request.action_id)
    report = await _apply(session, action, request, request.action_id)
    session.kept.owned(Actions).pop(request.action_id, None)
    return Answer(report)


@mode("code_action", request=CodeActionRequest, report=Applied,
      summary="run the code action a kind, title or diagnostic names, in one step",
      method=CODE_ACTION, fallback="diagnostics", workspace=True, edits=True)
async def code_action(session: Session, request: CodeActionRequest) -> Answer:
    place = await place_of(session, request, CODE_ACTION)
    found = await gather(session, place.path, place.lines, kind=request.kind,
                         diagnostic=request.diagnostic, server=request.server)
    action = one(narrow(found.actions, title=request.title), _filters(request) or "", place.where,
                 found.actions)
    return Answer(await _apply(session, action, request, before=found.before))
