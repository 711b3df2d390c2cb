"""`lsap`'s exit status, as a shell agent acts on it: 0 a report, 1 the servers' answer is an
error report, 2 the request is invalid, 3 no session, 4 busy or out of time (doc/lsap.txt,
lsap-exit-codes). The first on the embedded daemon and basedpyright; busy and timeouts from a
session that answers so on purpose (a socket of the test's own, published like a session)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge.discovery import SessionInfo, runtime_dir

pytestmark = pytest.mark.integration


def lsap(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lsap_bridge", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "LSAP_SERVERS": "basedpyright"})


def test_reports_the_servers_errors_and_invalid_requests_exit_apart(shop: Path) -> None:
    try:
        report = lsap(shop, "references", "shop/models.py:Product", "--idle-timeout", "120")
        assert report.returncode == 0, report.stdout + report.stderr
        for args, code in [
            (("references", "shop/models.py@no such text at all"), "not_found"),
            (("references", "shop/models.py:Product@self"), "ambiguous"),
        ]:
            answered = lsap(shop, *args)
            assert answered.returncode == 1, (args, answered.stdout, answered.stderr)
            assert answered.stdout.startswith(f"# Error: {code}"), answered.stdout
        for args in [
            ("nosuchmode", "shop/models.py:Product"),  # an unknown mode
            ("hover", "shop/models.py:Product", "--set", "colour=1"),  # an unknown field
            ("hover", "shop/models.py:Product", "--set", 'max_items="many"'),  # a wrong type
            ("query", '{"mode": "hover", "locate": '),  # bad JSON
            ("hover", "../../etc/passwd:x"),  # a path outside the workspace
            ("hover",),  # no anchor
        ]:
            invalid = lsap(shop, *args)
            assert invalid.returncode == 2, (args, invalid.stdout, invalid.stderr)
    finally:
        lsap(shop, "daemon", "stop")


class Answering:
    """A session that gives every call the same reply: `{"result": …}` or `{"error": …}`."""

    def __init__(self, reply: dict[str, Any]) -> None:
        self.reply = reply
        self.info = SessionInfo("answering", "daemon", os.getpid(), str(runtime_dir() / "answering.sock"),
                                [str(Path.cwd())])
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.info.socket)
        self.listener.listen()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        self.info.publish()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with conn, conn.makefile("rb") as lines:
                for line in lines:
                    call = json.loads(line)
                    conn.sendall(json.dumps({"jsonrpc": "2.0", "id": call["id"], **self.reply}).encode() + b"\n")

    def close(self) -> None:
        self.info.withdraw()
        self.listener.close()


@pytest.fixture
def answering() -> Iterator[list[Answering]]:
    made: list[Answering] = []
    yield made
    for session in made:
        session.close()


@pytest.mark.parametrize(("reply", "status"), [
    ({"error": {"code": -32004, "message": "busy: the queue is full", "data": {"code": "busy"}}}, 4),
    ({"error": {"code": -32001, "message": "timeout: no answer within 120 s", "data": {"code": "timeout"}}}, 4),
    ({"result": {"ok": False, "text": "# Error: timeout\n", "error": {"code": "timeout"}}}, 4),
    ({"result": {"ok": False, "text": "# Error: conflict\n", "error": {"code": "conflict"}}}, 4),
    ({"error": {"code": -32005, "message": "the lsap session stopped", "data": {"code": "session_gone"}}}, 3),
    ({"result": {"ok": False, "text": "# Error: unsupported\n", "error": {"code": "unsupported"}}}, 1),
    ({"result": {"ok": True, "text": "# Hover\n"}}, 0),
], ids=["busy", "rpc timeout", "servers timeout", "conflict", "session gone", "unsupported", "report"])
def test_busy_and_timeouts_say_retry_and_a_gone_session_says_so(
        tmp_path: Path, answering: list[Answering], reply: dict[str, Any], status: int) -> None:
    answering.append(Answering(reply))
    done = lsap(tmp_path, "--session", "answering", "hover", "a.py:f")
    assert done.returncode == status, done.stdout + done.stderr


def test_no_session_exits_3(tmp_path: Path) -> None:
    done = lsap(tmp_path, "--session", "nosuch", "hover", "a.py:f")
    assert done.returncode == 3 and "no session 'nosuch'" in done.stderr
