"""What decoding servers' answers into lsprotocol's types costs (issue 49, item 2): 1,000
locations and 300 completion items, each read three ways in the same run, as ratios against
the first:

- `json`: read as dicts, as the bridge did before (the code is copied here: the baseline);
- `typed`: the hand-written decoders of decode.py (`locations`, `packed_locations`,
  `completions`) that make lsprotocol's attrs classes directly, then what reads them;
- `cattrs`: lsprotocol's own converter, which the decoders replace on these paths.

    .venv/bin/python -m benchmarks.typed_decode
"""

from __future__ import annotations

import timeit
from collections.abc import Callable
from pathlib import Path

from lsprotocol import converters, types

from lsap_bridge.capabilities.completion import completion_items
from lsap_bridge.decode import completions, location_files, locations, packed_locations
from lsap_bridge.jsonvalue import Json, JsonObject, obj
from lsap_bridge.workspace import path_of

LOCATIONS, FILES, ITEMS = 1_000, 50, 300
CONVERTER = converters.get_converter()


def _range(line: int, start: int, end: int) -> JsonObject:
    return {"start": {"line": line, "character": start}, "end": {"line": line, "character": end}}


def answers() -> tuple[list[Json], JsonObject, JsonObject]:
    """A references answer (plain and as packing.lua packs it) and a completion list."""
    plain: list[Json] = [{"uri": f"file:///w/m{i % FILES}.py", "range": _range(i, 4, 9)} for i in range(LOCATIONS)]
    by_file: dict[str, list[Json]] = {}
    for i in range(LOCATIONS):
        by_file.setdefault(f"file:///w/m{i % FILES}.py", []).extend([i, 4, i, 9])
    packed: JsonObject = {"packed": [[uri, flat] for uri, flat in by_file.items()]}
    items: list[Json] = [{"label": f"name_{i}", "kind": 1 + i % 25, "sortText": f"{i:04}", "detail": "int",
                          "labelDetails": {"description": "module"}} for i in range(ITEMS)]
    return plain, packed, {"isIncomplete": False, "items": items}


def json_spans(raw: list[Json]) -> list[tuple[Path, Json]]:
    """The baseline: `decode.spans` as it read a location answer before (a check per range)."""
    out: list[tuple[Path, Json]] = []
    paths: dict[str, Path] = {}
    for item in map(obj, raw):
        uri, rng = item.get("uri"), obj(item.get("range"))
        start, end = obj(rng.get("start")), obj(rng.get("end"))
        if isinstance(uri, str) and uri.startswith("file:") and all(
                type(p.get(k)) is int for p in (start, end) for k in ("line", "character")):
            out.append((paths.get(uri) or paths.setdefault(uri, path_of(uri)), rng))
    return out


def json_packed(raw: JsonObject) -> list[tuple[Path, list[Json]]]:
    """The baseline: the packed answer's files as `location_files` read them before."""
    return [(path_of(uri), list(flat)) for uri, flat in (obj_list(e) for e in obj_list(raw["packed"]))
            if isinstance(uri, str) and uri.startswith("file:") and isinstance(flat, list)]


def obj_list(value: Json) -> list[Json]:
    return value if isinstance(value, list) else []


def json_completions(result: JsonObject) -> list[tuple[str, str]]:
    """The baseline: `completion_items` as it read the dicts before (label, detail)."""
    rows = []
    for item in sorted(map(obj, obj_list(result.get("items"))),
                       key=lambda item: str(item.get("sortText") or item.get("label", ""))):
        details = obj(item.get("labelDetails"))
        detail = " ".join(str(p) for p in (details.get("detail"), details.get("description"), item.get("detail")) if p)
        rows.append((str(item.get("label", "")), " ".join(detail.split())))
    return rows


def best(ways: dict[str, Callable[[], object]], rounds: int = 25, number: int = 10) -> dict[str, float]:
    """Each way's best time, in ms per call, the ways taken in turn in every round (a
    shared machine's load then weighs on all of them alike)."""
    times = {way: float("inf") for way in ways}
    for _ in range(rounds):
        for way, run in ways.items():
            times[way] = min(times[way], timeit.timeit(run, number=number) / number * 1000)
    return times


def main() -> None:
    plain, packed, listed = answers()
    grouped = packed_locations(packed)
    times = best({"json": lambda: json_packed(packed), "typed": lambda: packed_locations(packed),
                  "group": lambda: location_files(grouped)})  # the grouping: the same code before and after
    before, after, group = times["json"], times["typed"], times["group"]
    print(f"{LOCATIONS:,} locations, packed (references, inspect's count): decoding the lists {after / before:.2f}x "
          f"reading them as JSON; with the grouping by file ({group:.2f} ms) {(after + group) / (before + group):.2f}x")
    cases: dict[str, dict[str, Callable[[], object]]] = {
        f"{LOCATIONS:,} locations, plain (rename's uses, check's users)": {
            "json": lambda: json_spans(plain),
            "typed": lambda: locations(plain),
            "cattrs": lambda: CONVERTER.structure(plain, list[types.Location]),
        },
        f"{ITEMS} completion items, to rows": {
            "json": lambda: json_completions(listed),
            "typed": lambda: completion_items(completions(listed)),
            "cattrs": lambda: completion_items(CONVERTER.structure(listed, types.CompletionList)),
        },
    }
    print("| answer | json ms | typed / json | cattrs / json |")
    print("|---|---:|---:|---:|")
    for name, ways in cases.items():
        times = best(ways)
        print(f"| {name} | {times['json']:.2f} | {times['typed'] / times['json']:.2f}x "
              f"| {times['cattrs'] / times['json']:.2f}x |")


if __name__ == "__main__":
    main()
