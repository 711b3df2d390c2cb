"""The worked session of doc/agents.md is real output: run again on a copy of
examples/shop with basedpyright, each command's report is the one the guide shows (times
of day and page ids aside; a report the guide cuts with `…` is compared up to there)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge.cli import mode_request, parse
from lsap_bridge.surface import SURFACE
from tests.conftest import ROOT

from .harness import Bridge, Pool, shop_bridge

pytestmark = pytest.mark.integration

GUIDE = ROOT / "doc" / "agents.md"
PAGE_ID = r"pagination_id=([0-9a-f]+)"
# The agent's own edits, made between the commands that follow them in the guide.
EDITS = {
    2: ("shop/catalog.py", [
        ("def find(name: str, products: list[Product]) -> Product | None:\n"
         '    """The product with this name, if any."""',
         "def find(name: str, products: list[Product], *, exact: bool) -> Product | None:\n"
         '    """The product with this name, if any; `exact=False` ignores case."""'),
        ("        if product.name == name:",
         "        if product.name == name or (not exact and product.name.lower() == name.lower()):"),
    ]),
    3: ("shop/checkout.py", [("find(name, everything())", "find(name, everything(), exact=False)")]),
}


@pytest.fixture(scope="module")
def bridge(bridges: Pool) -> Bridge:
    return shop_bridge(bridges)


def session() -> list[tuple[str, str]]:
    """The guide's commands and the reports it shows for them, in order."""
    text = GUIDE.read_text()
    blocks = re.findall(r"^````text\n(\$ lsap .*?)^````$", text, re.M | re.S)
    out = []
    for block in blocks:
        for command in re.split(r"^(?=\$ lsap )", block, flags=re.M):
            if command:
                line, _, report = command.partition("\n")
                out.append((line[2:], report.strip("\n")))
    return out


def request(command: str) -> dict[str, Any]:
    """The request a guide's `lsap` command line sends, through the CLI's own parsing."""
    return mode_request(parse(shlex.split(command)[1:]))


async def as_cli(bridge: Bridge, payload: dict[str, Any]) -> str:
    """The report as `lsap` gets it: follow-ups written as `lsap` commands."""
    SURFACE.set("cli")
    return (await bridge.service.handle(payload)).text


def normal(report: str) -> str:
    report = re.sub(r"\b\d\d:\d\d:\d\d\b", "HH:MM:SS", report)
    # Said only while the server still analyses the edit just checked: a matter of timing,
    # which the guide's worked session cannot show.
    report = re.sub(r"> Note: the index may be incomplete \(.*\n\n?", "", report)
    return re.sub(PAGE_ID, "pagination_id=ID", report)


def test_the_worked_session_is_what_lsap_answers(bridge: Bridge) -> None:
    steps = session()
    assert [command for command, _ in steps][:3] == [
        "lsap check", "lsap inspect 'shop/catalog.py:find'", "lsap check"]
    checks = 0
    ids: dict[str, str] = {}
    for command, shown in steps:
        if command == "lsap check":
            checks += 1
            if checks in EDITS:
                name, changes = EDITS[checks]
                path: Path = bridge.root / name
                text = path.read_text()
                for old, new in changes:
                    assert old in text
                    text = text.replace(old, new)
                path.write_text(text)
        payload = request(command)
        if "pagination_id" in payload:
            payload["pagination_id"] = ids[payload["pagination_id"]]
        answer = bridge.loop.run(as_cli(bridge, payload)).strip("\n")
        for theirs, ours in zip(re.findall(PAGE_ID, shown), re.findall(PAGE_ID, answer), strict=False):
            ids[theirs] = ours
        if shown.endswith("…"):
            assert normal(answer).startswith(normal(shown[:-1])), (command, answer)
        else:
            assert normal(answer) == normal(shown), (command, answer)
    assert checks == 3
