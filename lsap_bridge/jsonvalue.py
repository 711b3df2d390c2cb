"""JSON values as mypy can check them: what the bridge builds and sends (LSP parameters, a
request's fields, the socket's messages) and what it reads back before narrowing it.

`Json` is a union of the JSON kinds: reading a member of a `JsonObject` gives a `Json`, which the
code must narrow (`isinstance`, `str()`) before it uses it as one kind of value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

Json: TypeAlias = bool | int | float | str | list["Json"] | dict[str, "Json"] | None
JsonObject: TypeAlias = dict[str, Json]


def to_int(value: Json) -> int:
    """`int(value)` for a JSON value: a TypeError for null, a list or an object, as `int`
    raises for them."""
    if isinstance(value, (bool, int, float, str)):
        return int(value)
    raise TypeError(f"not a number: {value!r}")


def to_float(value: Json) -> float:
    """`float(value)` for a JSON value: a TypeError for null, a list or an object."""
    if isinstance(value, (bool, int, float, str)):
        return float(value)
    raise TypeError(f"not a number: {value!r}")


def obj(value: Json) -> JsonObject:
    """A JSON value read as an object: `{}` for anything else (null, a Lua empty table sent
    as a list, a server's garbage)."""
    return value if isinstance(value, dict) else {}


def items(value: Json) -> list[Json]:
    """A JSON value read as a list: `[]` for anything else (null, an empty Lua table sent as
    an object)."""
    return value if isinstance(value, list) else []


# What the bridge sends (LSP parameters, replies): a JSON value read only, so that any
# `dict[str, int]` or `list[str]` it builds is one (Mapping and Sequence are covariant).
Jsonable: TypeAlias = Mapping[str, "Jsonable"] | Sequence["Jsonable"] | str | int | float | bool | None
Params: TypeAlias = dict[str, Jsonable]
# What the bridge sends Neovim over msgpack-RPC (`nvim_rpc`, the gateway): JSON, and bytes
# (a file's content, compared byte for byte).
Packable: TypeAlias = Mapping[str, "Packable"] | Sequence["Packable"] | str | int | float | bool | bytes | None
