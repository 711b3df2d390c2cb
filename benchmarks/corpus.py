"""The code bases the benchmark runs on: fetched at run time, never committed.

`rich` 13.9.4 (the sdist from PyPI) for Python, `rxjs` 7.8.1 (its npm tarball ships the
TypeScript sources) for TypeScript, and the repository's own `examples/shop` for the quick
mode; the anchor accuracy adds `click` 8.1.7 (PyPI sdist) and `immer` 10.1.1 (npm, with
its `src/`). Generated files for the scale runs go inside the corpus directory as well.
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent  # benchmarks/: RESULTS.md, .corpus/
REPO = HERE.parent
CORPUS_DIR = HERE / ".corpus"
EXAMPLE = REPO / "examples" / "shop"


@dataclass(frozen=True)
class Corpus:
    """A project root plus the anchors the benchmark asks about in it."""

    name: str
    version: str
    root: Path
    servers: list[str]
    files: str  # glob of the sources, relative to root
    widely_used: str  # an anchor of a widely used class (references, tokens)
    definition: str  # an anchor on a use whose definition lives in another file
    hover: str
    outline: str  # a file path
    language: str = "python"  # the scale runs generate Python files


RICH = ("rich", "13.9.4")
RXJS = ("rxjs", "7.8.1")
CLICK = ("click", "8.1.7")
IMMER = ("immer", "10.1.1")
#: The held-out code bases of `benchmarks.variants` (issue 33): never used to tune the matcher.
HELD_OUT_PYTHON = (("requests", "2.32.3", "src/requests/*.py"), ("jinja2", "3.1.4", "src/jinja2/*.py"))
HELD_OUT_TYPESCRIPT = (("mobx", "6.13.5", "src/**/*.ts"), ("@tanstack/query-core", "5.59.0", "src/*.ts"))


def _extract(archive: Path, into: Path) -> Path:
    with tarfile.open(archive) as tar:
        top = {m.name.split("/", 1)[0] for m in tar.getmembers()}
        tar.extractall(into, filter="data")
    assert len(top) == 1, f"unexpected layout of {archive}: {sorted(top)}"
    return into / top.pop()


@contextmanager
def _fetching() -> Iterator[None]:
    """One fetch into benchmarks/.corpus/ at a time: the test suite's xdist workers may ask
    for the same code base at once, and one must not find another's half-unpacked copy."""
    CORPUS_DIR.mkdir(exist_ok=True)
    with (CORPUS_DIR / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _pypi_sdist(name: str, version: str) -> Path:
    """`pip download` a pinned sdist and unpack it into benchmarks/.corpus/."""
    root = CORPUS_DIR / f"{name}-{version}"
    with _fetching():
        if root.is_dir():
            return root
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
             f"{name}=={version}", "-d", str(CORPUS_DIR)],
            check=True,
        )
        _extract(CORPUS_DIR / f"{name}-{version}.tar.gz", CORPUS_DIR)
    return root


def _npm_package(name: str, version: str) -> Path:
    """`npm pack` a pinned package (these tarballs carry their TypeScript sources); a scoped
    one's tarball and directory drop the `@` and put a `-` for its slash, as npm names it."""
    stem = f"{name.lstrip('@').replace('/', '-')}-{version}"
    root = CORPUS_DIR / stem
    with _fetching():
        if root.is_dir():
            return root
        subprocess.run(
            ["npm", "pack", "--silent", f"{name}@{version}"],
            cwd=CORPUS_DIR,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        extracted = _extract(CORPUS_DIR / f"{stem}.tgz", CORPUS_DIR / "tmp")
        extracted.rename(root)
        shutil.rmtree(CORPUS_DIR / "tmp")
    return root


def fetch_rich() -> Corpus:
    name, version = RICH
    return Corpus(
        name,
        version,
        _pypi_sdist(name, version),
        ["basedpyright"],
        "rich/*.py",
        widely_used="rich/console.py:Console",
        definition="rich/table.py@new_line = <|>Segment.line()",
        hover="rich/console.py:Console.print",
        outline="rich/console.py",
    )


def fetch_rxjs() -> Corpus:
    name, version = RXJS
    return Corpus(
        name,
        version,
        _npm_package(name, version),
        ["ts_ls"],
        "src/internal/**/*.ts",
        widely_used="src/internal/Observable.ts:Observable",
        definition="src/internal/operators/map.ts:map@return <|>operate",
        hover="src/internal/Observable.ts:Observable.lift",
        outline="src/internal/Observable.ts",
        language="typescript",
    )


@dataclass(frozen=True)
class Sources:
    """A code base the anchor accuracy runs on without a language server."""

    name: str
    version: str
    root: Path
    files: str  # glob of the sources, relative to root
    language: str


def anchor_sources() -> list[Sources]:
    """The code bases of the anchor accuracy: rich and click (Python), rxjs and immer
    (TypeScript), each fetched from its registry."""
    rich, rxjs = fetch_rich(), fetch_rxjs()
    return [
        Sources(rich.name, rich.version, rich.root, rich.files, "python"),
        Sources(*CLICK, _pypi_sdist(*CLICK), "src/click/*.py", "python"),
        Sources(rxjs.name, rxjs.version, rxjs.root, rxjs.files, "typescript"),
        Sources(*IMMER, _npm_package(*IMMER), "src/**/*.ts", "typescript"),
    ]


def held_out_sources() -> list[Sources]:
    """The code bases of the held-out anchor benchmark: two Python projects (PyPI sdists)
    and two TypeScript ones (npm tarballs with their sources)."""
    return [
        *(Sources(name, version, _pypi_sdist(name, version), files, "python")
          for name, version, files in HELD_OUT_PYTHON),
        *(Sources(name, version, _npm_package(name, version), files, "typescript")
          for name, version, files in HELD_OUT_TYPESCRIPT),
    ]


def example_copy(into: Path) -> Corpus:
    """The quick mode's tiny corpus: a fresh copy of examples/shop."""
    root = into / "shop"
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(EXAMPLE, root)
    return Corpus(
        "examples/shop",
        "repo",
        root,
        ["basedpyright"],
        "shop/*.py",
        widely_used="shop/models.py:Product",
        definition="shop/checkout.py@cheapest: <|>Product",
        hover="shop/models.py:Product",
        outline="shop/models.py",
    )


# -- generated files for the scale runs ----------------------------------------------------

USES_PER_FILE = 100


def scale_references(root: Path, count: int) -> str:
    """A class used `count` times over files of 100 uses each; returns its anchor."""
    package = root / "lsap_scale"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").touch()
    name = f"Widget{count}"
    (package / f"w{count}.py").write_text(f"class {name}:\n    def ping(self) -> int:\n        return 1\n")
    for index in range(max(1, count // USES_PER_FILE)):
        uses = min(USES_PER_FILE, count - index * USES_PER_FILE)
        body = [f"from lsap_scale.w{count} import {name}\n"]
        for i in range(uses - 1):  # the import above is a use too
            body.append(f"\n\ndef make_{i}() -> object:\n    return {name}()\n")
        (package / f"uses{count}_{index}.py").write_text("".join(body))
    return f"lsap_scale/w{count}.py:{name}"


def scale_outline(root: Path, lines: int, copy: int = 0) -> str:
    """A Python file of about `lines` lines: classes of ten two-line methods (`copy`: another
    file of the same text, for one more cold measurement)."""
    package = root / "lsap_scale"
    package.mkdir(exist_ok=True)
    out: list[str] = []
    index = 0
    while len(out) < lines:
        out.append(f"class Block{index}:")
        for m in range(10):
            out.append(f"    def method_{m}(self, value: int) -> int:")
            out.append(f"        return value + {m}")
        out.append("")
        index += 1
    path = package / (f"big{lines}.py" if not copy else f"big{lines}_{copy}.py")
    path.write_text("\n".join(out[:lines]) + "\n")
    # An identical copy for the raw side, so that both sides are measured cold.
    shutil.copyfile(path, raw_twin(path))
    return path.relative_to(root).as_posix()


def raw_twin(path: Path) -> Path:
    return path.with_name(path.stem + "_raw" + path.suffix)
