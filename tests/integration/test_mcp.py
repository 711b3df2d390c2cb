"""`lsap mcp` as an agent's MCP client meets it (the official SDK's stdio client, the embedded
daemon, basedpyright): instructions, annotations, the root it was told, unknown tools
refused, `lsap_info`, follow-up requests it can send as written, and a session whose
servers are up before the first tool call."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from benchmarks.cl100k import tokens
from lsap_bridge.client import Connection
from lsap_bridge.discovery import sessions

pytestmark = pytest.mark.integration



def env() -> dict[str, str]:
    """The environment of the test session (its own XDG directories), with one server."""
    return {**os.environ, "LSAP_SERVERS": "basedpyright"}


def drive(cwd: Path, args: list[str], script: Callable[[Any, Any], Awaitable[Any]]) -> Any:
    """Run `lsap mcp ARGS` from `cwd` under the SDK client, initialized; `script(session,
    initialize_result)` is what the agent does."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def main() -> Any:
        params = StdioServerParameters(command=sys.executable, args=["-m", "lsap_bridge", "mcp", *args],
                                       cwd=str(cwd), env=env())
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            return await script(session, await session.initialize())

    return asyncio.run(asyncio.wait_for(main(), 180))


def stop_daemon(root: Path) -> None:
    subprocess.run([sys.executable, "-m", "lsap_bridge", "--root", str(root), "daemon", "stop"],
                   cwd=root, env=env(), capture_output=True, timeout=60)


def next_request(text: str) -> dict[str, Any]:
    """The lsap_query call a cut answer's footer names, as written there."""
    start = text.index("`lsap_query {") + len("`lsap_query ")
    return dict(json.loads(text[start:text.index("}`", start) + 1]))


def test_mcp_teaches_its_use_and_serves_the_root_it_was_given(shop: Path, tmp_path: Path) -> None:
    from mcp.shared.exceptions import MCPError

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    async def agent(session: Any, init: Any) -> dict[str, Any]:
        listed = {t.name: t for t in (await session.list_tools()).tools}
        refs = await session.call_tool("lsap_references", {"locate": "shop/models.py:Product", "max_items": 2})
        more = await session.call_tool("lsap_query", next_request(refs.content[0].text))
        info = await session.call_tool("lsap_info", {})
        try:
            await session.call_tool("lsap_hover", {"locate": "shop/models.py:Product"})
        except MCPError as refused:
            unknown = refused.message
        else:
            unknown = "served"
        return {"instructions": init.instructions, "tools": listed, "refs": refs, "more": more,
                "info": info, "unknown": unknown}

    try:
        seen = drive(elsewhere, ["--root", str(shop), "--idle-timeout", "120"], agent)
    finally:
        stop_daemon(shop)

    instructions = seen["instructions"]
    assert instructions and tokens(instructions) < 600
    assert f"Workspace root: {shop} (--root)" in instructions and "<|>" in instructions
    tools = seen["tools"]
    assert tools["lsap_references"].annotations.read_only_hint is True
    assert tools["lsap_info"].annotations.read_only_hint is True
    for name in ("lsap_query", "lsap_text"):
        assert tools[name].annotations.read_only_hint is False
        assert tools[name].annotations.destructive_hint is True
    # Started in another directory, it answers about the root it was given, paths relative to it.
    refs = seen["refs"]
    assert not refs.is_error, refs.content[0].text
    assert "18 references in 4 files" in refs.content[0].text
    # The footer's next request is a tool call the agent sends as written.
    more = seen["more"]
    assert not more.is_error and more.content[0].text.startswith("# References: `Product`")
    assert more.content[0].text != refs.content[0].text
    info = seen["info"].content[0].text
    assert f"Root: {shop} (--root)" in info and "basedpyright" in info
    assert "unknown tool 'lsap_hover'" in seen["unknown"] and "lsap_query" in seen["unknown"]


def test_mcp_outside_any_project_says_which_root_it_chose(tmp_path: Path) -> None:
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / "tool.py").write_text("def helper() -> int:\n    return 1\n\n\nprint(helper())\n")

    async def agent(session: Any, init: Any) -> tuple[str | None, str, str, bool]:
        first = await session.call_tool("lsap_references", {"locate": "tool.py:helper"})
        second = await session.call_tool("lsap_references", {"locate": "tool.py:helper"})
        return init.instructions, first.content[0].text, second.content[0].text, first.is_error

    try:
        instructions, first, second, failed = drive(loose, ["--idle-timeout", "60"], agent)
    finally:
        stop_daemon(loose)
    if "no project marker" not in (instructions or ""):
        pytest.skip("a project marker above the temporary directory decides the root")
    assert f"Workspace root: {loose}: no project marker" in (instructions or "")
    assert "lsap mcp --root DIR" in (instructions or "")
    assert not failed and "2 references" in first
    # Said with the first answer, not repeated on every one.
    assert "no project marker" in first and "no project marker" not in second


def attached_servers(root: Path, within: float = 60) -> list[str]:
    """The servers the session for `root` has attached, once it has any (without starting
    a session: only one that is there already is asked)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        live = [s for s in sessions() if str(root) in s.roots]
        if live:
            with Connection(live[0].socket) as conn:
                names = [s["name"] for s in conn.call("info")["servers"]]
            if names:
                return names
        time.sleep(0.2)
    return []


def test_mcp_starts_the_session_and_its_servers_before_any_tool_call(shop: Path) -> None:
    async def agent(_session: Any, _init: Any) -> list[str]:
        return await asyncio.to_thread(attached_servers, shop)

    try:
        assert drive(shop, ["--idle-timeout", "120"], agent) == ["basedpyright"]
    finally:
        stop_daemon(shop)


def test_daemon_start_opens_the_workspace_for_its_servers(shop: Path) -> None:
    try:
        started = subprocess.run([sys.executable, "-m", "lsap_bridge", "daemon", "start", "--idle-timeout", "120"],
                                 cwd=shop, env=env(), capture_output=True, text=True, timeout=120)
        assert started.returncode == 0, started.stdout + started.stderr
        assert attached_servers(shop) == ["basedpyright"]
    finally:
        stop_daemon(shop)
