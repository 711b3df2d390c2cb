"""A disk change the editor merged into a buffer with the human's unsaved text is a change set
like an agent's (issue 46, item 3): kept by the one writer (`changes.begin`) with who wrote
it, listed, reviewed hunk by hunk; its conflicts with the unsaved text are shown as such and
decided in the buffer (keep mine, take theirs, both), never by a review's keep or undo."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from lsap_bridge import changes
from lsap_bridge.capabilities.undo.listing import _state
from lsap_bridge.capabilities.undo.merge import merge
from lsap_bridge.capabilities.undo.models import MergeRequest, ReviewRequest
from lsap_bridge.capabilities.undo.sets import _decide, inline
from lsap_bridge.errors import ErrorCode, LsapError
from lsap_bridge.gateway import LspAnswer, LspCall
from lsap_bridge.pipeline import answer
from lsap_bridge.session.warm import Session
from lsap_bridge.surface import SURFACE
from tests.fakes import fake_session

BASE = [f"line {n}" for n in range(1, 11)]
# Three disk changes: line 2 edited, line 6 edited (where the human changed it too: a
# conflict), a line appended.
THEIRS = ["line 1", "line 2 (disk)", *BASE[2:5], "line 6 (disk)", *BASE[6:], "line 11 (disk)"]


def nothing(call: LspCall) -> LspAnswer:
    raise AssertionError(f"no server is asked: {call.method}")


def told(session: Session, **fields: object) -> dict[str, object]:
    """The `merge` mode's answer to what the editor sends (as `:Lsap` commands come)."""
    token = SURFACE.set("nvim")
    try:
        answer = asyncio.run(merge(session, MergeRequest.model_validate({"mode": "merge", **fields})))
    finally:
        SURFACE.reset(token)
    return answer.report.model_dump()


@pytest.fixture
def scene(tmp_path: Path) -> tuple[Session, Path, Path]:
    """A session over a project with notes.txt (the disk's text now), and its state directory."""
    root = tmp_path / "project"
    root.mkdir()
    notes = root / "notes.txt"
    notes.write_text("\n".join(THEIRS) + "\n")
    session = fake_session(root, nothing)
    journals = Path(asyncio.run(session.gateway.call("journal_dir")))
    return session, notes, journals


def merged(session: Session, notes: Path, key: str = "1-2-3") -> dict[str, object]:
    # The editor's merge: its conflict is base row 5 (line 6), the human's line there kept.
    return told(session, event="merged", key=key, file_path=str(notes), base=BASE, theirs=THEIRS,
                regions=[[5, 6]])


def test_a_merge_is_kept_as_a_change_set_with_its_conflict(scene: tuple[Session, Path, Path]) -> None:
    session, notes, journals = scene
    report = merged(session, notes)
    assert report["hunks"] == 3 and report["conflicts"] == 1
    [change] = changes.load(journals, session.workspace)
    assert change.id == report["change"] and change.who == "disk"
    assert change.label == "disk change merged into the unsaved buffer of notes.txt, made by another process"
    [file] = change.files
    assert (file.path, file.before, file.after, file.merged, file.conflicts) == (
        str(notes), BASE, THEIRS, "1-2-3", [[2]])
    assert _state(change) == "merged into the buffer, 1 conflict with the unsaved text to decide in it"
    shown = inline(change, session.workspace.display)["files"][0]
    assert shown["merged"] == "1-2-3"
    assert [(h["number"], h["added"], h["conflict"]) for h in shown["hunks"]] == [
        (1, ["line 2 (disk)"], None), (2, ["line 6 (disk)"], 1), (3, ["line 11 (disk)"], None)]


def test_the_writer_of_the_disk_text_is_named_when_a_change_set_of_its_own_says(
        scene: tuple[Session, Path, Path]) -> None:
    session, notes, journals = scene
    agent = changes.begin(journals, "Edit notes.txt", [changes.FileText(str(notes), BASE, THEIRS)], "claude-code")
    merged(session, notes)
    change = changes.load(journals, session.workspace)[0]
    assert change.who == "claude-code" and change.by_agent
    assert change.label.endswith(f"made by claude-code (change {agent.id}: Edit notes.txt)")


def test_a_conflict_is_not_decided_by_the_review(scene: tuple[Session, Path, Path]) -> None:
    session, notes, journals = scene
    merged(session, notes)
    [change] = changes.load(journals, session.workspace)
    display = session.workspace.display
    for decision in ("accept", "reject"):
        with pytest.raises(LsapError) as refused:
            _decide(change, ReviewRequest(id=change.id, file_path="notes.txt", hunk=2, decision=decision), display)
        assert refused.value.code == ErrorCode.CONFLICT and "keep mine, take theirs, both" in refused.value.message
    # A whole file's decision takes the other hunks and leaves the conflict to the buffer.
    files, written = _decide(change, ReviewRequest(id=change.id, file_path="notes.txt", decision="reject"), display)
    assert written[0].after == [*BASE[:5], "line 6 (disk)", *BASE[6:]] and files[0].conflicts == [[2]]
    change.files = files
    with pytest.raises(LsapError) as refused:
        _decide(change, ReviewRequest(id=change.id, decision="accept"), display)
    assert refused.value.code == ErrorCode.CONFLICT


def test_a_conflict_decided_in_the_buffer_leaves_the_review(scene: tuple[Session, Path, Path]) -> None:
    session, notes, journals = scene
    merged(session, notes)
    report = told(session, event="decided", key="1-2-3", conflicts=[1])
    assert (report["hunks"], report["conflicts"]) == (2, 0)
    [change] = changes.load(journals, session.workspace)
    assert change.files[0].conflicts == [[]] and change.files[0].numbers == [1, 3]  # numbers kept
    assert _state(change) == "applied"


def test_conflicts_nobody_decided_become_ordinary_hunks(scene: tuple[Session, Path, Path]) -> None:
    session, notes, _journals = scene
    merged(session, notes)
    report = told(session, event="released", key="1-2-3", conflicts=[1])
    assert (report["hunks"], report["conflicts"]) == (3, 0)


def test_only_the_editor_sends_merge_and_a_file_outside_is_not_kept(scene: tuple[Session, Path, Path],
                                                                    tmp_path: Path) -> None:
    session, notes, journals = scene
    with pytest.raises(LsapError):
        asyncio.run(merge(session, MergeRequest(event="merged", key="1-2-3", file_path=str(notes))))
    outside = tmp_path / "elsewhere.txt"
    report = told(session, event="merged", key="4-5-6", file_path=str(outside), base=BASE, theirs=THEIRS)
    assert report["change"] is None
    assert changes.load(journals, session.workspace) == []


def test_a_set_with_a_merge_is_read_back_checked(scene: tuple[Session, Path, Path]) -> None:
    session, notes, journals = scene
    merged(session, notes)
    path = journals / changes.DIRECTORY / "1.json"
    record = json.loads(path.read_text())
    record["files"][0]["merged"] = "../../etc"  # not a key the editor makes
    path.write_text(json.dumps(record))
    assert changes.load(journals, session.workspace) == []  # moved aside to rejected/
    assert (journals / "rejected").is_dir()


def test_the_listing_and_the_review_say_which_hunk_is_a_conflict(scene: tuple[Session, Path, Path]) -> None:
    session, notes, _journals = scene
    change = merged(session, notes)["change"]
    listing = asyncio.run(answer(session, {"mode": "changes"}, "nvim")).text
    assert "disk · disk change merged into the unsaved buffer of notes.txt" in listing
    assert "1 conflict with the unsaved text to decide in it" in listing
    review = asyncio.run(answer(session, {"mode": "review", "id": change}, "nvim")).text
    assert "Hunk 1 (line 2): reject" in review and "Hunk 3 (line 11): reject" in review
    assert "Hunk 2 (line 6): a conflict with the unsaved text in its buffer" in review
    data = json.loads(asyncio.run(answer(session, {"mode": "review", "id": change, "format": "json"}, "nvim")).text)
    assert [h.get("conflict") for h in data["files"][0]["hunks"]] == [None, True, None]


def test_the_merge_mode_is_not_offered_to_agents() -> None:
    """Only the editor's merge sends `merge`: left out of the schema's index and lsap_query."""
    from lsap_bridge.capabilities.schema import mode_index
    from lsap_bridge.mcp_server import tools

    assert "merge" not in {entry.mode for entry in mode_index()}
    query = next(t for t in tools() if t["name"] == "lsap_query")
    assert "merge" not in query["inputSchema"]["properties"]["request"]["properties"]["mode"]["enum"]
