"""The human's side on a real headless Neovim: :LsapReferences, <CR>, quickfix, responsiveness."""

from __future__ import annotations

import asyncio
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge.gateway import Timeouts
from lsap_bridge.nvim_rpc import NvimConnection
from tests import stress
from tests.conftest import EXAMPLE, ROOT

from .harness import Bridge

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def bridge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    root = tmp_path_factory.mktemp("editor") / "shop"
    shutil.copytree(EXAMPLE, root)
    (root / "notes.slow").write_text("alpha beta gamma\n")
    bridge = Bridge(root, ["basedpyright"])
    yield bridge
    bridge.close()


def wait_for(check: Callable[[], Any], timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out waiting")


def report_lines(bridge: Bridge) -> list[str]:
    lines: list[str] = bridge.lua(
        "local b = vim.fn.bufnr('lsap://report'); if b < 1 then return {} end;"
        "return vim.api.nvim_buf_get_lines(b, 0, -1, false)"
    )
    return lines


def test_lsap_references_on_cursor_fills_report_and_enter_jumps(bridge: Bridge) -> None:
    models = bridge.root / "shop" / "models.py"
    bridge.lua("vim.cmd.edit(vim.fn.fnameescape(...)); vim.api.nvim_win_set_cursor(0, {7, 8})", str(models))
    bridge.lua("vim.cmd('LsapReferences')")
    lines = wait_for(lambda: [line for line in report_lines(bridge) if line.startswith("# References")]
                     and report_lines(bridge))
    text = "\n".join(lines)
    assert "# References: `Product`" in text
    assert "Anchor: `shop/models.py:Product@class <|>Product:`" in text, "the report teaches the anchor form"
    assert "### shop/promotions.py > Promotion.apply" in text
    assert bridge.lua("return vim.bo.filetype") == "markdown"

    row = lines.index("### shop/promotions.py > Promotion.apply") + 3  # header, blank/fence, code line
    row = next(i for i in range(row - 2, len(lines)) if lines[i].startswith("12|")) + 1
    bridge.lua("vim.api.nvim_win_set_cursor(0, {...})", row, 0)
    bridge.loop.run(bridge.embedded.gateway.conn.request("nvim_input", "<CR>"))
    where = wait_for(lambda: (name := bridge.lua("return vim.api.nvim_buf_get_name(0)")).endswith("promotions.py")
                     and name)
    assert where == str(bridge.root / "shop" / "promotions.py")
    cursor = bridge.lua("return vim.api.nvim_win_get_cursor(0)")
    line = (bridge.root / "shop" / "promotions.py").read_text().splitlines()[11]
    assert cursor == [12, line.index("Product")]


def test_report_window_is_reused_and_q_closes(bridge: Bridge) -> None:
    models = bridge.root / "shop" / "models.py"
    bridge.lua("vim.cmd.edit(vim.fn.fnameescape(...)); vim.api.nvim_win_set_cursor(0, {19, 7})", str(models))
    bridge.lua("vim.cmd('LsapHover')")
    wait_for(lambda: any(line.startswith("# Hover: `Order`") for line in report_lines(bridge)))
    windows = bridge.lua("return #vim.fn.win_findbuf(vim.fn.bufnr('lsap://report'))")
    assert windows == 1
    bridge.lua("vim.api.nvim_set_current_win(vim.fn.win_findbuf(vim.fn.bufnr('lsap://report'))[1])")
    bridge.loop.run(bridge.embedded.gateway.conn.request("nvim_input", "q"))
    wait_for(lambda: bridge.lua("return #vim.fn.win_findbuf(vim.fn.bufnr('lsap://report'))") == 0)


def test_bang_sends_locations_to_quickfix(bridge: Bridge) -> None:
    bridge.lua("vim.cmd('LsapReferences! shop/models.py:Order')")
    items = wait_for(lambda: bridge.lua("return vim.fn.getqflist()"))
    files = {bridge.lua("return vim.api.nvim_buf_get_name(...)", item["bufnr"]) for item in items}
    assert str(bridge.root / "shop" / "checkout.py") in files
    assert all(item["lnum"] > 0 for item in items)


def test_command_errors_show_as_reports(bridge: Bridge) -> None:
    bridge.lua("vim.cmd('Lsap references shop/models.py@no such text anywhere')")
    wait_for(lambda: any(line.startswith("# Error: not_found") for line in report_lines(bridge)))


@pytest.mark.stress
def test_editor_keeps_answering_while_a_slow_request_is_pending(bridge: Bridge) -> None:
    slow = ROOT / "tests" / "integration" / "slow_server.py"
    notes = bridge.root / "notes.slow"
    bridge.lua(
        "local path, python, server, root = ...;"
        "local buf = require('lsap.transport.disk').open(path);"
        "vim.lsp.start({name = 'slow', cmd = {python, server, '3'}, root_dir = root}, {bufnr = buf})",
        str(notes), sys.executable, str(slow), str(bridge.root),
    )
    address = bridge.lua("return vim.v.servername")
    pending = asyncio.run_coroutine_threadsafe(
        bridge.service.handle({"mode": "hover", "locate": "notes.slow@beta"}), bridge.loop.loop)

    async def human_pings() -> list[float]:
        human = await NvimConnection.connect(address)
        times = []
        try:
            for _ in range(20):
                start = time.perf_counter()
                assert await human.request("nvim_eval", "1 + 1") == 2
                times.append(time.perf_counter() - start)
                await asyncio.sleep(0.05)
        finally:
            await human.close()
        return times

    time.sleep(0.3)  # the hover is now waiting on the slow server
    times = asyncio.run(human_pings())
    assert not pending.done(), "the slow request was still pending while the editor answered"
    stress.figure("nvim_eval beside a request waiting on a slow server, the slowest", max(times), at_most=0.25)
    # A stall bound: 5x the target; a blocked editor waits for the slow server (seconds).
    assert max(times) < 1.25, times
    response = pending.result(30)
    assert response.ok and "slow answer" in response.text


def test_no_blocking_calls_in_the_plugin() -> None:
    sources = [*ROOT.joinpath("lua").rglob("*.lua"), *ROOT.joinpath("lsap_bridge").rglob("*.py"),
               *ROOT.joinpath("plugin").rglob("*.lua")]
    # install.lua's finish(): the build waits only without a UI (a headless install); its
    # interrupt(): while Neovim quits, at most `exit_wait_ms`. No human is editing then.
    allowed = {ROOT / "lua" / "lsap" / "install.lua": 2}
    offenders = [str(p) for p in sources
                 if "buf_request_sync" in p.read_text() or p.read_text().count("vim.wait(") > allowed.get(p, 0)]
    assert offenders == []




def test_waiting_for_attach_and_indexing_is_bounded_and_reported(tmp_path: Path) -> None:
    (tmp_path / "notes.slow").write_text("alpha beta gamma\n")
    bridge = Bridge(tmp_path, ["none"], Timeouts(request=10, attach=1, index=1))
    try:
        started = time.monotonic()
        response = bridge.request({"mode": "hover", "locate": "notes.slow@beta"})
        assert response.error is not None and response.error.code.value == "unsupported"
        assert "no language server is attached to notes.slow" in response.text
        assert time.monotonic() - started < 5

        bridge.lua(
            "local path, python, server, root = ...;"
            "local buf = require('lsap.transport.disk').open(path);"
            "vim.lsp.start({name = 'slow', cmd = {python, server, '0', '--indexing'}, root_dir = root}, {bufnr = buf})",
            str(tmp_path / "notes.slow"), sys.executable, str(ROOT / "tests/integration/slow_server.py"), str(tmp_path),
        )
        started = time.monotonic()
        response = bridge.request({"mode": "hover", "locate": "notes.slow@beta"})
        assert response.ok, response.text
        assert "slow was still indexing: results may be partial." in response.text
        assert time.monotonic() - started < 5
    finally:
        bridge.close()
