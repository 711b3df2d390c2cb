"""The language servers are reached only on the warm path (doc/architecture.md, One request,
end to end).

The warm path is what runs inside `Session.run` (a mode's runner) or `Session.run_warm`
(work that is no mode's: a text-format File block opened, a command's step, the cursor of
a `:Lsap` command): there the held texts are guarded and
a stale one runs the work again. Its code lives in the modules of `WARM_PATH`: the
session itself, the capabilities, what only they and those two runners call (`resolve.py`,
`actions/`, `cursor.py`, `report/`). Anywhere else a call of a session's servers' `target`,
`lsp` or `call` (or the gateway's `lsp`, under the session), or of its diagnostics' `of`, is a
way around it, as the text format's executor was (its hovers, renames and diagnostics are
now modes' requests through the pipeline): the test fails naming it.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

from tests.conftest import ROOT

PACKAGE = ROOT / "lsap_bridge"
WARM_PATH = ("session/", "capabilities/", "report/", "resolve.py", "actions/", "cursor.py")
SERVER_CALLS = {"target", "lsp", "call"}


def _names_session(node: ast.expr) -> bool:
    """`session`, `self.session`, `tracker.session`, … (a Session however it is reached)."""
    if isinstance(node, ast.Name):
        return node.id == "session"
    return isinstance(node, ast.Attribute) and node.attr == "session"


def _names_part(node: ast.expr, part: str) -> bool:
    """A session's `part` (`session.servers`, `self.session.diagnostics`, …)."""
    return isinstance(node, ast.Attribute) and node.attr == part and _names_session(node.value)


def server_calls(source: str) -> list[tuple[int, str]]:
    """The calls of a session's servers' `target`/`lsp`/`call`, of its diagnostics' `of` and of a
    gateway's `lsp` in a module's source, with their lines."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        owner, method = node.func.value, node.func.attr
        gateway = isinstance(owner, (ast.Name, ast.Attribute)) and (
            getattr(owner, "id", None) == "gateway" or getattr(owner, "attr", None) == "gateway")
        if ((method in SERVER_CALLS and _names_part(owner, "servers")) or (method == "lsp" and gateway)
                or (method == "of" and _names_part(owner, "diagnostics"))):
            found.append((node.lineno, ast.unparse(node.func)))
    return found


def on_warm_path(path: Path) -> bool:
    relative = path.relative_to(PACKAGE).as_posix()
    return any(relative == place or (place.endswith("/") and relative.startswith(place)) for place in WARM_PATH)


def test_servers_are_reached_only_on_the_warm_path() -> None:
    outside = [f"{path.relative_to(ROOT)}:{line}: {call}(…)"
               for path in sorted(PACKAGE.rglob("*.py")) if not on_warm_path(path)
               for line, call in server_calls(path.read_text())]
    assert outside == [], "LSP reached off the warm path (run it through the pipeline or Session.run_warm):\n" + (
        "\n".join(outside))


def test_the_scan_finds_what_it_looks_for() -> None:
    """The warm path's own modules call the servers (the scan sees those calls), and each way
    around it is found."""
    inside = [path for path in PACKAGE.rglob("*.py") if on_warm_path(path) and server_calls(path.read_text())]
    assert len(inside) >= 10
    assert [call for _, call in server_calls(
        "async def f(session, self, tracker, gateway):\n"
        "    await session.servers.target(p, m)\n"
        "    await self.session.servers.lsp([])\n"
        "    await tracker.session.servers.call(t, m, {})\n"
        "    await self.session.gateway.lsp([])\n"
        "    await tracker.session.diagnostics.of([p], after_sync=True)\n"
        "    await session.texts.document(p)\n"  # not a server call
        "    await runner.servers.call()\n"  # not a session's
    )] == ["session.servers.target", "self.session.servers.lsp", "tracker.session.servers.call",
           "self.session.gateway.lsp", "tracker.session.diagnostics.of"]
    assert not on_warm_path(PACKAGE / "lsreq" / "executor.py")
    assert not on_warm_path(PACKAGE / "service.py")
    assert on_warm_path(PACKAGE / "capabilities" / "rename" / "modes.py")


def coroutines_taken(source: str) -> list[str]:
    """The coroutine functions a module of lsap_bridge/lsreq imports from the capabilities or
    `actions/` (their shared code): a mode's work done around the pipeline."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 2 and node.module and (
                node.module.startswith(("capabilities", "actions"))):
            module = importlib.import_module(f"lsap_bridge.{node.module}")
            found += [f"{node.module}.{alias.name}" for alias in node.names
                      if inspect.iscoroutinefunction(getattr(module, alias.name))]
    return found


def test_the_text_format_runs_modes_not_their_code() -> None:
    """Each text-format operation is a mode's request through the pipeline: lsreq takes from
    the capabilities only what reads their answers (reports, plain functions over them)."""
    taken = {path.name: coroutines_taken(path.read_text()) for path in sorted((PACKAGE / "lsreq").glob("*.py"))}
    assert {name: calls for name, calls in taken.items() if calls} == {}
    # The scan sees such an import.
    assert coroutines_taken("from ..actions.gather import Gathered, gather\n"
                            "from ..actions.choose import kept\n"
                            "from ..capabilities.references import references\n") == [
        "actions.gather.gather", "capabilities.references.references"]
