"""A rename racing another writer: no foreign edit is ever lost (issue 27, item 1).

Another process appends to a file no buffer holds, at a random moment of a rename across
the project. pylsp sends each file as one whole-file replacement computed from the disk;
basedpyright sends one edit per use. Every run must end either with the rename applied and
the foreign line kept, or with a `conflict` and no file of the rename changed: the bridge
proves each file against what it was when the request began (`diskwatch.Basis`), diffs a
whole-file replacement down to its changed lines, and checks the content hash once more
right before the switch.

One warm bridge per server on a small project; each run renames the class to a new name,
so runs follow each other without resetting anything. The first rename goes through the
`rename` mode; the 50 raced ones are kept cheap: the same mode declaration run through
`Session.run` (the basis, the disk sync), the server's own rename answer, and the engine
(`apply_workspace_edit` with the old-name check), without the rename mode's references
and diagnostics before and after (pylsp debounces its lints by half a second).
"""

from __future__ import annotations

import dataclasses
import random
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from lsap_bridge.capabilities.rename.models import METHOD, RenameRequest
from lsap_bridge.edits.apply import apply_workspace_edit
from lsap_bridge.errors import LsapError
from lsap_bridge.models import Report, Request
from lsap_bridge.modes import REGISTRY, Answer
from lsap_bridge.report.pieces import word_at
from lsap_bridge.requests import parse_request
from lsap_bridge.resolve import resolve
from lsap_bridge.session.warm import Session

from .harness import Bridge

pytestmark = pytest.mark.integration

RUNS = 50
USERS = 6  # files using the class
RACED = "pkg/use_3.py"  # the file the other writer appends to (never loaded)

CORE = '''class Widget0:
    """A thing."""

    size = 1


def make() -> Widget0:
    return Widget0()
'''
USE = '''from pkg.core import Widget0, make


def use_{i}(w: Widget0) -> Widget0:
    return make() if w.size else Widget0()
'''


@pytest.fixture(scope="module", params=["pylsp", "basedpyright"])
def bridge(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    root = tmp_path_factory.mktemp(f"race_{request.param}") / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "proj"\nversion = "0"\n')
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "core.py").write_text(CORE)
    for i in range(USERS):
        (root / "pkg" / f"use_{i}.py").write_text(USE.format(i=i))
    bridge = Bridge(root, [request.param])
    yield bridge
    bridge.close()


def texts(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*.py"))}


def unload(bridge: Bridge, path: Path) -> None:
    """The rename's diagnostics opened every file it changed: the raced file goes again, so
    that the server reads it from the disk."""
    bridge.lua("local b = vim.fn.bufnr(...); if b > 0 then vim.api.nvim_buf_delete(b, {force = true}) end",
               str(path))
    assert not bridge.buffer_lines(path)


def rename(bridge: Bridge, old: str, new: str) -> tuple[bool, str, float]:
    """Through the `rename` mode: (applied, the answer's text, seconds taken)."""
    started = time.monotonic()
    response = bridge.request({"mode": "rename", "locate": f"pkg/core.py@class <|>{old}",
                               "new_name": new, "format": "json"})
    return response.ok, response.text, time.monotonic() - started


async def _engine_rename(session: Session, request: Request) -> Answer:
    assert isinstance(request, RenameRequest)
    resolved = await resolve(session, request.locate, METHOD)
    target = resolved.target
    params = session.servers.position_params(target, resolved.doc, resolved.line, resolved.column)
    edit = await session.servers.call_json(target, METHOD, {**params, "newName": request.new_name})
    assert isinstance(edit, dict)
    await apply_workspace_edit(session, edit, target.client, label="rename",
                               replaces=word_at(resolved.line_text, resolved.column))
    return Answer(Report())  # the caller looks at the files


CHEAP = dataclasses.replace(REGISTRY["rename"], run=_engine_rename)


def cheap_rename(bridge: Bridge, old: str, new: str) -> tuple[bool, str, float]:
    """The engine's part of a rename (see the module docstring)."""
    session = bridge.service.session
    request = parse_request({"mode": "rename", "locate": f"pkg/core.py@class <|>{old}",
                             "new_name": new}, session.workspace)
    started = time.monotonic()
    try:
        bridge.loop.run(session.run(CHEAP, request))
    except LsapError as error:
        return False, f"{error.code.value}: {error.message}", time.monotonic() - started
    return True, "", time.monotonic() - started


def test_a_concurrent_write_is_never_lost(bridge: Bridge) -> None:
    server = bridge.servers[0]
    root, raced = bridge.root, bridge.root / RACED
    # A first rename (the mode) warms the server up; a cheap one tells how long one takes.
    applied, text, _ = rename(bridge, "Widget0", "Widget1")
    assert applied, text
    unload(bridge, raced)
    applied, text, took = cheap_rename(bridge, "Widget1", "Widget1b")
    assert applied, text
    name, rng = "Widget1b", random.Random(27)
    outcomes = {"applied, foreign kept": 0, "conflict, nothing changed": 0}
    why: Counter[str] = Counter()  # the conflicts, by what they say
    for run in range(RUNS):
        unload(bridge, raced)
        before, foreign = texts(root), f"FOREIGN_{run} = {run}\n"
        delay = rng.uniform(0, took * 1.2)

        def other_writer(delay: float = delay, foreign: str = foreign) -> None:
            time.sleep(delay)
            with open(raced, "a") as file:  # another agent's append, in place
                file.write(foreign)

        writer = threading.Thread(target=other_writer)
        writer.start()
        new = f"Widget{run + 2}"
        applied, text, _ = cheap_rename(bridge, name, new)
        writer.join()
        after = texts(root)
        assert after[RACED].endswith(foreign), (server, run, delay, after[RACED])
        if applied:
            outcomes["applied, foreign kept"] += 1
            for rel, content in after.items():
                assert not re.search(rf"\b{name}\b", content), (server, run, rel, content)
            assert after[RACED].count(new) == 4, (server, run, after[RACED])
            name = new
        else:
            assert text.startswith("conflict: "), (server, run, text)
            outcomes["conflict, nothing changed"] += 1
            why[re.sub(r"pkg/\S+|Widget\d+|rename", "…", text)[:90]] += 1
            expected = {**before, RACED: before[RACED] + foreign}
            assert after == expected, (server, run, text)
    print(f"\n{server}: {RUNS} runs, foreign write at 0–{took * 1.2:.2f} s: {outcomes}")
    for text, count in why.most_common():
        print(f"  {count} × {text}")
    assert sum(outcomes.values()) == RUNS
