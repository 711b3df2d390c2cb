"""`lsap doctor`'s advice: each missing part gets the command for the way this `lsap` was
installed, and a language's other servers are optional once one of them is found."""

from __future__ import annotations

import sys

import pytest

from lsap_bridge.doctor import add_package, servers


@pytest.mark.parametrize(("prefix", "command"), [
    ("/home/u/.local/share/pipx/venvs/lsap-bridge", "pipx inject lsap-bridge pyright"),
    ("/home/u/.local/share/uv/tools/lsap-bridge", "uv pip install --python {python} pyright"),
    ("/home/u/.cache/uv/archive-v0/Ab12Cd", "add --with pyright to the uvx command"),
    ("/home/u/project/.venv", "{python} -m pip install pyright"),
])
def test_add_package_speaks_the_installer_of_this_lsap(prefix: str, command: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "prefix", prefix)
    assert add_package("pyright") == command.format(python=sys.executable)


def test_servers_mark_the_one_used_and_the_missing_ones() -> None:
    python = {"filetypes": ["python"], "servers": [
        {"name": "basedpyright", "path": "", "package": {"pip": "basedpyright"}},
        {"name": "pylsp", "path": "/bin/pylsp", "package": {"pip": "python-lsp-server"}},
    ]}
    typescript = {"filetypes": ["typescript"], "servers": [
        {"name": "ts_ls", "path": "", "package": {"npm": "typescript typescript-language-server"}},
    ]}
    lines = [part.line() for part in servers([python, typescript])]
    assert lines[0].startswith("optional basedpyright (python) — to add it: ")
    assert lines[0].endswith("-m pip install basedpyright")
    assert lines[1] == "found    pylsp (python, used): /bin/pylsp"
    assert lines[2] == ("missing  ts_ls (typescript) — fix: npm install -g typescript "
                        "typescript-language-server")


def test_servers_chosen_with_lsap_servers_are_the_ones_used() -> None:
    typescript = {"filetypes": ["typescript"], "servers": [
        {"name": "ts_ls", "path": "/bin/typescript-language-server", "package": {"npm": "typescript-language-server"}},
        {"name": "vtsls", "path": "/bin/vtsls", "package": {"npm": "@vtsls/language-server"}},
    ]}
    assert [part.line() for part in servers([typescript], ["vtsls"])] == [
        "found    ts_ls (typescript): /bin/typescript-language-server",
        "found    vtsls (typescript, used): /bin/vtsls",
    ]
    assert servers([typescript])[0].line().startswith("found    ts_ls (typescript, used)")
