"""An edit answers once it is written and journalled (issue 44, item 4): by default it waits
`DIAGNOSTICS_WAIT` (1 s) for the servers to confirm its diagnostics after; the files they
have not confirmed by then are `pending`, with the `check` that compares them, and the
next check does.

Both bridges start with the default wait (every other test's Neovim waits until the
diagnostics settle: `LSAP_DIAGNOSTICS_WAIT=settled`, tests/conftest.py). "Pending" is made
certain by a proxy that holds the callers' diagnostics back while its gate is closed
(delay_server.py --gate): a test closes it before its edit and opens it once it has the
answer given without them (no fixed delay: however slow the machine, they cannot have
arrived); "confirmed" by a server that answers its diagnostics pulls at once
(pull_server.py).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge.cli import exit_code
from lsap_bridge.models import DIAGNOSTICS_WAIT

from ..conftest import DIAGNOSTICS_WAIT as WAIT_VARIABLE
from .harness import Bridge
from .test_check_settled import project, proxied_bridge

pytestmark = [pytest.mark.integration, pytest.mark.slow]

# Seconds the settled test's diagnostics stay held once held: 3x the default wait, which a
# settled wait must outlast (the rename has answered its requests by then).
HELD = 3 * DIAGNOSTICS_WAIT
PULLER = Path(__file__).with_name("pull_server.py")
UNKNOWN = '"f0" is unknown import symbol'


def with_default_wait(start: Any) -> Bridge:
    """A bridge whose Neovim reads no `LSAP_DIAGNOSTICS_WAIT`: setup()'s default wait."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(WAIT_VARIABLE)
        bridge: Bridge = start()
    assert bridge.embedded.gateway.diagnostics_wait == DIAGNOSTICS_WAIT
    return bridge


class Gate:
    """The proxy's gate (delay_server.py --gate): closed, the callers' diagnostics are held."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def close(self) -> None:
        self.path.touch()

    def open(self) -> None:
        self.path.unlink(missing_ok=True)

    def open_after_holding(self, seconds: float) -> threading.Thread:
        """Open the gate `seconds` after the proxy began to hold the callers' diagnostics
        (the edit is applied and their server has answered it), from a thread."""
        holding = self.path.with_name(self.path.name + ".held")

        def run() -> None:
            deadline = time.monotonic() + 120  # a hang bound: the rename is applied within seconds
            while not holding.exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            time.sleep(seconds)
            self.open()

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        return thread


def gate(bridge: Bridge) -> Gate:
    """The gate of a bridge `gated_bridge` started: a file beside its project."""
    return Gate(bridge.root.parent / "gate")


def gated_bridge(root: Path) -> Bridge:
    return with_default_wait(lambda: proxied_bridge(root, "--gate", str(root.parent / "gate"), "/gen/use"))


@pytest.fixture(scope="module")
def delayed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    bridge = gated_bridge(project(tmp_path_factory.mktemp("pending") / "gen"))
    yield bridge
    gate(bridge).open()
    bridge.close()


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[Bridge]:
    """A session in which no check has run yet."""
    bridge = gated_bridge(project(tmp_path / "gen"))
    yield bridge
    gate(bridge).open()
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
    server's diagnostics are held until the rename has answered, so it answers without
    them, names the callers pending with the check, and is applied and journalled; that
    check reports the break."""
    root = delayed.root / "gen"
    assert delayed.ask(mode="check")["baseline"]
    request = {"mode": "rename", "locate": "gen/lib0.py:f0", "new_name": "h0", "exclude_files": ["gen/use0a.py"]}
    gate(delayed).close()
    response = delayed.request({**request, "format": "json"})
    gate(delayed).open()
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


def test_the_first_check_of_a_session_reports_what_a_pending_rename_before_it_broke(fresh: Bridge) -> None:
    """No check before the rename: the check its answer names is the session's first, which
    records the baseline. The break the rename made (`gen/use0a.py`, excluded, still imports
    `f0`) must not go into that baseline unreported: the check lists the errors of the files
    the rename wrote and left pending; the one after it has nothing new."""
    request = {"mode": "rename", "locate": "gen/lib0.py:f0", "new_name": "h0", "exclude_files": ["gen/use0a.py"]}
    gate(fresh).close()
    response = fresh.request({**request, "format": "json"})
    gate(fresh).open()
    assert response.ok and exit_code(response.status) == 5, response.text
    report = json.loads(response.text)
    assert "gen/use0a.py" in {p["path"] for p in report["pending"]}, report
    again = json.loads(report["again"])
    assert again == {"mode": "check"}
    first = fresh.request(again)  # as the agent sends it: Markdown
    assert first.ok, first.text
    head, body = first.text.split("\n", 1)
    assert head.startswith("# Check 1: baseline recorded; 1 error in the files your edits touched"), first.text
    assert "### Touched by your edits: gen/use0a.py\n\n- 1:" in body and UNKNOWN in body, first.text
    assert "from .lib0 import f0" in body, first.text  # its code line
    later = fresh.ask(mode="check")
    assert not later["baseline"] and later["groups"] == [] and later.get("status") is None, later


def test_the_headline_says_first_the_edit_is_applied_and_what_is_pending(delayed: Bridge) -> None:
    delayed.ask(mode="check")
    gate(delayed).close()
    response = delayed.request({"mode": "rename", "locate": "gen/lib1.py:f1", "new_name": "h1"})
    gate(delayed).open()
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
    every edit did before the short default), and reports the break itself. They are held
    until `HELD` s after the proxy began to hold them, well past the default wait."""
    delayed.ask(mode="check")
    gate(delayed).close()
    opener = gate(delayed).open_after_holding(HELD)
    report = delayed.ask(mode="rename", locate="gen/lib2.py:f2", new_name="h2", exclude_files=["gen/use2a.py"],
                         diagnostics_wait="settled")
    opener.join()
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
    gate(delayed).close()
    response = delayed.text("gen/lib3.py", "@@ def f3(values: list[int]) -> int:", "! f3 RENAME_TO h3")
    gate(delayed).open()
    assert response.ok and response.status == "incomplete", response.text
    assert "def h3(" in (delayed.root / "gen" / "lib3.py").read_text()
    for caller in ("gen/use3a.py", "gen/use3b.py"):
        section = response.text.split(f"*** File: {caller}\n")[1].split("*** ")[0]
        assert "/*<diagnostics:pending>\nnot compared yet: " in section, response.text
        assert 'the edits are applied, `{"mode":"check"}` compares it' in section, response.text
    change = json.loads(delayed.request({"mode": "changes", "format": "json"}).text)["changes"][0]["id"]
    delayed.ask(mode="undo", id=change)
