"""Rough edges a new user hit (issue 46): `:Lsap review 1 decision=accept` as the help
writes it, `:help lsap`, and the number of MCP tools the docs promise."""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from lsap_bridge.embedded import nvim_program
from lsap_bridge.mcp_server import tools
from lsap_bridge.service import Service
from lsap_bridge.workspace import Workspace
from tests.conftest import EXAMPLE
from tests.fakes import FakeEditor

ROOT = Path(__file__).resolve().parents[2]
NUMBERS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]


def command(mode: str, anchor: str | None, **options: Any) -> dict[str, Any]:
    service = Service(FakeEditor(lambda call: None), Workspace.of(EXAMPLE))
    typed = {"mode": mode, "anchor": anchor, "options": options,
             "cursor": {"path": str(EXAMPLE / "shop" / "models.py"), "line": 0, "col": 0, "text": ""}}
    request: dict[str, Any] = asyncio.run(service.command_request(typed))
    return request


def test_a_review_id_is_the_id_not_a_file() -> None:
    assert command("review", "1", decision="accept") == {"mode": "review", "id": "1", "decision": "accept"}
    assert command("review", None) == {"mode": "review"}  # not the file under the cursor
    assert command("undo", "3") == {"mode": "undo", "id": "3"}
    assert command("check", "shop/") == {"mode": "check", "file_path": "shop"}


def test_help_lsap_opens_at_the_top_of_the_help(tmp_path: Path) -> None:
    doc = tmp_path / "doc"
    shutil.copytree(ROOT / "doc", doc, ignore=shutil.ignore_patterns("tags"))
    out = tmp_path / "line"
    subprocess.run([nvim_program(), "--headless", "--clean", "--cmd", f"set rtp^={tmp_path}",
                    "-c", f"helptags {doc}", "-c", "help lsap",
                    "-c", f"call writefile([expand('%:t') .. ':' .. line('.')], '{out}')", "-c", "qa!"],
                   check=True, timeout=60, capture_output=True)
    name, line = out.read_text().strip().split(":")
    assert name == "lsap.txt" and int(line) <= 5, (name, line)


def test_the_docs_name_every_mcp_tool_the_server_offers() -> None:
    names = [t["name"] for t in tools()]
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("### MCP: `lsap mcp`"):]
    section = section[:section.index("\n### ", 1)]
    agents = (ROOT / "doc" / "agents.md").read_text()
    agents_intro = agents[:agents.index("\n## ")]
    help_text = (ROOT / "doc" / "lsap.txt").read_text()
    help_mcp = help_text[help_text.index("*lsap-mcp*"):]
    help_mcp = help_mcp[:help_mcp.index("Annotations:")]
    for name in names:
        for where, text in (("README", section), ("doc/agents.md", agents_intro), ("lsap.txt", help_mcp)):
            assert f"`{name}`" in text, f"{where} does not name {name}"
    count = NUMBERS[len(names)]
    assert re.search(rf"\b{count.capitalize()} tools\b", section), f"the README says {count} tools"
    assert f"{count} tools" in agents_intro and f"{count} tools" in help_mcp
