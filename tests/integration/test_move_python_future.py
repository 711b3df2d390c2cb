"""MOVE_TO_FILE of a function annotated `str | None` out of a module with
`from __future__ import annotations` and an `__all__` (httpx's `get_environment_proxies`
moved to a new `_env.py`, issue 50): the new module has the future import first, so its
annotations stay unevaluated (Python 3.8/3.9 cannot evaluate `str | None`), and exports the
name; the old module no longer does; its importer imports from the new one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.harness import Bridge

pytestmark = pytest.mark.integration

UTILS = '''"""Helpers."""

from __future__ import annotations

import os

__all__ = [
    "get_environment_proxies",
    "to_str",
]


def get_environment_proxies() -> dict[str, str | None]:
    return {key: os.environ.get(key) for key in ("HTTP_PROXY", "NO_PROXY")}


def to_str(value: str | None) -> str:
    return value or ""
'''

CLIENT = '''from __future__ import annotations

from ._utils import get_environment_proxies, to_str


def proxies() -> str:
    return to_str(get_environment_proxies().get("NO_PROXY"))
'''


def test_a_moved_function_keeps_its_modules_future_imports(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    package = root / "envpkg"
    package.mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "proj"\nversion = "0"\n')
    (package / "__init__.py").write_text("")
    (package / "_utils.py").write_text(UTILS)
    (package / "_client.py").write_text(CLIENT)
    bridge = Bridge(root, ["basedpyright"])
    try:
        response = bridge.text("envpkg/_utils.py", "[@ def get_environment_proxies() -> dict[str, str | None]:",
                               "@] return {key: os.environ.get(key)", "! MOVE_TO_FILE envpkg/_env.py")
    finally:
        bridge.close()
    assert response.ok and "Error" not in response.text, response.text
    moved = (package / "_env.py").read_text()
    assert moved.startswith("from __future__ import annotations\n"), moved
    assert '__all__ = ["get_environment_proxies"]' in moved, moved
    utils = (package / "_utils.py").read_text()
    assert "get_environment_proxies" not in utils and '"to_str",' in utils, utils
    assert "from ._env import get_environment_proxies" in (package / "_client.py").read_text()
    # The annotations are not evaluated: a string, where Python 3.9 would raise at import.
    code = ("import envpkg._client, envpkg._env as e; print(envpkg._client.proxies() == '', "
            "e.get_environment_proxies.__annotations__['return'])")
    ran = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(root), "NO_PROXY": ""})
    assert ran.returncode == 0 and ran.stdout == "True dict[str, str | None]\n", (ran.stderr, moved, utils)
