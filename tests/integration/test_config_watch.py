"""A server's configuration file changed on disk (issue 26, item 5): the servers are told
(`workspace/didChangeWatchedFiles` of it, `workspace/didChangeConfiguration`), the next
answer says so, and its diagnostics are those of the new configuration, with no restart."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .harness import Bridge

pytestmark = pytest.mark.integration

CODE = "def double(x):\n    return x * 2\n"  # an error only under strict: `x` has no type
CONFIG = '[project]\nname = "cfg"\nversion = "0"\n\n[tool.basedpyright]\ntypeCheckingMode = "{mode}"\n'


@pytest.fixture(scope="module")
def bridge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    root = tmp_path_factory.mktemp("config") / "cfg"
    root.mkdir()
    (root / "pyproject.toml").write_text(CONFIG.format(mode="standard"))
    (root / "m.py").write_text(CODE)
    bridge = Bridge(root, ["basedpyright"])
    yield bridge
    bridge.close()


def codes(report: dict[str, object]) -> set[str]:
    files = report["groups"]
    assert isinstance(files, list)
    return {str(d.get("code")) for f in files for d in f["diagnostics"]}


def test_a_type_checking_mode_change_is_in_the_next_diagnostics(bridge: Bridge) -> None:
    standard = bridge.ask(mode="diagnostics", file_path="m.py")
    pid = bridge.lua("return vim.lsp.get_clients({name = 'basedpyright'})[1].id")
    assert "reportMissingParameterType" not in codes(standard), standard
    assert not standard.get("notes")
    pyproject: Path = bridge.root / "pyproject.toml"
    pyproject.write_text(CONFIG.format(mode="strict"))
    strict = bridge.ask(mode="diagnostics", file_path="m.py")
    assert "reportMissingParameterType" in codes(strict), strict
    assert any("pyproject.toml changed on disk: basedpyright reconfigured" in n for n in strict["notes"]), strict
    # The same client: reconfigured, not restarted.
    assert bridge.lua("return vim.lsp.get_clients({name = 'basedpyright'})[1].id") == pid
    pyproject.write_text(CONFIG.format(mode="standard"))
    again = bridge.ask(mode="diagnostics", file_path="m.py")
    assert "reportMissingParameterType" not in codes(again), again
