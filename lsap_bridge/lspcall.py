"""An LSP request as the bridge sends it through the editor (`LspCall`) and its answer
(`LspAnswer`): below the gateway, so that what builds requests for a server (the tsserver
pull, `servers/tsserver.py`) needs no editor."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypedDict

from .jsonvalue import Json, Jsonable, JsonObject, to_int


@dataclass(frozen=True)
class LspCall:
    client_id: int
    method: str
    params: Mapping[str, Jsonable]
    bufnr: int | None = None
    # The answer (a location list, or document symbols) is sent packed by lua/lsap/transport/packing.lua
    # (`decode.packed_locations` and `symbols.document_symbols` read both shapes): a large one
    # then crosses to Python as a few lists instead of tens of thousands of tables.
    packed: bool = False


class ResponseError(TypedDict, total=False):
    """An LSP `ResponseError`: a server's refusal or failure."""

    code: int
    message: str
    data: Json


def response_error(error: JsonObject) -> ResponseError:
    """A server's error as an LSP ResponseError (what it lacks left out)."""
    out = ResponseError()
    if isinstance(code := error.get("code"), (int, float)):
        out["code"] = to_int(code)
    if "message" in error:
        out["message"] = str(error["message"])
    if "data" in error:
        out["data"] = error["data"]
    return out


@dataclass
class LspAnswer:
    result: Json = None  # as the server sent it (`Servers.call` structures it into lsprotocol's types)
    error: ResponseError | None = None
    # What the server told the human while answering (`window/showMessage`, or a message
    # request), kept from the human's screen by lua/lsap/transport/heard.lua.
    said: tuple[str, ...] = ()
