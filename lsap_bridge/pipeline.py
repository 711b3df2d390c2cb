"""One path for every request (doc/architecture.md, One request, end to end): parse it, run
its capability on the warm path (`Session.run`, with the stale-text retry), fit the answer
to its budget (`report/budget.fit`, paging from the answer it has), add the notes of buffers
that differ from their files, render it, with its follow-up requests written for the
surface that asked (`surface.SURFACE`).

The service answers every JSON request with `answer`; `batch` each of its requests; the
text format each of its operations (`ask` when it weaves the report's data into its own
response: a hover, a rename; `answer` for a view's or a check's report); MCP's tools reach
the service through the socket, with their surface.

An answer that changes the session's state (a check's record) does so only once it has
been rendered for the asker (`delivering`): an error, a timeout or the session's end before
that leaves the state as it was.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass

from .changes import undo_hint
from .edits.switch import applied_before
from .errors import LsapError
from .failures import as_error
from .jsonvalue import Json
from .models import INCOMPLETE, Report, Request
from .modes import REGISTRY, Answer
from .position import EditorLocation
from .render import render_error, renderer
from .report.budget import fit
from .requests import parse_request
from .session.texts import disk_notes
from .session.warm import Session
from .surface import APPLIED, REQUEST, SURFACE, Surface

LOG = logging.getLogger("lsap.service")
Commit = Callable[[], Awaitable[None]]
# The commits of the answers a response holds (`Answer.commit`), run once it is rendered.
_DELIVERY: ContextVar[list[Commit] | None] = ContextVar("lsap_delivery", default=None)


@dataclass(frozen=True)
class Response:
    """A request's response: its text, and the answer it came from (None: an error)."""

    text: str
    mode: str | None = None
    answer: Answer | None = None
    error: LsapError | None = None
    # A response that is no mode's report (the text format's) left out what it should have
    # compared: the diagnostics of files its edits changed, not confirmed in time.
    incomplete: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def status(self) -> str | None:
        """`incomplete` when the report left out what it should have compared (`Report.status`)."""
        if self.incomplete:
            return INCOMPLETE
        return self.answer.report.status if self.answer is not None else None

    @property
    def locations(self) -> list[EditorLocation]:
        return self.answer.locations if self.answer is not None else []


def parse(session: Session, payload: Json) -> Request:
    """A request as sent, validated by its mode's model (anchors parsed and remembered)."""
    return parse_request(payload, session.workspace, session.kept.anchors)


async def ask(session: Session, payload: Json) -> Answer:
    """A request's answer, unrendered (its failure raised): what the text format weaves into
    its own response (a hover, a rename's warnings)."""
    return await run(session, parse(session, payload))


async def run(session: Session, request: Request) -> Answer:
    """A parsed request's answer, unrendered, from its capability on the warm path; its
    commit waits for the response that holds it to be rendered (`delivering`)."""
    done = await session.run(REGISTRY[request.mode], request)
    if done.commit is not None:
        waiting = _DELIVERY.get()
        if waiting is None:  # no response is rendered around it: its caller is the asker
            await _committed(done.commit)
        else:
            waiting.append(done.commit)
    return done


async def _committed(commit: Commit) -> None:
    try:
        await commit()
    except Exception:  # the answer is out: a state that could not be kept is logged, not its error
        LOG.warning("an answer's state could not be kept", exc_info=True)


@contextlib.asynccontextmanager
async def delivering() -> AsyncIterator[Commit]:
    """The one commit point of a response (doc/architecture.md, Where state lives): the
    answers run inside it keep their state changes (`Answer.commit`) until the caller has
    its response rendered and calls what this yields; left without that call (an error, a
    timeout, the session gone), they are dropped."""
    waiting: list[Commit] = []
    token = _DELIVERY.set(waiting)

    async def deliver() -> None:
        while waiting:
            await _committed(waiting.pop(0))

    try:
        yield deliver
    finally:
        _DELIVERY.reset(token)


async def answer(session: Session, payload: Json, surface: Surface | None = None, *,
                 fmt: str | None = None, share: int | None = None) -> Response:
    """A request's rendered response; every failure becomes its error report.

    `surface`: the request comes from outside (the service), asked on that surface: its
    follow-up requests are written for it, a change set keeps the payload as what made it,
    and its notes (buffers that differ from their files, the disk's scan) are its own. None:
    it runs inside another answer (a batch, a text-format block), which keeps all three.
    `fmt`: the format to render in, whatever the payload says (a batch's); `share`: the
    budget when the request sets none (a batch's share)."""
    if surface is not None:
        SURFACE.set(surface)
        REQUEST.set(payload)  # a change set keeps what made it
    async with delivering() if surface is not None else contextlib.nullcontext(None) as deliver:
        return await _answer(session, payload, deliver, fmt, share)


async def _answer(session: Session, payload: Json, deliver: Commit | None, fmt: str | None,
                  share: int | None) -> Response:
    """`answer`'s work; `deliver`: it is the outermost response (its surface's), which
    commits what its answers keep once it is rendered."""
    name = payload.get("mode") if isinstance(payload, dict) else None
    asked = fmt or (payload.get("format") if isinstance(payload, dict) else None)
    as_json = asked == "json"
    try:
        request = parse(session, payload)
        if share is not None and request.max_tokens is None:
            request = request.model_copy(update={"max_tokens": share})
        as_json = request.format == "json" if fmt is None else as_json
        capability = REGISTRY[request.mode]
        format_report = renderer(request.mode, capability.template, as_json)
        with disk_notes() if deliver is not None else contextlib.nullcontext(None) as notes:

            def render(report: Report) -> str:
                if notes:
                    report = report.model_copy(update={"notes": list(notes.values())})
                return format_report(report)

            fitted = await fit(session, capability, request, await run(session, request), render,
                               cut_text=not as_json)
        if deliver is not None:
            await deliver()
        return Response(fitted.text, request.mode, fitted.answer)
    except Exception as exc:  # whatever failed is the request's error report, never the caller's
        error = as_error(exc, f"the {name} request")
        if deliver is not None and name in REGISTRY and REGISTRY[str(name)].edits:
            error = await _if_applied_before(session, error)
        return Response(render_error(error, "json" if as_json else "markdown"), error=error)


async def _if_applied_before(session: Session, error: LsapError) -> LsapError:
    """An edit request that fails because it was applied before (sent again after its answer
    was lost) says so, with its change, not only that its anchor is gone."""
    try:
        done = await applied_before(session)
    except (LsapError, OSError):  # Neovim gone, the state directory unreadable: the error as it is
        return error
    if done is None or done.id in (APPLIED.get() or []):  # none, or this very call's own
        return error
    when = time.strftime("%H:%M:%S", time.localtime(done.when))
    return LsapError(error.code, f"this request was applied already, as change {done.id} at {when} "
                     f"({done.label}, {len(done.files)} file{'s' if len(done.files) != 1 else ''}); "
                     f"now: {error.message}", hint=f"nothing to do: its edit is in place; "
                     f"`{undo_hint(done.id)}` takes it back", candidates=error.candidates)
