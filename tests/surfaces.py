"""The calls an answer suggests, as each surface writes them (`surface.phrase`), and the
requests the CLI and an MCP client send for them: what the follow-up runners of
tests/integration/test_budget.py and tests/unit/test_replayed.py read back and run."""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from lsap_bridge.cli import mode_request, parse

# A whole request as each surface writes it, in backticks.
CALLS = {"cli": re.compile(r"`(lsap [^`]+)`"), "mcp": re.compile(r"`(lsap_\w+ \{[^`]+\})`"),
         "nvim": re.compile(r"`(:Lsap [^`]+)`")}
# `lsap` words that say where to look, not what to ask.
NOT_REQUESTS = ("info", "daemon", "doctor", "sessions")


def is_request(surface: str, call: str) -> bool:
    return not (surface == "cli" and call.split(" ")[1] in NOT_REQUESTS)


def read_cli_or_mcp(surface: str, call: str) -> dict[str, Any]:
    """The request a CLI line sends (the CLI's own parser) or an MCP tool call carries."""
    if surface == "cli":
        args = parse(shlex.split(call)[1:])
        return dict(json.loads(args.words[1])) if args.words[0] == "query" else mode_request(args)
    tool, _, arguments = call.partition(" ")
    data = json.loads(arguments)
    return dict(data["request"]) if tool == "lsap_query" else {**data, "mode": tool[len("lsap_"):]}
