"""Imported by every Python started with tests/integration/held_switch on PYTHONPATH (see
`__init__.py`): where LSAP_TEST_HOLD_SWITCH names a marker file, `lsap_bridge.gateway` is
patched as it is imported so that `EditorGateway.apply_edits` creates the marker and then
waits for good (until Neovim goes away or is killed) instead of switching the files."""

from __future__ import annotations

import asyncio
import importlib.abc
import importlib.machinery
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

MARKER = os.environ.get("LSAP_TEST_HOLD_SWITCH")
TARGET = "lsap_bridge.gateway"


def hold(module: ModuleType) -> None:
    async def apply_edits(self: Any, plan: dict[str, Any]) -> dict[str, Any]:
        assert MARKER is not None
        Path(MARKER).touch()
        await asyncio.Event().wait()  # never set: held until the process goes
        raise AssertionError("unreachable")

    module.EditorGateway.apply_edits = apply_edits


class Finder(importlib.abc.MetaPathFinder):
    """Finds `TARGET` as the other finders do, and patches it once it is executed."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if name != TARGET:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        execute = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            execute(module)
            hold(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


if MARKER:
    sys.meta_path.insert(0, Finder())
