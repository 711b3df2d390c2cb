"""Which attached server answers a request (issue 26, item 1): by what the request needs,
decided per request, and a choice made while servers were still attaching is not kept."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from pathlib import Path

import pytest

from lsap_bridge.editor import Attached, Client
from lsap_bridge.errors import ErrorCode, LsapError
from lsap_bridge.gateway import LspAnswer, LspCall
from lsap_bridge.session.targets import ATTACH_GRACE, all_came, ranked
from lsap_bridge.session.warm import Session
from lsap_bridge.workspace import Workspace
from tests.fakes import FakeEditor, client

RUFF = client("ruff", frozenset({"textDocument/hover", "textDocument/formatting", "textDocument/codeAction",
                                 "textDocument/rangeFormatting", "textDocument/diagnostic"}), id=1)
PYRIGHT = client(id=2)  # hover, definition, references, document symbols, …
HOVER, FORMAT, SYMBOLS = "textDocument/hover", "textDocument/formatting", "textDocument/documentSymbol"


def test_the_main_analysis_server_answers_whatever_attached_first() -> None:
    assert ranked([RUFF, PYRIGHT], HOVER) == [PYRIGHT, RUFF]
    assert ranked([PYRIGHT, RUFF], HOVER) == [PYRIGHT, RUFF]
    assert ranked([RUFF, PYRIGHT], SYMBOLS) == [PYRIGHT]


def test_the_formatter_formats() -> None:
    pylsp = client("pylsp", PYRIGHT.methods | {FORMAT}, id=3)
    assert ranked([pylsp, RUFF], FORMAT) == [RUFF, pylsp]
    assert ranked([PYRIGHT, RUFF], FORMAT) == [RUFF]


def aged(c: Client, seconds: float) -> Client:
    return replace(c, started=time.monotonic() - seconds)


def test_a_choice_is_kept_only_once_every_expected_server_came() -> None:
    assert all_came(Attached([RUFF, PYRIGHT]))
    assert not all_came(Attached([aged(RUFF, 0.5)], complete=False))
    # Nothing says which servers to expect, or one expected did not come: each must have
    # been attached a while (the rest is not coming).
    assert not all_came(Attached([aged(RUFF, 0.5)], complete=False, known=False))
    assert all_came(Attached([aged(RUFF, ATTACH_GRACE + 1), PYRIGHT], complete=False, known=False))
    assert all_came(Attached([aged(RUFF, ATTACH_GRACE + 1)], complete=False))


class Cold(FakeEditor):
    """ruff alone at first (basedpyright still starting), then both."""

    calls: int = 0

    async def wait_for_clients(self, bufnr: int, method: str | None) -> list[Client]:
        self.calls += 1
        first = Attached([replace(RUFF, started=time.monotonic())], complete=False)
        return first if self.calls == 1 else Attached([RUFF, PYRIGHT])


def test_a_cold_moment_s_choice_is_not_kept(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("x = 1\n")

    def answer(call: LspCall) -> LspAnswer:
        return LspAnswer(result=None)

    session = Session(Cold(answer), Workspace.of(tmp_path))  # type: ignore[arg-type]
    cold = asyncio.run(session.servers.target(path, HOVER))
    assert cold.client.name == "ruff" and not session.servers._targets
    warm = asyncio.run(session.servers.target(path, HOVER))
    assert warm.client.name == "basedpyright" and (path, HOVER, None) in session.servers._targets
    assert warm.client_for(SYMBOLS) == PYRIGHT
    named = asyncio.run(session.servers.target(path, HOVER, "ruff"))
    assert named.client.name == "ruff"
    with pytest.raises(LsapError) as raised:
        asyncio.run(session.servers.target(path, HOVER, "pylsp"))
    assert raised.value.code is ErrorCode.NOT_FOUND and "(those that do: basedpyright, ruff)" in raised.value.message
