"""The read-only modes from the command line: bare paths and queries, not only anchors."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from lsap_bridge.discovery import alive

from .test_cli import lsap

pytestmark = pytest.mark.integration


def test_outline_search_and_inspect_from_the_cli(shop: Path) -> None:
    try:
        outline = lsap(shop, "outline", "shop/models.py", "--idle-timeout", "120")
        assert outline.returncode == 0, outline.stderr
        assert outline.stdout.startswith("# Outline: shop/models.py")
        assert "  method: add, total, validate\n" in outline.stdout

        directory = lsap(shop, "outline", "shop", "--set", "recursive=true")
        assert directory.returncode == 0 and "(top level) in 4 files" in directory.stdout

        search = lsap(shop, "search", "Product", "--set", "kinds=class")
        assert search.returncode == 0, search.stdout
        assert "- shop/models.py:7 class `Product`" in search.stdout

        inspect = lsap(shop, "inspect", "shop/models.py:Order.total")
        assert inspect.returncode == 0 and "### Callers" in inspect.stdout
    finally:
        status = lsap(shop, "daemon", "status").stdout.split("\t")
        lsap(shop, "daemon", "stop")
        if len(status) > 2:
            pids = [int(status[1].split()[1]), int(status[2].split()[-1])]
            deadline = time.monotonic() + 15
            while any(alive(p) for p in pids) and time.monotonic() < deadline:
                time.sleep(0.1)
