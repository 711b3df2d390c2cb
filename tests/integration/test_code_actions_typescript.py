# ruff: noqa: E501  (Lua snippets and responses have long lines)
"""Code actions and formatting on TypeScript with typescript-language-server and vtsls (issues 18, 35):
organise imports, the quick fix that adds a missing import, a refactoring that runs as a
server command whose `workspace/applyEdit` the bridge takes into its own edit engine (the
edit policy holds; Neovim's handler never applies it), formatting of a file and of a range
undone in one step, and a command that fails part-way changing nothing. The human's own
`workspace/applyEdit` stays Neovim's."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge.actions.gather import Action, Actions
from tests.integration.harness import TS_SERVERS, Bridge
from tests.integration.nvim_home import wait_for

pytestmark = pytest.mark.integration

TS_SHOP = Path(__file__).resolve().parents[1] / "fixtures" / "ts_shop"
CHECKOUT = """import { total } from "./basket";

export function checkout(items: Item[]): number {
  const subtotal = total(items);
  const tax = subtotal * 0.2;
  return round(subtotal + tax);
}
"""
UNSORTED = """import { round, Item } from "./pricing";
import { describe, total } from "./basket";

export function pay(items: Item[]): number {
  return round(total(items));
}
"""
MESSY = """import { Item } from "./pricing";

export function label(item: Item):string {
    const   name = item.name ;
  return    name.toUpperCase( );
}
"""


@pytest.fixture(scope="module", params=TS_SERVERS)
def bridge(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    root = tmp_path_factory.mktemp("actions_ts") / "shop"
    shutil.copytree(TS_SHOP, root)
    (root / "src" / "warm.ts").write_text(CHECKOUT)
    bridge = Bridge(root, [request.param])
    assert bridge.request({"mode": "diagnostics", "file_path": "src/warm.ts"}).ok
    yield bridge
    bridge.close()


def only_on_ts_ls(bridge: Bridge, why: str) -> None:
    """Skip a test whose server command is typescript-language-server's own."""
    if bridge.servers[0] != "ts_ls":
        pytest.skip(f"typescript-language-server only: {why}")


def fresh(bridge: Bridge, name: str, text: str) -> Path:
    path = bridge.root / "src" / name
    path.write_text(text)
    return path


def policy(bridge: Bridge, allow: bool, asked: list[tuple[str, str]]) -> Any:
    """Set the session's edit policy to say `allow`, recording what it was asked; returns the
    one it replaced."""
    session = bridge.service.session

    async def decide(summary: str, preview: str) -> bool:
        asked.append((summary, preview))
        return allow

    previous, session.approve_edit = session.approve_edit, decide
    return previous


def test_organise_imports(bridge: Bridge) -> None:
    path = fresh(bridge, "pay.ts", UNSORTED)
    report = bridge.ask(mode="code_action", file_path="src/pay.ts", kind="source.organizeImports")
    assert report["title"] == "Organize Imports" and report["server"] == bridge.servers[0]
    # vtsls's organise imports also removes the unused `describe`.
    basket = "{ total }" if bridge.servers[0] == "vtsls" else "{ describe, total }"
    assert path.read_text() == UNSORTED.replace(
        'import { round, Item } from "./pricing";\nimport { describe, total } from "./basket";\n',
        f'import {basket} from "./basket";\nimport {{ Item, round }} from "./pricing";\n')


def test_add_missing_import_quick_fix_in_a_request_block(bridge: Bridge) -> None:
    path = fresh(bridge, "missing.ts", CHECKOUT)
    response = bridge.text("src/missing.ts", "@@ return round(subtotal + tax);", "! FIX 2304 Add import")
    assert response.ok, response.text
    assert 'import { round } from "./pricing";' in path.read_text()
    assert f"applied: Add import from \"./pricing\" ({bridge.servers[0]})" in response.text
    # The anchored line is where the added import moved it, and `round` is found now; the
    # other missing name (`Item`) is still reported.
    assert "@@ return round(subtotal + tax);" in response.text
    assert "Cannot find name 'round'" not in response.text
    assert "Cannot find name 'Item'" in response.text


def test_remove_unused_imports_by_title(bridge: Bridge) -> None:
    path = fresh(bridge, "unused.ts", UNSORTED)
    report = bridge.ask(mode="code_action", file_path="src/unused.ts", title="Remove Unused Imports")
    # Each server's own kind: typescript-language-server adds the language.
    assert report["kind"] == {"ts_ls": "source.removeUnusedImports.ts", "vtsls": "source.removeUnusedImports"}[bridge.servers[0]]
    assert 'import { total } from "./basket";' in path.read_text()
    assert "describe" not in path.read_text()


EXTRACT = {"mode": "code_action", "locate": {"file_path": "src/extract.ts", "find": "const tax"},
           "end": {"file_path": "src/extract.ts", "find": "return round(subtotal"},
           "title": "Extract to function in module scope"}


def test_a_refactoring_command_edits_through_the_engine(bridge: Bridge) -> None:
    path = fresh(bridge, "extract.ts", CHECKOUT)
    listed = bridge.ask(mode="code_actions", locate=EXTRACT["locate"], end=EXTRACT["end"],
                        kind="refactor.extract")["actions"]
    extract = next(a for a in listed if a["title"] == EXTRACT["title"])
    assert extract["command"] and extract["server"] == bridge.servers[0]
    asked: list[tuple[str, str]] = []
    previous = policy(bridge, False, asked)
    try:
        denied = bridge.request(EXTRACT)
        assert not denied.ok and "denied" in denied.text
        # Neither the bridge nor Neovim's own handler applied the server's edit.
        assert path.read_text() == CHECKOUT
        assert bridge.buffer_lines(path) == CHECKOUT.splitlines() and not bridge.modified(path)
        policy(bridge, True, asked)
        applied = bridge.ask(**EXTRACT)
    finally:
        bridge.service.session.approve_edit = previous
    # The prompt showed the diff of the edit the server sent back while its command ran.
    summary, diff = asked[0]
    assert summary.startswith(f"Extract to function in module scope ({bridge.servers[0]}): ") and summary.endswith(" in 1 file")
    assert "+function newFunction(subtotal: number) {" in diff
    assert "+  return newFunction(subtotal);" in diff and "   const tax = subtotal * 0.2;" in diff
    text = path.read_text()
    assert "return newFunction(subtotal);" in text and "function newFunction(subtotal: number) {" in text
    # The extracted body is in the file's 2-space indent (tsserver's default is 4), whichever
    # server asked tsserver for it.
    assert "function newFunction(subtotal: number) {\n  const tax = subtotal * 0.2;\n" in text, text
    assert applied["changed"][0]["saved"] and not bridge.modified(path)
    assert any("suggests renaming" in r for r in applied["remarks"])
    # The per-client handler was there only while the command ran.
    assert bridge.lua("local c = vim.lsp.get_clients({ name = ... })[1]; "
                      "return rawget(c.handlers, 'workspace/applyEdit') == nil", bridge.servers[0])


def test_a_command_that_fails_part_way_changes_nothing(bridge: Bridge) -> None:
    only_on_ts_ls(bridge, "the forged command is typescript-language-server's `_typescript.applyCodeAction`")
    path = fresh(bridge, "failing.ts", CHECKOUT)
    session = bridge.service.session
    listed = bridge.ask(mode="code_actions", file_path="src/failing.ts")["actions"]
    action: Action = session.kept.owned(Actions)[listed[0]["id"]]
    # tsserver's "apply code action": its file edits come first (a `workspace/applyEdit`),
    # then a command tsserver refuses, which fails the whole command.
    edit = {"fileName": str(path), "textChanges": [
        {"start": {"line": 1, "offset": 1}, "end": {"line": 1, "offset": 1}, "newText": "// changed\n"}]}
    action.raw = {"title": "a fix that fails", "command": {
        "title": "a fix that fails", "command": "_typescript.applyCodeAction",
        "arguments": [{"changes": [edit], "commands": [{"type": "no such command"}]}]}}
    failed = bridge.request({"mode": "code_action_execute", "action_id": listed[0]["id"]})
    assert not failed.ok and "server_error" in failed.text, failed.text
    assert path.read_text() == CHECKOUT
    assert bridge.buffer_lines(path) == CHECKOUT.splitlines() and not bridge.modified(path)


def test_format_a_file_and_a_range_undone_in_one_step(bridge: Bridge) -> None:
    path = fresh(bridge, "messy.ts", MESSY)
    ranged = bridge.ask(mode="format", locate={"file_path": "src/messy.ts", "find": "const   name"})
    assert ranged["changed"][0]["path"] == "src/messy.ts"
    lines = path.read_text().splitlines()
    assert lines[3] == "  const name = item.name;"  # the line asked about, and only that line
    assert lines[4] == "  return    name.toUpperCase( );"
    report = bridge.ask(mode="format", file_path="src/messy.ts")
    formatted = path.read_text()
    assert "export function label(item: Item): string {" in formatted
    assert "  return name.toUpperCase();" in formatted
    assert report["changed"][0]["added"] >= 2 and report["diagnostics"] == []
    # One `:undo` takes the whole formatting back.
    bridge.lua("local b = vim.fn.bufnr(...); vim.api.nvim_buf_call(b, function() vim.cmd('silent undo') end)", str(path))
    assert bridge.buffer_lines(path) == lines


def test_the_humans_own_apply_edit_is_left_to_neovim(bridge: Bridge) -> None:
    only_on_ts_ls(bridge, "vtsls has no command that sends back a given edit "
                  "(typescript-language-server's `_typescript.applyWorkspaceEdit`)")
    path = fresh(bridge, "human.ts", CHECKOUT)
    assert bridge.request({"mode": "diagnostics", "file_path": "src/human.ts"}).ok
    # The human runs a command of the server themselves: the edit it sends back is applied
    # by Neovim's handler (in the buffer, unsaved), as without the bridge.
    bridge.lua("""
        local path = ...
        local b = vim.fn.bufnr(path)
        local c = vim.lsp.get_clients({ name = 'ts_ls' })[1]
        local edit = { changes = { [vim.uri_from_fname(path)] = { {
          range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 0 } },
          newText = '// by the human\\n' } } } }
        c:request('workspace/executeCommand',
          { command = '_typescript.applyWorkspaceEdit', arguments = { edit } }, function() end, b)
    """, str(path))
    wait_for(lambda: bridge.buffer_lines(path)[0] == "// by the human", 30, "Neovim's handler")
    assert bridge.modified(path) and path.read_text() == CHECKOUT
    bridge.lua("local b = vim.fn.bufnr(...); vim.api.nvim_buf_delete(b, { force = true })", str(path))


def test_actions_view_and_format_of_a_selection_in_a_request_block(bridge: Bridge) -> None:
    path = fresh(bridge, "view.ts", MESSY)
    response = bridge.text("src/view.ts", "@@ export function label(item: Item):string {",
                           "^ label[actions]", "[@ const   name = item.name ;",
                           "@] return    name.toUpperCase( );", "! FORMAT")
    assert response.ok, response.text
    # The view lists the actions at the line, with ids, as the `code_actions` mode does.
    view = response.text.split("/*<actions:label>")[1].split("</actions:label>*/")[0]
    assert "# Code actions: src/view.ts" in view and "Move to a new file" in view
    assert '"mode":"code_action_execute","action_id":"' in view
    lines = path.read_text().splitlines()
    # The selection is formatted, the line above it is not.
    assert lines[2] == "export function label(item: Item):string {"
    assert lines[3:5] == ["  const name = item.name;", "  return name.toUpperCase();"]
    assert "@@ const name = item.name;" in response.text and "@@ return name.toUpperCase();" in response.text


def test_a_line_range_scope_and_an_ambiguous_fix(bridge: Bridge) -> None:
    fresh(bridge, "scope.ts", CHECKOUT)
    # `:'<,'>LsapActions` sends the lines as a scope: the refactorings of those lines.
    ranged = bridge.ask(mode="code_actions", kind="refactor.extract",
                        locate={"file_path": "src/scope.ts", "scope": {"start_line": 5, "end_line": 7}})
    assert ranged["where"] == "src/scope.ts:5-6"
    assert any(a["title"] == "Extract to function in module scope" for a in ranged["actions"])
    response = bridge.text("src/scope.ts", "@@ return round(subtotal + tax);", "! FIX 2304")
    assert response.ok, response.text
    if bridge.servers[0] == "vtsls":
        # vtsls offers one fix for the line's 2304 (no "Add all missing imports" beside it).
        assert 'applied: Add import from "./pricing" (vtsls)' in response.text
        return
    assert "/*<error:ambiguous>" in response.text and 'Add import from "./pricing"' in response.text
    # The list names each candidate's id, and `! FIX <id>` runs that one (issue 35).
    chosen = re.search(r'Add import from "\./pricing" \(quickfix, ts_ls, id ([0-9a-f]+)\)', response.text)
    assert chosen, response.text
    by_id = bridge.text("src/scope.ts", "@@ return round(subtotal + tax);", f"! FIX {chosen[1]}")
    assert 'applied: Add import from "./pricing" (ts_ls)' in by_id.text, by_id.text
    assert 'import { round } from "./pricing";' in (bridge.root / "src" / "scope.ts").read_text()


RXJS_LIKE = Path(__file__).resolve().parents[1] / "fixtures" / "rxjs_like"


def _indents(text: str) -> list[str]:
    return [line[: len(line) - len(line.lstrip())] for line in text.splitlines()]


@pytest.mark.parametrize("name", ["filter.ts", "map.ts"])
def test_format_keeps_the_indent_of_a_two_space_file_with_jsdoc(bridge: Bridge, name: str) -> None:
    # Issue 35: the embedded Neovim's defaults are tabs of 8 and the smallest indent seen
    # was a JSDoc ` * ` (1 space): tsserver re-indented every line to 1 space.
    original = (RXJS_LIKE / name).read_text()
    path = fresh(bridge, name, original)
    response = bridge.request({"mode": "format", "file_path": f"src/{name}"})
    assert response.ok or "changed nothing" in response.text, response.text
    assert _indents(path.read_text()) == _indents(original)


def test_an_editorconfig_sets_the_indent(bridge: Bridge) -> None:
    # Neovim's own `.editorconfig` support sets the buffer's options: they win over the code's.
    folder = bridge.root / "src" / "wide"
    folder.mkdir()
    (folder / ".editorconfig").write_text("[*.ts]\nindent_style = space\nindent_size = 4\n")
    path = folder / "wide.ts"
    path.write_text("export function f(): number {\n  return 1;\n}\n")
    assert bridge.ask(mode="format", file_path="src/wide/wide.ts")["changed"]
    assert path.read_text() == "export function f(): number {\n    return 1;\n}\n"


# The step that removes unused imports, as its note names it, per server.
REMOVES_UNUSED = {"ts_ls": "Remove Unused Imports (ts_ls)", "vtsls": "Organize Imports (vtsls)"}


def test_organize_imports_sorts_and_removes_the_unused_ones(bridge: Bridge) -> None:
    # Issue 35: typescript-language-server's "Organize Imports" only sorts and combines; its
    # "Remove Unused Imports" runs after it, and the notes say what each step changed.
    path = fresh(bridge, "organised.ts", UNSORTED)
    response = bridge.text("src/organised.ts", "! ORGANIZE_IMPORTS")
    assert response.ok, response.text
    assert path.read_text() == UNSORTED.replace(
        'import { round, Item } from "./pricing";\nimport { describe, total } from "./basket";\n',
        'import { total } from "./basket";\nimport { Item, round } from "./pricing";\n')
    # vtsls's own organise removes the unused names in the same step; ts_ls's next one does.
    removing = REMOVES_UNUSED[bridge.servers[0]]
    assert f"{removing}: removed " in response.text and '`import { describe, total } from "./basket";`' in response.text
    again = bridge.text("src/organised.ts", "! ORGANIZE_IMPORTS")
    assert again.ok and "the imports were already organised" in again.text, again.text
    # An unused import left by hand is removed, never "already organised".
    path.write_text('import { describe } from "./basket";\n' + path.read_text())
    third = bridge.text("src/organised.ts", "! ORGANIZE_IMPORTS")
    assert "already organised" not in third.text and "describe" not in path.read_text(), third.text


def test_format_with_organize_imports_removes_an_unused_import(bridge: Bridge) -> None:
    path = fresh(bridge, "tidy.ts", UNSORTED.replace("return round(total(items));", "return round( total(items) ) ;"))
    report = bridge.ask(mode="format", file_path="src/tidy.ts", organize_imports=True)
    assert path.read_text() == UNSORTED.replace(
        'import { round, Item } from "./pricing";\nimport { describe, total } from "./basket";\n',
        'import { total } from "./basket";\nimport { Item, round } from "./pricing";\n')
    assert any(r.startswith(f"{REMOVES_UNUSED[bridge.servers[0]]}: removed") for r in report["remarks"]), report


def test_line_level_actions_include_the_quick_fixes_of_its_diagnostics(bridge: Bridge) -> None:
    # Issue 35: a quick fix is computed at its diagnostic's own range ("Add import" at the
    # missing name), so the line's listing and `! FIX <title>` see it.
    path = fresh(bridge, "titled.ts", CHECKOUT)
    line = {"file_path": "src/titled.ts", "find": "return round(subtotal + tax);"}
    listed = bridge.ask(mode="code_actions", locate=line)["actions"]
    titles = [a["title"] for a in listed]
    assert 'Add import from "./pricing"' in titles, titles
    offered = [(a["title"], a["kind"]) for a in listed]  # vtsls: "Add all missing imports" of two kinds
    assert len(offered) == len(set(offered)), offered  # the line's and the diagnostic's answers merged
    response = bridge.text("src/titled.ts", "@@ return round(subtotal + tax);", '! FIX Add import from "./pricing"')
    assert response.ok and "/*<error" not in response.text, response.text
    assert f'applied: Add import from "./pricing" ({bridge.servers[0]})' in response.text
    assert 'import { round } from "./pricing";' in path.read_text()


def test_fix_by_an_action_id(bridge: Bridge) -> None:
    path = fresh(bridge, "by_id.ts", CHECKOUT)
    listed = bridge.ask(mode="code_actions", locate={"file_path": "src/by_id.ts", "find": "checkout(items: Item[])"},
                        kind="quickfix")["actions"]
    fix = next(a for a in listed if a["title"] == 'Add import from "./pricing"')
    response = bridge.text("src/by_id.ts", "@@ export function checkout(items: Item[]): number {", f"! FIX {fix['id']}")
    assert response.ok and "/*<error" not in response.text, response.text
    assert 'import { Item } from "./pricing";' in path.read_text()
    # An id of another file is refused, naming the file.
    other = fresh(bridge, "by_id_other.ts", CHECKOUT)
    listed = bridge.ask(mode="code_actions", locate={"file_path": "src/by_id_other.ts", "find": "round(subtotal"},
                        kind="quickfix")["actions"]
    wrong = bridge.text("src/by_id.ts", "@@ return round(subtotal + tax);", f"! FIX {listed[0]['id']}")
    assert "src/by_id_other.ts, not of the anchored file" in wrong.text, wrong.text
    assert other.read_text() == CHECKOUT


CALLS_MISSING = """export function pay(amount: number): number {
  if (amount > 0) {
    return fee(amount);
  }
  return 0;
}
"""


def test_a_quick_fix_writes_its_code_in_the_files_indent(bridge: Bridge) -> None:
    # Issue 35: tsserver writes the code of a fix ("Add missing function declaration") in
    # its default 4 spaces unless told the file's 2, by either server.
    path = fresh(bridge, "missing.ts", CALLS_MISSING)
    response = bridge.text("src/missing.ts", "@@ return fee(amount);", "! FIX Add missing function declaration 'fee'")
    assert response.ok and "/*<error" not in response.text, response.text
    text = path.read_text()
    added = text[text.index("function fee("):]
    body = [line for line in added.splitlines()[1:] if line.strip() and line != "}"]
    assert body and all(line.startswith("  ") and not line.startswith("   ") for line in body), text
