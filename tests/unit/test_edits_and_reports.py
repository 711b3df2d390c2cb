"""No Neovim: edit arithmetic, exclude_files rules, batch sections, diagnostics deltas, and the
golden files of the rename, diagnostics, editor, batch and schema templates."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from lsap_bridge.capabilities.batch import section
from lsap_bridge.capabilities.editor import selection_data
from lsap_bridge.capabilities.rename.pending import without
from lsap_bridge.capabilities.schema import request_schemas
from lsap_bridge.decode import text_edits, walk
from lsap_bridge.diagnostics import Diagnostic, DiagnosticDelta, diagnostic_of, from_lsp, from_vim, pulled_report
from lsap_bridge.editor import Client
from lsap_bridge.edits.text import splice
from lsap_bridge.edits.workspace_edit import steps_of
from lsap_bridge.errors import ErrorCode, LsapError
from lsap_bridge.lsp import decoded
from lsap_bridge.modes import fallback
from lsap_bridge.workspace import Workspace
from tests.golden import assert_report_golden


def rng(sl: int, sc: int, el: int, ec: int) -> dict[str, Any]:
    return {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}


# -- edits -------------------------------------------------------------------------------


def test_splice_converts_utf16_positions_and_reports_byte_edits() -> None:
    lines = ['note = "🧾 total: "; x: Product = 1', "y = Product"]
    # utf-16: the emoji is two units, so `Product` on line 0 starts at character 25.
    start = lines[0].index("Product") + 1
    edits = [
        {"range": rng(0, start, 0, start + 7), "newText": "Item"},
        {"range": rng(1, 4, 1, 11), "newText": "Item"},
    ]
    spliced = splice(lines, text_edits(edits), "utf-16", "a.py")
    new, byte_edits = spliced.lines, spliced.byte_edits
    assert new == ['note = "🧾 total: "; x: Item = 1', "y = Item"]
    # Last first, byte columns: the emoji is four bytes.
    assert byte_edits[0] == [1, 4, 1, 11, ["Item"]]
    byte_col = len(lines[0][: lines[0].index("Product")].encode())
    assert byte_edits[1] == [0, byte_col, 0, byte_col + 7, ["Item"]]


def test_splice_appends_after_the_final_newline_like_a_file() -> None:
    # "a\nb\n" + "c\n" at the position after the final newline (line 2) = "a\nb\nc\n".
    spliced = splice(["a", "b"], text_edits([{"range": rng(2, 0, 2, 0), "newText": "c\n"}]), "utf-8", "f")
    assert spliced.lines == ["a", "b", "c"] and spliced.append and spliced.fix_eol
    # Replacing through the end of the text keeps one final newline.
    spliced = splice(["a", "b"], text_edits([{"range": rng(1, 0, 5, 0), "newText": "x\ny\n"}]), "utf-8", "f")
    assert spliced.lines == ["a", "x", "y"]


def test_splice_fills_an_empty_file() -> None:
    spliced = splice([""], text_edits([{"range": rng(0, 0, 0, 0), "newText": "FEE = 2\n"}]), "utf-8", "f")
    assert spliced.lines == ["FEE = 2"] and not spliced.append and spliced.fix_eol
    # Inside a file, a line ending in an empty line is left alone.
    spliced = splice(["a", "b"], text_edits([{"range": rng(0, 1, 0, 1), "newText": "\n"}]), "utf-8", "f")
    assert spliced.lines == ["a", "", "b"] and not spliced.fix_eol


def test_splice_keeps_the_order_of_inserts_at_one_position() -> None:
    edits = [{"range": rng(0, 0, 0, 0), "newText": "x"}, {"range": rng(0, 0, 0, 0), "newText": "y"}]
    assert splice(["z"], text_edits(edits), "utf-8", "f").lines == ["xyz"]


def test_overlapping_edits_are_refused() -> None:
    edits = [{"range": rng(0, 0, 0, 3), "newText": "a"}, {"range": rng(0, 2, 0, 4), "newText": "b"}]
    with pytest.raises(LsapError) as caught:
        splice(["abcdef"], text_edits(edits), "utf-8", "f")
    assert "overlapping" in caught.value.message


def test_steps_cover_changes_and_document_changes() -> None:
    edit = {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "newText": "x"}
    typed = types.TextEdit(types.Range(types.Position(0, 0), types.Position(0, 1)), "x")
    assert [(s.kind, s.uri, s.edits) for s in steps_of({"changes": {"file:///a": [edit]}})] == [
        ("edit", "file:///a", [typed])]
    changes = [
        {"kind": "create", "uri": "file:///b"},
        {"textDocument": {"uri": "file:///b", "version": 3}, "edits": [edit]},
        {"kind": "rename", "oldUri": "file:///b", "newUri": "file:///c", "options": {"overwrite": True}},
        {"kind": "delete", "uri": "file:///d"},
    ]
    steps = steps_of({"documentChanges": changes})
    assert [(s.kind, s.uris, s.version) for s in steps] == [
        ("create", ["file:///b"], None), ("edit", ["file:///b"], 3),
        ("rename", ["file:///b", "file:///c"], None), ("delete", ["file:///d"], None)]
    assert [s.change() for s in steps] == [  # as a documentChanges entry again
        types.CreateFile("file:///b"),
        types.TextDocumentEdit(types.OptionalVersionedTextDocumentIdentifier("file:///b", 3), [typed]),
        types.RenameFile("file:///b", "file:///c", options=types.RenameFileOptions(overwrite=True)),
        types.DeleteFile("file:///d")]
    # The bridge's own (typed) edit reads as the same steps.
    assert steps_of(types.WorkspaceEdit(document_changes=[s.change() for s in steps])) == steps
    # Both forms sent: a client uses documentChanges (LSP), and so does every walk.
    both = {"changes": {"file:///a": [edit]}, "documentChanges": changes[1:2]}
    assert [s.uri for s in walk(both)] == ["file:///b"]


def test_annotated_and_snippet_edits_read_as_text_edits() -> None:
    where = {"start": {"line": 1, "character": 2}, "end": {"line": 1, "character": 4}}
    sent = [{"range": where, "newText": "a", "annotationId": "x"},
            {"range": where, "snippet": {"kind": "snippet", "value": "b"}}]
    [step] = steps_of({"changes": {"file:///a": sent}})
    rng_ = types.Range(types.Position(1, 2), types.Position(1, 4))
    assert step.edits == [types.TextEdit(rng_, "a"), types.TextEdit(rng_, "b")]


_WHERE = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}


@pytest.mark.parametrize(("edit", "code", "message"), [
    ({"changes": {"file:///a": [{"range": _WHERE}]}}, ErrorCode.SERVER_ERROR,
     "srv sent a malformed edit: an edit of file:///a has no text (None)"),
    ({"changes": {"file:///a": [{"range": {**_WHERE, "start": {"line": -1, "character": 0}}, "newText": ""}]}},
     ErrorCode.SERVER_ERROR, "srv sent a malformed edit: an edit of file:///a has no valid range "
     '({"start": {"line": -1, "character": 0}, "end": {"line": 0, "character": 1}})'),
    ({"documentChanges": [{"kind": "copy", "uri": "file:///a"}]}, ErrorCode.UNSUPPORTED,
     "the edit would copy a file, which the bridge does not do"),
    ({"documentChanges": [{"kind": "copy"}]}, ErrorCode.SERVER_ERROR,
     "srv sent a malformed edit: a copy of a file names no file"),
])
def test_malformed_workspace_edits_are_refused_clearly(edit: dict[str, Any], code: ErrorCode, message: str) -> None:
    with pytest.raises(LsapError) as caught:
        steps_of(edit, "srv")
    assert (caught.value.code, caught.value.message) == (code, message)


# -- rename helpers ------------------------------------------------------------------------


@pytest.mark.parametrize("pattern", ["/etc/*", "../*", "shop/../../x", "~/x"])
def test_exclude_patterns_outside_the_workspace_are_refused(pattern: str, tmp_path: Path) -> None:
    with pytest.raises(LsapError) as caught:
        Workspace.of(tmp_path).exclude_patterns([pattern])
    assert caught.value.code is ErrorCode.OUTSIDE_WORKSPACE


class _Session:
    def __init__(self, root: Path) -> None:
        self.workspace = Workspace.of(root)


def test_without_drops_excluded_files_in_both_edit_forms(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    a, b = (root / "src/a.py").as_uri(), (root / "tests/b.py").as_uri()
    session: Any = _Session(root)
    edit = {"range": rng(0, 0, 0, 1), "newText": "x"}
    [typed] = text_edits([edit])
    kept, left = without({"changes": {a: [edit], b: [edit]}}, session, ["tests/*"], "srv")
    assert kept == types.WorkspaceEdit(document_changes=[
        types.TextDocumentEdit(types.OptionalVersionedTextDocumentIdentifier(a, None), [typed])])
    assert left == ["tests/b.py"]
    doc_changes = [{"textDocument": {"uri": u, "version": 1}, "edits": []} for u in (a, b)]
    kept, left = without({"documentChanges": doc_changes}, session, ["tests"], "srv")
    assert kept == types.WorkspaceEdit(document_changes=[
        types.TextDocumentEdit(types.OptionalVersionedTextDocumentIdentifier(a, 1), [])])
    assert left == ["tests/b.py"]


# -- diagnostics -------------------------------------------------------------------------


def test_diagnostic_columns_become_code_points() -> None:
    lines = ["é = undefined_name"]
    pulled = from_lsp(
        diagnostic_of({"range": rng(0, 4, 0, 18), "severity": 1, "message": "x", "code": 5}),
        lines,
        "utf-16",
        "srv",
    )
    assert (pulled.col, pulled.end_col, pulled.code, pulled.source) == (4, 18, "5", "srv")
    pushed = from_vim(
        {"lnum": 0, "col": 5, "end_lnum": 0, "end_col": 19, "severity": 2, "message": "y"}, lines
    )
    assert (pushed.col, pushed.end_col, pushed.severity) == (4, 18, "warning")


def test_a_pulled_report_is_typed_once_and_a_malformed_one_is_the_servers_error() -> None:
    item = {"range": rng(0, 0, 0, 1), "severity": 7, "message": "x", "data": {"fix": 1}}
    [(diagnostic, raw)] = decoded(pulled_report, {"kind": "full", "items": [item]}, "srv", "textDocument/diagnostic")
    assert raw is item  # what a code action request hands back to the server
    assert from_lsp(diagnostic, ["x"], "utf-16", "srv", raw=raw).severity == "error"  # out of LSP's four
    assert decoded(pulled_report, {"kind": "unchanged", "resultId": "1"}, "srv", "m") is None
    for malformed in ({"items": [{"range": rng(0, 0, 0, 1)}]},  # no message
                      {"items": [{**item, "range": {"start": {"line": -1, "character": 0}}}]},
                      {"items": [{**item, "code": [1]}]}, {"items": {}}, []):
        with pytest.raises(LsapError, match="srv answered m with a malformed answer"):
            decoded(pulled_report, malformed, "srv", "m")


def test_delta_counts_only_new_diagnostics_even_when_lines_move() -> None:
    def d(line: int, message: str) -> Diagnostic:
        return Diagnostic(line, 0, line, 1, "error", message)

    path = Path("/x.py")
    before = {path: [d(3, "old"), d(4, "twice")]}
    after = {path: [d(9, "old"), d(10, "twice"), d(11, "twice"), d(12, "fresh")]}
    delta = DiagnosticDelta.between(before, after)
    assert [x.message for x in delta.new[path]] == ["twice", "fresh"]


# -- batch and editor pieces ---------------------------------------------------------------


def test_batch_section_flattens_headings_but_not_code() -> None:
    text = "# Outline: a.py\n\n## Classes\n\n```python\n# not a heading\n```\n#### deep"
    out = section(2, "outline", text)
    assert out["title"] == "Outline: a.py"
    assert out["body"].splitlines() == [
        "### Classes",
        "",
        "```python",
        "# not a heading",
        "```",
        "### deep",
    ]


def test_selection_range_is_one_based_and_in_code_points() -> None:
    raw = {
        "type": "charwise",
        "active": True,
        "start_line": 0,
        "start_col": 2,
        "end_line": 0,
        "end_col": 5,
        "text": ["llo"],
    }
    data = selection_data(raw, ["é llo world"], 50).model_dump()
    # Byte column 2 is code point 1 ("é" is two bytes); the end is inclusive.
    assert (data["start_line"], data["start_column"], data["end_column"]) == (1, 2, 5)


def test_schema_covers_every_mode_and_forbids_unknown_fields() -> None:
    schemas = request_schemas()
    # The modes the capability modules' sources declare, not the registry the schemas are made from.
    declared = {m for path in (Path(__file__).parents[2] / "lsap_bridge" / "capabilities").rglob("*.py")
                for m in re.findall(r'^@mode\("(\w+)"', path.read_text(), re.M)}
    assert set(schemas) == declared and len(declared) >= 30
    for mode, schema in schemas.items():  # each schema is its own mode's request
        assert schema["properties"]["mode"].get("const", schema["properties"]["mode"].get("default")) == mode
    for mode in ("rename", "rename_execute", "diagnostics", "editor", "batch", "schema"):
        assert schemas[mode]["additionalProperties"] is False
    assert "new_name" in schemas["rename"]["properties"]
    assert "exclude_files" in schemas["rename_execute"]["properties"]


def test_fallback_suggests_a_mode_some_server_can_answer() -> None:
    def client(*methods: str) -> Client:
        return Client(1, "srv", "utf-16", frozenset(methods))

    refs = client("textDocument/references", "textDocument/hover")
    assert fallback("textDocument/rename", [refs]) == "references"
    # search (the own fallback of references) needs workspace/symbol, which is missing.
    assert fallback("textDocument/references", [client("textDocument/definition")]) == "definition"
    assert fallback("textDocument/hover", [client()]) == "locate"


# -- golden files ----------------------------------------------------------------------------

ANCHOR: dict[str, Any] = {
    "anchor": "shop/models.py@class <|>Product",
    "path": "shop/models.py",
    "line": 7,
    "column": 7,
    "symbol": "Product",
    "text": "class Product:",
    "server": "basedpyright",
    "partial": False,
}
DIFF = (
    "--- a/shop/catalog.py\n+++ b/shop/catalog.py\n@@ -3,1 +3,1 @@\n"
    "-from .models import Product\n+from .models import Item"
)
DIAG = {
    "line": 4,
    "column": 28,
    "severity": "error",
    "message": '"Product" is unknown import symbol',
    "code": "reportAttributeAccessIssue",
    "source": "basedpyright",
}
DIAG_END = {"end_line": 4, "end_column": 35}  # the `diagnostics` mode's rows say where each ends

CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "rename_applied.md": (
        "rename",
        {
            **ANCHOR,
            "old_name": "Product",
            "new_name": "Item",
            "server": "basedpyright",
            "edits": 10,
            "changed": [
                {"path": "shop/models.py", "edits": 5, "saved": True, "disk_differs": False},
                {"path": "shop/promotions.py", "edits": 5, "saved": False, "disk_differs": True},
            ],
            "uses": {"found": 11, "files": 3, "covered": 10},
            "uncovered": [
                {"path": "shop/report.py", "line": 3, "column": 21, "text": "from .models import Product"}
            ],
            "uncovered_total": 1,
            "unsaved": ["shop/promotions.py"],
            "created": [],
            "renamed": [],
            "excluded": ["tests/test_x.py"],
            "new_diagnostics": [{"path": "shop/checkout.py", **DIAG}],
            "pending": [
                {
                    "path": "shop/extra.py",
                    "reason": "basedpyright had not published diagnostics for this text yet",
                }
            ],
            "status": "incomplete",
            "again": ":Lsap check",
            "change": "12",
            "undo": ":Lsap undo 12",
        },
    ),
    "rename_executed_clean.md": (
        "rename",
        {
            "rename_id": "0123abcd45",
            "partial": True,
            "old_name": "Product",
            "new_name": "Item",
            "server": "basedpyright",
            "edits": 2,
            "changed": [{"path": "shop/models.py", "edits": 2, "saved": True, "disk_differs": False}],
            "unsaved": [],
            "created": ["shop/new.py"],
            "renamed": [{"old": "shop/a.py", "new": "shop/b.py"}],
            "excluded": [],
            "uses": {"found": 2, "files": 1, "covered": 2},
            "uncovered": [],
            "uncovered_total": 0,
            "new_diagnostics": [],
            "pending": [],
        },
    ),
    "diagnostics_paged.md": (
        "diagnostics",
        {
            "scope": "the workspace",
            "min_severity": "warning",
            "outside": 0,
            "too_large": 0,
            "max_file_size": 4194304,
            "counts": {"error": 2, "warning": 1},
            "files": 2,
            "checked": 5,
            "skipped": True,
            "quiet": [
                {"path": "src/basket.ts", "reason": "ts_ls published nothing new since it changed"}
            ],
            "limit": 200,
            "pending": [
                {
                    "path": "shop/slow.py",
                    "reason": "basedpyright had not published diagnostics for this text yet",
                }
            ],
            "groups": [
                {
                    "path": "shop/checkout.py",
                    "language": "python",
                    "diagnostics": [
                        {
                            **DIAG,
                            **DIAG_END,
                            "message": "first line\n  second line",
                            "lines": [{"number": 4, "text": "from .models import Order, Product"}],
                        },
                        {
                            **DIAG,
                            **DIAG_END,
                            "severity": "warning",
                            "code": None,
                            "lines": [{"number": 4, "text": "from .models import Order, Product"}],
                        },
                    ],
                }
            ],
            "total": 3,
            "start": 1,
            "end": 2,
            "next": '{"mode":"diagnostics","max_items":2,"start_index":2,"pagination_id":"ab12"}',
        },
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_template_golden(name: str) -> None:
    assert_report_golden(name, *CASES[name])


# -- the checks before an edit, with a fake editor -----------------------------------------


class _FakeGateway:
    """Buffers by path: `read` answers like the real gateway; applying commits and switches
    the files as `lua/lsap/edits.lua` does, and is recorded."""

    max_file_size = 4 * 1024 * 1024  # what the disk watch skips, as the real gateway says

    def __init__(self, buffers: dict[Path, tuple[list[str], int, bool]], state: Path) -> None:
        self.buffers = buffers
        self.state = state
        self.applied: list[Any] = []

    async def read(self, paths: list[Path]) -> dict[Path, Any]:
        from lsap_bridge.filestate import read_disk
        from lsap_bridge.position import Document

        out: dict[Path, Any] = {}
        for path in paths:
            if path in self.buffers:
                lines, tick, modified = self.buffers[path]
                out[path] = Document(path, lines, f"tick:{tick}", bufnr=1, modified=modified)
            else:
                out[path] = read_disk(path)
        return out

    async def call(self, name: str, *args: Any) -> Any:
        assert name == "journal_dir"
        return str(self.state / "journal")

    async def apply_edits(self, plan: dict[str, Any]) -> dict[str, Any]:
        self.applied.append(plan["ops"])
        if plan["marker"]:
            Path(plan["marker"]).touch()
        for op in plan["ops"]:
            if op["kind"] in ("write", "create") and op["steps"]:  # a buffer written in place
                shutil.copyfile(op["temp"], op["path"])
            elif op["kind"] in ("write", "create"):
                os.rename(op["temp"], op["path"])
            elif op["kind"] == "remove":
                os.unlink(op["path"])
        return {"ok": True}


def _edit(path: Path, version: int | None, text: str = "Item") -> dict[str, Any]:
    change = {"range": rng(0, 6, 0, 13), "newText": text}
    return {
        "documentChanges": [
            {"textDocument": {"uri": path.as_uri(), "version": version}, "edits": [change]}
        ]
    }


@pytest.fixture
def fake(tmp_path: Path) -> tuple[Any, Path]:
    from lsap_bridge.session.warm import Session

    root = tmp_path.resolve() / "ws"
    root.mkdir()
    models = root / "models.py"
    models.write_text("class Product:\n    pass\n")
    buffers = {models: (["class Product:", "    pass"], 7, False)}
    gateway = _FakeGateway(buffers, tmp_path / "state")
    session = Session(gateway, Workspace.of(root))  # type: ignore[arg-type]
    return session, models


def _run(coro: Any) -> Any:
    import asyncio

    return asyncio.run(coro)


CLIENT = Client(1, "srv", "utf-16", frozenset())


def test_an_edit_against_an_older_version_is_a_conflict(fake: tuple[Any, Path]) -> None:
    from lsap_bridge.edits.apply import apply_workspace_edit

    session, models = fake
    with pytest.raises(LsapError) as caught:
        _run(apply_workspace_edit(session, _edit(models, 5), CLIENT, label="rename"))
    assert (
        caught.value.code is ErrorCode.CONFLICT
        and "changed after the server" in caught.value.message
    )
    assert session.gateway.applied == []
    result = _run(apply_workspace_edit(session, _edit(models, 7), CLIENT, label="rename"))
    assert result.changed == ["models.py"] and session.gateway.applied[0][0]["tick"] == 7


def test_an_edit_outside_the_workspace_changes_nothing(
    fake: tuple[Any, Path], tmp_path: Path
) -> None:
    from lsap_bridge.edits.apply import apply_workspace_edit

    session, models = fake
    elsewhere = tmp_path.parent / "elsewhere.py"
    edit = {
        "changes": {
            models.as_uri(): _edit(models, None)["documentChanges"][0]["edits"],
            elsewhere.as_uri(): [],
        }
    }
    with pytest.raises(LsapError) as caught:
        _run(apply_workspace_edit(session, edit, CLIENT, label="rename"))
    assert caught.value.code is ErrorCode.OUTSIDE_WORKSPACE and session.gateway.applied == []


def test_a_refused_edit_is_denied_and_the_policy_sees_the_diff(fake: tuple[Any, Path]) -> None:
    from lsap_bridge.edits.apply import apply_workspace_edit

    session, models = fake
    seen: list[tuple[str, str]] = []

    async def deny(summary: str, preview_text: str) -> bool:
        seen.append((summary, preview_text))
        return False

    session.approve_edit = deny
    with pytest.raises(LsapError) as caught:
        _run(
            apply_workspace_edit(
                session, _edit(models, None), CLIENT, label="rename Product → Item"
            )
        )
    assert caught.value.code is ErrorCode.DENIED and session.gateway.applied == []
    assert seen[0][0] == "rename Product → Item: 1 edit in 1 file"
    assert "-class Product:\n+class Item:" in seen[0][1]


def test_a_buffer_behind_its_file_is_a_conflict(fake: tuple[Any, Path]) -> None:
    """The buffer (unmodified) still holds the text the server computed the edit on, but
    the file changed on disk: writing the edit would lose the disk's change."""
    from lsap_bridge.edits.apply import apply_workspace_edit

    session, models = fake
    models.write_text("class Product:\n    pass\n\nEXTRA = 1\n")
    with pytest.raises(LsapError) as caught:
        _run(apply_workspace_edit(session, _edit(models, None), CLIENT, label="rename"))
    assert caught.value.code is ErrorCode.CONFLICT
    assert caught.value.message.startswith("the buffer of models.py does not hold what is on disk")
    assert session.gateway.applied == [] and models.read_text().endswith("EXTRA = 1\n")


def test_a_rename_computed_on_other_text_is_a_conflict(fake: tuple[Any, Path]) -> None:
    """No buffer holds the file, and its lines moved since the server read it: the edit's
    range no longer holds the old name."""
    from lsap_bridge.edits.apply import apply_workspace_edit

    session, models = fake
    session.gateway.buffers.clear()
    models.write_text("# moved\nclass Product:\n    pass\n")
    with pytest.raises(LsapError) as caught:
        _run(apply_workspace_edit(session, _edit(models, None), CLIENT, label="rename",
                                  replaces="Product"))
    assert caught.value.code is ErrorCode.CONFLICT
    assert caught.value.message == (
        "the edit of models.py at 1:7 would replace `d`, not `Product`: the file changed since "
        "the server read it"
    )
    assert session.gateway.applied == []
    moved = {"changes": {models.as_uri(): [{"range": rng(1, 6, 1, 13), "newText": "Item"}]}}
    result = _run(apply_workspace_edit(session, moved, CLIENT, label="rename", replaces="Product"))
    assert result.changed == ["models.py"] and models.read_text() == "# moved\nclass Item:\n    pass\n"


@pytest.mark.parametrize(("text", "name"), [("def f(x):\n", "f"), ("x = class_of(y)\n", "cl"),
                                            ("fetch = 1\n", "f"), ("de = 1\n", "d")])
def test_a_short_name_inside_a_longer_word_is_not_what_a_rename_replaces(
        fake: tuple[Any, Path], text: str, name: str) -> None:
    """The old name must be there as a token: an edit of `f` now over the `f` of `def` (or
    of `fetch`) was computed on other text (issue 36: never by substring)."""
    from lsap_bridge.edits.apply import apply_workspace_edit

    session, models = fake
    session.gateway.buffers.clear()
    models.write_text(text)
    word = re.search(rf"\w*{name}\w*", text)
    assert word is not None and word.group() != name
    # The range of the longer word that holds the short name.
    edit = {"changes": {models.as_uri(): [{"range": rng(0, word.start(), 0, word.end()), "newText": "g"}]}}
    with pytest.raises(LsapError) as caught:
        _run(apply_workspace_edit(session, edit, CLIENT, label="rename", replaces=name))
    assert caught.value.code is ErrorCode.CONFLICT and f"not `{name}`" in caught.value.message
    assert models.read_text() == text


def test_whole_file_replacements_are_recognised() -> None:
    from lsap_bridge.edits.text import replaces_all

    lines = ["ab", "cd", "ef"]
    assert not replaces_all(text_edits([{"range": rng(0, 0, 1, 0), "newText": ""}]), lines)  # the first line only
    assert replaces_all(text_edits([{"range": rng(0, 0, 3, 0), "newText": ""}]), lines)  # through the final newline
    # A server that did not know the last line (typed by the human) ends there.
    assert replaces_all(text_edits([{"range": rng(0, 0, 2, 0), "newText": ""}]), lines)


def test_session_diagnostics_pulls_where_a_server_can(tmp_path: Path) -> None:
    """No server installed here offers pull diagnostics: the pull path against a fake editor."""
    from lsap_bridge.gateway import LspAnswer
    from lsap_bridge.position import Document
    from lsap_bridge.session.warm import Session

    path = tmp_path.resolve() / "a.py"
    path.write_text("s = '🧾' + missing\n")
    puller = Client(7, "puller", "utf-16", frozenset({"textDocument/diagnostic"}))
    pusher = Client(8, "pusher", "utf-8", frozenset())

    class Gateway:
        max_file_size = 4 * 1024 * 1024

        def __init__(self) -> None:
            self.calls: list[Any] = []
            self.waited: list[Any] = []

        async def open(self, p: Path) -> int:
            return 3

        async def servers_expected(self, bufnrs: list[int]) -> list[bool]:
            return [True for _ in bufnrs]

        async def wait_for_clients(self, bufnr: int, method: str | None) -> list[Client]:
            return [puller, pusher]

        async def read(self, paths: list[Path]) -> dict[Path, Document]:
            return {p: Document(p, ["s = '🧾' + missing"], "tick:4", bufnr=3) for p in paths}

        async def lsp(self, calls: list[Any], timeout: float | None = None, guard: Any = None,
                      taking: Any = None) -> list[LspAnswer]:
            self.calls += calls
            item = {"range": rng(0, 11, 0, 18), "severity": 1, "message": "undefined", "code": "x"}
            return [LspAnswer({"kind": "full", "items": [item]})]

        async def pushed_diagnostics(self, bufnrs: list[int], exclude: list[int],
                                     after_sync: bool = False, until: float | None = None) -> dict[int, Any]:
            self.waited.append((bufnrs, exclude))
            item = {
                "lnum": 0,
                "col": 0,
                "end_lnum": 0,
                "end_col": 1,
                "severity": 4,
                "message": "hint",
            }
            return {3: {"bufnr": 3, "analysed": True, "items": [item]}}

    gateway = Gateway()
    session = Session(gateway, Workspace.of(tmp_path))  # type: ignore[arg-type]
    found = _run(session.diagnostics.of([path]))
    assert [c.method for c in gateway.calls] == ["textDocument/diagnostic"]
    assert gateway.waited == [([3], [7])]  # the pusher is waited for; the puller's are excluded
    # utf-16 character 11 is code point 10: the emoji is two units.
    assert [(d.col, d.end_col, d.severity, d.source) for d in found[path]] == [
        (0, 1, "hint", None),
        (10, 17, "error", "puller"),
    ]
    assert not found.pending and not found.quiet


@pytest.mark.parametrize("bad", [
    {"start": {"line": -1, "character": 0}, "end": {"line": 0, "character": 1}},
    {"start": {"line": "0", "character": 0}, "end": {"line": 0, "character": 1}},
    {"start": {"line": 0, "character": None}, "end": {"line": 0, "character": 1}},
    None,
])
def test_a_malformed_range_from_a_server_is_its_error(fake: tuple[Any, Path], bad: Any) -> None:
    """Negative, string or null positions used to raise IndexError/ValueError/
    AttributeError inside the engine; they are refused, naming the server, before anything
    is read."""
    from lsap_bridge.edits.apply import apply_workspace_edit

    session, models = fake
    before = models.read_text()
    edit = {"changes": {models.as_uri(): [{"range": bad, "newText": "Item"}]}}
    with pytest.raises(LsapError) as caught:
        _run(apply_workspace_edit(session, edit, CLIENT, label="rename"))
    assert caught.value.code is ErrorCode.SERVER_ERROR
    assert caught.value.message.startswith(f"srv sent a malformed edit: an edit of {models.as_uri()} "
                                           "has no valid range")
    assert session.gateway.applied == [] and models.read_text() == before


def test_an_edit_over_the_size_limit_is_refused_before_anything_is_written(
        fake: tuple[Any, Path]) -> None:
    """A 60 MB insert used to be written, then answered `invalid_request` (the file was over
    the size limit for every request after)."""
    from lsap_bridge.edits.apply import apply_workspace_edit

    session, models = fake
    session.gateway.buffers.clear()
    session.gateway.max_file_size = 1000
    before = models.read_text()
    edit = {"changes": {models.as_uri(): [{"range": rng(0, 0, 0, 0), "newText": "x" * 2000}]}}
    with pytest.raises(LsapError) as caught:
        _run(apply_workspace_edit(session, edit, CLIENT, label="insert"))
    assert caught.value.code is ErrorCode.INVALID_REQUEST
    assert caught.value.message.startswith("the edit would make models.py 2 KiB, over the 1000 bytes limit")
    assert session.gateway.applied == [] and models.read_text() == before
    assert not list(models.parent.glob(".models.py.lsap-*")), "nothing staged beside it"


@pytest.mark.parametrize("kind", ["rename", "create"])
def test_a_resource_operation_overwrites_a_file_only_with_consent(fake: tuple[Any, Path], kind: str) -> None:
    """A rename a.py → b.py with `overwrite` destroyed b.py and reported "Nothing to
    change"; now, without the request's `overwrite: true`, it is refused whole, saying how
    to get past it (with it: tests/integration/test_command_edits.py)."""
    from lsap_bridge.edits.apply import apply_workspace_edit

    session, models = fake
    a, b = models.parent / "a.py", models.parent / "b.py"
    a.write_text("a = 1\n")
    b.write_text("b = 2\n")
    operation = ({"kind": "rename", "oldUri": a.as_uri(), "newUri": b.as_uri()} if kind == "rename"
                 else {"kind": "create", "uri": b.as_uri()})
    edit = {"documentChanges": [{**operation, "options": {"overwrite": True, "ignoreIfExists": True}}]}
    with pytest.raises(LsapError) as caught:
        _run(apply_workspace_edit(session, edit, CLIENT, label="move"))
    assert caught.value.code is ErrorCode.CONFLICT
    assert caught.value.message.endswith("b.py, which exists, and would overwrite it")
    assert "ask again with `overwrite: true`" in (caught.value.hint or "")
    assert a.read_text() == "a = 1\n" and b.read_text() == "b = 2\n" and session.gateway.applied == []
    skipped = {"documentChanges": [{**operation, "options": {"ignoreIfExists": True}}]}
    assert _run(apply_workspace_edit(session, skipped, CLIENT, label="move")).changed == []
    assert a.read_text() == "a = 1\n" and b.read_text() == "b = 2\n"
