"""What every capability shares: the request base, the report, the registry, paging."""

from __future__ import annotations

import hashlib
import json
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, TypeVar

from pydantic import Field

from ..errors import ErrorCode, LsapError
from ..gateway import ClientGone, Document, StaleText
from ..locate.resolve import Resolved
from ..models import Format, Locate, StrictModel
from ..session import Session
from ..surface import phrase
from ..workspace import language_of

MAX_ITEMS_LIMIT = 1000


class Request(StrictModel):
    """Fields every mode accepts (doc/architecture.md, Requests)."""

    mode: str
    format: Format = "markdown"
    max_items: Annotated[int, Field(ge=1, le=MAX_ITEMS_LIMIT)] = 50
    start_index: Annotated[int, Field(ge=0)] = 0
    pagination_id: str | None = None
    context_lines: Annotated[int, Field(ge=0, le=50)] = 0

    # The field a bare argument fills (`lsap outline shop/`, `:Lsap search Product`).
    positional: ClassVar[str] = "locate"


class LocateRequest(Request):
    locate: Locate


def bare_field(model: type[Request]) -> str | None:
    """The field a bare argument fills: the mode's declared one (`locate` by default), else
    its `file_path`, else none."""
    if model.positional in model.model_fields:
        return model.positional
    return "file_path" if "file_path" in model.model_fields else None


def suggest(model: type[Request], request: dict[str, Any]) -> str:
    """A request of `model`'s mode to send next, written for the surface that asked."""
    return phrase(request, bare_field(model))


@dataclass
class Report:
    """A capability's answer: a template and its data, plus locations for the editor."""

    template: str
    data: dict[str, Any]
    locations: list[dict[str, Any]] = field(default_factory=list)


RequestT = TypeVar("RequestT", bound=Request)
Runner = Callable[[Session, Any], Awaitable[Report]]


@dataclass(frozen=True)
class Capability:
    mode: str
    model: type[Request]
    run: Runner
    summary: str


REGISTRY: dict[str, Capability] = {}


def capability(mode: str, model: type[RequestT], summary: str,
               workspace: bool = False) -> Callable[[Runner], Runner]:
    """Register a mode: its request model and the coroutine that answers it.

    `workspace`: its answer spans the workspace (references, search, …): the servers hear
    of files changed on disk and the loaded buffers are brought up to date first
    (`Session.sync_disk`). Other modes check only the files they read.
    """

    def register(run: Runner) -> Runner:
        REGISTRY[mode] = Capability(mode, model, _once_more_if_stale(run, workspace), summary)
        return run

    return register


def _once_more_if_stale(run: Runner, workspace: bool) -> Runner:
    """A warm request resolves against the text the session holds (`Session.target`,
    optimistic); if the human edited that buffer meanwhile, its file changed on disk, or its
    server has exited, nothing was sent and the capability runs again on fresh text and a
    live (restarted) server. Per capability, so a batch never repeats others."""

    async def guarded(session: Session, request: Any) -> Report:
        if workspace:
            await session.sync_disk()
        try:
            return await run(session, request)
        except StaleText:
            pass
        try:
            return await run(session, request)
        except ClientGone as gone:
            raise LsapError(ErrorCode.SERVER_ERROR, f"{gone}: it exited and did not come back",
                            hint="`:checkhealth lsap` and `:LspInfo` show the servers") from None
        except StaleText:
            raise LsapError(ErrorCode.CONFLICT, "the file kept changing while the request ran",
                            hint="send the request again") from None

    return guarded


# -- shared report pieces -------------------------------------------------------------


def anchor_data(resolved: Resolved, session: Session) -> dict[str, Any]:
    """How the anchor resolved, including the approximate-match note (doc/architecture.md, Anchors)."""
    data: dict[str, Any] = {
        "anchor": resolved.anchor,
        "path": session.workspace.display(resolved.path),
        "line": resolved.line + 1,
        "column": resolved.column + 1,
        "symbol": resolved.symbol_path,
        "text": resolved.line_text.strip(),
        "server": resolved.target.client.name,
        "partial": resolved.target.partial,
    }
    if resolved.approximate and resolved.match is not None:
        data["approximate"] = {
            "tier": resolved.match.tier.name.lower(),
            "matched": resolved.match.matched_text,
            "score": round(resolved.match.score, 1),
        }
    if resolved.note:
        data["note"] = resolved.note
    return data


def excerpt(doc: Document, first: int, last: int, context: int = 0) -> list[dict[str, Any]]:
    """Numbered lines `first..last` (0-based, inclusive) widened by `context` lines."""
    start = max(0, first - context)
    stop = min(len(doc.lines), last + context + 1)
    return [{"number": i + 1, "text": doc.lines[i]} for i in range(start, stop)]


def editor_location(display: str, doc: Document, line: int, column: int) -> dict[str, Any]:
    """A location for the editor (report jumps, quickfix): 1-based line, byte column."""
    text = doc.lines[line] if line < len(doc.lines) else ""
    return {"path": display, "line": line + 1, "col": len(text[:column].encode("utf-8")),
            "text": text.strip()}


def word_at(text: str, column: int) -> str:
    """The identifier at a column: what a report calls the symbol it is about."""
    match = re.match(r"[\w$]+", text[column:])
    return match.group(0) if match else text[column:column + 20].strip()


def fence_language(doc: Document) -> str:
    return language_of(doc.path)


class Pages:
    """Full result lists kept by id, so that paging is consistent and costs no new LSP call."""

    def __init__(self, size: int = 64) -> None:
        self._store: OrderedDict[str, list[Any]] = OrderedDict()
        self._size = size

    def keep(self, request: Request, items: list[Any]) -> str:
        key = request.model_dump(exclude={"start_index", "pagination_id", "max_items", "format"})
        page_id = hashlib.sha1(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:10]
        self._store[page_id] = items
        self._store.move_to_end(page_id)
        while len(self._store) > self._size:
            self._store.popitem(last=False)
        return page_id

    def get(self, page_id: str | None) -> list[Any] | None:
        return self._store.get(page_id) if page_id else None


PAGES = Pages()


def page(request: Request, items: Sequence[Any]) -> tuple[list[Any], dict[str, Any]]:
    """The slice to show and the paging facts; `next` is the exact request for the next page.

    A `start_index` at or past the end is an `invalid_request` that says how many items
    there are and gives the exact request for the last page, in every paged mode."""
    start = request.start_index
    if start and start >= len(items):
        raise _past_the_end(request, items)
    shown = list(items[start:start + request.max_items])
    end = start + len(shown)
    info: dict[str, Any] = {"total": len(items), "start": start + 1 if shown else start, "end": end}
    if end < len(items):
        info["pagination_id"], info["next"] = _page_request(request, items, end)
    return shown, info


def _page_request(request: Request, items: Sequence[Any], start: int) -> tuple[str, str]:
    """The id under which the whole list is kept, and the request for the page at `start`."""
    page_id = PAGES.keep(request, list(items))
    return page_id, suggest(type(request), {**_unpaged(request), "start_index": start, "pagination_id": page_id})


def _unpaged(request: Request) -> dict[str, Any]:
    """The request as sent, without its place in the pages."""
    fields = request.model_dump(exclude_defaults=True, exclude_none=True,
                                exclude={"mode", "start_index", "pagination_id"})
    return {"mode": request.mode, **fields}


def _past_the_end(request: Request, items: Sequence[Any]) -> LsapError:
    total = len(items)
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
        hint=f"the last page ({shown}): `{_page_request(request, items, last)[1]}`",
    )
