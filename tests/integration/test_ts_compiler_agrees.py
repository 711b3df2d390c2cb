"""Issue 50, item 4: typescript-language-server's diagnostics agree with `tsc` on a code base
that uses `process` with @types/node installed, in each workspace shape: a tsconfig listing
`types`, no tsconfig at all, and a package of a monorepo whose node_modules is at the top.

The "60 Cannot find name 'process'" of the issue came from TypeScript 6 (the workspace's own
node_modules/typescript, which the server prefers to its bundled one): from 6.0 `types`
defaults to `[]`, so @types/node is loaded only when listed, and that TypeScript's own
`tsc -p .` reports the same 60; the `tsc` the comparison ran was a TypeScript 5 from PATH.
The server uses the TypeScript `tsc` here is (the repository's, found on PATH). Without a
tsconfig, tsserver's inferred project takes @types from the session root's node_modules (and
its parents), as `tsc FILE` run at the root does.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from .harness import Bridge

pytestmark = pytest.mark.integration

MODULES = Path(__file__).resolve().parents[2] / "node_modules"
SOURCE = 'export const mode: string = process.env.NODE_ENV ?? "dev";\nexport const n: number = "x";\n'
STRICT = {"strict": True, "noEmit": True}
# shape: (the directory `tsc` runs in, its tsconfig or None); package.json and node_modules
# are at the workspace's root (the session's), as `npm install` puts them.
SHAPES: dict[str, tuple[str, dict[str, object] | None]] = {
    "types": (".", {"compilerOptions": {**STRICT, "types": ["node"]}, "include": ["src"]}),
    "none": (".", None),
    "monorepo": ("packages/a", {"compilerOptions": STRICT, "include": ["src"]}),
}


def _workspace(root: Path, shape: str) -> Path:
    """The shape's files under `root`, with @types/node (and undici-types, which it imports)
    copied from the repository's node_modules (package.json pins them); the project's dir."""
    project, tsconfig = SHAPES[shape]
    (root / project / "src").mkdir(parents=True)
    (root / project / "src" / "env.ts").write_text(SOURCE)
    (root / "package.json").write_text('{"name": "fixture", "private": true, "workspaces": ["packages/*"]}\n')
    if tsconfig is not None:
        (root / project / "tsconfig.json").write_text(json.dumps(tsconfig) + "\n")
    for package in ("@types/node", "undici-types"):
        shutil.copytree(MODULES / package, root / "node_modules" / package)
    return root / project


def _tsc(project: Path) -> set[tuple[str, int, str]]:
    """`tsc`'s errors as (path relative to the project, line, code)."""
    args = ["-p", "."] if (project / "tsconfig.json").is_file() else ["--noEmit", "src/env.ts"]
    out = subprocess.run([str(MODULES / ".bin" / "tsc"), *args], cwd=project, capture_output=True,
                         text=True, check=False).stdout
    return {(m[1], int(m[2]), m[3]) for m in re.finditer(r"^(\S+)\((\d+),\d+\): error TS(\d+)", out, re.M)}


@pytest.fixture(params=list(SHAPES))
def shaped(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Bridge, Path]]:
    project = _workspace(tmp_path / "ws", request.param)
    bridge = Bridge(tmp_path / "ws", ["ts_ls"])
    yield bridge, project
    bridge.close()


def test_diagnostics_agree_with_tsc(shaped: tuple[Bridge, Path]) -> None:
    bridge, project = shaped
    compiler = _tsc(project)
    assert compiler == {("src/env.ts", 2, "2322")}  # the real error; `process` is known
    path = (project / "src" / "env.ts").relative_to(bridge.root).as_posix()
    data = bridge.ask(mode="diagnostics", file_path=path, min_severity="error")
    errors = {("src/env.ts", d["line"], str(d["code"])) for g in data["groups"] for d in g["diagnostics"]}
    assert errors == compiler
