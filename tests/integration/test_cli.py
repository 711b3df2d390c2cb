"""The README's main job: `lsap` on the example project through the embedded daemon."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lsap_bridge.discovery import alive

pytestmark = pytest.mark.integration


def lsap(cwd: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lsap_bridge", *args], cwd=cwd, capture_output=True, text=True,
        input=stdin, timeout=120, env={**os.environ, "LSAP_SERVERS": "basedpyright"},
    )


def test_cli_answers_through_a_warm_daemon_and_stops_cleanly(shop: Path) -> None:
    first = lsap(shop, "references", "shop/models.py:Product", "--idle-timeout", "120")
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("# References: `Product`")
    assert "18 references in 4 files" in first.stdout

    status = lsap(shop, "daemon", "status")
    fields = status.stdout.split("\t")
    daemon_pid, nvim_pid = int(fields[1].split()[1]), int(fields[2].split()[-1])
    assert alive(daemon_pid) and alive(nvim_pid)

    started = time.monotonic()
    query = lsap(shop / "shop", "query", "-", stdin=json.dumps(
        {"mode": "definition", "locate": "shop/checkout.py:checkout@order = <|>Order()", "format": "json"}))
    assert time.monotonic() - started < 20
    assert query.returncode == 0, query.stderr
    assert json.loads(query.stdout)["definitions"][0]["symbol"] == "Order"

    bad = lsap(shop, "references", "shop/models.py@no such text at all")
    assert bad.returncode == 1 and bad.stdout.startswith("# Error: not_found")

    stop = lsap(shop, "daemon", "stop")
    assert stop.returncode == 0 and "stopped" in stop.stdout
    deadline = time.monotonic() + 15
    while (alive(daemon_pid) or alive(nvim_pid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(daemon_pid) and not alive(nvim_pid), "no orphan Neovim"
    assert "no embedded daemon" in lsap(shop, "daemon", "status").stdout


def test_cli_usage_errors_are_clear_and_start_no_daemon(shop: Path) -> None:
    result = lsap(shop, "query", "{not json")
    assert result.returncode == 2 and "not JSON" in result.stderr
    assert "no embedded daemon" in lsap(shop, "daemon", "status").stdout
