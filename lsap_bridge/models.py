"""Request and report models (doc/architecture.md, Requests and Reports): validated by
pydantic, unknown fields rejected; every mode's request and report derive from these."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .jsonvalue import JsonObject


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class SymbolScope(StrictModel):
    symbol_path: Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]


class LineScope(StrictModel):
    """1-based lines, start inclusive, end exclusive; `end_line: 0` means to the end of file."""

    start_line: Annotated[int, Field(ge=1)]
    end_line: Annotated[int, Field(ge=0)] = 0

    @model_validator(mode="after")
    def _ordered(self) -> LineScope:
        if self.end_line and self.end_line <= self.start_line:
            raise ValueError(
                f"end_line ({self.end_line}) must be greater than start_line "
                f"({self.start_line}), or 0 for the end of the file"
            )
        return self


# The longest `find`, in characters (about 2,500 lines of code). Matching one that has no
# exact match costs time growing with the square of its length (100 KiB: 4-14 s), in a
# worker process (lsap_bridge/cpu.py), so another client's answer does not wait for it; the
# limit bounds how long a worker is taken (a megabyte would take it for minutes).
MAX_FIND = 100 * 1024


class Locate(StrictModel):
    """A semantic anchor: a file, an optional scope, and optional text to find in it."""

    file_path: Annotated[str, Field(min_length=1)]
    scope: SymbolScope | LineScope | None = None
    find: str | None = None

    @model_validator(mode="after")
    def _needs_scope_or_find(self) -> Locate:
        if self.find is not None and not self.find.strip():
            raise ValueError("find is empty: give the text to look for, or leave find out")
        if self.find is not None and len(self.find) > MAX_FIND:
            raise ValueError(too_long_find(len(self.find)))
        if self.scope is None and self.find is None:
            raise ValueError("give a scope, a find, or both: a file alone is not a position")
        return self


def too_long_find(size: int) -> str:
    """Why a `find` is refused, and what to send instead."""
    return (f"find is {size} characters, over the limit of {MAX_FIND}: give a scope (a symbol "
            "or a line range) and a find of one distinctive line or a few")


Format = Literal["markdown", "json"]
MAX_ITEMS_LIMIT = 1000
# The token budget of one answer (`report/budget.py`): the least a request may ask for, the
# most, and the session's default unless configured (`max_tokens` in setup(), $LSAP_MAX_TOKENS).
MIN_TOKENS, MAX_TOKENS_LIMIT, DEFAULT_MAX_TOKENS = 500, 100_000, 8000
#: Seconds an edit waits for its diagnostics after, once it is written and journalled,
#: unless configured (`diagnostics_wait` in setup(), $LSAP_DIAGNOSTICS_WAIT) or the request
#: sets `diagnostics_wait`: what the servers have not confirmed by then is `pending`, with
#: the `check` that reports it (`Diagnostics.after_edit`).
DIAGNOSTICS_WAIT = 1.0
#: An edit's wait for its diagnostics after: seconds, or "settled": every bound of the look
#: (each server's pass over, and after files came or went, their diagnostics held).
Wait = float | Literal["settled"]


class Request(StrictModel):
    """Fields every mode accepts (doc/architecture.md, Requests)."""

    mode: str
    format: Format = "markdown"
    max_items: Annotated[int, Field(ge=1, le=MAX_ITEMS_LIMIT)] = 50
    start_index: Annotated[int, Field(ge=0)] = 0
    pagination_id: str | None = None
    context_lines: Annotated[int, Field(ge=0, le=50)] = 0
    # The answer's budget in cl100k tokens; none: the session's (8,000 unless configured).
    max_tokens: Annotated[int, Field(ge=MIN_TOKENS, le=MAX_TOKENS_LIMIT)] | None = None

    # The field a bare argument fills (`lsap outline shop/`, `:Lsap search Product`).
    positional: ClassVar[str] = "locate"
    # `:Lsap <mode>` with no argument takes the current buffer as its `file_path`, if it has one.
    file_from_cursor: ClassVar[bool] = True
    # `:Lsap <mode>` with neither an anchor nor a range works on the whole current file
    # (`:LsapFormat`, as conform.nvim's format does), not on the symbol under the cursor.
    whole_file_at_cursor: ClassVar[bool] = False

    @property
    def syncs_disk(self) -> bool:
        """Whether a mode that spans the workspace has the servers hear of the disk first
        (`Session.run`): yes, unless the request says the disk is as the bridge's own edits
        left it."""
        return True

    def result_fields(self) -> JsonObject:
        """The fields that decide the whole result list (all but the page and the budget):
        what a `pagination_id` is bound to."""
        return self.model_dump(mode="json", exclude={"start_index", "pagination_id", "max_items",
                                                     "format", "max_tokens"})


class LocateRequest(Request):
    locate: Locate


class Overwriting(StrictModel):
    """The fields of a request whose edit may come with resource operations (create,
    rename) from a server."""

    # Consent to a server's create or rename that replaces an existing file (LSP's
    # `overwrite`): refused without it; the report names each file replaced with the lines
    # it held, and `undo` brings it back.
    overwrite: bool = False


class Waiting(StrictModel):
    """The field of a request whose edit reports the diagnostics after it."""

    # Seconds the answer waits, once the edit is written and journalled, for the servers to
    # confirm the diagnostics of the files it changed (and their users), or "settled": as long
    # as they take (bounded). None: the session's (`DIAGNOSTICS_WAIT` unless configured). What
    # is not confirmed by then is listed `pending`, with the `check` that reports it.
    diagnostics_wait: Annotated[float, Field(ge=0, le=600)] | Literal["settled"] | None = None


def bare_field(model: type[Request]) -> str | None:
    """The field a bare argument fills: the mode's declared one (`locate` by default), else
    its `file_path`, else none."""
    if model.positional in model.model_fields:
        return model.positional
    return "file_path" if "file_path" in model.model_fields else None


def absent() -> Any:
    """A report field left out of the JSON while it is None (a next page, a note): the
    template still sees it, as None."""
    return Field(default=None, exclude_if=lambda value: value is None)


class Cut(BaseModel):
    """What a `format: "json"` answer cut to its budget left out (`report/budget.py`)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    budget: int
    left_out: dict[str, int]  # items dropped, by the JSON path of their list (`calls[0].children`)
    tokens: int  # about how many tokens were left out
    next: str | None  # the same request with a `max_tokens` that holds it all; None: narrow it


INCOMPLETE: Final = "incomplete"


class Report(BaseModel):
    """What a mode answers: its `format: "json"` output is the dump, and its template
    renders the same fields (doc/architecture.md, Reports and errors)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    # Set by the service: buffers answered from whose file differs on disk.
    notes: list[str] | None = absent()
    # Set by the budget on a JSON answer that it cut (Markdown ones say it in a note).
    budget_cut: Cut | None = absent()
    # `INCOMPLETE`: the answer left out what it should have compared (files no server had
    # analysed in time, users not looked for); `again` is the request that compares them.
    # The socket's result carries it too, and the CLI exits with its own status (cli.py).
    status: Literal["incomplete"] | None = absent()
    again: str | None = absent()

    def fields(self) -> dict[str, object]:
        """Every field by name, the absent ones as None: what a template renders."""
        return {name: getattr(self, name) for name in type(self).model_fields}


class Row(BaseModel):
    """A part of a report (a group, a line, a definition): typed, nothing else allowed."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


class Overwritten(Row):
    """An existing file a consented overwrite replaced whole, and the lines it held."""

    path: str
    lines: int


class Line(Row):
    """A numbered line of code, as reports print them (`17| return result`)."""

    number: int
    text: str


class Anchored(Report):
    """How a request's anchor resolved (`_anchor.md.j2`)."""

    anchor: str
    path: str
    line: int
    column: int
    symbol: str | None
    text: str
    server: str
    partial: bool
    approximate: Mapping[str, object] | None = absent()  # tier, matched text, score (`report.pieces.Approximate`)
    note: str | None = absent()  # how a pasted line number was used
    overloads: str | None = absent()  # overloads of one symbol taken as one place


class Paged(Report):
    """Where a page sits in the whole answer (`_next.md.j2`): 1-based `start`..`end` of
    `total`, and the exact request for the next page. Over its budget, a paged mode that
    does not change files shows a shorter page of the same list (`report/budget.py`)."""

    total: int = 0
    start: int = 0
    end: int = 0
    pagination_id: str | None = absent()
    next: str | None = absent()
    budget: int | None = absent()  # the page was shortened to keep within this many tokens

    @property
    def shown(self) -> int:
        return self.end - self.start + 1 if self.start else 0
