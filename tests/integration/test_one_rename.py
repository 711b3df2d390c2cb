"""One rename: the text format's `RENAME_TO` is the `rename` mode (lsap_bridge/pipeline.py).

The same symbol renamed through `lsap rename` (the JSON request the CLI sends) and through
`! X RENAME_TO Y`, each on a fresh copy of the fixture from the warm pool, with real
servers: the same files on disk and in the buffers afterwards, the same warnings (here:
a file the human has unsaved changes in, which the rename changes on disk and in the buffer,
left unsaved) and the same
errors, prepareRename's refusal (of a keyword, of the standard library) included. Every server choice of the text
format's request is made on the warm path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pytest

from lsap_bridge.capabilities.rename.models import RenameReport
from lsap_bridge.capabilities.rename.modes import warnings
from lsap_bridge.locate.anchor import format_anchor
from lsap_bridge.lsreq.lines import symbol_column
from lsap_bridge.lsreq.parser import spot
from lsap_bridge.models import Locate
from tests.conftest import ROOT

from .harness import Bridge, Pool

pytestmark = pytest.mark.integration

TS_SHOP = ROOT / "tests" / "fixtures" / "ts_shop"
_TAG = re.compile(r"/\*<(note|error:\w+)>\n(.*?)\n</\1>\*/", re.DOTALL)


@dataclass(frozen=True)
class Case:
    servers: tuple[str, ...]
    path: str
    line: str  # the anchored line, as written in the file
    symbol: str
    new_name: str
    unsaved: str | None = None  # a file the human has typed in and not saved (a line on top)
    error: str | None = None  # the error code both must give

    @property
    def comment(self) -> str:
        return "// typed, not saved" if self.path.endswith(".ts") else "# typed, not saved"


CASES = {
    "python": Case(("basedpyright",), "shop/models.py", "class Product:", "Product", "Item",
                   unsaved="shop/catalog.py"),
    "python-keyword": Case(("basedpyright",), "shop/models.py", "class Product:", "class", "Item",
                           error="invalid_request"),
    "typescript": Case(("ts_ls",), "src/pricing.ts", "export class Item implements Priced {", "Item",
                       "Product", unsaved="src/basket.ts"),
    # (tsserver takes `class` for the class's name; the standard library it will not rename.)
    "typescript-library": Case(("ts_ls",), "src/pricing.ts", "  const factor = Math.pow(10, digits);",
                               "Math", "Maths", error="invalid_request"),
}


def fresh(bridges: Pool, case: Case) -> Bridge:
    """The fixture's warm bridge, reset, with the human's unsaved line typed in if any."""
    if case.servers == ("basedpyright",):
        bridge = bridges.take(case.servers)
    else:
        bridge = bridges.take(case.servers, "ts_shop", TS_SHOP)
    if case.unsaved:
        bridge.lua("local path, line = ...; local b = vim.fn.bufadd(path); vim.fn.bufload(b); "
                   "vim.api.nvim_buf_set_lines(b, 0, 0, false, {line})",
                   str(bridge.root / case.unsaved), case.comment)
    return bridge


def outcome(bridge: Bridge, case: Case) -> dict[str, Any]:
    """What a rename left: every source file on disk, and the unsaved file's buffer."""
    files = {str(p.relative_to(bridge.root)): p.read_text()
             for p in sorted(bridge.root.rglob("*")) if p.suffix in (".py", ".ts") and p.is_file()}
    buffer = bridge.buffer_lines(bridge.root / case.unsaved) if case.unsaved else None
    return {"files": files, "buffer": buffer}


def anchor(bridge: Bridge, case: Case) -> str:
    """The anchor of the symbol on the line, as `RENAME_TO` places it (`parser.spot`)."""
    lines = (bridge.root / case.path).read_text().splitlines()
    line = lines.index(case.line)
    col = symbol_column(case.line, case.symbol)
    assert col is not None
    return format_anchor(Locate.model_validate(spot(case.path, line, case.line, col)))


def by_mode(bridges: Pool, case: Case) -> tuple[dict[str, Any], dict[str, Any], list[str], dict[str, Any] | None]:
    """The fixture before, and after `lsap rename`: files, warnings, error."""
    bridge = fresh(bridges, case)
    before = outcome(bridge, case)
    response = bridge.request({"mode": "rename", "locate": anchor(bridge, case), "new_name": case.new_name,
                               "format": "json"})
    if not response.ok:
        assert response.error is not None
        return before, outcome(bridge, case), [], response.error.to_dict()
    assert response.answer is not None
    report = response.answer.report
    assert isinstance(report, RenameReport)
    return before, outcome(bridge, case), warnings(report), None


def by_text(bridges: Pool, case: Case) -> tuple[dict[str, Any], list[str], list[tuple[str, str]], list[bool]]:
    bridge = fresh(bridges, case)
    session = bridge.service.session
    warm: list[bool] = []
    target = session.servers.target

    async def watched(*args: Any, **kwargs: Any) -> Any:
        warm.append(session.texts.warm)
        return await target(*args, **kwargs)

    session.servers.target = watched  # type: ignore[method-assign]
    response = bridge.text(case.path, f"@@ {case.line}", f"! {case.symbol} RENAME_TO {case.new_name}")
    assert response.ok, response.text
    marker = f"! {case.symbol} RENAME_TO {case.new_name}\n"  # echoed with its notes, if any
    echo = response.text.split(marker, 1)[1] if marker in response.text else ""
    tags = _TAG.findall(echo.split("\n@@ ", 1)[0].split("\n*** ", 1)[0])
    notes = [body for name, body in tags if name == "note"]
    errors = [(name, body) for name, body in tags if name.startswith("error:")]
    return outcome(bridge, case), notes, errors, warm


@pytest.mark.parametrize("name", list(CASES))
def test_rename_and_rename_to_are_one_rename(bridges: Pool, name: str) -> None:
    case = CASES[name]
    original, files, warned, error = by_mode(bridges, case)
    text_files, notes, errors, warm = by_text(bridges, case)
    assert text_files == files
    assert notes == warned
    assert warm and all(warm), "a server chosen off the warm path"
    if case.error is None:
        assert error is None and errors == []
        assert files != original, "the rename changed nothing"
        assert files["buffer"] is not None and files["buffer"][0] == case.comment
        # The human's file holds both: their line and the new name, left unsaved, and said so.
        assert any(case.new_name in line for line in files["buffer"])
        # On disk too, without the human's line: the disk is never left half renamed.
        on_disk = files["files"][case.unsaved]
        assert on_disk != original["files"][case.unsaved] and case.comment not in on_disk
        assert warned == []
    else:
        assert error is not None and error["code"] == case.error
        assert files == original
        assert errors == [(f"error:{error['code']}", f"{error['message']}\nNext: {error['hint']}")]
        # prepareRename's refusal, not the name check's
        assert f" cannot rename `{case.symbol}` at {case.path}" in error["message"], error
