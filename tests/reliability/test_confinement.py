"""Workspace confinement on a real Neovim with basedpyright: no request reads or writes
outside the roots, whatever path form it uses, and reports never show outside text.

Outside the scratch root lives a library with a secret; inside, a symlinked `vendor`
directory and a symlinked file lead to it, and a module of the shop imports it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge.edits.apply import apply_workspace_edit
from lsap_bridge.errors import ErrorCode, LsapError
from lsap_bridge.workspace import path_of, uri_of
from tests.integration.harness import Bridge

pytestmark = pytest.mark.integration

SECRET = "top-secret-7731"
LIB = f'''SECRET_VALUE = "{SECRET}"


def secret_helper() -> str:
    """Library documentation: {SECRET}."""
    return SECRET_VALUE
'''
USES = """from vendor.lib import secret_helper


def shout() -> str:
    return secret_helper().upper()


def whisper() -> str:
    return secret_helper().lower()
"""


@pytest.fixture(scope="module")
def outside(bridge: Bridge, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    lib_dir = tmp_path_factory.mktemp("outside")
    (lib_dir / "lib.py").write_text(LIB)
    (lib_dir / "__init__.py").write_text("")
    root = bridge.root
    (root / "vendor").symlink_to(lib_dir, target_is_directory=True)
    (root / "passwd_link.py").symlink_to("/etc/passwd")
    (root / "shop" / "passwd.py").symlink_to("/etc/passwd")
    (root / "shop" / "uses_vendor.py").write_text(USES)
    yield lib_dir
    (root / "vendor").unlink()
    (root / "passwd_link.py").unlink()
    (root / "shop" / "passwd.py").unlink()
    (root / "shop" / "uses_vendor.py").unlink()


def refused(bridge: Bridge, payload: dict[str, Any]) -> str:
    response = bridge.request(payload)
    assert response.error is not None, response.text
    assert response.error.code.value == "outside_workspace", response.text
    assert SECRET not in response.text and "root:x:0" not in response.text
    return response.text


@pytest.mark.parametrize(
    "path",
    [
        "../outside-of-root/lib.py",
        "shop/../../x.py",
        "/etc/passwd",
        "~/.bashrc",
        "vendor/lib.py",
        "passwd_link.py",
        "shop/passwd.py",
    ],
)
@pytest.mark.parametrize("mode", ["locate", "hover", "references", "definition"])
def test_anchor_paths_leading_out_are_refused(
    bridge: Bridge, outside: Path, path: str, mode: str
) -> None:
    text = refused(
        bridge, {"mode": mode, "locate": {"file_path": path, "scope": {"start_line": 1}}}
    )
    assert "outside the workspace" in text
    refused(bridge, {"mode": mode, "locate": f"{path}:1"})  # the string form too


@pytest.mark.parametrize(
    "payload",
    [
        {"mode": "outline", "file_path": "../"},
        {"mode": "outline", "file_path": "/etc"},
        {"mode": "outline", "file_path": "vendor/lib.py"},
        {"mode": "outline", "file_path": "../*.py"},
        {"mode": "diagnostics", "file_path": "vendor/lib.py"},
        {"mode": "diagnostics", "file_path": "/etc/passwd"},
        {"mode": "inlay_hints", "file_path": "passwd_link.py"},
    ],
)
def test_file_modes_refuse_paths_leading_out(
    bridge: Bridge, outside: Path, payload: dict[str, Any]
) -> None:
    refused(bridge, payload)


def test_directory_listings_skip_symlinks_that_lead_out(bridge: Bridge, outside: Path) -> None:
    # ".": vendor/, passwd_link.py and shop/passwd.py; a glob: the links it matches (`**`
    # does not go through links to directories)
    for file_path, skipped in ((".", 3), ("shop", 1), ("shop/*.py", 1), ("**/*.py", 2)):
        response = bridge.request({"mode": "outline", "file_path": file_path, "recursive": True})
        assert response.ok, response.text
        assert "secret_helper" not in response.text and SECRET not in response.text
        assert "passwd_link" not in response.text and "passwd.py" not in response.text
        assert f"+{skipped} skipped: outside the workspace" in response.text, (file_path, response.text)
    assert "shout" in bridge.request({"mode": "outline", "file_path": "shop/uses_vendor.py"}).text


def test_references_leading_out_are_counted_not_shown(bridge: Bridge, outside: Path) -> None:
    response = bridge.request(
        {"mode": "references", "locate": "shop/uses_vendor.py:shout@return <|>secret_helper"}
    )
    assert response.ok, response.text
    assert "shop/uses_vendor.py" in response.text
    assert SECRET not in response.text and "def secret_helper" not in response.text
    assert "lib.py" not in response.text, "not even the outside file's name"
    # the definition (outside) is an external entry, counted
    definition = bridge.request(
        {"mode": "definition", "locate": "shop/uses_vendor.py:shout@return <|>secret_helper"}
    )
    assert SECRET not in definition.text and "return SECRET_VALUE" not in definition.text
    search = bridge.request({"mode": "search", "query": "secret_helper"})
    assert "lib.py" not in search.text and SECRET not in search.text


def test_an_edit_reaching_out_changes_nothing(bridge: Bridge, outside: Path) -> None:
    """A server's WorkspaceEdit that touches a file inside and one through the symlink: the
    whole edit is refused, the inside file included (all or nothing)."""
    uses = bridge.root / "shop" / "uses_vendor.py"
    before_uses, before_lib = uses.read_text(), (outside / "lib.py").read_text()
    rename = bridge.request(
        {
            "mode": "rename",
            "new_name": "renamed_helper",
            "locate": "shop/uses_vendor.py:shout@return <|>secret_helper",
        }
    )
    assert rename.error is not None, "basedpyright renames library symbols nowhere"
    session = bridge.service.session
    client = bridge.loop.run(bridge.embedded.gateway.all_clients())[0]
    span = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    for outside_uri in (
        uri_of(bridge.root / "vendor" / "lib.py"),
        uri_of(outside / "lib.py"),
        "file://" + str(bridge.root) + "/../x.py",
    ):
        edit = {
            "changes": {
                uri_of(uses): [{"range": span, "newText": "# changed\n"}],
                outside_uri: [{"range": span, "newText": "# changed\n"}],
            }
        }
        with pytest.raises(LsapError) as caught:
            bridge.loop.run(apply_workspace_edit(session, edit, client, label="test edit"))
        assert caught.value.code is ErrorCode.OUTSIDE_WORKSPACE
        assert "nothing was changed" in (caught.value.hint or "")
    assert uses.read_text() == before_uses and (outside / "lib.py").read_text() == before_lib
    assert not bridge.lua("return vim.bo[vim.fn.bufnr(...)].modified", str(uses))


@pytest.mark.parametrize("pattern", ["../*", "/etc/*", "~/x", "shop/../../*"])
def test_exclude_files_leading_out_are_refused(bridge: Bridge, outside: Path, pattern: str) -> None:
    refused(
        bridge,
        {
            "mode": "rename",
            "locate": "shop/models.py:Product@class <|>Product",
            "new_name": "Item",
            "exclude_files": [pattern],
        },
    )
    assert "class Product" in (bridge.root / "shop" / "models.py").read_text()


@pytest.mark.parametrize(
    "target", ["../moved.py", "/tmp/moved.py", "vendor/moved.py", "shop/../../moved.py"]
)
def test_move_to_file_targets_leading_out_are_refused(
    bridge: Bridge, outside: Path, target: str
) -> None:
    models = bridge.root / "shop" / "models.py"
    before = models.read_text()
    block = (
        "*** Begin Language Server Request\n*** File: shop/models.py\n"
        "[@ class Product:\n"
        "@] return Product(self.name, round(self.price * (1 - percent / 100), 2))\n"
        f"! MOVE_TO_FILE {target}\n*** End Language Server Request"
    )
    response = bridge.loop.run(bridge.service.handle_text(block))
    assert "outside_workspace" in response.text, response.text
    assert models.read_text() == before
    assert not (outside / "moved.py").exists() and not Path("/tmp/moved.py").exists()
    assert not (bridge.root.parent / "moved.py").exists()


def test_workspace_diagnostics_skip_links_that_lead_out(bridge: Bridge, outside: Path) -> None:
    """`diagnostics` of the whole workspace walks it: a link `shop/passwd.py -> /etc/passwd`
    is counted, never opened in Neovim nor printed."""
    for payload in ({"mode": "diagnostics"}, {"mode": "diagnostics", "file_path": "."}):
        response = bridge.request(payload)
        assert response.ok, response.text
        assert "root:x:0" not in response.text and SECRET not in response.text
        assert "passwd" not in response.text and "lib.py" not in response.text
        assert "+3 skipped: outside the workspace" in response.text, response.text
        data = bridge.ask(**payload)
        assert data["outside"] == 3
    assert_nothing_outside_loaded(bridge, outside)


def assert_nothing_outside_loaded(bridge: Bridge, outside: Path) -> None:
    # Buffers of files (no 'buftype'): the activity log's scratch buffer `lsap://log`, which
    # an agent's call may have made in this Neovim, is no file.
    names = bridge.lua(
        "local out = {}; for _, b in ipairs(vim.api.nvim_list_bufs()) do "
        "if vim.bo[b].buftype == '' then out[#out + 1] = vim.api.nvim_buf_get_name(b) end end; return out")
    for name in names:
        if name:
            real = Path(name).resolve()
            assert real.is_relative_to(bridge.root) and not real.is_relative_to(outside), name
            assert "passwd" not in name, name


def test_text_format_files_leading_out_are_refused(bridge: Bridge, outside: Path) -> None:
    for path in ("../x.py", "vendor/lib.py", "/etc/passwd", "passwd_link.py", "shop/passwd.py"):
        block = (
            f"*** Begin Language Server Request\n*** File: {path}\n@@ def\n^\n"
            "*** End Language Server Request"
        )
        response = bridge.loop.run(bridge.service.handle_text(block))
        assert "outside_workspace" in response.text, response.text
        assert SECRET not in response.text and "root:x:0" not in response.text


MODES_ON_THE_LIBRARY: list[dict[str, Any]] = [
    {"mode": "references", "locate": "shop/uses_vendor.py:shout@return <|>secret_helper"},
    {"mode": "definition", "locate": "shop/uses_vendor.py:shout@return <|>secret_helper"},
    {"mode": "type_definition", "locate": "shop/uses_vendor.py:shout@return <|>secret_helper"},
    {"mode": "declaration", "locate": "shop/uses_vendor.py:shout@return <|>secret_helper"},
    {"mode": "implementations", "locate": "shop/uses_vendor.py:shout@return <|>secret_helper"},
    {"mode": "inspect", "locate": "shop/uses_vendor.py:shout@return <|>secret_helper"},
    {"mode": "inspect", "locate": "shop/uses_vendor.py:shout"},
    {"mode": "calls", "locate": "shop/uses_vendor.py:shout", "direction": "both", "depth": 3},
    {
        "mode": "calls",
        "locate": "shop/uses_vendor.py:shout@return <|>secret_helper",
        "direction": "both",
    },
    {"mode": "types", "locate": "shop/uses_vendor.py:shout@return <|>secret_helper"},
    {"mode": "search", "query": "secret"},
    {"mode": "outline", "file_path": ".", "recursive": True},
    {"mode": "outline", "file_path": "shop/*.py"},
    {"mode": "diagnostics", "file_path": "."},
    {"mode": "diagnostics", "file_path": "shop"},
    {"mode": "diagnostics"},
]


def test_the_bridge_never_reads_or_opens_a_file_outside(bridge: Bridge, outside: Path) -> None:
    """Every path any mode asks Neovim for (text, buffers, LSP requests about a document)
    is inside the workspace, whatever the servers answer about the library outside."""
    gateway = bridge.embedded.gateway
    asked: list[Path] = []
    read, open_, lsp = gateway.read, gateway.open, gateway.lsp

    async def spy_read(paths: list[Path]) -> Any:
        asked.extend(paths)
        return await read(paths)

    async def spy_open(path: Path) -> int:
        asked.append(path)
        return await open_(path)

    async def spy_lsp(calls: list[Any], *args: Any, **kwargs: Any) -> Any:
        for call in calls:
            uri = (call.params.get("textDocument") or {}).get("uri")
            if uri:
                asked.append(path_of(uri))
        return await lsp(calls, *args, **kwargs)

    gateway.read, gateway.open, gateway.lsp = spy_read, spy_open, spy_lsp  # type: ignore[method-assign]
    try:
        for payload in MODES_ON_THE_LIBRARY:
            response = bridge.request(payload)
            # no line of the outside file is shown (a server's hover text about a library
            # symbol, docstring included, is the server's answer, as in the editor)
            assert 'SECRET_VALUE = "' not in response.text, (payload, response.text)
            assert "return SECRET_VALUE" not in response.text, (payload, response.text)
    finally:
        gateway.read, gateway.open, gateway.lsp = read, open_, lsp  # type: ignore[method-assign]
    assert asked, "the spies saw nothing"
    outside_paths = {p for p in asked if not p.resolve().is_relative_to(bridge.root)}
    assert outside_paths == set()
    assert_nothing_outside_loaded(bridge, outside)
