"""`lua/lsap/modes.lua`, generated from the mode declarations: what the Lua half knows of the
modes without starting Python (completion of `:Lsap`, the picker, the CamelCase commands,
the `<Plug>` mappings, `:checkhealth lsap`'s table of modes and methods).

`python -m lsap_bridge.lua_modes` (`make lua`) writes it; a test fails while the committed
file differs from what the declarations give.
"""

from __future__ import annotations

import json
import sys
import types
import typing
from pathlib import Path
from typing import Literal, cast

from .capabilities import REGISTRY
from .jsonvalue import Params
from .models import Request

TARGET = Path(__file__).resolve().parent.parent / "lua" / "lsap" / "modes.lua"
# Not options typed after the mode: the mode itself, and the anchor (the bare argument).
_NOT_OPTIONS = {"mode", "locate"}


def closed_set(annotation: object) -> list[str] | None:
    """The few values a field may take, as typed on a command line: a Literal's or a bool's."""
    if annotation is bool:
        return ["true", "false"]
    if typing.get_origin(annotation) is Literal:
        return [str(arg) for arg in typing.get_args(annotation)]
    for arg in typing.get_args(annotation):  # Optional[...], list[...]
        if arg is not type(None) and (found := closed_set(arg)):
            return found
    return None


def is_string(annotation: object) -> bool:
    """`str`, or a union with `str` in it (`str | None`, `list[str] | str`)."""
    union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    return annotation is str or (union and str in typing.get_args(annotation))


def tables() -> Params:
    """The tables of modes.lua, from the declarations."""
    shared = [name for name in Request.model_fields if name not in _NOT_OPTIONS]
    modes: dict[str, list[str]] = {}
    values: dict[str, list[str]] = {}
    strings: set[str] = set()
    by_key: dict[str, dict[str, list[str]]] = {}
    for name, capability in sorted(REGISTRY.items()):
        fields = capability.model.model_fields
        modes[name] = [key for key in fields if key not in Request.model_fields and key not in _NOT_OPTIONS]
        for key, info in fields.items():
            if key in _NOT_OPTIONS:
                continue
            offered = closed_set(info.annotation) or list(capability.offer.values.get(key, ()))
            if offered:
                by_key.setdefault(key, {})[name] = offered
            if is_string(info.annotation):
                strings.add(key)
    for key, per_mode in sorted(by_key.items()):
        if len({tuple(v) for v in per_mode.values()}) == 1:
            values[key] = next(iter(per_mode.values()))
        else:  # the same key with other values in other modes (`direction`)
            values.update({f"{name}.{key}": offered for name, offered in per_mode.items()})
    picker = sorted((c for c in REGISTRY.values() if c.offer.picker), key=lambda c: c.offer.picker)
    return {
        "shared": shared,
        "modes": modes,
        "values": dict(sorted(values.items())),
        "strings": sorted(strings),
        "human": [[c.mode, c.summary] for c in picker],
        "camel": {c.offer.command: c.mode for c in REGISTRY.values() if c.offer.command},
        # The modes with a `<Plug>(lsap-…)` mapping, in the picker's order.
        "plugs": [c.mode for c in picker if c.offer.plug],
        # Modes that need no file under the cursor: neither an anchor nor a file to default to.
        "cursorless": sorted(n for n, c in REGISTRY.items() if "locate" not in c.model.model_fields
                             and ("file_path" not in c.model.model_fields or not c.model.file_from_cursor)),
        # In the picker's order, then by name: how `:checkhealth lsap` lists what a server can do.
        "needs": [[c.mode, c.method] for c in sorted(REGISTRY.values(), key=lambda c: (c.offer.picker or 99, c.mode))
                  if c.method],
    }


def _lua(value: object, indent: str = "") -> str:
    """A JSON-like value as a Lua table constructor."""
    if isinstance(value, dict):
        if not value:
            return "{}"
        inner = indent + "  "
        rows = [f"{inner}{_key(k)} = {_lua(v, inner)}," for k, v in value.items()]
        return "{\n" + "\n".join(rows) + f"\n{indent}}}"
    if isinstance(value, list) and value and isinstance(value[0], list):  # rows: one a line
        inner = indent + "  "
        return "{\n" + "\n".join(f"{inner}{_lua(v, inner)}," for v in value) + f"\n{indent}}}"
    if isinstance(value, list):
        return "{ " + ", ".join(_lua(v, indent) for v in value) + " }" if value else "{}"
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value, ensure_ascii=False)


def _key(key: str) -> str:
    return key if key.isidentifier() else f"[{json.dumps(key)}]"


def render() -> str:
    data = tables()
    for key in ("strings", "cursorless"):  # lists of names as sets: `name = true`
        data[key] = {str(name): True for name in cast(list[str], data[key])}
    return ("-- Generated from the mode declarations (lsap_bridge/modes.py) by\n"
            "-- `python -m lsap_bridge.lua_modes` (`make lua`): do not edit; a test checks it is current.\n"
            "return " + _lua(data) + "\n")


def main() -> int:
    TARGET.write_text(render())
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
