"""Typed LSP data (doc/architecture.md, Typed LSP data): what language servers answer, as
lsprotocol's types (the library pygls is built on).

An answer is decoded once, where it comes back from the gateway, so that the code after it
reads attributes mypy checks instead of `dict.get` chains: structured with the cattrs
converter lsprotocol ships (`Servers.call`, typed by the method's lsprotocol response
message: `result_of`), or, for answers of many items (completions, locations, document
symbols, pulled diagnostics: `Servers.read`, `decoded`), by a hand-written decoder of
decode.py, symbols.py or diagnostics.py that makes the attrs classes directly from the parts
below (cattrs costs 1.3 to 1.5 times more: benchmarks/typed_decode.py). An answer of another
shape is the server's error, named. A WorkspaceEdit is checked whole by the edit engine
before it is decoded (`edits.workspace_edit.steps_of`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeAlias, TypedDict, TypeVar, cast

from cattrs import transform_error
from cattrs.errors import BaseValidationError
from lsprotocol import converters, types

from .errors import ErrorCode, LsapError
from .jsonvalue import Json, JsonObject

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
_CONVERTER = converters.get_converter()

#: A location answer (`textDocument/definition`, `declaration`, `typeDefinition`,
#: `implementation`), as lsprotocol types it.
Locations: TypeAlias = types.Location | Sequence[types.Location] | Sequence[types.LocationLink] | None


class Response(Protocol[T_co]):
    """An lsprotocol response message (`types.DefinitionResponse`, `types.HoverResponse`,
    …): what it names is the type of its method's `result`."""

    @property
    def result(self) -> T_co: ...


def malformed(server: str, method: str, what: str, exc: Exception) -> LsapError:
    """The server's error for an answer of another shape than `what`, naming both."""
    why = ("; ".join(transform_error(exc)) if isinstance(exc, BaseValidationError)
           else f"no {exc}" if isinstance(exc, KeyError) else str(exc))
    return LsapError(
        ErrorCode.SERVER_ERROR,
        f"{server} answered {method} with a malformed {what}: {why[:200]}",
        hint="report this to the language server",
    )


#: What a hand-written decoder (`decoded`) raises on an answer of another shape.
SHAPE_ERRORS = (BaseValidationError, ValueError, TypeError, KeyError, AttributeError, IndexError)


def structure(raw: object, into: type[T], server: str, method: str) -> T:
    """A server's answer as lsprotocol's `into`; an answer of another shape is the
    server's error, named."""
    try:
        return _CONVERTER.structure(raw, into)
    except SHAPE_ERRORS as exc:
        raise malformed(server, method, into.__name__, exc) from exc


def decoded(read: Callable[[Json], T], raw: Json, server: str, method: str) -> T:
    """A server's answer through a hand-written decoder (`decode.py`: the attrs classes made
    directly, where cattrs would cost several times reading the JSON); an answer of
    another shape (a KeyError, a TypeError, a validator's ValueError) is the server's
    error, named."""
    try:
        return read(raw)
    except SHAPE_ERRORS as exc:
        raise malformed(server, method, "answer", exc) from exc


def result_of(raw: object, response: type[Response[T]], server: str, method: str) -> T:
    """A server's answer to `method` as lsprotocol types it: the `result` of its `response`
    message (a union such as `Locations` is structured only as a message's field)."""
    return structure({"jsonrpc": "2.0", "id": 0, "result": raw}, response, server, method).result


# -- hand-written decoders' parts (decode.py, diagnostics.py): a value of another kind is a
# TypeError, which `decoded` makes the server's error; lsprotocol's validators check the rest
# (a string field, a negative line).


def json_object(value: Json) -> JsonObject:
    """A JSON object of a server's answer."""
    if isinstance(value, dict):
        return value
    raise TypeError(f"not an object: {str(value)[:40]!r}")


def json_list(value: Json) -> list[Json]:
    """A JSON list of a server's answer (null: none)."""
    if isinstance(value, list) or value is None:
        return value or []
    raise TypeError(f"not a list: {str(value)[:40]!r}")


def optional_text(value: Json) -> str | None:
    """An optional string field (lsprotocol's validators refuse any other kind)."""
    return value if value is None else cast(str, value)


def position_of(value: Json) -> types.Position:
    """An LSP Position, its `character` still in the server's units."""
    position = json_object(value)
    return types.Position(cast(int, position["line"]), cast(int, position["character"]))


def range_of(value: Json) -> types.Range:
    """An LSP Range, its characters still in the server's units."""
    rng = json_object(value)
    return types.Range(position_of(rng["start"]), position_of(rng["end"]))


class FileEventData(TypedDict):
    """A `workspace/didChangeWatchedFiles` event: 1 created, 2 changed, 3 deleted."""

    uri: str
    type: int
