"""The peers benchmark's own machinery (issue 20): the counting tap, what is read from each
tool's answer, and the RESULTS.md section surviving the other runner's rewrites. The run
itself (`python -m benchmarks.run --peers`) installs from PyPI and is not part of the suite."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from benchmarks import lsp_tap, peers, report

ECHO = "import sys, shutil; shutil.copyfileobj(sys.stdin.buffer, sys.stdout.buffer)"
ONE_THEN_EXIT = "import sys; sys.stdin.buffer.read(1); sys.exit(3)"


def framed(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_tap_counts_requests_only_and_passes_every_byte(tmp_path: Path) -> None:
    log = tmp_path / "tap.log"
    messages = [
        framed({"jsonrpc": "2.0", "id": 1, "method": "textDocument/references", "params": {}}),
        framed({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"text": "é\r\n\r\n"}}),
        framed({"jsonrpc": "2.0", "id": 7, "result": None}),  # the client answering the server
        framed({"jsonrpc": "2.0", "id": "x", "method": "shutdown"}),
    ]
    done = subprocess.run(
        [sys.executable, lsp_tap.__file__, str(log), sys.executable, "-c", ECHO],
        input=b"".join(messages),
        capture_output=True,
        timeout=30,
    )
    assert done.returncode == 0
    assert done.stdout == b"".join(messages)
    assert log.read_text().splitlines() == ["textDocument/references", "shutdown"]


def test_tap_ends_with_its_server_while_the_client_keeps_writing(tmp_path: Path) -> None:
    """A client waits for the tap to exit after `exit`: it must not wait for the client's EOF."""
    tap = subprocess.Popen(
        [sys.executable, lsp_tap.__file__, str(tmp_path / "tap.log"), sys.executable, "-c", ONE_THEN_EXIT],
        stdin=subprocess.PIPE,
    )
    assert tap.stdin is not None
    tap.stdin.write(framed({"jsonrpc": "2.0", "method": "exit"}))
    tap.stdin.flush()
    try:
        assert tap.wait(timeout=20) == 3
    finally:
        tap.stdin.close()
        tap.kill()


def test_lines_read_from_each_answer() -> None:
    bridge = "## 2 references\n### rich/a.py > f\n 3| x = Console()\n10| y = Console\n### rich/b.py\n1| import x\n"
    assert peers.bridge_lines(bridge) == {("rich/a.py", 3), ("rich/a.py", 10), ("rich/b.py", 1)}
    compact = "imported in 2 files: rich/a.py:1,7, rich/c.py:2\n\nas a type only in 1 file: rich/a.py:12\n" + bridge
    assert peers.bridge_lines(compact) == peers.bridge_lines(bridge) | {
        ("rich/a.py", 1), ("rich/a.py", 7), ("rich/c.py", 2), ("rich/a.py", 12)}
    # One definition: its `path > Symbol` is the title, no `###` header under it.
    assert peers.bridge_lines("# Definition: httpx/_models.py > Headers\n59| class Headers:\n+248 lines\n") == {
        ("httpx/_models.py", 59)}
    serena = {
        "rich/a.py": {
            "Function": [{"name_path": "f", "content_around_reference": "...   1:\n  >   2:    Console()\n...   3:"}],
            "Variable": [{"name_path": "v", "content_around_reference": "  >   9: v = Console"}],
        }
    }
    assert peers.serena_lines(json.dumps(serena)) == {("rich/a.py", 3), ("rich/a.py", 10)}
    assert peers.serena_lines("Error executing tool: no symbol") is None


def test_the_peers_block_replaces_its_last_run_and_survives_a_full_run(tmp_path: Path) -> None:
    out = tmp_path / "RESULTS.md"
    out.write_text("# lsap.nvim benchmarks\n\nthe full run's tables\n")
    for text in ("first", "second"):
        report.write_block(out, [peers.HEADING, "", text], *report.PEERS_MARKERS)
    begin, end = report.PEERS_MARKERS
    block = f"{begin}\n{peers.HEADING}\n\nsecond\n{end}\n"
    assert out.read_text() == f"# lsap.nvim benchmarks\n\nthe full run's tables\n\n{block}"
    report.write_report(out, [report.Results("corpus")], "python -m benchmarks.run", 1.0)
    text = out.read_text()
    assert "the full run's tables" not in text and "### corpus" in text
    assert text.endswith(block) and text.count(peers.HEADING) == 1


def test_a_peer_that_failed_is_reported_and_the_others_are_compared() -> None:
    baseline = peers.Baseline({("rich/a.py", 3), ("rich/b.py", 1)}, requests=4)
    answer = "### rich/a.py\n3| Console\n"
    bridge = peers.Tool("bridge", calls={"references": peers.Call(answer, True, [1.0, 0.1, 0.3], [5, 1, 1])})
    bridge.calls["references"].lines = peers.bridge_lines(answer)
    slow = peers.Tool("slow", calls={"references": peers.Call(answer, True, [2.0, 0.4, 0.4], [9, 3, 3])})
    slow.calls["references"].lines = {("rich/a.py", 3), ("rich/b.py", 1)}
    broken = peers.Tool("broken", error="RuntimeError: pip install failed")
    text = peers.section([bridge, slow, broken], baseline, time.perf_counter())
    row = next(line for line in text.splitlines() if line.startswith("| references: warm"))
    assert row.split(" | ")[1:5] == ["200.0 ms", "400.0 ms", "0.50x", "did not run"]
    complete = next(line for line in text.splitlines() if "complete?" in line)
    assert "1/2: does not say so" in complete and "complete (2/2)" in complete
    assert "**failed to install or start**: RuntimeError: pip install failed" in text


def test_the_main_run_keeps_every_marked_block_in_order(tmp_path: Path) -> None:
    """A block written by its own runner (or by hand, marked the same way) outlives the main
    run's rewrite, whichever runner wrote it: none is listed by name."""
    out = tmp_path / "RESULTS.md"
    blocks = [f"<!-- {name}: python -m benchmarks.{name} -->\n## {name}\n\nfigures\n<!-- /{name} -->"
              for name in ("hook", "pylsp_race", "anything_new")]
    out.write_text("# lsap.nvim benchmarks\n\nold tables\n\n" + "\n\n".join(blocks) + "\n")
    report.write_report(out, [report.Results("corpus")], "python -m benchmarks.run", 1.0)
    text = out.read_text()
    assert "old tables" not in text
    assert [text.index(b) for b in blocks] == sorted(text.index(b) for b in blocks)
