"""State files crafted by someone else (any process of the user, a restored backup, a
synced dotfiles folder) are never turned against the user: each change set, journal or
check record below is moved to rejected/, nothing outside the workspace changes, and the
rest keeps being written, listed, found and updated (`statefile`, `changes`, `journal`,
`check_store`)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import pytest

from lsap_bridge import changes, check_store
from lsap_bridge.journal import RECORD, Change, Journal, recover
from lsap_bridge.workspace import Workspace

from .test_journal import digest

Plant = Callable[[Path, Path], object]  # (changes/, a directory outside the workspace)


def record(root: Path, **fields: object) -> dict[str, object]:
    """A set as `changes` writes it, of root/a.py, with `fields` changed."""
    change = changes.ChangeSet("1", "agent-1", 1.0, "rename a → b", None,
                               [changes.FileText(str(root / "a.py"), ["a"], ["b"])])
    return {**asdict(change), **fields}


def planted(name: str, text: str) -> Plant:
    return lambda directory, _outside: (directory / name).write_text(text)


def _traversal(directory: Path, outside: Path) -> None:
    """An id naming a file outside, as `update` used to build its path from the id."""
    target = os.path.relpath(outside / "victim", directory)
    (directory / "7.json").write_text(json.dumps(record(directory.parent.parent / "ws", id=target)))


def _temp_link(directory: Path, outside: Path) -> None:
    """The temporary name the next set was written under, a link to a file outside."""
    (directory / "3.tmp").symlink_to(outside / "victim.json")


def _set_link(directory: Path, outside: Path) -> None:
    (outside / "9.json").write_text(json.dumps(record(directory.parent.parent / "ws", id="9")))
    (directory / "9.json").symlink_to(outside / "9.json")


def _sparse(directory: Path, _outside: Path) -> None:
    with (directory / "8.json").open("wb") as f:
        f.truncate(1 << 30)  # a gigabyte that takes no disk: never read whole


def _many(directory: Path, _outside: Path) -> None:
    files = [{"path": f"/ws/f{n}.py", "before": [], "after": []} for n in range(100_000)]
    (directory / "6.json").write_text(json.dumps(record(directory.parent.parent / "ws", id="6", files=files)))


def _field(**fields: object) -> Plant:
    return lambda directory, _outside: (directory / "5.json").write_text(
        json.dumps(record(directory.parent.parent / "ws", id="5", **fields)))


CRAFTED: dict[str, Plant] = {
    "an id leading outside": _traversal,
    "a link planted as the next temporary file": _temp_link,
    "a set that is a link": _set_link,
    "a set that is the number 5": planted("5.json", "5"),
    "a `when` that is a string": _field(when="yesterday"),
    "a `path` that is a number": _field(files=[{"path": 5, "before": [], "after": []}]),
    "a relative `path`": _field(files=[{"path": "a.py", "before": [], "after": []}]),
    "an unknown field": _field(evil=True),
    "a directory named like a set": lambda directory, _outside: (directory / "4.json").mkdir(),
    "a gigabyte, sparse": _sparse,
    "100,000 files": _many,
}


@pytest.mark.parametrize("plant", CRAFTED.values(), ids=CRAFTED.keys())
def test_a_crafted_change_set_is_moved_aside_and_the_rest_keeps_working(tmp_path: Path, plant: Plant) -> None:
    ws, outside, journals = tmp_path / "ws", tmp_path / "outside", tmp_path / "state" / "journal"
    ws.mkdir()
    outside.mkdir()
    (outside / "victim.json").write_text("precious\n")
    workspace = Workspace.of(ws)
    first = changes.begin(journals, "first", [changes.FileText(str(ws / "a.py"), ["a"], ["b"])])
    directory = journals / changes.DIRECTORY
    plant(directory, outside)
    before = {p: p.read_bytes() for p in outside.iterdir()}

    listed = changes.load(journals, workspace)
    second = changes.begin(journals, "second", [changes.FileText(str(ws / "a.py"), ["b"], ["c"])])
    second.undoes = first.id
    changes.update(journals, second)
    for change in [*listed, *changes.load(journals, workspace)]:
        changes.update(journals, change)  # as undo and review do with what they listed

    assert {p: p.read_bytes() for p in outside.iterdir()} == before
    assert [c.label for c in changes.load(journals, workspace)] == ["second", "first"]
    found = changes.find(journals, workspace, second.id)
    assert found is not None and found.undoes == first.id
    assert [p.name.split(".")[0] for p in (journals / "rejected").iterdir()] != []
    assert sorted(p.name for p in directory.iterdir()) == [f"{first.id}.json", f"{second.id}.json"]


def test_a_directory_among_200_sets_never_stops_an_edit(tmp_path: Path) -> None:
    """Pruning passes what is not a regular file; listing moves it aside."""
    ws, journals = tmp_path / "ws", tmp_path / "journal"
    for n in range(changes.KEEP):
        changes.begin(journals, f"edit {n}", [changes.FileText(str(ws / "a.py"), ["a"], ["b"])])
    (journals / changes.DIRECTORY / "1.json").unlink()
    (journals / changes.DIRECTORY / "1.json").mkdir()
    for n in range(3):
        changes.begin(journals, f"more {n}", [changes.FileText(str(ws / "a.py"), ["a"], ["b"])])
    listed = changes.load(Path(journals), Workspace.of(ws))
    assert len(listed) == changes.KEEP and listed[0].label == "more 2"
    assert [p.name.split(".json")[0] for p in (journals / "rejected").iterdir()] == ["1"]


def test_ids_that_are_not_a_sets_name_find_nothing(tmp_path: Path) -> None:
    journals = tmp_path / "journal"
    changes.begin(journals, "one", [changes.FileText(str(tmp_path / "a.py"), ["a"], ["b"])])
    for wrong in ("../1", "1/../1", "01", "-1", "1.json", ""):
        assert changes.find(journals, Workspace.of(tmp_path), wrong) is None


def test_a_journal_recording_a_root_above_is_never_replayed(tmp_path: Path) -> None:
    """Only one of its roots used to have to be the session's: a file in the other was
    deleted at the next start."""
    ws, journals = tmp_path / "ws", tmp_path / "state" / "journal"
    ws.mkdir()
    (ws / "a.py").write_text("old\n")
    victim = tmp_path / "victim.py"
    victim.write_text("precious\n")
    journal = Journal.prepare(journals, "crafted", [Change(ws / "a.py", b"new\n", digest(ws / "a.py")),
                                                    Change(victim, None, digest(victim))], [ws, tmp_path])
    journal.marker.touch()
    os.close(journal._fd)
    assert recover(journals, [ws]) == []
    assert victim.read_text() == "precious\n" and (ws / "a.py").read_text() == "old\n"
    assert [p.name.split(".json")[0] for p in (journals / "rejected").iterdir()] == [journal.path.stem]


def test_a_journal_naming_a_link_out_of_the_workspace_is_never_replayed(tmp_path: Path) -> None:
    """Every file through the one confinement check: inside once links are followed."""
    ws, journals, outside = tmp_path / "ws", tmp_path / "journal", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "a.py").write_text("precious\n")
    (ws / "out").symlink_to(outside)
    journal = Journal.prepare(journals, "crafted", [Change(ws / "out" / "a.py", None, digest(outside / "a.py"))],
                              [ws])
    journal.marker.touch()
    os.close(journal._fd)
    assert recover(journals, [ws]) == []
    assert (outside / "a.py").read_text() == "precious\n"
    assert len(list((journals / "rejected").iterdir())) == 1


def _record_outside(path: Path, root: Path) -> None:
    """A record naming a file outside its root (it used to be read and hashed: /dev/zero
    would have been read forever)."""
    (root.parent / "outside.py").write_text("secret = 1\n")
    path.write_text(json.dumps({"version": check_store.VERSION, "root": str(root), "number": 1,
                                "at": time.time(), "left_out": 0,
                                "files": {str(root.parent / "outside.py"): {"hash": "0", "diagnostics": []}}}))


def _record_link(path: Path, root: Path) -> None:
    path.symlink_to(root / "nowhere.json")  # dangling: its mtime cannot even be read


def _record_files_list(path: Path, root: Path) -> None:
    path.write_text(json.dumps({"version": check_store.VERSION, "root": str(root), "number": 1,
                                "at": time.time(), "left_out": 0, "files": []}))


RECORDS: dict[str, Callable[[Path, Path], object]] = {
    "a file outside its root": _record_outside,
    "a dangling link": _record_link,
    "files that are a list": _record_files_list,
}


@pytest.mark.parametrize("plant", RECORDS.values(), ids=RECORDS.keys())
def test_a_crafted_check_record_is_moved_aside_and_checks_go_on(tmp_path: Path,
                                                                plant: Callable[[Path, Path], object]) -> None:
    root, state = tmp_path / "root", tmp_path / "state"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    path = check_store.record_path(state, root)
    path.parent.mkdir(parents=True)
    plant(path, root)
    assert check_store.load(state, root) is None  # the next check is a baseline
    assert [p.name.split(".json")[0] for p in (state / "rejected").iterdir()] == [path.stem]
    check_store.save(state, root, {root / "a.py": []}, 1, time.time())
    saved = check_store.load(state, root)
    assert saved is not None and list(saved.seen) == [root / "a.py"]


def test_the_record_of_settled_edits_is_never_written_through_a_link(tmp_path: Path) -> None:
    ws, journals = tmp_path / "ws", tmp_path / "journal"
    ws.mkdir()
    (ws / "a.py").write_text("old\n")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    journals.mkdir()
    (journals / RECORD).symlink_to(victim)
    journal = Journal.prepare(journals, "edit", [Change(ws / "a.py", b"new\n", digest(ws / "a.py"))], [ws])
    journal.marker.touch()
    os.close(journal._fd)
    [recovery] = recover(journals, [ws])
    assert recovery.outcome == "completed" and victim.read_text() == "precious\n"
    assert "an edit left unfinished (edit" in (journals / RECORD).read_text()


def test_a_set_being_written_is_never_listed_empty_nor_moved_aside(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader listing the sets while another writes a new one (`:Lsap changes` typed as a
    merge is recorded) finds it whole or not at all: a name claimed empty and written later
    was read as a broken set and moved to rejected/, and the merge's set was lost."""
    journals, root = tmp_path / "journals", tmp_path / "ws"
    root.mkdir()
    workspace = Workspace.of(root)
    seen: list[list[str]] = []
    naming = changes.statefile.secrets.token_hex

    def list_then_name(n: int) -> str:  # the writer names its temporary file: a reader lists
        seen.append([c.id for c in changes.load(journals, workspace)])
        return naming(n)

    monkeypatch.setattr(changes.statefile.secrets, "token_hex", list_then_name)
    first = changes.begin(journals, "first", [changes.FileText(str(root / "a.py"), ["a"], ["b"])])
    second = changes.begin(journals, "second", [changes.FileText(str(root / "a.py"), ["b"], ["c"])])
    monkeypatch.undo()
    assert seen and all(ids in ([], ["1"]) for ids in seen), seen
    assert [c.id for c in changes.load(journals, workspace)] == [second.id, first.id] == ["2", "1"]
    assert not (journals / "rejected").exists() or not any((journals / "rejected").iterdir())
