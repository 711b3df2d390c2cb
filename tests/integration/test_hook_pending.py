"""The `hook` mode (issue 45) when the servers are slower than its bound: the errors a
PostToolUse could not confirm in time are not lost, they come with the next PostToolUse (the
`check` record's rules). basedpyright behind the proxy that holds back the callers'
diagnostics (`delay_server.py`), on test_check_settled's generated project."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .harness import Bridge
from .test_check_settled import DELAY, broken, delayed_bridge, edit, project, signature

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def bridge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    bridge = delayed_bridge(project(tmp_path_factory.mktemp("hook-pending") / "gen"))
    yield bridge
    bridge.close()


def hook(bridge: Bridge, event: str, call: str, budget: float) -> dict[str, Any]:
    return bridge.ask(mode="hook", event=event, tool="Edit", files=[str(bridge.root / "gen" / "lib0.py")],
                      call=call, budget=budget, format="json")


def test_errors_not_confirmed_in_time_come_with_the_next_post_tool_use(bridge: Bridge) -> None:
    lib = bridge.root / "gen" / "lib0.py"
    assert hook(bridge, "pre", "t1", 60).get("decision") is None
    edit(lib, signature(0), broken(0))
    # Within 1 s (the proxy holds the callers' diagnostics for DELAY s): nothing confirmed.
    hurried = hook(bridge, "post", "t1", 1.0)
    assert "gen/use0" not in (hurried.get("context") or ""), hurried
    assert hurried["timed_out"] or hurried["pending"], hurried
    assert hurried["change"]  # the edit is recorded all the same
    time.sleep(DELAY)
    later = hook(bridge, "post", "t2", 60)
    told = later.get("context") or ""
    assert "gen/use0a.py:5:" in told and "gen/use0b.py:5:" in told, later
    assert 'Argument missing for parameter "strict"' in told
    edit(lib, broken(0), signature(0))


def test_a_path_outside_the_workspace_is_left_alone(bridge: Bridge, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.py"
    done = bridge.ask(mode="hook", event="pre", tool="Write", files=[str(outside)], format="json")
    assert done["files"] == [] and done.get("decision") is None
