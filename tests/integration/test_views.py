"""diagnostics, editor, batch, schema and the `unsupported` error on a real headless Neovim with
basedpyright. Edits here are unsaved buffer changes, undone at the end of each test."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from lsap_bridge.capabilities import REGISTRY
from lsap_bridge.errors import LsapError
from tests.golden import check_report_shape

from .harness import Bridge, Pool, shop_bridge

pytestmark = pytest.mark.integration

BAD_LINES = [f'bad_{i}: int = "not a number {i}"' for i in range(4)]


@pytest.fixture(scope="module")
def bridge(bridges: Pool) -> Bridge:
    return shop_bridge(bridges)


@pytest.fixture
def broken_catalog(bridge: Bridge) -> Iterator[Path]:
    """catalog.py with type errors typed into its buffer and not saved."""
    path = bridge.root / "shop" / "catalog.py"
    bufnr = bridge.lua("local b = vim.fn.bufadd(...); vim.fn.bufload(b); return b", str(path))
    count = bridge.lua("return vim.api.nvim_buf_line_count(...)", bufnr)
    bridge.lua(
        "local b, n, lines = ...; vim.api.nvim_buf_set_lines(b, n, n, false, lines)",
        bufnr,
        count,
        BAD_LINES,
    )
    yield path
    bridge.lua(
        "local b, n = ...; vim.api.nvim_buf_set_lines(b, n, -1, false, {}); "
        "vim.bo[b].modified = false",
        bufnr,
        count,
    )


def test_diagnostics_read_the_buffer_and_filter_by_severity(
    bridge: Bridge, broken_catalog: Path
) -> None:
    on_disk = broken_catalog.read_text()
    data = bridge.ask(mode="diagnostics", file_path="shop/catalog.py")
    errors = [d for g in data["groups"] for d in g["diagnostics"] if d["severity"] == "error"]
    first_bad = len(on_disk.splitlines()) + 1
    assert [d["line"] for d in errors] == list(range(first_bad, first_bad + len(BAD_LINES)))
    assert all('"not a number' in d["lines"][0]["text"] for d in errors)
    assert data["pending"] == [] and broken_catalog.read_text() == on_disk

    everything = bridge.ask(mode="diagnostics", max_items=500)
    only_errors = bridge.ask(mode="diagnostics", min_severity="error", max_items=500)
    flat = [
        (g["path"], d["line"], d["message"])
        for g in everything["groups"]
        for d in g["diagnostics"]
        if d["severity"] == "error"
    ]
    assert [
        (g["path"], d["line"], d["message"])
        for g in only_errors["groups"]
        for d in g["diagnostics"]
    ] == flat
    assert everything["checked"] == len(list((bridge.root / "shop").glob("*.py")))


def test_paging_diagnostics_returns_every_item_once(bridge: Bridge, broken_catalog: Path) -> None:
    full = bridge.ask(mode="diagnostics", max_items=500)
    wanted = [
        (g["path"], d["line"], d["column"], d["message"])
        for g in full["groups"]
        for d in g["diagnostics"]
    ]
    assert len(wanted) >= len(BAD_LINES)
    seen: list[tuple[str, int, int, str]] = []
    data = bridge.ask(mode="diagnostics", max_items=2)
    while True:
        seen += [
            (g["path"], d["line"], d["column"], d["message"])
            for g in data["groups"]
            for d in g["diagnostics"]
        ]
        if "next" not in data:
            break
        data = bridge.ask(**json.loads(data["next"]))
    assert seen == wanted


def test_files_not_analysed_in_time_are_named(bridge: Bridge, broken_catalog: Path) -> None:
    bridge.lua(
        "vim.api.nvim_buf_set_lines(vim.fn.bufnr(...), 0, 0, false, {'# touched just now'})",
        str(broken_catalog),
    )
    timeouts = bridge.embedded.gateway.timeouts
    saved = timeouts.diagnostics
    timeouts.diagnostics = 0.0  # no server answers a change that fast
    try:
        text = bridge.request({"mode": "diagnostics", "file_path": "shop/catalog.py"}).text
    finally:
        timeouts.diagnostics = saved
        bridge.lua(
            "vim.api.nvim_buf_set_lines(vim.fn.bufnr(...), 0, 1, false, {})", str(broken_catalog)
        )
    assert "Not analysed yet: shop/catalog.py (basedpyright had not published" in text
    assert check_report_shape(text) == []


def test_diagnostics_command_uses_the_current_file(bridge: Bridge) -> None:
    path = bridge.root / "shop" / "models.py"
    payload = bridge.loop.run(
        bridge.service.command_request(
            {"mode": "diagnostics", "cursor": {"path": str(path), "line": 0, "col": 0, "text": ""}}
        )
    )
    assert payload == {"mode": "diagnostics", "file_path": "shop/models.py"}


def test_editor_reports_cursor_anchor_and_selection_without_moving_anything(bridge: Bridge) -> None:
    path = bridge.root / "shop" / "models.py"
    bridge.lua("vim.cmd.edit(vim.fn.fnameescape(...))", str(path))
    lines = path.read_text().splitlines()
    # From `product` in the loop header to the same column below: the start of `result`.
    row = (
        next(i for i, line in enumerate(lines) if "for product, quantity in self.lines" in line) + 1
    )
    col = lines[row - 1].index("product")
    assert lines[row][col:].startswith("result")
    bridge.lua(
        "local r, c = ...; vim.api.nvim_win_set_cursor(0, {r, c}); vim.cmd('normal! vj')", row, col
    )
    before = bridge.lua(
        "return {vim.api.nvim_win_get_cursor(0), vim.api.nvim_get_mode().mode, "
        "vim.api.nvim_get_current_buf()}"
    )

    data = bridge.ask(mode="editor")
    assert data["path"] == "shop/models.py" and data["inside"] is True
    selection = data["selection"]
    assert selection["active"] is True and selection["type"] == "charwise"
    assert (selection["start_line"], selection["start_column"]) == (row, col + 1)
    assert selection["end_line"] == row + 1
    selected = [line["text"] for line in selection["lines"]]
    assert selected == [lines[row - 1][col:], lines[row][: col + 1]]
    # The cursor (at the selection's end) as an anchor resolves back to the same place.
    assert data["anchor"], data.get("anchor_problem")
    located = bridge.ask(mode="locate", locate=data["anchor"])
    assert (
        (located["line"], located["column"]) == (data["line"], data["column"]) == (row + 1, col + 1)
    )
    after = bridge.lua(
        "return {vim.api.nvim_win_get_cursor(0), vim.api.nvim_get_mode().mode, "
        "vim.api.nvim_get_current_buf()}"
    )
    assert after == before
    bridge.lua("vim.api.nvim_feedkeys(vim.keycode('<Esc>'), 'nx', false)")

    text = bridge.request({"mode": "editor"}).text
    assert "### Selection (the last one)" in text and check_report_shape(text) == []

    bridge.lua("vim.cmd('botright new'); vim.bo.buftype = 'nofile'")
    assert bridge.ask(mode="editor")["note"] == "the current buffer is not a file (no name)"
    bridge.lua("vim.cmd('close')")

    blank = lines.index("", row) + 1
    bridge.lua("vim.api.nvim_win_set_cursor(0, {..., 0})", blank)
    assert bridge.ask(mode="editor")["anchor"] == f"shop/models.py:{blank}"


def test_batch_runs_requests_in_order_with_one_section_each(bridge: Bridge) -> None:
    requests = [
        {"mode": "hover", "locate": "shop/models.py@class <|>Order"},
        {"mode": "nonsense"},
        {"mode": "references", "locate": "shop/models.py@def <|>discounted", "max_items": 5},
    ]
    response = bridge.request({"mode": "batch", "requests": requests})
    assert response.ok and check_report_shape(response.text) == []
    assert not [line for line in response.text.splitlines() if line.startswith("## ")]
    headers = [line for line in response.text.splitlines() if line.startswith("### [")]
    assert headers[0].startswith("### [1] hover: Hover: `Order` (shop/models.py:")
    assert headers[1].startswith("### [2] nonsense: Error: invalid_request")
    assert headers[2].startswith("### [3] references: References: `Product.discounted` (shop/models.py:")
    assert response.text.startswith("# Batch: 3 requests (1 failed)")

    data = bridge.ask(mode="batch", requests=requests)
    assert [r["ok"] for r in data["results"]] == [True, False, True]
    assert data["results"][1]["error"]["code"] == "invalid_request"
    nested = bridge.request(
        {"mode": "batch", "requests": [{"mode": "batch", "requests": requests}]}
    )
    assert "a batch cannot contain another batch" in nested.text


def test_schema_mode_lists_every_request_model(bridge: Bridge) -> None:
    index = bridge.ask(mode="schema")["index"]
    # Every mode an agent asks for; not `hook`, which only `lsap hook` sends (`Offer.listed`).
    assert [row["mode"] for row in index] == sorted(name for name, c in REGISTRY.items() if c.offer.listed)
    assert "hook" in REGISTRY and "hook" not in [row["mode"] for row in index]
    assert next(row for row in index if row["mode"] == "rename")["required"] == ["locate", "new_name"]
    data = bridge.ask(mode="schema", modes=sorted(REGISTRY), max_tokens=100_000)
    assert set(data["schemas"]) == set(REGISTRY)
    text = bridge.request({"mode": "schema", "modes": ["rename", "diagnostics"]}).text
    assert check_report_shape(text) == [] and "### rename" in text and "min_severity" in text
    bad = bridge.request({"mode": "schema", "modes": ["nope"]})
    assert bad.error is not None and "unknown modes ['nope']" in bad.error.message


def test_unsupported_names_the_server_and_a_mode_that_works(bridge: Bridge) -> None:
    session = bridge.service.session
    with pytest.raises(LsapError) as caught:
        bridge.loop.run(
            session.servers.target(bridge.root / "shop" / "models.py", "textDocument/prepareTypeHierarchy")
        )
    assert caught.value.code.value == "unsupported"
    assert "basedpyright lacks textDocument/prepareTypeHierarchy" in caught.value.message
    assert caught.value.hint == "try the `hover` mode instead"


def test_a_file_no_server_handles_is_named_without_waiting(bridge: Bridge) -> None:
    import time

    script = bridge.root / "tool.lua"
    script.write_text("local x = 1\n")
    try:
        started = time.monotonic()
        data = bridge.ask(mode="diagnostics", file_path="tool.lua")
        elapsed = time.monotonic() - started
    finally:
        script.unlink()
    assert data["pending"] == [{"path": "tool.lua", "reason": "no language server is attached"}]
    # Not the attach timeout (30 s here): no enabled config covers Lua, so nothing is awaited.
    assert elapsed < 5, elapsed
