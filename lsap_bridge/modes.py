"""The declaration of a mode: one per capability, the only place a mode is described.

A capability module (`lsap_bridge/capabilities/<name>.py`) declares each of its modes
with `@mode(...)`: the mode's name, request and report models, the LSP method it cannot
answer without and the mode to suggest when no server has it, its template, and where it
is offered besides the JSON mode, the CLI (`lsap <mode>`) and `:Lsap <mode>` (which every
mode is). Everything that lists modes reads them from here: the service, `schema`, the
socket's `info`, MCP's tools, the text format's views, `:checkhealth lsap` and the
completion of `:Lsap` (through the generated `lua/lsap/modes.lua`, see `lua_modes.py`).

`REGISTRY` is filled by importing `lsap_bridge.capabilities`, which discovers its modules.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from .models import Report, Request
from .position import EditorLocation


@dataclass(frozen=True)
class Offer:
    """Where a mode is offered besides the JSON mode, the CLI and `:Lsap <mode>`."""

    command: str | None = None  # a CamelCase Ex command of its own (`LsapReferences`)
    picker: int = 0  # its place among the modes `:Lsap` alone offers a human (0: not offered)
    view: str | None = None  # the text format's `^ symbol[view]`
    mcp: bool = False  # an MCP tool of its own (`lsap_<mode>`); `lsap_query` reaches every mode
    plug: bool = False  # a `<Plug>(lsap-<mode>)` mapping (plugin/lsap.lua, through modes.lua)
    # False: a mode only a transport sends (`hook`: `lsap hook`), left out of lsap_query's
    # modes (every agent pays for that list's tokens on every turn).
    listed: bool = True
    # Values offered when completing `key=` beyond the request model's closed sets.
    values: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Answer:
    """A mode's answer: its report, the locations the editor jumps to (not in the JSON), and
    for a paged one how to show a shorter page."""

    report: Report
    locations: list[EditorLocation] = field(default_factory=list)
    # A paged report's same answer with a shorter page of the list it already has
    # (`report.paging.paged`): what the budget shortens it with (`report/budget.fit`).
    repage: Callable[[int], Awaitable[Answer]] | None = field(default=None, compare=False, repr=False)
    # What the answer changes in the session's state once it has reached the asker (a
    # check's record, `pipeline.delivering`): never before, so an answer lost to an error,
    # a timeout or the session's end loses nothing of what it had not told.
    commit: Callable[[], Awaitable[None]] | None = field(default=None, compare=False, repr=False)


Runner = Callable[[Any, Any], Awaitable[Answer]]
RunnerT = TypeVar("RunnerT", bound=Runner)


@dataclass(frozen=True)
class Capability:
    mode: str
    model: type[Request]  # the request
    report: type[Report]
    run: Runner
    summary: str
    method: str | None  # the LSP method it cannot answer without (None: no particular one)
    fallback: str | None  # the mode to try when no attached server has `method`
    template: str
    # Its answer spans the workspace (references, search, …): the servers hear of files
    # changed on disk and loaded buffers are brought up to date first (`Servers.sync_disk`).
    workspace: bool
    offer: Offer
    # It may change files (a rename, a batch holding one): MCP's tool annotations say so.
    edits: bool = False


REGISTRY: dict[str, Capability] = {}


def mode(name: str, *, request: type[Request], report: type[Report], summary: str,
         method: str | None = None, fallback: str | None = None, template: str | None = None,
         workspace: bool = False, offer: Offer | None = None,
         edits: bool = False) -> Callable[[RunnerT], RunnerT]:
    """Declare a mode answered by the decorated coroutine `(session, request) -> Answer`;
    `edits`: it may change files."""

    def declare(run: RunnerT) -> RunnerT:
        slot = offer.picker if offer else 0
        if taken := [c.mode for c in REGISTRY.values() if slot and c.offer.picker == slot and c.mode != name]:
            raise ValueError(f"mode {name!r}: picker slot {slot} is taken by {taken[0]!r}; choose a free one")
        REGISTRY[name] = Capability(name, request, report, run, summary, method, fallback,
                                    template or name, workspace, offer or Offer(), edits)
        return run

    return declare


class Supports(Protocol):
    def supports(self, method: str) -> bool: ...


# Modes suggested, in this order, when the one a method's mode falls back to will not do.
LAST_RESORTS = ("hover", "definition", "references", "outline", "search")


def fallback(method: str, clients: Sequence[Supports]) -> str:
    """The nearest mode some attached server can answer instead of one that needs `method`:
    that mode's declared fallback, else the first last resort that works, else `locate`."""
    declared = next((c.fallback for c in sorted_modes() if c.method == method and c.fallback), None)
    for name in (declared, *LAST_RESORTS):
        if name is None:
            continue
        suggested = REGISTRY.get(name.split()[0])
        need = suggested.method if suggested is not None else None
        if need is None or any(c.supports(need) for c in clients):
            return name
    return "locate"


def sorted_modes() -> Iterable[Capability]:
    return (REGISTRY[name] for name in sorted(REGISTRY))


def views() -> dict[str, str]:
    """The text format's `[view]` names and the mode each one runs."""
    return {c.offer.view: c.mode for c in sorted_modes() if c.offer.view}
