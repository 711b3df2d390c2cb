"""An answer from a server's index says when that index may be incomplete (issue 26, item
4): a search that finds nothing while the server reports work in progress is not "nothing
in the workspace is named like …"; a count of references taken then says it may grow."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsap_bridge.capabilities import REGISTRY
from lsap_bridge.gateway import LspAnswer, LspCall
from lsap_bridge.render import render_report
from lsap_bridge.service import Service
from lsap_bridge.workspace import Workspace
from tests.fakes import FakeEditor, client, fake_session


def searched(root: Path, indexing: bool) -> str:
    (root / "m.py").write_text("class Product:\n    pass\n")

    def answer(call: LspCall) -> LspAnswer:
        return LspAnswer(result=[])  # the index has not got to the class yet

    session = fake_session(root, answer, indexing=indexing)
    capability = REGISTRY["search"]
    request = capability.model.model_validate({"mode": "search", "query": "Product", "kinds": ["class"]})
    report = asyncio.run(session.run(capability, request)).report
    return render_report("search", report)


def test_nothing_found_while_the_server_works_is_no_proof(tmp_path: Path) -> None:
    text = searched(tmp_path, indexing=True)
    assert "> Index may be incomplete: basedpyright reports work in progress" in text
    assert "the index searched may be incomplete: ask again in a few seconds" in text
    assert "Nothing in the workspace is named like" not in text


def test_nothing_found_from_an_idle_server_is_said_plainly(tmp_path: Path) -> None:
    text = searched(tmp_path, indexing=False)
    assert "Index may be incomplete" not in text
    assert "Nothing in the workspace is named like `Product` with kind class" in text


def referenced(root: Path, indexing: bool, server: str = "ts_ls") -> str:
    """`references` through the service (where notes reach the answer) on a fake server."""
    (root / "m.py").write_text("class Product:\n    pass\n\n\nProduct()\n")
    uri = (root / "m.py").as_uri()

    def at(line: int) -> dict[str, Any]:
        return {"start": {"line": line, "character": 6 if line == 0 else 0},
                "end": {"line": line, "character": 13 if line == 0 else 7}}

    def answer(call: LspCall) -> LspAnswer:
        if call.method == "textDocument/documentSymbol":
            return LspAnswer(result=[{"name": "Product", "kind": 5, "range": at(0), "selectionRange": at(0)}])
        if call.method == "textDocument/references":
            return LspAnswer(result=[{"uri": uri, "range": at(0)}, {"uri": uri, "range": at(4)}])
        return LspAnswer(result=None)

    service = Service(FakeEditor(answer, clients=[client(server)], indexing=indexing), Workspace.of(root))
    response = asyncio.run(service.handle({"mode": "references", "locate": "m.py:Product"}))
    assert response.ok, response.text
    return response.text


def test_references_counted_while_the_server_works_say_the_count_may_grow(tmp_path: Path) -> None:
    text = referenced(tmp_path, indexing=True)
    assert "2 references in 1 file" in text
    assert ("> Note: the index may be incomplete (ts_ls reports work in progress (indexing or "
            "analysing)): the count may grow; ask again soon.") in text


def test_references_from_an_idle_server_carry_no_index_note(tmp_path: Path) -> None:
    text = referenced(tmp_path, indexing=False)
    assert "2 references in 1 file" in text and "index may be incomplete" not in text


def test_basedpyright_at_work_is_no_reason_for_the_note(tmp_path: Path) -> None:
    """basedpyright searches every file on demand: its work in progress is the analysis of
    the files a request opened (every warm references answer, back to back, carried the
    note and its "ask again": a second call for nothing). Its adapter says so."""
    text = referenced(tmp_path, indexing=True, server="basedpyright")
    assert "2 references in 1 file" in text and "index may be incomplete" not in text, text
