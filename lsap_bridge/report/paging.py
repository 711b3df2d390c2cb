"""Paging: every list a report shows is cut to `max_items`, with the exact request for the
next page; the whole list is kept on the session under a `pagination_id`, so that later
pages are consistent and cost no new LSP call."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import TypedDict, TypeVar

from ..errors import ErrorCode, LsapError
from ..jsonvalue import JsonObject
from ..models import Request, bare_field
from ..modes import Answer
from ..session.warm import Session
from ..surface import phrase

T = TypeVar("T")
RequestT = TypeVar("RequestT", bound=Request)



class PagingInfo(TypedDict, total=False):
    """A page's place in the whole answer, as `models.Paged` takes it."""

    total: int
    start: int
    end: int
    pagination_id: str
    next: str


def suggest(model: type[Request], request: JsonObject) -> str:
    """A request of `model`'s mode to send next, written for the surface that asked. It is
    validated first: a suggestion the asker could not send is a bug, never a hint."""
    model.model_validate(request)
    return phrase(request, bare_field(model))


def page_id_of(request: Request, answer: str | None = None) -> str:
    """The id a request's whole list is kept under: its fields but the paging and budget,
    and `answer` when the same request gives a new answer each time (a check's number:
    the pages of one check survive the next)."""
    key = request.result_fields()
    if answer is not None:
        key = {**key, "answer": answer}
    return hashlib.sha1(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:10]


def keep(session: Session, request: Request, items: Sequence[object], answer: str | None = None) -> str:
    """Keep a whole result list under the request's own id (`page_id_of`), with the fields
    it answers (`Kept.page` checks a later page's request against them)."""
    page_id = page_id_of(request, answer)
    session.kept.pages[page_id] = (request.mode, request.result_fields(), list(items))
    return page_id


def page(session: Session, request: Request, items: Sequence[T], answer: str | None = None,
         whole: Sequence[object] | None = None) -> tuple[list[T], PagingInfo]:
    """The slice to show and the paging facts (`models.Paged`); `next` is the exact request
    for the next page. What is kept for later pages is `items`, or `whole` when a mode keeps
    the analysis that holds them (`Kept.page` gives it back), on every path that keeps.

    A `start_index` at or past the end is an `invalid_request` that says how many items
    there are and gives the exact request for the last page, in every paged mode. The list
    is kept even when it all fits: the budget may ask for a shorter page of it."""
    start = request.start_index
    kept = items if whole is None else whole
    if start and start >= len(items):
        raise _past_the_end(session, request, len(items), kept, answer)
    shown = list(items[start:start + request.max_items])
    end = start + len(shown)
    info: PagingInfo = {"total": len(items), "start": start + 1 if shown else start, "end": end}
    if end < len(items):
        info["pagination_id"], info["next"] = _page_request(session, request, kept, end, answer)
    elif len(shown) > 1:
        keep(session, request, kept, answer)
    return shown, info


async def paged(session: Session, request: RequestT, items: Sequence[T],
                build: Callable[[RequestT, list[T], PagingInfo], Awaitable[Answer]],
                answer: str | None = None, whole: Sequence[object] | None = None) -> Answer:
    """A paged mode's answer: `build(request, shown, paging)` makes it from one page of
    `items` (see `page`), and the answer can show a shorter page of the same items
    (`Answer.repage`), which is how the budget shortens it (`report/budget.fit`) without
    running the mode again. A shorter page is built for the request as it would be sent
    for it: its `max_items`, and the `pagination_id` its whole list is kept under."""

    async def at(asked: RequestT) -> Answer:
        shown, info = page(session, asked, items, answer, whole)
        return replace(await build(asked, shown, info), repage=shorter)

    async def shorter(max_items: int) -> Answer:
        return await at(request.model_copy(update={"max_items": max_items, "pagination_id": page_id_of(request)}))

    return await at(request)


def _page_request(session: Session, request: Request, kept: Sequence[object], start: int,
                  answer: str | None = None) -> tuple[str, str]:
    """The id under which the whole list (`kept`) is kept, and the request for the page at `start`."""
    page_id = keep(session, request, kept, answer)
    return page_id, suggest(type(request), {**_unpaged(request), "start_index": start, "pagination_id": page_id})


def as_sent(request: Request, without: frozenset[str] = frozenset()) -> JsonObject:
    """The request's fields as an asker writes them (defaults left out), but `without`."""
    fields = request.model_dump(exclude_defaults=True, exclude_none=True, exclude={"mode", *without})
    return {"mode": request.mode, **fields}


def _unpaged(request: Request) -> JsonObject:
    """The request as sent, without its place in the pages."""
    return as_sent(request, frozenset({"start_index", "pagination_id"}))


def _past_the_end(session: Session, request: Request, total: int, kept: Sequence[object],
                  answer: str | None) -> LsapError:
    if not total:
        return LsapError(
            ErrorCode.INVALID_REQUEST,
            f"nothing at start_index {request.start_index}: the {request.mode} answer has no items",
            hint=f"the whole answer: `{suggest(type(request), _unpaged(request))}`",
        )
    last = (total - 1) // request.max_items * request.max_items
    shown = f"items {last + 1}–{total}" if last + 1 < total else f"item {total}"
    return LsapError(
        ErrorCode.INVALID_REQUEST,
        f"nothing at start_index {request.start_index}: the {request.mode} answer has {total} "
        f"item{'s' if total != 1 else ''} (start_index 0–{total - 1})",
        hint=f"the last page ({shown}): `{_page_request(session, request, kept, last, answer)[1]}`",
    )
