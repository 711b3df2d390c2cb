# ruff: noqa: E501  (responses have long lines)
"""Code actions on Python with the common set-up: basedpyright for types beside `ruff
server` for lint, fixes and imports (issue 18). Actions are gathered from both and
labelled, run through the bridge's edit engine (the edit policy, the human's unsaved
buffer, one undo step), and the text format's `! FIX` / `! ORGANIZE_IMPORTS` answer with
the lines' new anchors and the diagnostics after."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge.actions.gather import Action, Actions
from tests.integration.harness import Bridge

pytestmark = pytest.mark.integration

UNSORTED = """import sys
import os
from collections import OrderedDict
import json


def main() -> None:
    print(json.dumps(OrderedDict()), sys.argv)
"""
PYPROJECT = '[project]\nname = "tools"\nversion = "0"\n\n[tool.ruff.lint]\nselect = ["F", "I"]\n'


@pytest.fixture(scope="module")
def bridge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    root = tmp_path_factory.mktemp("actions_py") / "tools"
    root.mkdir()
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "warm.py").write_text(UNSORTED)
    bridge = Bridge(root, ["basedpyright", "ruff"])
    # Both servers attached and analysed (the human's editor has them running).
    assert bridge.request({"mode": "diagnostics", "file_path": "warm.py"}).ok
    yield bridge
    bridge.close()


def fresh(bridge: Bridge, name: str, text: str = UNSORTED) -> Path:
    path = bridge.root / name
    path.write_text(text)
    return path


def ruff_sorted(bridge: Bridge, text: str, tmp: Path) -> str:
    """What `ruff check --select I --fix` makes of the text, in a project of the same config."""
    (tmp / "pyproject.toml").write_text(PYPROJECT)
    (tmp / "m.py").write_text(text)
    ruff = shutil.which("ruff")
    assert ruff is not None
    subprocess.run([ruff, "check", "--select", "I", "--fix", "--quiet", "m.py"], cwd=tmp, check=False)
    return (tmp / "m.py").read_text()


def listed(bridge: Bridge, **where: Any) -> list[dict[str, Any]]:
    actions: list[dict[str, Any]] = bridge.ask(mode="code_actions", **where)["actions"]
    return actions


def test_actions_of_both_servers_and_organise_imports_as_ruff_would(bridge: Bridge, tmp_path: Path) -> None:
    path = fresh(bridge, "organise.py")
    report = bridge.ask(mode="code_actions", file_path="organise.py")
    assert report["servers"] == ["basedpyright", "ruff"]
    by_title = {a["title"]: a for a in report["actions"]}
    assert by_title["Ruff: Organize imports"]["kind"] == "source.organizeImports.ruff"
    assert by_title["Ruff: Fix all auto-fixable problems"]["kind"] == "source.fixAll.ruff"
    assert {a["server"] for a in report["actions"]} == {"basedpyright", "ruff"}
    # At the unused import's line: ruff's fix names what it fixes; basedpyright's ignore comment too.
    at_os = listed(bridge, locate={"file_path": "organise.py", "find": "import os"})
    remove = next(a for a in at_os if a["title"] == "Ruff (F401): Remove unused import: `os`")
    assert remove["fixes"] == ["F401"] and remove["preferred"]
    assert any(a["server"] == "basedpyright" and "pyright: ignore" in a["title"] for a in at_os)

    organise = by_title["Ruff: Organize imports"]
    applied = bridge.ask(mode="code_action_execute", action_id=organise["id"])
    assert path.read_text() == ruff_sorted(bridge, UNSORTED, tmp_path) != UNSORTED
    assert applied["changed"][0]["path"] == "organise.py" and applied["changed"][0]["saved"]
    # The diagnostics after: the imports' order is fixed, the unused import is still there.
    assert {d["code"] for d in applied["diagnostics"]} == {"F401", "reportUnusedImport"}
    # The id named the file as it was: it is spent.
    again = bridge.request({"mode": "code_action_execute", "action_id": organise["id"]})
    assert not again.ok and "not_found" in again.text
    # Organised already: a report that says nothing changed, not an error.
    done = bridge.request({"mode": "code_action", "file_path": "organise.py", "kind": "source.organizeImports"})
    assert done.ok and "Nothing to change: the code is already as ruff would make it." in done.text


def test_kind_and_title_filters_and_ambiguity(bridge: Bridge) -> None:
    fresh(bridge, "filters.py")
    sources = listed(bridge, file_path="filters.py", kind="source")
    assert sources and all(a["kind"].startswith("source.") for a in sources)
    # A title by the anchor tiers: a typo (fuzzy) or another letter case still finds it.
    for text in ("Ruff: Organise imports", "ruff: organize imports"):
        assert [a["title"] for a in listed(bridge, file_path="filters.py", title=text)] == ["Ruff: Organize imports"]
    # Several actions of one title text: the one-step form says which ones, with their ids.
    ambiguous = bridge.request({"mode": "code_action", "locate": {"file_path": "filters.py", "find": "import os"},
                                "title": "Disable for this line"})
    assert not ambiguous.ok and "ambiguous" in ambiguous.text
    assert "Ruff (F401): Disable for this line" in ambiguous.text and "Ruff (I001): Disable for this line" in ambiguous.text
    # A server named: only its actions.
    assert {a["server"] for a in listed(bridge, file_path="filters.py", server="basedpyright")} <= {"basedpyright"}
    unknown = bridge.request({"mode": "code_actions", "file_path": "filters.py", "server": "pylsp"})
    assert not unknown.ok and "basedpyright, ruff" in unknown.text


def test_preview_shows_the_diff_without_changing_anything(bridge: Bridge) -> None:
    path = fresh(bridge, "preview.py")
    actions = listed(bridge, file_path="preview.py", kind="source.fixAll", preview=True)
    assert len(actions) == 1
    assert "-import os" in actions[0]["diff"] and "+import json" in actions[0]["diff"]
    assert path.read_text() == UNSORTED


FIX_RESPONSE = """*** Begin Language Server Response
*** File: fix.py
@@ import os
/*<note>
this line is gone after the edit
</note>*/
! FIX F401
/*<note>
applied: Ruff (F401): Remove unused import: `os` (ruff)
</note>*/
@@ import sys
/*<diagnostics:warning:import:Ruff>
Import block is un-sorted or un-formatted

help: Organize imports · Ruff(I001)
</diagnostics:warning:import:Ruff>*/
@@ from collections import OrderedDict
*** End Language Server Response
"""


def test_fix_in_a_request_block_shows_the_new_anchor_and_the_diagnostic_gone(bridge: Bridge) -> None:
    path = fresh(bridge, "fix.py")
    response = bridge.text("fix.py", "@@ import os", "! FIX F401",
                           "@@ from collections import OrderedDict", "*** Diagnostics: all")
    assert response.ok, response.text
    assert "import os" not in path.read_text()
    # The line fixed is gone, the other anchored line is where it is now, and what is left
    # to fix (the imports' order) is reported; F401 is not.
    assert response.text == FIX_RESPONSE


def test_fix_by_title_shows_the_changed_line(bridge: Bridge) -> None:
    path = fresh(bridge, "ignore.py")
    response = bridge.text("ignore.py", "@@ import os", "! FIX Add `# pyright: ignore[reportUnusedImport]`")
    assert response.ok, response.text
    new = "import os  # pyright: ignore[reportUnusedImport]"
    assert new in path.read_text().splitlines()
    assert f"@@ {new}\n" in response.text
    assert "applied: Add `# pyright: ignore[reportUnusedImport]` (basedpyright)" in response.text
    assert "reportUnusedImport)" not in response.text  # the diagnostic it silenced is gone


def test_organise_imports_and_format_in_a_request_block(bridge: Bridge, tmp_path: Path) -> None:
    text = UNSORTED.replace("def main() -> None:\n    print(", "def main() -> None:\n    print(  ")
    path = fresh(bridge, "block.py", text)
    response = bridge.text("block.py", "! ORGANIZE_IMPORTS", "! FORMAT")
    assert response.ok, response.text
    assert path.read_text() == ruff_sorted(bridge, UNSORTED, tmp_path)
    # The note says what organising changed (ruff sorts; it removes no unused import).
    assert ("*** File: block.py\n! ORGANIZE_IMPORTS\n/*<note>\nRuff: Organize imports (ruff): "
            "reordered lines\n</note>*/\n! FORMAT\n") in response.text


def test_format_organises_the_imports_alone(bridge: Bridge, tmp_path: Path) -> None:
    """What the text format's ORGANIZE_IMPORTS runs: the imports as ruff sorts them, the rest
    of the file untouched (not formatted), the report saying what organising did."""
    text = UNSORTED.replace("def main() -> None:\n    print(", "def main() -> None:\n    print(  ")
    path = fresh(bridge, "alone.py", text)
    response = bridge.request({"mode": "format", "file_path": "alone.py", "organize_imports": "only"})
    assert response.ok, response.text
    assert path.read_text() == ruff_sorted(bridge, UNSORTED, tmp_path).replace("print(", "print(  ", 1)
    assert "Organize imports (ruff): reordered lines" in response.text, response.text
    again = bridge.request({"mode": "format", "file_path": "alone.py", "organize_imports": "only"})
    assert again.ok and "the imports were already" in again.text, again.text


def test_a_refused_later_step_of_a_block_says_what_stays_applied(bridge: Bridge, tmp_path: Path) -> None:
    # Issue 36: organising is accepted, the format refused: the format's answer says the
    # organising stays applied and gives the request that undoes it; the file matches.
    text = UNSORTED.replace("def main() -> None:\n    print(", "def main() -> None:\n    print(  ")
    path = fresh(bridge, "steps.py", text)
    session = bridge.service.session
    asked: list[str] = []

    async def first_only(summary: str, preview: str) -> bool:
        asked.append(summary)
        return len(asked) == 1

    previous, session.approve_edit = session.approve_edit, first_only
    try:
        response = bridge.text("steps.py", "! ORGANIZE_IMPORTS", "! FORMAT")
    finally:
        session.approve_edit = previous
    assert len(asked) == 2 and asked[1].startswith("format"), asked
    on_disk = path.read_text()
    assert on_disk == ruff_sorted(bridge, UNSORTED, tmp_path).replace("print(", "print(  ", 1), on_disk
    format_echo = response.text[response.text.index("! FORMAT\n"):]
    assert format_echo.startswith("! FORMAT\n/*<error:denied>"), response.text
    undo = re.search(r"this step only: the earlier step `! ORGANIZE_IMPORTS` stays applied · undo: `([^`]+)`",
                     format_echo)
    assert undo is not None, response.text
    # The request it names takes the organising back.
    assert bridge.request(json.loads(undo.group(1))).ok
    assert path.read_text() == text


def test_edit_policy_holds_for_actions(bridge: Bridge) -> None:
    path = fresh(bridge, "policy.py")
    session = bridge.service.session
    asked: list[tuple[str, str]] = []

    async def deny(summary: str, preview: str) -> bool:
        asked.append((summary, preview))
        return False

    async def allow(summary: str, preview: str) -> bool:
        asked.append((summary, preview))
        return True

    previous = session.approve_edit
    request = {"mode": "code_action", "file_path": "policy.py", "kind": "source.organizeImports"}
    try:
        session.approve_edit = deny
        refused = bridge.request(request)
        assert not refused.ok and "denied" in refused.text
        assert path.read_text() == UNSORTED
        session.approve_edit = allow
        assert bridge.request(request).ok
    finally:
        session.approve_edit = previous
    assert [s for s, _ in asked] == ["Ruff: Organize imports (ruff): 1 edit in 1 file"] * 2
    assert "+import json" in asked[0][1]
    assert path.read_text() != UNSORTED


def test_unsaved_buffer_holds_both_and_the_disk_is_untouched(bridge: Bridge) -> None:
    path = fresh(bridge, "unsaved.py")
    bridge.lua("local b = vim.fn.bufadd(...); vim.fn.bufload(b); "
               "vim.api.nvim_buf_set_lines(b, -1, -1, false, {'', 'EXTRA = 1'})", str(path))
    report = bridge.ask(mode="code_action", file_path="unsaved.py", kind="source.fixAll")
    assert report["unsaved"] == ["unsaved.py"]
    assert path.read_text() == UNSORTED
    lines = bridge.buffer_lines(path)
    assert "import os" not in lines and lines[-1] == "EXTRA = 1" and bridge.modified(path)
    # One undo step takes the fix back, the human's line stays.
    bridge.lua("local b = vim.fn.bufnr(...); vim.api.nvim_buf_call(b, function() vim.cmd('silent undo') end)", str(path))
    assert bridge.buffer_lines(path)[:4] == UNSORTED.splitlines()[:4]
    assert bridge.buffer_lines(path)[-1] == "EXTRA = 1"
    bridge.lua("local b = vim.fn.bufnr(...); vim.api.nvim_buf_delete(b, { force = true })", str(path))


def test_a_resolve_that_fails_changes_nothing(bridge: Bridge) -> None:
    path = fresh(bridge, "broken.py")
    session = bridge.service.session
    fix_all = next(a for a in listed(bridge, file_path="broken.py") if a["kind"] == "source.fixAll.ruff")
    action: Action = session.kept.owned(Actions)[fix_all["id"]]
    # Data the server cannot read back (a URI it expects): it fails the resolve.
    action.raw = {**action.raw, "data": 42}
    failed = bridge.request({"mode": "code_action_execute", "action_id": fix_all["id"]})
    assert not failed.ok and "server_error" in failed.text and "resolve" in failed.text
    assert path.read_text() == UNSORTED


def test_the_embedded_defaults_run_ruff_beside_the_type_checker(tmp_path: Path) -> None:
    """With no servers named, the embedded mode enables the preferred Python server and
    `ruff server` beside it (both on PATH here: the dev extra installs them), so organising
    imports works out of the box."""
    root = tmp_path / "defaults"
    root.mkdir()
    (root / "pyproject.toml").write_text(PYPROJECT)
    path = root / "app.py"
    path.write_text(UNSORTED)
    bridge = Bridge(root, [])
    try:
        assert "basedpyright" in bridge.servers and "ruff" in bridge.servers
        report = bridge.ask(mode="code_action", file_path="app.py", kind="source.organizeImports")
        assert report["server"] == "ruff"
        assert path.read_text() == ruff_sorted(bridge, UNSORTED, tmp_path)
    finally:
        bridge.close()


def test_format_with_organize_imports(bridge: Bridge, tmp_path: Path) -> None:
    messy = UNSORTED.replace("    print(json.dumps(OrderedDict()), sys.argv)", "    print( json.dumps(OrderedDict()),sys.argv )")
    path = fresh(bridge, "formatted.py", messy)
    report = bridge.ask(mode="format", file_path="formatted.py", organize_imports=True)
    assert report["title"] == "format and organise imports" and report["server"] == "ruff"
    assert path.read_text() == ruff_sorted(bridge, UNSORTED, tmp_path)
    # Two steps, each its own edit of the file (organise, then format).
    assert [c["path"] for c in report["changed"]] == ["formatted.py", "formatted.py"]


def settled_diagnostics(bridge: Bridge, name: str) -> list[tuple[Any, ...]]:
    """A file's diagnostics from fresh `diagnostics` requests, once two in a row agree (the
    servers have finished with the text on disk)."""
    def ask() -> list[tuple[Any, ...]]:
        report = bridge.ask(mode="diagnostics", file_path=name)
        assert not report["pending"], report["pending"]
        return sorted((d["line"], d["column"], d["severity"], d["code"], d["message"])
                      for g in report["groups"] for d in g["diagnostics"])

    last, deadline = ask(), time.monotonic() + 30
    while time.monotonic() < deadline:
        time.sleep(1.0)
        again = ask()
        if again == last:
            return again
        last = again
    raise AssertionError(f"the diagnostics of {name} did not settle: {last}")


def test_the_diagnostics_after_a_format_are_those_of_the_text_written(bridge: Bridge) -> None:
    """Issue 27, item 4: the report's "diagnostics after" are the servers' view of what was
    written (each server published for the new text), the same as a fresh `diagnostics`
    call; not what they said of the text before, nor only the fastest server's."""
    messy = "import os\n\n\n\n\ndef f( x ):\n    return undefined_name + os.sep + x\n"
    for name, seen in (("cold.py", False), ("seen.py", True)):
        fresh(bridge, name, messy)
        if seen:  # both servers spoke of the old text first
            before = settled_diagnostics(bridge, name)
            assert any(c == "reportUndefinedVariable" and line == 7 for line, _c, _s, c, _m in before), before
        formatted_report_matches(bridge, name, messy)


def formatted_report_matches(bridge: Bridge, name: str, messy: str) -> None:
    report = bridge.ask(mode="format", file_path=name)
    assert (bridge.root / name).read_text() != messy, report
    shown = sorted((d["line"], d["column"], d["severity"], d["code"], d["message"])
                   for d in report["diagnostics"])
    assert report["diagnostics_total"] == len(shown) and not report["pending"], report
    # Ruff's format took two blank lines: the undefined name is on line 5 now.
    assert any(code == "reportUndefinedVariable" and line == 5 for line, _c, _s, code, _m in shown), shown
    assert shown == settled_diagnostics(bridge, name), name


def test_move_moves_a_definition_and_rewrites_the_imports_of_its_users(bridge: Bridge) -> None:
    """The mode the text format's MOVE_TO_FILE runs, asked directly: the lines go to the new
    module, the old one imports back what it still uses, a user imports from the new one."""
    source = fresh(bridge, "basket.py", "def total() -> int:\n    return 1\n\n\ndef twice() -> int:\n    return 2 * total()\n")
    user = fresh(bridge, "till.py", "from basket import total\n\nprint(total())\n")
    # basedpyright adds a file it hears was created to its index a moment later: the move
    # finds its users by references, so it starts once they reach the new user.
    deadline = time.monotonic() + 30
    while "till.py" not in bridge.request({"mode": "references", "locate": "basket.py:total"}).text:
        assert time.monotonic() < deadline, "basedpyright never indexed till.py"
        time.sleep(0.2)
    response = bridge.request({"mode": "move", "to_file": "pricing.py",
                               "locate": {"file_path": "basket.py", "scope": {"start_line": 1, "end_line": 3}}})
    assert response.ok, response.text
    assert (bridge.root / "pricing.py").read_text() == "def total() -> int:\n    return 1\n"
    assert "def total" not in source.read_text() and "from pricing import total" in source.read_text()
    assert user.read_text() == "from pricing import total\n\nprint(total())\n"
    assert response.text.startswith("# move lines 1-2 of basket.py to pricing.py"), response.text
