"""vtsls's diagnostics pulled through tsserver (lsap_bridge/tsserver.py): which clients,
the requests, and tsserver's answers as one LSP full report."""

from __future__ import annotations

from pathlib import Path

from lsap_bridge.editor import Client
from lsap_bridge.gateway import LspAnswer
from lsap_bridge.servers import tsserver

VTSLS = Client(3, "vtsls", "utf-16", frozenset({"workspace/executeCommand"}))


def test_only_vtsls_is_pulled_this_way() -> None:
    assert tsserver.pulls(VTSLS)
    assert not tsserver.pulls(Client(4, "ts_ls", "utf-16", frozenset({"workspace/executeCommand"})))
    assert not tsserver.pulls(Client(5, "vtsls", "utf-16", frozenset()))


def test_one_request_per_kind_naming_the_file() -> None:
    calls = tsserver.calls(VTSLS, Path("/p/a.ts"), 7)
    assert [c.params["arguments"][0] for c in calls] == list(tsserver.KINDS)
    assert {(c.client_id, c.method, c.bufnr, c.params["command"]) for c in calls} == {
        (3, "workspace/executeCommand", 7, "typescript.tsserverRequest")}
    assert calls[0].params["arguments"][1] == {"file": "/p/a.ts"}


def test_answers_become_one_full_report() -> None:
    semantic = {"success": True, "body": [{"code": 2322, "text": "Type 'number' is not assignable to type 'string'.",
                                           "start": {"line": 2, "offset": 7}, "end": {"line": 2, "offset": 12},
                                           "category": "error"}]}
    suggestion = {"success": True, "body": [{"code": 6133, "text": "'x' is declared but its value is never read.",
                                             "start": {"line": 1, "offset": 1}, "end": {"line": 1, "offset": 2},
                                             "category": "suggestion", "reportsUnnecessary": True}]}
    report = tsserver.report([LspAnswer({"success": True, "body": []}), LspAnswer(semantic), LspAnswer(suggestion)])
    assert report.error is None and report.result["kind"] == "full"
    error, hint = report.result["items"]
    assert error == {"range": {"start": {"line": 1, "character": 6}, "end": {"line": 1, "character": 11}},
                     "severity": 1, "message": "Type 'number' is not assignable to type 'string'.",
                     "source": "ts", "code": 2322}
    assert hint["severity"] == 4 and hint["tags"] == [1]


def test_a_failed_request_fails_the_pull() -> None:
    failed = tsserver.report([LspAnswer({"success": True, "body": []}), LspAnswer(error={"message": "no project"})])
    assert failed.error == {"message": "no project"}
    refused = tsserver.report([LspAnswer({"success": False, "message": "No Project."})])
    assert refused.error == {"message": "No Project."}
