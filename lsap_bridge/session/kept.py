"""What the answers given left for the requests after them (pages, previewed renames, listed
code actions, parsed anchors, check records), each bounded and keyed by what makes it
valid (doc/architecture.md, Where state lives).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from cachetools import LRUCache, TTLCache

from ..errors import LsapError, invalid
from ..jsonvalue import JsonObject
from ..models import Locate, Request
from ..workspace import Workspace, remembered
from .targets import Resolved

S = TypeVar("S")


PAGES = 64  # result lists kept for paging
ANCHORS = 1000  # anchor strings parsed, trusted as long as the file checks they rest on


@dataclass
class Kept:
    """What the answers given left for the requests after them (pages, previewed renames,
    listed code actions, parsed anchors, check records), each bounded and keyed by what
    makes it valid (doc/architecture.md, Where state lives)."""

    workspace: Workspace
    # Anchors resolved on held texts, for warm requests (see `locate.resolve.resolve`).
    resolved: TTLCache[tuple[Hashable, ...], Resolved] = field(default_factory=lambda: remembered(256))
    # Result lists by `pagination_id`, with the mode and fields that made them (see
    # `report.paging`).
    pages: LRUCache[str, tuple[str, JsonObject, list[Any]]] = field(default_factory=lambda: LRUCache(PAGES))
    # Anchor strings as parsed: agents send one anchor to several modes in a row.
    anchors: TTLCache[str, Locate] = field(default_factory=lambda: remembered(ANCHORS))
    # The state a capability keeps, by the type it declares, which this layer cannot name:
    # previewed renames (capabilities/rename.Renames), listed code actions (actions.gather.Actions),
    # what the last `check` saw per agent (capabilities/check.Checks).
    _owned: dict[type, object] = field(default_factory=dict)

    def owned(self, kind: type[S]) -> S:
        """The capability state of type `kind`, made empty on first use."""
        found = self._owned.get(kind)
        if not isinstance(found, kind):
            found = self._owned[kind] = kind()
        return found

    def page(self, request: Request) -> list[Any] | None:
        """The whole result list a `pagination_id` names, kept when its first page was
        shown; None when it is unknown or forgotten (the answer is computed again). An id
        of another mode's answer is an `invalid_request`."""
        page_id = request.pagination_id
        kept = self.pages.get(page_id) if page_id else None
        if kept is None:
            return None
        mode, fields, items = kept
        if mode != request.mode:
            raise invalid(
                f"pagination_id {page_id!r} is of a {mode} answer, not of {request.mode}",
                hint=f"send it with the {mode} request it came from, or leave `pagination_id` out",
            )
        now = request.result_fields()
        same = self._same_place
        differ = [name for name in dict.fromkeys([*fields, *now]) if not same(fields.get(name), now.get(name))]
        if differ:
            shown = "; ".join(f"{name}: {json.dumps(fields.get(name))} there, {json.dumps(now.get(name))} here"
                              for name in differ)
            raise invalid(
                f"pagination_id {page_id!r} continues another {mode} request: {shown}",
                hint="send it with the same fields as the request it came from (only start_index, "
                     "max_items and the format may change), or leave `pagination_id` out",
            )
        return items

    def _same_place(self, there: object, here: object) -> bool:
        """Two values of a request field alike, paths compared as the files they name
        (`big/` and `big`, as the CLI and `:Lsap` write one path)."""
        if isinstance(there, dict) and isinstance(here, dict):
            return there.keys() == here.keys() and all(self._same_place(there[k], here[k]) for k in there)
        if isinstance(there, str) and isinstance(here, str) and there != here and "/" in there + here:
            with contextlib.suppress(LsapError):
                return self.workspace.resolve(there) == self.workspace.resolve(here)
        return bool(there == here)
