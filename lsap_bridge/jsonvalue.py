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


# What the bridge sends (LSP parameters, replies): a JSON value read only, so that any
# `dict[str, int]` or `list[str]` it builds is one (Mapping and Sequence are covariant).
Jsonable: TypeAlias = Mapping[str, "Jsonable"] | Sequence["Jsonable"] | str | int | float | bool | None
Params: TypeAlias = dict[str, Jsonable]
