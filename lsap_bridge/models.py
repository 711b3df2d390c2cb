"""Request models (doc/architecture.md, Anchors and Requests): validated by pydantic, unknown fields rejected."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


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


class Locate(StrictModel):
    """A semantic anchor: a file, an optional scope, and optional text to find in it."""

    file_path: Annotated[str, Field(min_length=1)]
    scope: SymbolScope | LineScope | None = None
    find: str | None = None

    @model_validator(mode="after")
    def _needs_scope_or_find(self) -> Locate:
        if self.find is not None and not self.find.strip():
            raise ValueError("find is empty: give the text to look for, or leave find out")
        if self.scope is None and self.find is None:
            raise ValueError("give a scope, a find, or both: a file alone is not a position")
        return self


def dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(exclude_none=True)


Format = Literal["markdown", "json"]
