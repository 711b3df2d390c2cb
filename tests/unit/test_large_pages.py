"""The first page of a large answer is the same whatever its total costs (doc/architecture.md,
Costs): on generated fixtures (a class used 20,001 times in 200 files; a 20,000-line file),
references and outline pages — locations, enclosing symbols, counts, the next request — are
compared with the reports the per-item implementation gave before (`tests/golden/large/`,
recorded with it), over answers in the servers' own shape and in the packed shape the Lua
transport sends."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge.capabilities import REGISTRY
from lsap_bridge.gateway import LspAnswer, LspCall
from lsap_bridge.render import render_json
from lsap_bridge.requests import parse_request
from lsap_bridge.session.warm import Session
from lsap_bridge.workspace import path_of, uri_of
from tests.fakes import fake_session
from tests.golden import assert_golden

FILES, USES = 200, 100  # 200 files of 100 uses, and the definition: 20,001 references
OUTLINE_LINES = 20_000


def write_fixture(root: Path) -> dict[Path, list[dict[str, Any]]]:
    """The generated project, and each file's documentSymbol answer (nested DocumentSymbols,
    in utf-16 units, as basedpyright gives them)."""
    package = root / "big"
    package.mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    symbols: dict[Path, list[dict[str, Any]]] = {}
    definition = package / "w.py"
    definition.write_text("class Widget:\n    def ping(self) -> int:\n        return 1\n")
    symbols[definition] = [_symbol("Widget", 5, 0, 2, 16, [_symbol("ping", 6, 1, 2, 16)])]
    for index in range(FILES):
        lines = ["from big.w import Widget"]
        functions = []
        for i in range(USES - 1):
            first = len(lines) + 2
            # Every seventh use sits after an emoji: its utf-16 column is not its code point.
            prefix = "😀 and " if i % 7 == 0 else ""
            lines += ["", "", f"def make_{i}() -> object:", f"    return ({prefix!r}, Widget())"]
            functions.append(_symbol(f"make_{i}", 12, first, first + 1, len(lines[-1]) + 2))
        path = package / f"uses{index}.py"
        path.write_text("\n".join(lines) + "\n")
        symbols[path] = functions
    big = package / "big.py"
    out: list[str] = []
    classes = []
    while len(out) < OUTLINE_LINES:
        start = len(out)
        out.append(f"class Block{len(classes)}:")
        methods = []
        for m in range(10):
            out += [f"    def method_{m}(self, value: int) -> int:", f"        return value + {m}"]
            methods.append(_symbol(f"method_{m}", 6, len(out) - 2, len(out) - 1, len(out[-1])))
        out.append("")
        classes.append(_symbol(f"Block{len(classes)}", 5, start, len(out) - 2, len(out[-2]), methods))
    big.write_text("\n".join(out) + "\n")
    symbols[big] = classes
    return symbols


def _symbol(name: str, kind: int, first: int, last: int, end: int,
            children: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    at = 4 if kind == 6 else 6 if kind == 5 else 4
    return {"name": name, "kind": kind, "detail": "",
            "range": {"start": {"line": first, "character": 0}, "end": {"line": last, "character": end}},
            "selectionRange": {"start": {"line": first, "character": at},
                               "end": {"line": first, "character": at + len(name)}},
            "children": children or []}


def references_answer(root: Path) -> list[dict[str, Any]]:
    """Every use of `Widget` (found in the files' text, columns in utf-16 units), shuffled
    as a server might send them, with a few twice, and two outside the workspace (counted,
    not shown)."""
    found = []
    for path in sorted((root / "big").glob("*.py")):
        if path.name == "big.py":
            continue
        for number, line in enumerate(path.read_text().splitlines()):
            at = line.find("Widget")
            if at >= 0:
                units = len(line[:at].encode("utf-16-le")) // 2
                found.append(_location(path, number, units, units + 6))
    random.Random(21).shuffle(found)
    found += found[:5]  # duplicates: listed once
    found += [_location(Path("/elsewhere/lib.py"), 3, 0, 6), _location(Path("/elsewhere/lib.py"), 9, 2, 8)]
    return found


def _location(path: Path, line: int, start: int, end: int) -> dict[str, Any]:
    return {"uri": uri_of(path), "range": {"start": {"line": line, "character": start},
                                           "end": {"line": line, "character": end}}}


def packed(found: list[dict[str, Any]]) -> dict[str, Any]:
    """A Location list in the shape `lua/lsap/transport/packing.lua` packs it (see `pack_locations` there)."""
    files: dict[str, list[int]] = {}
    for item in found:
        rng = item["range"]
        files.setdefault(item["uri"], []).extend(
            [rng["start"]["line"], rng["start"]["character"], rng["end"]["line"], rng["end"]["character"]])
    return {"packed": [[uri, flat] for uri, flat in files.items()]}


def packed_symbols(symbols: list[dict[str, Any]]) -> dict[str, Any]:
    """Document symbols in the shape `lua/lsap/transport/packing.lua` packs them (see `pack_symbols` there)."""
    names: list[str] = []
    details: list[str] = []
    nums: list[int] = []

    def visit(items: list[dict[str, Any]], parent: int) -> None:
        for item in items:
            names.append(item["name"])
            details.append(item.get("detail") or "")
            nums.extend([parent, item["kind"]])
            for rng in (item["range"], item["selectionRange"]):
                nums.extend([rng["start"]["line"], rng["start"]["character"],
                             rng["end"]["line"], rng["end"]["character"]])
            visit(item.get("children") or [], len(names))

    visit(symbols, 0)
    return {"symbols": [names, details, nums]}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[Path, list[dict[str, Any]]]]:
    root = tmp_path_factory.mktemp("large").resolve()
    return root, write_fixture(root)


def session_for(root: Path, symbols: dict[Path, list[dict[str, Any]]], pack: bool) -> Session:
    def answer(call: LspCall) -> LspAnswer:
        if call.method == "textDocument/references":
            found = references_answer(root)
            return LspAnswer(packed(found) if pack and call.packed else found)
        if call.method == "textDocument/documentSymbol":
            found = symbols[path_of(call.params["textDocument"]["uri"])]
            return LspAnswer(packed_symbols(found) if pack and call.packed else found)
        raise AssertionError(f"unexpected {call.method}")

    return fake_session(root, answer)


def run(session: Session, payload: dict[str, Any]) -> dict[str, Any]:
    request = parse_request(payload, session.workspace, session.kept.anchors)
    capability = REGISTRY[request.mode]
    answer = asyncio.run(session.run(capability, request))
    data: dict[str, Any] = json.loads(render_json(request.mode, answer.report))
    return {"report": data, "locations": answer.locations}


@pytest.mark.parametrize("pack", [False, True], ids=["plain", "packed"])
def test_references_pages_of_20001_results_are_unchanged(
        project: tuple[Path, dict[Path, list[dict[str, Any]]]], pack: bool) -> None:
    root, symbols = project
    session = session_for(root, symbols, pack)
    first = run(session, {"mode": "references", "locate": "big/w.py:Widget", "max_items": 60})
    assert first["report"]["total"] == FILES * USES + 1 and first["report"]["external"] == 2
    later = run(session, {"mode": "references", "locate": "big/w.py:Widget", "max_items": 60,
                          "start_index": 9_990, "pagination_id": first["report"]["pagination_id"]})
    assert_golden("large/references_first_page.json", json.dumps(first, indent=1, sort_keys=True) + "\n")
    assert_golden("large/references_later_page.json", json.dumps(later, indent=1, sort_keys=True) + "\n")


@pytest.mark.parametrize("pack", [False, True], ids=["plain", "packed"])
def test_outline_of_a_20000_line_file_is_unchanged(
        project: tuple[Path, dict[Path, list[dict[str, Any]]]], pack: bool) -> None:
    root, symbols = project
    session = session_for(root, symbols, pack)
    first = run(session, {"mode": "outline", "file_path": "big/big.py"})
    assert first["report"]["total"] == 11 * len(symbols[root / "big" / "big.py"])
    later = run(session, {"mode": "outline", "file_path": "big/big.py", "start_index": 9_900,
                          "pagination_id": first["report"]["pagination_id"]})
    scoped = run(session, {"mode": "outline", "file_path": "big/big.py", "symbol_path": "Block500"})
    assert_golden("large/outline_first_page.json", json.dumps(first, indent=1, sort_keys=True) + "\n")
    assert_golden("large/outline_later_page.json", json.dumps(later, indent=1, sort_keys=True) + "\n")
    assert_golden("large/outline_scoped.json", json.dumps(scoped, indent=1, sort_keys=True) + "\n")
