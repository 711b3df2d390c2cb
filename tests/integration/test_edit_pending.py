"""An edit answers once it is written and journalled (issue 44, item 4): by default it waits
`DIAGNOSTICS_WAIT` (1 s) for the servers to confirm its diagnostics after; the files they
have not confirmed by then are `pending`, with the `check` that compares them, and the
next check does.

Both bridges start with the default wait (every other test's Neovim waits until the
diagnostics settle: `LSAP_DIAGNOSTICS_WAIT=settled`, tests/conftest.py). "Pending" is made
certain by a proxy that holds the callers' diagnostics back for `DELAY` seconds
(delay_server.py), far past the wait; "confirmed" by a server that answers its
diagnostics pulls at once (pull_server.py).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge.cli import exit_code
from lsap_bridge.models import DIAGNOSTICS_WAIT

from ..conftest import DIAGNOSTICS_WAIT as WAIT_VARIABLE
from .harness import Bridge
from .test_check_settled import delayed_bridge, project

pytestmark = [pytest.mark.integration, pytest.mark.slow]

DELAY = 8.0  # seconds the proxy holds the callers' diagnostics back: 8x the default wait
PULLER = Path(__file__).with_name("pull_server.py")
UNKNOWN = '"f0" is unknown import symbol'


def with_default_wait(start: Any) -> Bridge:
    """A bridge whose Neovim reads no `LSAP_DIAGNOSTICS_WAIT`: setup()'s default wait."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(WAIT_VARIABLE)
        bridge: Bridge = start()
    assert bridge.embedded.gateway.diagnostics_wait == DIAGNOSTICS_WAIT
    return bridge


@pytest.fixture(scope="module")
def delayed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    root = project(tmp_path_factory.mktemp("pending") / "gen")
    bridge = with_default_wait(lambda: delayed_bridge(root, "/gen/use", DELAY))
    yield bridge
    bridge.close()


@pytest.fixture(scope="module")
def fast(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    root = tmp_path_factory.mktemp("fast")
    (root / "m.py").write_text("def alpha() -> int:\n    return 1\n\n\nvalue = alpha()\n")

    def start() -> Bridge:
        bridge = Bridge(root, ["none"])
        bridge.lua("local python, server, root = ...;"
                   "vim.lsp.config('fast', {cmd = {python, server, '0.05', '--rename'},"
                   "  filetypes = {'python'}, root_dir = root});"
                   "vim.lsp.enable('fast')", sys.executable, str(PULLER), str(root))
        return bridge

    bridge = with_default_wait(start)
    yield bridge
    bridge.close()


def new_errors(report: dict[str, Any]) -> set[tuple[str, str]]:
    return {(g["path"], d["message"]) for g in report["groups"] if g["status"] == "new"
            for d in g["diagnostics"] if d["severity"] == "error"}


def test_a_rename_answers_before_a_slow_server_and_the_next_check_reports_its_break(delayed: Bridge) -> None:
    """The rename of `f0` leaves `gen/use0a.py` (excluded) importing the old name: its
    server's diagnostics arrive `DELAY` s later, so the rename answers without them, names
    the callers pending with the check, and is applied and journalled; that check reports
    the break."""
    root = delayed.root / "gen"
    assert delayed.ask(mode="check")["baseline"]
    request = {"mode": "rename", "locate": "gen/lib0.py:f0", "new_name": "h0", "exclude_files": ["gen/use0a.py"]}
    response = delayed.request({**request, "format": "json"})
    assert response.ok, response.text
    report = json.loads(response.text)
    pending = {p["path"] for p in report["pending"]}
    assert {"gen/use0a.py", "gen/use0b.py"} <= pending, report
    assert report["status"] == "incomplete" and response.status == "incomplete"
    assert exit_code(response.status) == 5
    assert json.loads(report["again"]) == {"mode": "check"}
    # Applied: on disk, and journalled as a change set `undo` takes back.
    assert "def h0(" in (root / "lib0.py").read_text() and "h0(" in (root / "use0b.py").read_text()
    assert "f0" in (root / "use0a.py").read_text()
    assert report["change"] in {c["id"] for c in delayed.ask(mode="changes")["changes"]}
    # The next check compares the pending files, and reports what the rename broke.
    after = delayed.ask(mode="check")
    assert not after.get("pending") and after.get("status") is None, after
    assert ("gen/use0a.py", UNKNOWN) in new_errors(after), after
    delayed.ask(mode="undo", id=report["change"])
    delayed.ask(mode="check")


def test_the_headline_says_first_the_edit_is_applied_and_what_is_pending(delayed: Bridge) -> None:
    delayed.ask(mode="check")
    response = delayed.request({"mode": "rename", "locate": "gen/lib1.py:f1", "new_name": "h1"})
    assert response.ok and response.status == "incomplete", response.text
    head = response.text.splitlines()[0]
    assert head.startswith("# Rename: `f1` → `h1`: applied; "), head
    assert "files not compared yet (`{\"mode\":\"check\"}` compares them)" in head, head
    assert "(the rename is applied: do not send it again)" in response.text
    assert "def h1(" in (delayed.root / "gen" / "lib1.py").read_text()
    change = json.loads(delayed.request({"mode": "changes", "format": "json"}).text)["changes"][0]["id"]
    delayed.ask(mode="undo", id=change)


def test_a_rename_whose_server_answers_at_once_is_complete(fast: Bridge) -> None:
    report = fast.ask(mode="rename", locate="m.py@def <|>alpha", new_name="beta")
    assert report.get("status") is None and report["pending"] == [], report
    assert fast.root.joinpath("m.py").read_text() == "def beta() -> int:\n    return 1\n\n\nvalue = beta()\n"
    fast.ask(mode="undo", id=report["change"])


def test_a_request_s_diagnostics_wait_settled_waits_for_the_slow_server(delayed: Bridge) -> None:
    """`diagnostics_wait: "settled"`: the answer waits for the held-back diagnostics (as
    every edit did before the short default), and reports the break itself."""
    delayed.ask(mode="check")
    report = delayed.ask(mode="rename", locate="gen/lib2.py:f2", new_name="h2", exclude_files=["gen/use2a.py"],
                         diagnostics_wait="settled")
    assert report.get("status") is None and report["pending"] == [], report
    assert any(d["path"] == "gen/use2a.py" and d["message"] == UNKNOWN.replace("f0", "f2")
               for d in report["new_diagnostics"]), report
    delayed.ask(mode="undo", id=report["change"])
    delayed.ask(mode="check")


def test_a_wait_of_none_leaves_even_a_fast_server_s_diagnostics_pending(fast: Bridge) -> None:
    report = fast.ask(mode="rename", locate="m.py@def <|>alpha", new_name="gamma", diagnostics_wait=0)
    assert report["status"] == "incomplete" and [p["path"] for p in report["pending"]] == ["m.py"], report
    assert "gamma" in fast.root.joinpath("m.py").read_text()
    fast.ask(mode="undo", id=report["change"])


def test_the_text_format_s_rename_answers_with_its_callers_pending(delayed: Bridge) -> None:
    """`RENAME_TO` waits the session's `diagnostics_wait` too: the callers' diagnostics,
    held back, are pending with the check that compares them, and the response is incomplete."""
    delayed.ask(mode="check")
    response = delayed.text("gen/lib3.py", "@@ def f3(values: list[int]) -> int:", "! f3 RENAME_TO h3")
    assert response.ok and response.status == "incomplete", response.text
    assert "def h3(" in (delayed.root / "gen" / "lib3.py").read_text()
    for caller in ("gen/use3a.py", "gen/use3b.py"):
        section = response.text.split(f"*** File: {caller}\n")[1].split("*** ")[0]
        assert "/*<diagnostics:pending>\nnot compared yet: " in section, response.text
        assert 'the edits are applied, `{"mode":"check"}` compares it' in section, response.text
    change = json.loads(delayed.request({"mode": "changes", "format": "json"}).text)["changes"][0]["id"]
    delayed.ask(mode="undo", id=change)
