"""An answer from a server's index says when that index may be incomplete (issue 26, item
4): a search that finds nothing while the server reports work in progress is not "nothing
in the workspace is named like …"."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsap_bridge.capabilities import REGISTRY
from lsap_bridge.gateway import LspAnswer, LspCall
from lsap_bridge.render import render_report
from tests.fakes import fake_session


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
