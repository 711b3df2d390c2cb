"""Large answers through real Neovim and basedpyright: packed by lua/lsap/transport/packing.lua, references
and document symbols decode to what the server's own answers decode to, and the first and a
later page of 2,001 references hold the same uses, enclosing symbols and counts as a slow
path computed here from the unpacked answer (every location converted, sorted and looked up
one by one)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from lsprotocol import types

from lsap_bridge.decode import location_files, locations, packed_locations
from lsap_bridge.gateway import LspCall
from lsap_bridge.lsp import result_of
from lsap_bridge.symbols import build_tree, document_symbols
from lsap_bridge.workspace import uri_of

from .harness import Bridge

pytestmark = [pytest.mark.integration, pytest.mark.slow]

FILES, USES = 20, 100  # and the definition: 2,001 references
PAGE = 60


@pytest.fixture(scope="module")
def bridge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    root = tmp_path_factory.mktemp("large") / "proj"
    package = root / "big"
    package.mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'large'\n")
    (package / "__init__.py").write_text("")
    (package / "w.py").write_text("class Widget:\n    def ping(self) -> int:\n        return 1\n")
    for index in range(FILES):
        body = ["from big.w import Widget\n"]
        for i in range(USES - 1):
            note = "😀 " if i % 7 == 0 else ""  # utf-16 columns that are not code points
            body.append(f"\n\ndef make_{i}() -> object:\n    return ('{note}', Widget())\n")
        (package / f"uses{index}.py").write_text("".join(body))
    bridge = Bridge(root.resolve(), ["basedpyright"])
    yield bridge
    bridge.close()


def slow_pages(bridge: Bridge, anchor: str) -> tuple[list[tuple[str, int, int, str | None]], int, int]:
    """Every use as (path, line, column, enclosing symbol), in report order, and the count
    of files and of results outside the workspace: from the unpacked answer, item by item."""
    session = bridge.service.session

    async def work() -> tuple[list[tuple[str, int, int, str | None]], int, int]:
        target = await session.servers.target(bridge.root / "big" / "w.py", "textDocument/references")
        doc = await session.texts.document(target.path)
        params = session.servers.position_params(target, doc, 0, 6)
        params["context"] = {"includeDeclaration": True}
        [answer] = await session.gateway.lsp(
            [LspCall(target.client.id, "textDocument/references", params, target.bufnr)])
        structured = result_of(answer.result, types.ReferencesResponse, target.client.name, "textDocument/references")
        found = await session.texts.locations(structured, target.client)
        unique = {(loc.path, loc.line, loc.col): loc for loc in found}
        ordered = sorted(unique.values(), key=lambda loc: (str(loc.path), loc.line, loc.col))
        inside = [loc for loc in ordered if session.workspace.contains(loc.path)]
        paths = list(dict.fromkeys(loc.path for loc in inside))
        trees = await session.symbols.of(paths, target.client, await session.texts.documents(paths))
        rows = [(session.workspace.display(loc.path), loc.line + 1, loc.col + 1,
                 trees[loc.path].enclosing_path(loc.line, loc.col)) for loc in inside]
        return rows, len(paths), len(ordered) - len(inside)

    return bridge.loop.run(work())


def shown(report: dict[str, Any]) -> list[tuple[str, int, int, str | None]]:
    return [(group["path"], use["line"], use["column"], group["symbol"])
            for group in report["groups"] for use in group["uses"]]


def test_a_packed_answer_decodes_as_the_servers_own(bridge: Bridge) -> None:
    session = bridge.service.session

    async def both() -> tuple[Any, Any]:
        path = bridge.root / "big" / "w.py"
        target = await session.servers.target(path, "textDocument/references")
        params = {"textDocument": {"uri": uri_of(path)}, "position": {"line": 0, "character": 6},
                  "context": {"includeDeclaration": True}}
        plain, packed = await session.gateway.lsp([
            LspCall(target.client.id, "textDocument/references", params, target.bufnr),
            LspCall(target.client.id, "textDocument/references", params, target.bufnr, packed=True)])
        return plain.result, packed.result

    plain, packed = bridge.loop.run(both())
    assert isinstance(packed, dict) and len(packed["packed"]) == FILES + 1
    assert location_files(packed_locations(packed)) == location_files(locations(plain))
    assert sum(len(ranges) for _, ranges in location_files(packed_locations(packed))) == FILES * USES + 1


def test_packed_document_symbols_build_the_servers_tree(bridge: Bridge) -> None:
    session = bridge.service.session

    async def both(name: str) -> tuple[Any, Any, Any]:
        path = bridge.root / "big" / name
        target = await session.servers.target(path, "textDocument/documentSymbol")
        params = {"textDocument": {"uri": uri_of(path)}}
        plain, packed = await session.gateway.lsp([
            LspCall(target.client.id, "textDocument/documentSymbol", params, target.bufnr),
            LspCall(target.client.id, "textDocument/documentSymbol", params, target.bufnr, packed=True)])
        return plain.result, packed.result, await session.texts.document(path)

    for name, count in (("uses3.py", USES - 1), ("w.py", 2)):  # functions; a class and its method
        plain, packed, doc = bridge.loop.run(both(name))
        assert isinstance(packed, dict) and len(packed["symbols"][0]) == count

        def tree(result: Any, lines: list[str] = doc.lines) -> list[tuple[Any, ...]]:
            built = build_tree(document_symbols(result), lines, "utf-16")
            return [(path, s.kind, s.detail, s.span, s.selection) for path, s in built.walk()]

        assert tree(packed) == tree(plain)
        assert any(span.start_col != selection.start_col for *_, span, selection in tree(packed))


def test_the_pages_of_2001_references_are_the_slow_paths(bridge: Bridge) -> None:
    anchor = "big/w.py:Widget"
    first = bridge.ask(mode="references", locate=anchor, max_items=PAGE)
    rows, files, external = slow_pages(bridge, anchor)
    assert len(rows) == FILES * USES + 1
    assert (first["total"], first["files"], first["external"]) == (len(rows), files, external)
    assert shown(first) == rows[:PAGE]
    start = 1_234
    later = bridge.ask(mode="references", locate=anchor, max_items=PAGE, start_index=start,
                       pagination_id=first["pagination_id"])
    assert shown(later) == rows[start:start + PAGE]
    assert any(symbol and symbol.startswith("make_") for *_, symbol in shown(later))
