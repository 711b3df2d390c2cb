"""A language server's quirks live in its adapter alone (issue 49): a new server is one module
in `lsap_bridge/servers/`, found by the registry with no change elsewhere. Shown with a fake
server, `fakels`, whose adapter says it lacks the rename it announces and that its index is
slow; the bridge then acts on both, and on nothing for a server without an adapter."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lsap_bridge import servers
from lsap_bridge.capabilities import REGISTRY
from lsap_bridge.editor import Client
from lsap_bridge.gateway import LspAnswer, LspCall
from lsap_bridge.render import render_report
from lsap_bridge.servers import registry
from lsap_bridge.service import Service
from lsap_bridge.workspace import Workspace
from tests.fakes import METHODS, FakeEditor, fake_session

FAKELS = '''"""fakels: announces rename but cannot do it; its index takes two minutes."""

from .adapter import Adapter

ADAPTER = Adapter(names=("fakels",), lacks=frozenset({"textDocument/rename", "textDocument/prepareRename"}),
                  young=120.0)
'''


@pytest.fixture
def fakels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """`fakels.py` as if dropped into lsap_bridge/servers/ (a folder of the package's path)."""
    folder = tmp_path / "adapters"
    folder.mkdir()
    (folder / "fakels.py").write_text(FAKELS)
    servers.__path__.append(str(folder))
    monkeypatch.setattr(registry, "_BY_NAME", {})
    try:
        yield
    finally:
        servers.__path__.remove(str(folder))
        sys.modules.pop("lsap_bridge.servers.fakels", None)


def client(name: str, age: float | None = None) -> Client:
    started = None if age is None else time.monotonic() - age
    return Client(1, name, "utf-16", METHODS, filetypes=frozenset({"python"}), started=started)


def test_the_new_module_is_found_and_the_others_keep_theirs(fakels: None) -> None:
    assert registry.adapter_for("fakels").young == 120.0
    assert registry.adapter_for("vtsls").pulls_through_tsserver
    assert registry.adapter_for("otherls") is registry.DEFAULT


def renamed(root: Path, name: str) -> tuple[str, list[str]]:
    (root / "m.py").write_text("def old():\n    pass\n")
    at = {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 7}}

    def answer(call: LspCall) -> LspAnswer:
        if call.method == "textDocument/documentSymbol":
            return LspAnswer(result=[{"name": "old", "kind": 12, "range": at, "selectionRange": at}])
        return LspAnswer(result=None)

    editor = FakeEditor(answer, clients=[client(name)])
    service = Service(editor, Workspace.of(root))
    response = asyncio.run(service.handle({"mode": "rename", "locate": "m.py:old", "new_name": "new"}))
    return response.text, [call.method for call in editor.asked]


def test_a_rename_it_announces_but_lacks_is_never_sent(fakels: None, tmp_path: Path) -> None:
    text, asked = renamed(tmp_path, "fakels")
    assert "textDocument/rename" not in asked and "textDocument/prepareRename" not in asked
    assert "# Error: unsupported" in text, text
    _, asked = renamed(tmp_path, "otherls")  # the same announcement from a server without an adapter
    assert "textDocument/rename" in asked or "textDocument/prepareRename" in asked


def searched(root: Path, name: str) -> str:
    (root / "m.py").write_text("class Product:\n    pass\n")

    def answer(call: LspCall) -> LspAnswer:
        return LspAnswer(result=[])

    session = fake_session(root, answer, clients=[client(name, age=30.0)])
    capability = REGISTRY["search"]
    request = capability.model.model_validate({"mode": "search", "query": "Product", "kinds": ["class"]})
    return render_report("search", asyncio.run(session.run(capability, request)).report)


def test_a_slow_index_is_young_for_longer(fakels: None, tmp_path: Path) -> None:
    assert "Index may be incomplete: fakels started 30 s ago" in searched(tmp_path, "fakels")
    assert "Index may be incomplete" not in searched(tmp_path, "otherls")

