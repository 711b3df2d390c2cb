"""Bounded files (issue 12, item 6): a file over `max_file_size` is never opened for the
servers; a request on one is a clear `invalid_request`, and the next request on a small file
is answered as usual. The embedded Neovim here takes its limit from LSAP_MAX_FILE_SIZE."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge.embedded import nvim_program, plugin_root
from tests.conftest import EXAMPLE

from .harness import Bridge

pytestmark = pytest.mark.integration

LIMIT = 20_000


@pytest.fixture(scope="module")
def bridge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    root = tmp_path_factory.mktemp("size") / "shop"
    shutil.copytree(EXAMPLE, root)
    before = os.environ.get("LSAP_MAX_FILE_SIZE")
    os.environ["LSAP_MAX_FILE_SIZE"] = str(LIMIT)
    try:
        bridge = Bridge(root, ["basedpyright"])
    finally:
        if before is None:
            del os.environ["LSAP_MAX_FILE_SIZE"]
        else:
            os.environ["LSAP_MAX_FILE_SIZE"] = before
    yield bridge
    bridge.close()


def big_module(path: Path, size: int) -> None:
    lines = [f"value_{i} = {i}" for i in range(size // 12 + 1)]
    path.write_text("\n".join(lines) + "\n")


def assert_refused(bridge: Bridge, payload: dict[str, Any], name: str) -> None:
    response = bridge.request(payload)
    assert response.error is not None, (payload, response.text)
    assert response.error.code.value == "invalid_request", (payload, response.text)
    assert f"{name} is " in response.text and "KiB, over the 19.5 KiB limit" in response.text
    assert "max_file_size" in response.text and "LSAP_MAX_FILE_SIZE" in response.text


def test_a_file_over_the_limit_is_refused_and_the_next_request_answers(bridge: Bridge) -> None:
    huge = bridge.root / "shop" / "huge.py"
    big_module(huge, LIMIT + 5000)
    for payload in (
        {"mode": "locate", "locate": "shop/huge.py:1"},
        {"mode": "hover", "locate": "shop/huge.py@value_1 ="},
        {"mode": "references", "locate": "shop/huge.py@value_1 ="},
        {"mode": "outline", "file_path": "shop/huge.py"},
        {"mode": "diagnostics", "file_path": "shop/huge.py"},
        {"mode": "inlay_hints", "file_path": "shop/huge.py", "start_line": 1, "end_line": 3},
    ):
        assert_refused(bridge, payload, "shop/huge.py")
    block = ("*** Begin Language Server Request\n*** File: shop/huge.py\n@@ value_1 = 1\n^\n"
             "*** End Language Server Request")
    assert "error:invalid_request" in bridge.loop.run(bridge.service.handle_text(block)).text
    assert bridge.lua("return vim.fn.bufloaded(...)", str(huge)) == 0
    hover = bridge.ask(mode="hover", locate="shop/models.py:Product")
    assert "class Product" in hover["hover"]
    # listed nowhere, counted everywhere a walk meets it
    for payload in ({"mode": "outline", "file_path": "shop"}, {"mode": "diagnostics"}):
        response = bridge.request(payload)
        assert response.ok and "huge.py" not in response.text, response.text
        assert "+1 skipped: over the size limit (`max_file_size`, 19.5 KiB)" in response.text
    huge.unlink()


def test_a_held_file_that_grows_past_the_limit_is_closed_not_reloaded(bridge: Bridge) -> None:
    path = bridge.root / "shop" / "grows.py"
    path.write_text("def small() -> int:\n    return 1\n")
    for _ in range(2):
        bridge.ask(mode="hover", locate="shop/grows.py:small")
    assert bridge.lua("return vim.fn.bufloaded(...)", str(path)) == 1
    big_module(path, LIMIT + 100)
    assert_refused(bridge, {"mode": "hover", "locate": "shop/grows.py:small"}, "shop/grows.py")
    assert bridge.lua("return vim.fn.bufloaded(...)", str(path)) == 0, "the bridge's buffer is closed"
    path.write_text("def small() -> int:\n    return 2\n")
    assert bridge.ask(mode="locate", locate="shop/grows.py@return <|>2")["line"] == 2


def lua_config(env: dict[str, str], code: str) -> str:
    done = subprocess.run(
        [nvim_program(), "--headless", "--clean", "--cmd", f"set rtp^={plugin_root()}",
         "-c", f"lua io.stdout:write(tostring({code}))", "-c", "qa!"],
        capture_output=True, text=True, timeout=30, env=env,
    )
    return done.stdout.strip()


def test_the_option_defaults_to_4_mib_or_the_environment_and_is_validated() -> None:
    plain = {k: v for k, v in os.environ.items() if k != "LSAP_MAX_FILE_SIZE"}
    assert lua_config(plain, "require('lsap').config.max_file_size") == str(4 * 1024 * 1024)
    given = {**plain, "LSAP_MAX_FILE_SIZE": "12345"}
    assert lua_config(given, "require('lsap').config.max_file_size") == "12345"
    refused = lua_config(plain, "select(2, pcall(require('lsap').setup, { max_file_size = 'big' }))")
    assert 'option "max_file_size" must be a number' in refused
