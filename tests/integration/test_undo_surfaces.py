"""Undo on the agents' surfaces: `lsap undo <id>` (the CLI, through the embedded daemon) and
the MCP `lsap_undo` tool (the official SDK client, annotated destructive) take a rename
back whole, as the rename report's hint, written for that surface, says."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from .test_cli import lsap
from .test_mcp import drive, stop_daemon

pytestmark = pytest.mark.integration

ANCHOR = "shop/models.py@class <|>Product"


def disk(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*.py")) if "__pycache__" not in p.parts}


def test_lsap_undo_takes_a_cli_rename_back(shop: Path) -> None:
    original = disk(shop)
    try:
        renamed = lsap(shop, "rename", ANCHOR, "--set", "new_name=Item", "--idle-timeout", "120")
        assert renamed.returncode == 0, renamed.stderr + renamed.stdout
        hint = re.search(r"Undo: `(lsap undo (\d+))`", renamed.stdout)
        assert hint, renamed.stdout
        assert disk(shop) != original
        undone = lsap(shop, *hint.group(1).split()[1:])
        assert undone.returncode == 0, undone.stdout
        assert undone.stdout.startswith(f"# Undo {hint.group(2)}: rename Product → Item")
        assert disk(shop) == original
    finally:
        stop_daemon(shop)


def test_the_mcp_undo_tool_takes_a_rename_back(shop: Path) -> None:
    original = disk(shop)

    async def agent(session: Any, init: Any) -> dict[str, Any]:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        renamed = await session.call_tool("lsap_query", {"request": {
            "mode": "rename", "locate": ANCHOR, "new_name": "Item"}})
        changed = disk(shop)
        text = renamed.content[0].text
        found = re.search(r'Undo: `lsap_query (\{.*?\})`', text)
        assert found, text
        request = json.loads(found.group(1))["request"]
        undone = await session.call_tool("lsap_undo", {"id": request["id"]})
        return {"tools": tools, "changed": changed, "undone": undone, "hint": request}

    try:
        seen = drive(shop, ["--root", str(shop), "--idle-timeout", "120"], agent)
    finally:
        stop_daemon(shop)
    annotations = seen["tools"]["lsap_undo"].annotations
    assert annotations.destructive_hint is True and annotations.read_only_hint is False
    assert seen["hint"]["mode"] == "undo"
    assert seen["changed"] != original
    assert not seen["undone"].is_error, seen["undone"].content[0].text
    assert disk(shop) == original
