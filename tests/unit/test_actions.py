"""The code-action engine's own logic (lsap_bridge/actions/) without servers: kinds,
choosing one action, titles by the anchor tiers, and what a server asks back while the
bridge runs its command."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsap_bridge.actions.choose import by_title, one
from lsap_bridge.actions.formatting import change_note
from lsap_bridge.actions.gather import Action, answers_kind, of_kind
from lsap_bridge.actions.run import Taken
from lsap_bridge.editor import Client
from lsap_bridge.errors import ErrorCode, LsapError
from lsap_bridge.workspace import Workspace

RUFF = Client(2, "ruff", "utf-16", frozenset())


def action(title: str, kind: str = "quickfix", preferred: bool = False, **more: object) -> Action:
    raw = {"title": title, "kind": kind, "isPreferred": preferred, **more}
    return Action(title[:8], RUFF, raw, Path("/p/m.py"), 1, "tick:3")


def test_kinds_are_hierarchical() -> None:
    assert of_kind("source.organizeImports.ruff", "source.organizeImports")
    assert of_kind("source", "source") and not of_kind("sourcery", "source")
    # A server's broader label of what it offered when asked for a narrower kind.
    assert answers_kind("refactor", "refactor.extract")
    assert not answers_kind("refactor.move", "refactor.extract") and not answers_kind("", "source")


def test_one_prefers_the_only_preferred_and_names_the_rest() -> None:
    fix, ignore = action("Remove unused import", preferred=True), action("Disable for this line")
    assert one([fix, ignore], "fixing F401", "line 2") is fix
    assert one([action("off", disabled={"reason": "no"}), ignore], "x", "line 2") is ignore
    with pytest.raises(LsapError) as caught:
        one([ignore, action("Disable for this file")], "fixing F401", "line 2")
    assert caught.value.code is ErrorCode.AMBIGUOUS
    assert [c.text for c in caught.value.candidates] == [
        "Disable for this line (quickfix, ruff, id Disable )",
        "Disable for this file (quickfix, ruff, id Disable )"]
    with pytest.raises(LsapError) as missing:
        one([], "titled 'x'", "line 2")
    assert missing.value.code is ErrorCode.NOT_FOUND


def test_titles_by_the_anchor_tiers() -> None:
    actions = [action("Ruff: Organize imports"), action("Ruff: Fix all auto-fixable problems")]
    assert [a.title for a in by_title(actions, "Organize imports")] == ["Ruff: Organize imports"]
    assert [a.title for a in by_title(actions, "Ruff: Organise imports")] == ["Ruff: Organize imports"]
    assert by_title(actions, "Extract function") == []


def test_the_servers_requests_during_a_command_are_taken_not_applied() -> None:
    taken = Taken(Workspace.of("/p"), "srv")
    edit = {"changes": {"file:///p/m.py": []}}
    assert taken("workspace/applyEdit", {"edit": edit}) == {"applied": True}
    assert taken("_typescript.rename", {"position": {"line": 4, "character": 9}}) is None
    assert taken.edits == [edit] and not taken.refused
    # The first one refused refuses every one after it: none of them is applied.
    assert taken("workspace/applyEdit", {}) == {
        "applied": False, "failureReason": "srv sent a malformed edit: it is not a WorkspaceEdit"}
    assert taken("workspace/applyEdit", {"edit": edit})["applied"] is False
    outside = Taken(Workspace.of("/p"), "srv")
    assert outside("workspace/applyEdit", {"edit": {"changes": {"file:///etc/passwd": []}}}) == {
        "applied": False, "failureReason": "the edit would change /etc/passwd, outside the workspace"}
    assert taken.edits == [edit]
    assert taken.remarks == ["the server suggests renaming what it created, at line 5: use `rename` "
                             "with a name of your own"]


def test_change_note_says_what_organising_removed_added_or_reordered() -> None:
    before = ['import { b, a } from "./x";', 'import { noop } from "./y";', "", "a(b);"]
    assert change_note(before, ['import { a, b } from "./x";', "", "a(b);"]) == (
        'removed `import { b, a } from "./x";`, `import { noop } from "./y";`; '
        'added `import { a, b } from "./x";`')
    assert change_note(["import b", "import a"], ["import a", "import b"]) == "reordered lines"
    many = [f"import m{i}" for i in range(5)]
    assert change_note(many, []) == "removed `import m0`, `import m1`, `import m2` and 2 more"
