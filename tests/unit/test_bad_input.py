"""No Neovim: the checks that turn bad input into the error naming its problem — path
limits and `file://` URIs at the one confinement check, pages past the end, new names per
language, and a timeout's hint per cause, phrased for the surface that asked."""

from __future__ import annotations

import contextvars
import os
import string
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from lsap_bridge.capabilities import REGISTRY
from lsap_bridge.errors import ClientGone, ErrorCode, LsapError
from lsap_bridge.failures import as_error
from lsap_bridge.gateway import server_timeout
from lsap_bridge.identifiers import MAX_LENGTH, check_new_name, declined
from lsap_bridge.locate.anchor import parse_anchor, split_path
from lsap_bridge.lsreq.parser import parse
from lsap_bridge.render import render_error
from lsap_bridge.report.paging import page
from lsap_bridge.surface import SURFACE
from lsap_bridge.workspace import Workspace, local_path


def raised(function: Callable[..., Any], *args: Any) -> LsapError:
    with pytest.raises(LsapError) as caught:
        function(*args)
    return caught.value


def in_neovim(function: Callable[..., Any], *args: Any) -> Any:
    def run() -> Any:
        SURFACE.set("nvim")
        return function(*args)

    return contextvars.copy_context().run(run)


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("X = 1\n")
    (tmp_path / "pkg" / "a b.py").write_text("Y = 2\n")
    return Workspace.of(tmp_path)


# -- paths ------------------------------------------------------------------------------


def test_the_limits_are_the_file_systems(workspace: Workspace) -> None:
    assert workspace.limits == (os.pathconf(workspace.root, "PC_NAME_MAX"), os.pathconf(workspace.root, "PC_PATH_MAX"))


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("a/" * 2500 + "x.py", "bytes for a path (PATH_MAX)"),
        ("pkg/" + "n" * 300 + ".py", "bytes for a file name (NAME_MAX)"),
        ("/" + "n" * 300, "bytes for a file name (NAME_MAX)"),
        ("file:///" + "n" * 300, "bytes for a file name (NAME_MAX)"),
    ],
)
def test_over_long_paths_are_invalid_requests_naming_the_limit(workspace: Workspace, path: str, words: str) -> None:
    error = raised(workspace.resolve, path)
    assert error.code is ErrorCode.INVALID_REQUEST
    assert words in error.message and str(workspace.limits[0 if "NAME" in words else 1]) in error.message
    assert len(error.message) < 300
    assert not workspace.is_file(path)  # the anchor splitter just finds no file there


def test_a_name_at_the_limit_is_only_missing(workspace: Workspace) -> None:
    name = "n" * (workspace.limits[0] - 3) + ".py"
    assert workspace.resolve("pkg/" + name) == workspace.root / "pkg" / name


@pytest.mark.parametrize(
    ("uri", "relative"),
    [
        ("file://{root}/pkg/mod.py", "pkg/mod.py"),
        ("file://localhost{root}/pkg/mod.py", "pkg/mod.py"),
        ("FILE://{root}/pkg/mod.py", "pkg/mod.py"),
        ("file:{root}/pkg/mod.py", "pkg/mod.py"),
        ("file://{root}/pkg/a%20b.py", "pkg/a b.py"),
        ("file://{root}/pkg/a b.py", "pkg/a b.py"),
    ],
)
def test_file_uris_resolve_like_the_path_they_name(workspace: Workspace, uri: str, relative: str) -> None:
    assert workspace.resolve(uri.format(root=workspace.root)) == workspace.root / relative
    assert workspace.is_file(uri.format(root=workspace.root))


@pytest.mark.parametrize(
    ("uri", "code", "words"),
    [
        ("file:///etc/passwd", ErrorCode.OUTSIDE_WORKSPACE, "outside the workspace"),
        ("file://{root}/../x.py", ErrorCode.OUTSIDE_WORKSPACE, "outside the workspace"),
        ("file://example.com{root}/pkg/mod.py", ErrorCode.INVALID_REQUEST, "names the host 'example.com'"),
        ("file:pkg/mod.py", ErrorCode.INVALID_REQUEST, "is not a file URI"),
        ("file://{root}/pkg/mod.py%00", ErrorCode.INVALID_REQUEST, "NUL"),
    ],
)
def test_file_uris_outside_or_not_local_are_refused(workspace: Workspace, uri: str, code: ErrorCode,
                                                    words: str) -> None:
    error = raised(workspace.resolve, uri.format(root=workspace.root))
    assert error.code is code and words in error.message


def test_a_uri_is_never_a_directory_named_file(workspace: Workspace) -> None:
    assert local_path("file:///elsewhere/moved.py") == "/elsewhere/moved.py"  # a MOVE_TO_FILE target
    error = raised(workspace.resolve, "file:///elsewhere/moved.py")
    assert error.code is ErrorCode.OUTSIDE_WORKSPACE and "resolves to /elsewhere/moved.py" in error.message
    assert local_path("pkg/file:x.py") == "pkg/file:x.py"  # a colon later in a path is a name


def test_the_anchor_string_takes_a_uri(workspace: Workspace) -> None:
    uri = (workspace.root / "pkg" / "mod.py").as_uri()
    locate = parse_anchor(f"{uri}:X@X = <|>1", workspace.is_file)
    assert locate.file_path == uri and locate.find == "X = <|>1"
    assert workspace.resolve(locate.file_path) == workspace.root / "pkg" / "mod.py"
    # A file that does not exist: the split is after the path, not at the scheme's colon.
    assert split_path(f"{uri[:-6]}gone.py:X", workspace.is_file) == (f"{uri[:-6]}gone.py", ":X")


def test_globs_and_exclude_patterns_take_uris_inside_and_refuse_the_rest(workspace: Workspace) -> None:
    root_uri = workspace.root.as_uri()
    assert workspace.relative_glob(f"{root_uri}/pkg/*.py") == "pkg/*.py"
    assert workspace.relative_glob(f"{workspace.root}/pkg/*.py") == "pkg/*.py"
    assert [p.name for p in workspace.glob(f"{root_uri}/pkg/*.py").files] == ["a b.py", "mod.py"]
    assert workspace.exclude_patterns([f"{root_uri}/tests/*", "docs"]) == ["tests/*", "docs"]
    for outside in ("file:///etc/*", "/etc/*", f"{root_uri}/../*", "~/x", "../*"):
        error = raised(workspace.exclude_patterns, [outside])
        assert error.code is ErrorCode.OUTSIDE_WORKSPACE and "exclude_files pattern" in error.message


@pytest.mark.parametrize(
    ("pattern", "words"),
    [
        ("n" * 300 + "/*.py", "(NAME_MAX)"),
        ("a/" * 2500 + "*.py", "(PATH_MAX)"),
        ("*/" * 2500, "(PATH_MAX)"),
        ("pkg/**x.py", "is malformed: Invalid pattern"),
    ],
)
def test_globs_the_file_system_cannot_match_are_invalid_requests(workspace: Workspace, pattern: str,
                                                                 words: str) -> None:
    error = raised(workspace.glob, pattern)
    assert error.code is ErrorCode.INVALID_REQUEST and words in error.message and len(error.message) < 300
    # A long name with wildcards may still match a short one.
    classes = "".join(f"[{ch}{string.ascii_letters}]" for ch in "mod.py")
    assert len(classes) > workspace.limits[0]
    assert [p.name for p in workspace.glob(f"pkg/{classes}").files] == ["mod.py"]


# -- pages ------------------------------------------------------------------------------


def search(**fields: Any) -> Any:
    return REGISTRY["search"].model.model_validate({"mode": "search", "query": "Item", **fields})


# A session's state is all paging needs: where the whole lists are kept.
SESSION = SimpleNamespace(kept=SimpleNamespace(pages={}))


def test_a_page_past_the_end_says_so_with_the_last_page() -> None:
    items = list(range(11))
    error = raised(page, SESSION, search(start_index=999, max_items=5), items)
    assert error.code is ErrorCode.INVALID_REQUEST
    assert error.message == "nothing at start_index 999: the search answer has 11 items (start_index 0–10)"
    assert error.hint is not None and error.hint.startswith(
        'the last page (item 11): `{"mode":"search","max_items":5,"query":"Item","start_index":10,"pagination_id":"')
    shown, info = page(SESSION, search(start_index=10, max_items=5), items)
    assert shown == [10] and info["start"] == 11 and info["end"] == 11 and "next" not in info
    at_total = raised(page, SESSION, search(start_index=11), items)
    assert "the last page (items 1–11)" in (at_total.hint or "") and '"start_index":0' in (at_total.hint or "")
    text = in_neovim(lambda: render_error(raised(page, SESSION, search(start_index=20, max_items=5), items)))
    assert "Next: the last page (item 11): `:Lsap search Item max_items=5 start_index=10 pagination_id=" in text
    assert '"code": "invalid_request"' in render_error(error, "json")


def test_a_page_past_the_end_of_nothing_gives_the_whole_request() -> None:
    error = raised(page, SESSION, search(start_index=3, max_items=5), [])
    assert error.message == "nothing at start_index 3: the search answer has no items"
    assert error.hint == 'the whole answer: `{"mode":"search","max_items":5,"query":"Item"}`'
    assert page(SESSION, search(), []) == ([], {"total": 0, "start": 0, "end": 0})  # the first page is no error


# -- new names --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "path", "problem"),
    [
        ("a b", "m.py", "it contains a space"),
        ("1abc", "m.py", "it starts with a digit"),
        ("class", "m.py", "`class` is a Python keyword"),
        ("None", "m.pyi", "`None` is a Python keyword"),
        ("Client\nimport os", "m.py", "it contains a line break"),
        ("x" * 100_000, "m.py", f"it is 100,000 characters long, over the limit of {MAX_LENGTH}"),
        ("$el", "m.py", "'$' cannot be part of a name"),
        ("a-b", "m.py", "'-' cannot be part of a name"),
        ("class", "m.ts", "`class` is a reserved word in TypeScript and JavaScript"),
        ("await", "m.mjs", "`await` is a reserved word"),
        ("1abc", "m.tsx", "it starts with a digit"),
        ("a\u200bb", "m.js", "it contains the non-printing character U+200B"),
        ("a b", "m.go", "it contains a space"),
        ("", "m.rs", "it is empty"),
        ("y" * (MAX_LENGTH + 1), "m.c", f"it is {MAX_LENGTH + 1} characters long, over the limit"),
    ],
)
def test_invalid_new_names_say_what_a_valid_one_is(name: str, path: str, problem: str) -> None:
    error = raised(check_new_name, name, path)
    assert error.code is ErrorCode.INVALID_REQUEST
    assert "cannot be the new name: " + problem in error.message
    assert error.hint is not None and f"at most {MAX_LENGTH} characters" in error.hint
    assert len(error.message) < 300


@pytest.mark.parametrize(
    ("name", "path"),
    [("total_2", "m.py"), ("Größe", "m.py"), ("match", "m.py"), ("_", "m.py"), ("$el", "m.ts"),
     ("_private$", "m.js"), ("let_", "m.ts"), ("empty?", "m.rb"), ("kebab-name", "m.lua"),
     ("1st", "notes.txt"), ("x" * MAX_LENGTH, "m.py")],
)
def test_valid_new_names_pass(name: str, path: str) -> None:
    check_new_name(name, path)


def test_the_servers_refusal_is_its_own() -> None:
    error = declined("basedpyright", "Product", "__debug__")
    assert error.code is ErrorCode.INVALID_REQUEST
    assert error.message.startswith("basedpyright refused to rename `Product` to '__debug__'")
    assert "gave no reason" in (error.hint or "")
    # What the server told the human instead of an error (kept off their screen) is its reason.
    said = declined("basedpyright", "Product", "__debug__", ['Cannot rename to "__debug__": it\'s a Python keyword:'])
    assert said.message == ("basedpyright refused to rename `Product` to '__debug__': "
                            "it said: Cannot rename to \"__debug__\": it's a Python keyword")
    assert said.hint == "choose another name"


def test_rename_to_is_checked_for_the_files_language() -> None:
    def request(path: str, name: str) -> str:
        return (f"*** Begin Language Server Request\n*** File: {path}\n@@ x = 1\n! x RENAME_TO {name}\n"
                "*** End Language Server Request")

    error = raised(parse, request("a.py", "lambda"))
    assert error.message == "line 4: 'lambda' cannot be the new name: `lambda` is a Python keyword"
    assert error.hint is not None and error.hint.startswith("rule (rename): ") and "a Python name is" in error.hint
    assert "reserved word" in raised(parse, request("a.ts", "default")).message
    assert parse(request("a.ts", "lambda")).files[0].anchors[0].operations  # a name in TypeScript
    assert parse(request("a.rb", "empty?")).files[0].anchors[0].operations


# -- timeouts ---------------------------------------------------------------------------


def health(**fields: Any) -> dict[str, Any]:
    return {"id": 3, "name": "basedpyright", "work": None, "progress_ms": None, "answer_ms": None,
            "age_ms": 90_000, **fields}


def test_a_timeout_while_indexing_says_so_and_no_restart() -> None:
    error = server_timeout([health(work="Indexing 40%", progress_ms=1500)], 30, embedded=True)
    assert error.code is ErrorCode.TIMEOUT and error.message == "basedpyright did not answer within 30 s"
    assert error.hint == ("basedpyright is still indexing (Indexing 40%, reported 2 s ago): send the request "
                          "again once it has finished")


def test_a_timeout_while_answering_others_is_a_slow_request() -> None:
    error = server_timeout([health(answer_ms=4000)], 30, embedded=False)
    assert error.hint is not None and "answered other requests meanwhile (the last 4 s ago)" in error.hint
    assert "restart" not in error.hint


@pytest.mark.parametrize(
    "case",
    [(health(answer_ms=45_000), "its last answer was 45 s ago"),
     (health(), "no answer since it attached 90 s ago"),
     (health(age_ms=None), "no answer from it since lsap started"),
     (health(work="Indexing", progress_ms=600_000, answer_ms=700_000),
      "its last answer was 700 s ago, and its last progress report (Indexing) 600 s ago")],
    ids=["silent", "never answered", "attached before lsap", "stalled indexing"],
)
def test_a_timeout_with_no_progress_and_no_answer_is_hung_and_says_how_to_restart(
        case: tuple[dict[str, Any], str]) -> None:
    state, last = case
    hint = server_timeout([state], 30, embedded=True).hint or ""
    assert hint.startswith(f"basedpyright is busy or hung: no progress and no answer for the 30 s wait ({last})")
    assert "restart it: `lsap daemon stop`" in hint and "indexing" not in hint
    human = server_timeout([state], 30, embedded=False).hint or ""
    assert "ask the human to restart it in their Neovim: `:LspRestart basedpyright`" in human
    assert "vim.lsp.stop_client(3, true)" in human
    typed = in_neovim(server_timeout, [state], 30, False).hint or ""
    assert "restart it: `:LspRestart basedpyright`" in typed and "ask the human" not in typed


def test_one_hint_per_cause() -> None:
    twice = [health(answer_ms=45_000), health(id=3, answer_ms=45_000)]
    hint = server_timeout(twice, 30, embedded=True).hint or ""
    assert hint.count("busy or hung") == 1
    text = render_error(server_timeout(twice, 30, embedded=True))
    assert text.count("Next:") == 1 and text.count("restart") == 1


def test_an_unexpected_file_system_error_is_not_blamed_on_a_server() -> None:
    refused = as_error(PermissionError(13, "Permission denied", "/x"), "the hover request")
    assert refused.hint is not None and refused.hint.startswith("the file system refused it;")
    assert "malformed answer" in (as_error(KeyError("range"), "the hover request").hint or "")


def test_failure_hints_name_what_the_asking_surface_can_run() -> None:
    gone, unexpected = ClientGone("basedpyright (client 1)"), KeyError("range")
    in_neovim = SURFACE.set("nvim")
    try:
        assert "`:checkhealth lsap`" in (as_error(gone, "the probe").hint or "")
        assert "`:checkhealth lsap`" in (as_error(unexpected, "the probe").hint or "")
    finally:
        SURFACE.reset(in_neovim)
    over_mcp = SURFACE.set("mcp")
    try:
        assert "`lsap_info`" in (as_error(gone, "the probe").hint or "")
        assert "checkhealth" not in (as_error(unexpected, "the probe").hint or "")
    finally:
        SURFACE.reset(over_mcp)
