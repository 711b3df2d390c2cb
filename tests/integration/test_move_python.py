"""MOVE_TO_FILE on Python, by symbol, never by substring (basedpyright finds the users):
one-letter and keyword-prefix names (`f`, `d`, `de`, `cl`), a name inside its decorator, the
first, last and only definition of a file, one between imports, names also used as
attributes and keyword arguments. After each move the package still imports and runs, and
its importer imports from the new module. RENAME_TO of the same short names lands on the
name, never on the `f` of `def` or a longer word holding it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.integration.harness import Bridge

pytestmark = pytest.mark.integration


@dataclass(frozen=True)
class Case:
    name: str  # the package
    source: str  # its a.py
    first: str  # the selection's first line, `[@`
    last: str  # and its last, `@]`
    user: str  # its b.py, which imports the moved name and has a `main()`
    moved: str  # the name moved


CASES = [
    Case("one_letter", "def f(x: int) -> int:\n    return x + 1\n\n\nG = 1\n",
         "def f(x: int) -> int:", "return x + 1",
         "from one_letter.a import G, f\n\n\ndef main() -> int:\n    return f(G) + dict(f=1)['f']\n", "f"),
    Case("last_with_import", "import math\n\nG = 1\n\n\ndef d(x: float) -> float:\n    return math.sqrt(x)\n",
         "def d(x: float) -> float:", "return math.sqrt(x)",
         "from last_with_import.a import d\n\n\ndef main() -> float:\n    return d(4.0)\n", "d"),
    Case("only", "def de() -> int:\n    return 1\n",
         "def de() -> int:", "return 1",
         "from only.a import de\n\n\ndef main() -> int:\n    return de()\n", "de"),
    Case("decorated",
         "from functools import lru_cache\n\n\n@lru_cache\ndef cache(n: int) -> int:\n    return n\n\n\n"
         "def other() -> int:\n    return cache(1)\n",
         "@lru_cache", "return n",
         "from decorated.a import cache, other\n\n\ndef main() -> int:\n    return cache(2) + other()\n", "cache"),
    Case("between_imports",
         "import os\n\n\nclass cl:\n    cl = 1\n\n\nimport sys  # noqa: E402\n\n\n"
         "def keep() -> str:\n    return os.sep + sys.platform\n",
         "class cl:", "cl = 1",
         "from between_imports.a import cl, keep\n\n\ndef main() -> str:\n    return keep() + str(cl.cl)\n", "cl"),
]


RENAMED_SOURCE = "def f(de: int = 1) -> int:\n    return de + 1\n\n\ndef d(cl: int) -> int:\n    return f(de=cl)\n"
RENAMED_USER = "from renames.a import d, f\n\n\ndef main() -> int:\n    return f() + d(2) + dict(f=1)['f']\n"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Bridge, Path]]:
    root = tmp_path_factory.mktemp("move_py") / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "proj"\nversion = "0"\n')
    for case in CASES:
        package = root / case.name
        package.mkdir()
        (package / "__init__.py").write_text("")
        (package / "a.py").write_text(case.source)
        (package / "b.py").write_text(case.user)
    (root / "renames").mkdir()
    (root / "renames" / "__init__.py").write_text("")
    (root / "renames" / "a.py").write_text(RENAMED_SOURCE)
    (root / "renames" / "b.py").write_text(RENAMED_USER)
    (root / "cuts.py").write_text("def one() -> int:\n    return 1\n\n\ndef two() -> int:\n    return 2\n")
    bridge = Bridge(root, ["basedpyright"])
    try:
        yield bridge, root
    finally:
        bridge.close()


def runs(root: Path, case: Case) -> subprocess.CompletedProcess[str]:
    code = f"import {case.name}.a, {case.name}.b, {case.name}.c; print({case.name}.b.main())"
    return subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": str(root)})


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_moved_definition_keeps_the_package_importable(project: tuple[Bridge, Path], case: Case) -> None:
    bridge, root = project
    before = subprocess.run([sys.executable, "-c", f"import {case.name}.b; print({case.name}.b.main())"],
                            cwd=root, capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PYTHONPATH": str(root)})
    assert before.returncode == 0, before.stderr
    block = "\n".join([
        "*** Begin Language Server Request", f"*** File: {case.name}/a.py",
        f"[@ {case.first}", f"@] {case.last}", f"! MOVE_TO_FILE {case.name}/c.py",
        "*** End Language Server Request",
    ])
    response = bridge.loop.run(bridge.service.handle_text(block))
    assert response.ok and "Error" not in response.text, response.text
    user = (root / case.name / "b.py").read_text()
    assert f"from {case.name}.c import {case.moved}" in user or f"from .c import {case.moved}" in user, user
    assert f"*** File: {case.name}/b.py" in response.text, response.text  # the importer it rewrote
    moved = (root / case.name / "c.py").read_text()
    assert case.first in moved and case.last in moved, moved
    after = runs(root, case)
    assert after.returncode == 0, (after.stderr, (root / case.name / "a.py").read_text(), user, moved)
    assert after.stdout == before.stdout  # the same program


def test_a_selection_that_cuts_a_statement_names_its_lines_and_the_two_ends(project: tuple[Bridge, Path]) -> None:
    bridge, _root = project
    block = "\n".join([
        "*** Begin Language Server Request", "*** File: cuts.py",
        "[@ def two() -> int:", "@) return 2", "! MOVE_TO_FILE elsewhere.py",
        "*** End Language Server Request",
    ])
    text = bridge.loop.run(bridge.service.handle_text(block)).text
    assert "the selection (lines 5-5) cuts the statement at lines 5-6 in two" in text, text
    assert "`@]` ends the selection with its own line, `@)` just before it" in text, text


def test_renames_of_short_names_land_on_the_name(project: tuple[Bridge, Path]) -> None:
    bridge, root = project
    program = [sys.executable, "-c", "import renames.b; print(renames.b.main())"]
    env = {**os.environ, "PYTHONPATH": str(root)}
    before = subprocess.run(program, cwd=root, capture_output=True, text=True, timeout=60, env=env)
    assert before.returncode == 0, before.stderr
    for line, old, new in [("def f(de: int = 1) -> int:", "f", "g"), ("def g(de: int = 1) -> int:", "de", "depth"),
                           ("def d(cl: int) -> int:", "d", "dd"), ("def dd(cl: int) -> int:", "cl", "count")]:
        response = bridge.text("renames/a.py", f"@@ {line}", f"! {old} RENAME_TO {new}")
        assert response.ok and "/*<error" not in response.text, response.text
    assert (root / "renames" / "a.py").read_text() == (
        "def g(depth: int = 1) -> int:\n    return depth + 1\n\n\n"
        "def dd(count: int) -> int:\n    return g(depth=count)\n")
    assert (root / "renames" / "b.py").read_text().startswith("from renames.a import dd, g\n")
    after = subprocess.run(program, cwd=root, capture_output=True, text=True, timeout=60, env=env)
    assert after.returncode == 0 and after.stdout == before.stdout, after.stderr
    # A name only inside a longer word of the line is refused, naming the line's names.
    refused = bridge.text("renames/a.py", "@@ def dd(count: int) -> int:", "! co RENAME_TO x")
    assert "'co' is not a name on the anchored line (its names: def, dd, count, int)" in refused.text, refused.text
    assert (root / "renames" / "a.py").read_text().startswith("def g(depth")
