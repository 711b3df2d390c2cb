"""The socket's wire: the two framings a connection may speak (newline-delimited JSON, and
msgpack-RPC, told apart by the first byte) read within a size limit, messages encoded, and
the JSON-RPC errors every reply uses (`RpcFailure`, with the reports' stable code).
"""

from __future__ import annotations

import json
from typing import Any, TypeAlias

import msgpack

from .errors import ErrorCode, LsapBaseError
from .jsonvalue import Json, Jsonable, JsonObject, Params

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = (
    -32700, -32600, -32601, -32602, -32603,
)
TIMEOUT, UNAUTHORIZED, TOO_LARGE, TOO_BUSY, SESSION_GONE = -32001, -32002, -32003, -32004, -32005
# Every JSON-RPC error also carries one of the stable codes of the reports, in `data.code`.
STABLE = {
    PARSE_ERROR: ErrorCode.INVALID_REQUEST, INVALID_REQUEST: ErrorCode.INVALID_REQUEST,
    METHOD_NOT_FOUND: ErrorCode.INVALID_REQUEST, INVALID_PARAMS: ErrorCode.INVALID_REQUEST,
    TOO_LARGE: ErrorCode.INVALID_REQUEST, INTERNAL_ERROR: ErrorCode.SERVER_ERROR,
    TIMEOUT: ErrorCode.TIMEOUT, UNAUTHORIZED: ErrorCode.DENIED, TOO_BUSY: ErrorCode.BUSY,
    SESSION_GONE: ErrorCode.SESSION_GONE,
}

MSGPACK_REQUEST, MSGPACK_RESPONSE, MSGPACK_NOTIFICATION = 0, 1, 2
JSON_START = b"{[ \t\r\n"  # a connection whose first byte is one of these speaks JSON lines


DROPPED = object()  # stands for a message over the size limit, which was not kept
# A message as a framing takes it: a JSON line (bytes), a msgpack value, or DROPPED.
Message: TypeAlias = Any


class RpcFailure(LsapBaseError):
    """A call that fails at the protocol level: a JSON-RPC error code and a message."""

    def __init__(self, code: int, message: str, data: JsonObject | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data or {}

    def error(self) -> JsonObject:
        return {"code": self.code, "message": str(self),
                "data": {"code": STABLE[self.code].value, **self.data}}


class Malformed(LsapBaseError):
    """Bytes after which no next message can be found: the connection is closed."""


class JsonLines:
    """Newline-delimited JSON: complete lines out of a buffer that never holds more than
    one line over the limit (the rest of such a line is skipped as it arrives)."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._start = 0  # where the next line begins
        self._scanned = 0  # no newline before this offset
        self._skipping = False

    def feed(self, data: bytes) -> None:
        self._buffer += data

    def take(self, limit: int) -> tuple[Message, int] | None:
        """The next line and its size, (DROPPED, size) for one over `limit`, or None until a
        whole line has arrived."""
        while True:
            end = self._buffer.find(b"\n", max(self._start, self._scanned))
            if end < 0:
                self._scanned = len(self._buffer)
                size = len(self._buffer) - self._start
                if self._skipping or size > limit:
                    self._start = self._scanned = len(self._buffer)  # drop what came so far
                    if not self._skipping:
                        self._skipping = True
                        return DROPPED, size
                return None
            line, self._start = bytes(self._buffer[self._start:end]), end + 1
            if self._skipping:  # the end of a line already refused
                self._skipping = False
                continue
            if len(line) > limit:
                return DROPPED, len(line)
            if line.strip():
                return line, len(line)

    def compact(self) -> None:
        del self._buffer[:self._start]
        self._scanned -= self._start
        self._start = 0

    def buffered(self) -> int:
        return len(self._buffer) - self._start


class Msgpack:
    """msgpack-RPC: messages have no delimiters, so one over the limit is still parsed (the
    buffer allows a few times the limit) and then refused by size, keeping the stream in step."""

    def __init__(self, limit: int) -> None:
        self._most = 4 * limit
        self._unpacker = msgpack.Unpacker(raw=False, max_buffer_size=self._most)
        self._fed = self._taken = 0

    def feed(self, data: bytes) -> None:
        try:
            self._unpacker.feed(data)
        except msgpack.BufferFull:
            raise Malformed(f"message larger than {self._most} bytes") from None
        self._fed += len(data)

    def take(self, limit: int) -> tuple[Message, int] | None:
        try:
            message = next(self._unpacker)
        except StopIteration:
            return None
        except (ValueError, msgpack.UnpackException):
            raise Malformed("malformed msgpack") from None
        size, self._taken = self._unpacker.tell() - self._taken, self._unpacker.tell()
        return message, size

    def compact(self) -> None:
        pass  # the unpacker drops what it has consumed

    def buffered(self) -> int:
        return self._fed - self._taken


def pack(message: Jsonable) -> bytes:
    packed: bytes = msgpack.packb(message, use_bin_type=True)
    return packed


def encode_json(message: Jsonable) -> bytes:
    return json.dumps(message, ensure_ascii=False).encode() + b"\n"


def json_error(msg_id: Json, failure: RpcFailure) -> Params:
    return {"jsonrpc": "2.0", "id": msg_id, "error": failure.error()}


def json_ids(line: bytes) -> list[Json]:
    """The ids a JSON line asks answers for (a batch array has several), for refusals."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return [None]
    items = message if isinstance(message, list) else [message]
    return [m.get("id") for m in items if isinstance(m, dict) and "id" in m] or (
        [] if isinstance(message, dict) and "method" in message else [None])


# -- one connection -----------------------------------------------------------------------------
