"""The request pipeline (lsap_bridge/pipeline.py) on a session over recorded-shape answers:
a page over its budget is shortened from the list the answer already has, the mode runs
once; and the shorter page is the one the same request with that `max_items` gives."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge import capabilities  # noqa: F401  (discovers the modes)
from lsap_bridge.diskwatch import Basis
from lsap_bridge.errors import StaleText
from lsap_bridge.gateway import LspAnswer, LspCall
from lsap_bridge.models import Request
from lsap_bridge.modes import Answer, Capability
from lsap_bridge.pipeline import Response, answer
from lsap_bridge.session.warm import Session
from lsap_bridge.workspace import uri_of
from tests.fakes import fake_session

FILES, USES = 30, 5


def project(root: Path) -> list[dict[str, Any]]:
    """`Widget` and its uses in FILES files, and the references a server gives of it."""
    (root / "pyproject.toml").write_text("")
    (root / "w.py").write_text("class Widget:\n    pass\n")
    found = [{"uri": uri_of(root / "w.py"), "range": {"start": {"line": 0, "character": 6},
                                                       "end": {"line": 0, "character": 12}}}]
    for index in range(FILES):
        path = root / f"use{index:02}.py"
        path.write_text("from w import Widget\n" + "".join(f"w{i} = Widget()\n" for i in range(USES)))
        found += [{"uri": uri_of(path), "range": {"start": {"line": i + 1, "character": 5},
                                                  "end": {"line": i + 1, "character": 11}}} for i in range(USES)]
    return found


def counting(tmp_path: Path) -> tuple[Session, list[str]]:
    found = project(tmp_path)

    def reply(call: LspCall) -> LspAnswer:
        return LspAnswer(found if call.method == "textDocument/references" else [])

    session = fake_session(tmp_path, reply)
    runs: list[str] = []
    run = session.run

    async def counted(capability: Capability, request: Request) -> Answer:
        runs.append(capability.mode)
        return await run(capability, request)

    session.run = counted  # type: ignore[method-assign]
    return session, runs


def ask(session: Session, **payload: Any) -> Response:
    response = asyncio.run(answer(session, {"mode": "references", "locate": "w.py@class <|>Widget",
                                            "format": "json", **payload}, "agent"))
    assert response.ok, response.text
    return response


def test_a_page_over_its_budget_is_shortened_without_running_the_mode_again(tmp_path: Path) -> None:
    session, runs = counting(tmp_path)
    whole = json.loads(ask(session, max_items=200, max_tokens=100_000).text)
    assert whole["total"] == FILES * USES + 1 and whole["end"] == whole["total"] and "budget" not in whole
    assert runs == ["references"]
    fitted = json.loads(ask(session, max_items=200, max_tokens=1500).text)
    assert runs == ["references"] * 2, "the budget ran the mode again"
    assert fitted["budget"] == 1500 and 1 < fitted["end"] < whole["end"]
    assert "budget_cut" not in fitted  # shortened to a page that fits, not cut
    # The shorter page is the page the same request with that `max_items` gives.
    again = json.loads(ask(session, max_items=fitted["end"], max_tokens=1500,
                           pagination_id=fitted["pagination_id"]).text)
    assert {k: v for k, v in fitted.items() if k != "budget"} == again



def test_work_that_is_no_modes_runs_on_the_warm_path(tmp_path: Path) -> None:
    """`Session.run_warm` (a File block opened, MOVE_TO_FILE, FIX, …): held texts are taken
    inside it, and a stale one runs the work once more, fresh, and only once."""
    session = fake_session(tmp_path, lambda call: LspAnswer())
    seen: list[bool] = []

    async def work(stale: int) -> int:
        seen.append(session.texts.warm)
        if len(seen) <= stale:
            raise StaleText("the buffer changed")
        return len(seen)

    assert asyncio.run(session.run_warm(lambda: work(1))) == 2 and seen == [True, True]
    assert not session.texts.warm  # outside it, nothing is taken on trust
    seen.clear()
    with pytest.raises(StaleText):
        asyncio.run(session.run_warm(lambda: work(5)))
    assert len(seen) == 2


def test_diagnostics_just_after_the_bridge_s_own_edits_do_not_sync_the_disk(tmp_path: Path) -> None:
    """`settled` (the text format's diagnostics after its commands): the servers heard of the
    files as the edits wrote them; a sync would wait for a publish no server makes."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "w.py").write_text("x = 1\n")
    session = fake_session(tmp_path, lambda call: LspAnswer())
    synced: list[int | None] = []
    sync = session.servers.sync_disk

    async def counted(at_ns: int | None = None) -> Basis:
        synced.append(at_ns)
        return await sync(at_ns)

    session.servers.sync_disk = counted  # type: ignore[method-assign]
    for settled in (False, True):
        response = asyncio.run(answer(session, {"mode": "diagnostics", "file_path": "w.py", "settled": settled},
                                      "agent"))
        assert response.ok, response.text
    assert len(synced) == 1, "the settled request synced the disk"
