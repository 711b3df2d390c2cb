"""Undo keeps its promise (issue 46): a move to a new file is undone by deleting that file
and the directory the move made; `partial` never takes half a move back; a hunk number out
of range is refused; a change whose hunks were all decided says so; an agent's edit under
`edit_policy = 'allow'` tells no one it waits. basedpyright on the example project."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lsap_bridge.host import edit_policy
from lsap_bridge.server import current_client, progress

from .edit_faults import as_agent
from .harness import Bridge, Pool

pytestmark = pytest.mark.integration

TALLY = '''"""Tallies."""


class Tally:
    """Counts."""

    count = 0


def first() -> Tally:
    return Tally()


second = Tally()
'''


def with_tally(root: Path) -> None:
    (root / "shop" / "tally.py").write_text(TALLY)


@pytest.fixture
def bridge(bridges: Pool) -> Bridge:
    return bridges.take(("basedpyright",), "shop+tally", prepare=with_tally)


def move_tally(bridge: Bridge) -> tuple[str, Path]:
    """The agent moves class Tally into shop/fresh/tallies.py, a file in a new directory."""
    lines = {"file_path": "shop/tally.py", "scope": {"start_line": 4, "end_line": 8}}
    response = as_agent(bridge, {"mode": "move", "locate": lines, "to_file": "shop/fresh/tallies.py",
                                 "format": "json"})
    assert response.ok, response.text
    target = bridge.root / "shop" / "fresh" / "tallies.py"
    assert "class Tally" in target.read_text()
    [undo] = json.loads(response.text)["undo"]
    return str(json.loads(undo)["id"]), target


def test_undo_of_a_move_to_a_new_file_deletes_the_file_and_its_new_directory(bridge: Bridge) -> None:
    tally = bridge.root / "shop" / "tally.py"
    change, target = move_tally(bridge)
    assert "class Tally" not in tally.read_text()
    done = bridge.ask(mode="undo", id=change)
    assert sorted(done["undone"]) == ["shop/fresh/tallies.py", "shop/tally.py"], done
    assert tally.read_text() == TALLY
    assert not target.exists() and not target.parent.exists()
    listed = {c["id"]: c for c in bridge.ask(mode="changes")["changes"]}
    assert listed[change]["state"].startswith("undone by"), listed[change]


def test_partial_never_takes_half_a_move_back(bridge: Bridge) -> None:
    tally = bridge.root / "shop" / "tally.py"
    change, target = move_tally(bridge)
    target.write_text(target.read_text() + "\n# the human's note\n")  # edited since
    moved, left = target.read_text(), tally.read_text()
    refused = as_agent(bridge, {"mode": "undo", "id": change, "partial": True})
    assert refused.error is not None and refused.error.code.value == "conflict", refused.text
    assert "go back together" in refused.error.message, refused.error.message
    assert target.read_text() == moved and tally.read_text() == left  # the class in one file still


def test_a_hunk_out_of_range_is_refused_and_a_decided_change_says_so(bridge: Bridge) -> None:
    tally = bridge.root / "shop" / "tally.py"
    response = as_agent(bridge, {"mode": "rename", "locate": "shop/tally.py@class <|>Tally", "new_name": "Count",
                                 "format": "json"})
    assert response.ok, response.text
    change = json.loads(response.text)["change"]
    renamed = tally.read_text()
    for hunk, code in ((-1, "invalid_request"), (0, "invalid_request"), (9, "not_found")):
        refused = bridge.request({"mode": "review", "id": change, "file_path": "shop/tally.py", "hunk": hunk,
                                  "decision": "reject"})
        assert refused.error is not None and refused.error.code.value == code, (hunk, refused.text)
    assert tally.read_text() == renamed  # nothing rejected
    # Hunk numbers stay: rejecting hunk 1 leaves 2 and 3.
    data = bridge.ask(mode="review", id=change, file_path="shop/tally.py", hunk=1, decision="reject")
    assert [h["number"] for h in data["files"][0]["hunks"]] == [2, 3], data
    bridge.ask(mode="review", id=change, decision="accept")
    refused = bridge.request({"mode": "undo", "id": change})
    assert refused.error is not None and "decided in its review" in refused.error.message, refused.text
    assert "undone already" not in refused.error.message


def test_an_edit_under_allow_tells_no_one_it_waits_for_the_human(bridge: Bridge) -> None:
    told: list[str] = []

    async def approve() -> bool:
        current_client.set("agent-7")
        progress.set(told.append)
        return await edit_policy(bridge.embedded.gateway)("rename a → b", "")

    assert bridge.loop.run(approve()) is True  # edit_policy = 'allow', the default
    assert told == []
