"""Five numbers over lsap_bridge's code (issue 49), checked by `make check` as a ratchet: each
may shrink, none may grow past its line in `scripts/code_metrics.max` (one `name number` a
line: lower a number there when the code gets better; merges touch one line each).

- server_modules: modules outside `lsap_bridge/servers/` whose code (a string that is no
  docstring, or an import) names a language server: a server's quirk belongs to its adapter.
- exception_roots: exception classes deriving from a built-in exception (the root, `LsapBaseError`).
- long_functions: functions over `MAX_FUNCTION_LINES` lines.
- long_modules: modules over `MAX_MODULE_LINES` lines (as `wc -l` counts them): one too long
  is split along its seams, each part with a docstring saying its one job.
- any: the word `Any` in the package's Python files (`git grep -ow Any -- 'lsap_bridge/*.py'`).

    python scripts/code_metrics.py          # check against the ratchet
    python scripts/code_metrics.py --write  # write the current numbers as the ratchet
"""

from __future__ import annotations

import ast
import builtins
import re
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "lsap_bridge"
RATCHET = Path(__file__).with_suffix(".max")
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 600
TARGETS = {"server_modules": 3, "exception_roots": 1, "long_functions": 0, "long_modules": 0, "any": 100}
# The names a client of a language server goes by (Neovim's `client.name`, the command).
SERVER = re.compile(r"\b(basedpyright|pyright|pylsp|ruff|ts_ls|tsserver|typescript-language-server"
                    r"|vtsls|clangd)\b")
BUILTIN_EXCEPTIONS = frozenset(
    name for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException))


def modules(package: Path = PACKAGE) -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(package.rglob("*.py")):
        yield path, ast.parse(path.read_text(), str(path))


def _docstrings(tree: ast.Module) -> set[int]:
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, kinds) and node.body and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)}


def names_a_server(tree: ast.Module) -> bool:
    """Whether a module's code (not its docstrings or comments) names a language server."""
    docs = _docstrings(tree)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
                and SERVER.search(node.value)):
            return True
        if isinstance(node, ast.ImportFrom) and SERVER.search((node.module or "").replace(".", " ")):
            return True
    return False


def exception_roots(package: Path = PACKAGE) -> list[str]:
    """The classes deriving directly from a built-in exception."""
    return [f"{path.relative_to(package.parent)}:{node.name}"
            for path, tree in modules(package) for node in ast.walk(tree)
            if isinstance(node, ast.ClassDef)
            and any(isinstance(base, ast.Name) and base.id in BUILTIN_EXCEPTIONS for base in node.bases)]


def long_functions(package: Path = PACKAGE) -> list[str]:
    return [f"{path.relative_to(package.parent)}:{node.lineno} {node.name}"
            for path, tree in modules(package) for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and (node.end_lineno or node.lineno) - node.lineno + 1 > MAX_FUNCTION_LINES]


def long_modules(package: Path = PACKAGE) -> list[str]:
    """The modules over `MAX_MODULE_LINES` lines, with their length."""
    lengths = {path: path.read_bytes().count(b"\n") for path in sorted(package.rglob("*.py"))}
    return [f"{path.relative_to(package.parent)}: {n} lines" for path, n in lengths.items() if n > MAX_MODULE_LINES]


def server_modules(package: Path = PACKAGE) -> list[str]:
    servers = package / "servers"
    return [str(path.relative_to(package.parent)) for path, tree in modules(package)
            if servers not in path.parents and names_a_server(tree)]


def any_count(package: Path = PACKAGE) -> int:
    return sum(len(re.findall(r"\bAny\b", path.read_text())) for path in package.rglob("*.py"))


def measure(package: Path = PACKAGE) -> dict[str, tuple[int, list[str]]]:
    """Each number, with what it counts (for the message when it grew)."""
    return {"server_modules": (len(found := server_modules(package)), found),
            "exception_roots": (len(roots := exception_roots(package)), roots),
            "long_functions": (len(long := long_functions(package)), long),
            "long_modules": (len(longer := long_modules(package)), longer),
            "any": (any_count(package), [])}


def read_ratchet(path: Path = RATCHET) -> dict[str, int]:
    pairs = (line.split() for line in path.read_text().splitlines() if line.strip())
    return {name: int(number) for name, number in pairs}


def main(argv: list[str]) -> int:
    numbers = measure()
    if "--write" in argv:
        RATCHET.write_text("".join(f"{name} {n}\n" for name, (n, _) in numbers.items()))
        return 0
    ceiling, failed = read_ratchet(), False
    for name, (number, found) in numbers.items():
        limit = ceiling.get(name, TARGETS[name])
        status = "over its ratchet" if number > limit else "ok"
        print(f"{name}: {number} (ratchet {limit}, target {TARGETS[name]}) {status}")
        if number > limit:
            failed = True
            for item in found:
                print(f"  {item}")
    if failed:
        print(f"a number grew: bring it back down (or, if on purpose, edit {RATCHET.name})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
