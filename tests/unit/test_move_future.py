"""A Python move carries what the moved code needs from its module besides imports (issue
50, item 5): the module's `from __future__` imports (without `annotations`, a moved
`str | None` annotation breaks Python 3.8/3.9) and the moved names' `__all__` entries,
into a new module and into one that exists."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import pytest
from lsprotocol import types

from lsap_bridge.capabilities.move import REFERENCES, PythonMove
from lsap_bridge.edits.text import splice
from lsap_bridge.edits.workspace_edit import steps_of
from lsap_bridge.gateway import LspAnswer, LspCall
from lsap_bridge.pysource import DunderAll
from tests.fakes import fake_session

SOURCE = '''"""Helpers."""

from __future__ import annotations

import os

__all__ = [
    "get_environment_proxies",
    "other",
]


def get_environment_proxies() -> dict[str, str | None]:
    return {key: os.environ.get(key) for key in ("HTTP_PROXY", "NO_PROXY")}


def other(value: str | None) -> str:
    return value or ""
'''


def moved(root: Path, target_text: str | None) -> tuple[str, str]:
    """The source's and the target's texts after moving `get_environment_proxies` from
    `pkg/_utils.py` to `pkg/_env.py` (created when `target_text` is None)."""
    package = root / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    source, target = package / "_utils.py", package / "_env.py"
    source.write_text(SOURCE)
    if target_text is not None:
        target.write_text(target_text)

    def answer(call: LspCall) -> LspAnswer:
        return LspAnswer(result=[])  # no other module uses the name

    session = fake_session(root, answer)
    lines = SOURCE.splitlines()
    start = lines.index("def get_environment_proxies() -> dict[str, str | None]:")

    async def plan() -> types.WorkspaceEdit:
        at = await session.servers.target(source, REFERENCES)
        return await PythonMove(session, at, source, target, start, start + 1, lines).edit()

    edit = asyncio.run(plan())
    texts = {}
    for step in steps_of(edit):
        if step.op is not None:
            continue
        path = Path(step.uri.removeprefix("file://"))
        old = path.read_text().splitlines() if path.exists() else [""]
        texts[path.name] = "\n".join(splice(old, step.edits, "utf-16", path.name).lines)
    return texts["_utils.py"], texts["_env.py"]


def test_a_new_module_starts_with_the_future_imports_and_exports_the_moved_name(tmp_path: Path) -> None:
    source, target = moved(tmp_path, None)
    tree = ast.parse(target)
    first = tree.body[0]
    assert isinstance(first, ast.ImportFrom) and first.module == "__future__", target
    assert [a.name for a in first.names] == ["annotations"]
    assert "__all__ = [\"get_environment_proxies\"]" in target, target
    assert "import os" in target and "def get_environment_proxies()" in target
    # The old module keeps its own future import and no longer exports the moved name.
    assert "from __future__ import annotations" in source
    assert "get_environment_proxies" not in source, source
    assert '__all__ = [\n    "other",\n]' in source, source


def test_an_existing_module_gets_the_future_import_after_its_docstring_and_the_entry(tmp_path: Path) -> None:
    _source, target = moved(tmp_path, '"""Environment."""\n\nimport sys\n\n__all__ = ["platform"]\n\n\n'
                                      "def platform() -> str:\n    return sys.platform\n")
    tree = ast.parse(target)
    assert isinstance(tree.body[1], ast.ImportFrom) and tree.body[1].module == "__future__", target
    assert '__all__ = ["platform", "get_environment_proxies"]' in target, target
    assert target.count("from __future__") == 1


@pytest.mark.parametrize(("text", "without", "adding"), [
    ('__all__ = ["a", "b"]', '__all__ = ["a"]', '__all__ = ["a", "b", "c"]'),
    ("__all__ = ('b',)", "__all__ = ()", "__all__ = ('b', 'c', 'a',)"),
    ('__all__ = [\n    "b",\n    "a",\n]', '__all__ = [\n    "a",\n]', '__all__ = [\n    "b",\n    "a",\n    "c",\n]'),
    ('__all__ = ["b", "a"]', '__all__ = ["a"]', '__all__ = ["b", "a", "c"]'),
])
def test_entries_leave_and_join_in_the_files_own_layout(text: str, without: str, adding: str) -> None:
    exported = DunderAll(0, text.count("\n"), text)
    assert exported.without({"b"}) == without
    quote = "'" if "'" in text else '"'
    assert exported.adding([f"{quote}c{quote}", f"{quote}a{quote}"]) == adding
