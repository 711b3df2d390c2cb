"""The edit engine's report is what it wrote (issue 27, item 4), whatever changes on disk
meanwhile: a property test over random edit sets and random concurrent disk changes.

For each example: a few files, a random WorkspaceEdit of them (single-line edits, a
whole-file replacement as pylsp sends, a new file), and another writer changing one file at
a random moment: after the request began (before the plan), while the edit is approved,
or in the switch right before Neovim's checks. Whatever happens, the report's changed
files are exactly the files whose bytes differ from what they would be with the other
writer's change alone, and that change is never lost; a refused edit changed nothing.

The editor is `tests.unit.test_edits_and_reports._FakeGateway` (files only, no buffers),
with the stamp check Neovim makes before switching (`lua/lsap/edits.lua`).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsap_bridge.diskwatch import Basis, fs_now_ns
from lsap_bridge.editor import Client
from lsap_bridge.edits.apply import apply_workspace_edit
from lsap_bridge.errors import LsapError
from lsap_bridge.session.warm import Session
from lsap_bridge.workspace import Workspace
from tests.unit.test_edits_and_reports import _FakeGateway, rng

CLIENT = Client(1, "srv", "utf-16", frozenset())
NAMES = ["a.py", "b.py", "c.py"]
WORDS = st.sampled_from(["x", "Item", "", "print(1)", "ab\ncd", "# note"])
LINES = st.lists(st.sampled_from(["x = 1", "def f():", "    return 2", "", "Product"]),
                 min_size=1, max_size=5)
MOMENTS = ["none", "before_plan", "approval", "switch"]


class _CheckingGateway(_FakeGateway):
    """Switches as Neovim does, after its own check of every file's stamp; `during` runs
    first (the other writer, at the switch)."""

    def __init__(self, state: Path) -> None:
        super().__init__({}, state)
        self.during: Any = None

    async def apply_edits(self, plan: dict[str, Any]) -> dict[str, Any]:
        if self.during is not None:
            self.during()
        for op in plan["ops"]:
            stamp = op["stamp"]
            try:
                st_ = os.lstat(op["path"])
            except FileNotFoundError:
                st_ = None
            if op["kind"] == "create" and st_ is not None:
                return {"ok": False, "conflict": True, "error": "created meanwhile"}
            if op["kind"] in ("write", "remove") and (st_ is None or (
                    st_.st_size, st_.st_mtime_ns, st_.st_ino, st_.st_ctime_ns)
                    != (stamp["size"], stamp["sec"] * 10**9 + stamp["nsec"], stamp["ino"],
                        stamp["csec"] * 10**9 + stamp["cnsec"])):
                return {"ok": False, "conflict": True, "error": "changed meanwhile"}
        return await super().apply_edits(plan)


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    texts = {name: draw(LINES) for name in NAMES}
    edits: dict[str, list[dict[str, Any]]] = {}
    for name in draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=3)):
        lines = texts[name]
        if draw(st.booleans()):  # one whole-file replacement, as pylsp sends
            new = draw(st.lists(st.sampled_from(["x = 1", "Item", "", "    return 3"]),
                                min_size=0, max_size=6))
            edits[name] = [{"range": rng(0, 0, len(lines), 0),
                            "newText": "".join(line + "\n" for line in new)}]
        else:  # single-line edits, one per line at most
            rows = draw(st.lists(st.integers(0, len(lines) - 1), unique=True, max_size=3))
            items = []
            for row in rows:
                width = len(lines[row])
                start = draw(st.integers(0, width))
                end = draw(st.integers(start, width))
                items.append({"range": rng(row, start, row, end), "newText": draw(WORDS)})
            edits[name] = items
    return {"texts": texts, "edits": edits, "create": draw(st.booleans()),
            "foreign": draw(st.sampled_from(NAMES)), "moment": draw(st.sampled_from(MOMENTS)),
            "append": draw(st.booleans())}


def _run(scenario: dict[str, Any], base: Path) -> None:
    root = base / "ws"
    root.mkdir()
    for name, lines in scenario["texts"].items():
        (root / name).write_text("".join(line + "\n" for line in lines))
        os.utime(root / name, (1_000_000, 1_000_000))  # long settled
    gateway = _CheckingGateway(base / "state")
    session = Session(gateway, Workspace.of(root))  # type: ignore[arg-type]
    root = session.workspace.roots[0]
    basis = Basis(fs_now_ns())  # the request began: the server read the files now
    before = {name: (root / name).read_bytes() for name in NAMES}
    expected = dict(before)  # the files with the other writer's change alone
    foreign = root / scenario["foreign"]

    def other_writer() -> None:
        new = foreign.read_bytes()
        new = new + b"# theirs\n" if scenario["append"] else b"theirs = 1\n" + new[1:]
        foreign.write_bytes(new)
        expected[scenario["foreign"]] = new

    changes: list[dict[str, Any]] = [
        {"textDocument": {"uri": (root / name).as_uri(), "version": None}, "edits": items}
        for name, items in scenario["edits"].items()]
    if scenario["create"]:
        new_uri = (root / "new.py").as_uri()
        changes += [{"kind": "create", "uri": new_uri},
                    {"textDocument": {"uri": new_uri, "version": None},
                     "edits": [{"range": rng(0, 0, 0, 0), "newText": "made = 1\n"}]}]
    moment = scenario["moment"]
    if moment == "before_plan":
        other_writer()
    if moment == "approval":
        async def approve(summary: str, preview: str) -> bool:
            other_writer()
            return True
        session.approve_edit = approve
    if moment == "switch":
        gateway.during = other_writer
    try:
        result = asyncio.run(apply_workspace_edit(session, {"documentChanges": changes}, CLIENT,
                                                  label="t", basis=basis))
    except LsapError:
        result = None
    after = {name: (root / name).read_bytes() for name in NAMES}
    differ = {name for name in NAMES if after[name] != expected[name]}
    created = (root / "new.py").exists()
    if result is None:
        assert differ == set() and not created, "a refused edit changed nothing"
        return
    reported = set(result.changed)
    assert reported == differ | ({"new.py"} if created else set())
    assert after[scenario["foreign"]] == expected[scenario["foreign"]] or scenario["foreign"] in differ
    # The other writer's change is never overwritten: a file it changed is not the edit's.
    if moment != "none" and expected[scenario["foreign"]] != before[scenario["foreign"]]:
        assert scenario["foreign"] not in reported, "a file changed meanwhile was written"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_the_report_names_exactly_the_files_written(scenario: dict[str, Any]) -> None:
    base = Path(tempfile.mkdtemp())
    try:
        _run(scenario, base)
    finally:
        shutil.rmtree(base)


@settings(max_examples=300, deadline=None)
@given(old=st.lists(st.sampled_from(["a", "b", "", "cc", "  d"]), min_size=1, max_size=6),
       new=st.lists(st.sampled_from(["a", "b", "", "cc", "x"]), min_size=0, max_size=7),
       final=st.booleans(), crlf=st.booleans())
def test_a_whole_file_replacement_becomes_the_few_edits_that_make_the_same_text(
        old: list[str], new: list[str], final: bool, crlf: bool) -> None:
    """pylsp's whole-file edits, cut down (`edits.text.minimal`): the same text, line ends kept,
    and only the lines that change are touched."""
    from lsap_bridge.decode import text_edits
    from lsap_bridge.edits.text import minimal, splice

    eol = "\r\n" if crlf else "\n"
    breaks = [eol] * (len(old) - 1) + [eol if final else ""]
    text = "".join(line + eol for line in new)
    whole = text_edits([{"range": rng(0, 0, len(old), 0), "newText": text}])
    full = splice(old, whole, "utf-16", "t", breaks)
    fewer = minimal(old, breaks, whole, "utf-16", "t")
    if fewer is None:  # only when the replacement changes the final newline
        assert full.breaks is not None and (full.breaks[-1] == "") != (breaks[-1] == "")
        return
    cut = splice(old, fewer, "utf-32", "t", breaks)
    assert cut.lines == full.lines and cut.breaks == full.breaks
    assert all(item.new_text != "" or item.range.start != item.range.end for item in fewer)
    if new == old and final:  # (without a final newline, the replacement adds one)
        assert fewer == [], "a replacement that changes nothing rewrites nothing"
