"""A check's record moves on only when its answer reaches the asker (`pipeline.delivering`,
`Answer.commit`): a check that ends in `conflict`, `session_gone` or any error leaves the
record as the last answered check left it, in memory and on disk, so the next check still
reports every break since then. And a check never headlines what it did not compute: a file
not compared makes it `incomplete` (its status, its headline first, the CLI's exit 5)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge import check_store, diagnostics, pipeline
from lsap_bridge.capabilities import REGISTRY
from lsap_bridge.cli import exit_code
from lsap_bridge.errors import ErrorCode, LsapError, StaleText
from lsap_bridge.gateway import LspAnswer, LspCall
from lsap_bridge.pipeline import Response
from lsap_bridge.server import response_result
from lsap_bridge.session.warm import Session
from lsap_bridge.workspace import uri_of
from tests.fakes import FakeEditor, client, fake_session

WHOLE = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 23}}
NAME = {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 9}}
METHODS = frozenset({"textDocument/diagnostic", "textDocument/documentSymbol", "textDocument/references"})


def pull(message: str, line: int = 1) -> dict[str, Any]:
    return {"range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 1}},
            "severity": 1, "message": message, "source": "fake"}


def scene(root: Path, published: dict[str, list[dict[str, Any]]], slow: set[str] | None = None) -> Session:
    """loop.py defines `first`; tree.py imports and calls it. The files in `slow` (URIs) get
    no diagnostics from the server (not analysed yet)."""
    (root / "loop.py").write_text("def first(values): ...\n")
    (root / "tree.py").write_text("from loop import first\nfirst([1])\n")

    def answer(call: LspCall) -> LspAnswer:
        if call.method == "textDocument/documentSymbol":
            return LspAnswer([{"name": "first", "kind": 12, "range": WHOLE, "selectionRange": NAME}])
        if call.method == "textDocument/references":
            return LspAnswer([{"uri": uri_of(root / "tree.py"), "range": NAME}])
        uri = call.params["textDocument"]["uri"]
        if uri in (slow or set()):
            return LspAnswer(error={"code": -32801, "message": "content modified"})
        return LspAnswer({"kind": "full", "items": published.get(uri, [])})

    return fake_session(root, answer, clients=[client("typer", METHODS)])


def ask(session: Session, fmt: str = "json") -> Response:
    """A check as the socket asks it: through the pipeline, on the CLI's surface."""
    assert "check" in REGISTRY  # the modes are declared
    return asyncio.run(pipeline.answer(session, {"mode": "check", "format": fmt}, "cli"))


def findings(response: Response) -> list[tuple[str, str, list[str]]]:
    assert response.ok, response.text
    report = json.loads(response.text)
    return [(g["status"], g["path"], [d["message"] for d in g["diagnostics"]]) for g in report["groups"]]


def conflict(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every run's held texts changed meanwhile: run once more, then `conflict`."""
    async def stale(self: Session, held: object) -> None:
        raise StaleText("tree.py changed while the request ran")
    monkeypatch.setattr(Session, "_confirm", stale)


def failing_render(error: Exception) -> Any:
    def fail(monkeypatch: pytest.MonkeyPatch) -> None:
        async def fit(*args: object, **kwargs: object) -> None:
            raise error
        monkeypatch.setattr(pipeline, "fit", fit)
    return fail


@pytest.mark.parametrize(("failure", "code"), [
    (conflict, "conflict"),
    (failing_render(LsapError(ErrorCode.SESSION_GONE, "Neovim is gone")), "session_gone"),
    (failing_render(RuntimeError("a malformed answer")), "server_error"),
], ids=["conflict", "session_gone", "exception"])
def test_a_check_that_fails_midway_loses_no_break(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: Any, code: str) -> None:
    monkeypatch.setattr(diagnostics, "SETTLE_STEP", 0.01)
    published: dict[str, list[dict[str, Any]]] = {}
    session = scene(tmp_path, published)
    assert ask(session).ok  # the baseline, answered
    (tmp_path / "loop.py").write_text("def first(values, *, strict): ...\n")
    published[uri_of(tmp_path / "tree.py")] = [pull("missing argument strict")]
    with monkeypatch.context() as patched:
        failure(patched)
        failed = ask(session)
    assert failed.error is not None and failed.error.code == code
    editor = session.gateway
    assert isinstance(editor, FakeEditor) and editor.journals is not None
    saved = check_store.load(Path(editor.journals.name), session.workspace.root)
    assert saved is not None and saved.number == 1  # the disk's record did not move on either
    answered = ask(session)
    assert findings(answered) == [("new", "tree.py", ["missing argument strict"])]
    assert json.loads(answered.text)["number"] == 2
    # Once answered, the record moved on: nothing new the next time.
    assert findings(ask(session)) == []


def test_a_check_that_did_not_compare_a_file_says_so_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(diagnostics, "SETTLE_STEP", 0.01)
    published: dict[str, list[dict[str, Any]]] = {}
    slow: set[str] = set()
    session = scene(tmp_path, published, slow)
    baseline = ask(session)
    assert baseline.ok and baseline.status is None and "status" not in json.loads(baseline.text)
    (tmp_path / "loop.py").write_text("def first(values, *, strict): ...\n")
    published[uri_of(tmp_path / "tree.py")] = [pull("missing argument strict")]
    slow.add(uri_of(tmp_path / "tree.py"))  # the caller is not analysed yet
    short = ask(session, "markdown")
    # Not "nothing new": the one file that breaks was not compared.
    assert short.text.startswith("# Check 2: 1 file not compared yet; nothing new in the files compared since")
    assert "`lsap check`" in short.text
    assert response_result(short)["status"] == "incomplete" and exit_code("incomplete") == 5
    slow.clear()
    answer = ask(session)
    assert answer.status is None
    assert findings(answer) == [("new", "tree.py", ["missing argument strict"])]
