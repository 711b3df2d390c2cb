"""The Lua half's structure, checked by `make check`: the `require` graph of lua/ and plugin/,
module sizes and function lengths (issue 28: layered like the Python half).

A cycle of requires run when a module loads (at its top level) fails the check: loading
either module first breaks. A cycle that passes through a require inside a function (lazy:
it runs later, when both are loaded) works, but ties the modules together: it is reported,
and fails only with `--strict`, as do modules over `MAX_MODULE_LINES` lines and functions
over `MAX_FUNCTION_LINES` lines (generated files, first line "-- Generated", aside).

    python scripts/lua_structure.py [--strict]
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DIRS = ("lua", "plugin")
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60

TOKEN = re.compile(
    r"--\[(?P<ceq>=*)\[.*?\](?P=ceq)\]"  # long comment
    r"|--[^\n]*"  # line comment
    r"|\[(?P<seq>=*)\[(?P<long>.*?)\](?P=seq)\]"  # long string
    r"|'(?P<sq>(?:\\.|[^'\\\n])*)'|\"(?P<dq>(?:\\.|[^\"\\\n])*)\""  # quoted string
    r"|(?P<word>[A-Za-z_][A-Za-z0-9_.:]*)"
    r"|(?P<other>\S)",
    re.DOTALL,
)
OPENERS = {"function", "if", "do", "repeat"}  # `for` and `while` open with their `do`
CLOSERS = {"end", "until"}


@dataclass
class Function:
    name: str
    first: int
    last: int = 0

    @property
    def lines(self) -> int:
        return self.last - self.first + 1


@dataclass
class Module:
    name: str
    path: Path
    lines: int
    eager: set[str] = field(default_factory=set)  # required at load time
    lazy: set[str] = field(default_factory=set)  # required inside a function
    functions: list[Function] = field(default_factory=list)


def module_name(path: Path, root: Path) -> str:
    rel = path.relative_to(root)
    if rel.parts[0] == "plugin":
        return f"plugin/{rel.name}"
    parts = list(rel.with_suffix("").parts[1:])
    if parts[-1] == "init":
        parts.pop()
    return ".".join(parts)


def parse(path: Path, root: Path = ROOT) -> Module:
    """Requires (eager or lazy) and functions with their line spans, from a tokenizer that
    knows comments, strings and block keywords: enough for this code base, not a parser."""
    text = path.read_text()
    module = Module(module_name(path, root), path, text.count("\n") + (not text.endswith("\n")))
    stack: list[Function | None] = []  # open blocks; a Function where a function opened
    previous: list[str] = []  # the last words and symbols, to name a function
    pending_require = 0  # 1: `require` seen, 2: and its `(`
    for match in TOKEN.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        word, other = match.group("word"), match.group("other")
        string = next((match.group(g) for g in ("sq", "dq", "long") if match.group(g) is not None), None)
        if string is not None:
            if pending_require and string.split(".")[0] == "lsap":
                inside = any(block is not None for block in stack)
                (module.lazy if inside else module.eager).add(string)
            pending_require = 0
            previous.append("<string>")
            continue
        if match.group(0).startswith("--"):
            continue
        if word == "require":
            pending_require = 1
        elif other == "(" and pending_require == 1:
            pending_require = 2
        else:
            pending_require = 0
        if word in OPENERS:
            function = Function(_function_name(text, match.start(), previous), line) if word == "function" else None
            if function is not None:
                module.functions.append(function)
            stack.append(function)
        elif word in CLOSERS and stack:
            block = stack.pop()
            if block is not None:
                block.last = line
        previous.append(word or other or "")
        del previous[:-4]
    return module


def _function_name(text: str, at: int, previous: list[str]) -> str:
    """`function M.x(` and `local function x(` by the word after the keyword, `x = function(`
    by the word before."""
    found = re.match(r"function\s+([A-Za-z_][\w.:]*)\s*\(", text[at:at + 200])
    if found:
        return found.group(1)
    if len(previous) >= 2 and previous[-1] == "=":
        return previous[-2]
    return "(anonymous)"


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def modules(root: Path) -> list[Module]:
    out = []
    for directory in DIRS:
        for path in sorted((root / directory).rglob("*.lua")):
            if not path.read_text().startswith("-- Generated"):
                out.append(parse(path, root))
    return out


def main(argv: list[str], root: Path = ROOT) -> int:
    """Print what is wrong; 1 when something fails the check."""
    strict = "--strict" in argv
    found = modules(root)
    eager = {m.name: m.eager for m in found}
    every = {m.name: m.eager | m.lazy for m in found}
    failed = False
    for component in cycles(eager):
        print(f"lua: require cycle at load time (loading breaks): {' ↔ '.join(component)}")
        failed = True
    problems = [f"lua: require cycle through requires inside functions: {' ↔ '.join(c)}" for c in cycles(every)]
    problems += [f"lua: {m.path.relative_to(root)} has {m.lines} lines (over {MAX_MODULE_LINES})"
                 for m in found if m.lines > MAX_MODULE_LINES]
    problems += [f"lua: {m.path.relative_to(root)}:{f.first} {f.name} has {f.lines} lines (over {MAX_FUNCTION_LINES})"
                 for m in found for f in m.functions if f.lines > MAX_FUNCTION_LINES]
    for problem in problems:
        print(problem if strict else f"{problem} [reported; fails with --strict]")
    return 1 if failed or (strict and problems) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
