"""Every answer within its token budget, on a generated project that overruns any answer
(`big_project.py`: 1,063 diagnostics in one file under basedpyright's "all" checking,
2,000 references, 2,000 symbols, a class of over 2,000 lines), measured with cl100k
(tiktoken), as agents count; every next request an answer suggests is run, and works."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks.cl100k import tokens
from lsap_bridge.models import DEFAULT_MAX_TOKENS
from lsap_bridge.service import Response
from lsap_bridge.surface import SURFACE, Surface
from tests.integration import big_project
from tests.integration.harness import Bridge
from tests.surfaces import CALLS, is_request, read_cli_or_mcp

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    root = big_project.build(tmp_path_factory.mktemp("budget") / "big")
    bridge = Bridge(root, ["basedpyright"])
    yield bridge
    bridge.close()


def text_request(bridge: Bridge, *lines: str) -> str:
    response = bridge.loop.run(bridge.service.handle_text("\n".join(lines)))
    assert response.ok, response.text
    return response.text


HOVERS = ("*** File: big/noisy.py", "@@ class Console:", "^ Console", '@@ console.print("hi")', "^ print")
BEGIN, END = "*** Begin Language Server Request", "*** End Language Server Request"
INJECTED = re.compile(r"^/\*<diagnostics:(error|warning|information|hint):", re.MULTILINE)


def diagnostics_of(bridge: Bridge, path: str) -> dict[str, int]:
    report = bridge.ask(mode="diagnostics", file_path=path, max_items=1)
    return {"total": report["total"], **report["counts"]}


def test_two_hovers_on_a_file_of_a_thousand_diagnostics_stay_in_budget_and_page(big: Bridge) -> None:
    counts = diagnostics_of(big, "big/noisy.py")
    assert counts["total"] > 500 and 0 < counts["error"] < 50, counts

    # By default: the hovers, every error of the file, the count of the rest and how to see them.
    first = text_request(big, BEGIN, *HOVERS, END)
    assert tokens(first) <= DEFAULT_MAX_TOKENS
    assert "/*<hover:Console>" in first and "/*<hover:print>" in first
    assert len(re.findall(r"^/\*<diagnostics:error:", first, re.MULTILINE)) == counts["error"]
    left = counts["total"] - len(INJECTED.findall(first))
    header = first.split("\n")[1]
    assert header.startswith("*** Diagnostics: ") and f"{left} not shown" in header, header
    assert "`*** Diagnostics: all`" in header

    # With `all`: pages within the budget, each naming the request line of the next.
    seen = 0
    line = "*** Diagnostics: all"
    for _ in range(30):
        page = text_request(big, BEGIN, line, *HOVERS, END)
        assert tokens(page) <= DEFAULT_MAX_TOKENS, line
        assert "/*<hover:Console>" in page
        seen += len(INJECTED.findall(page))
        following = re.search(r"`(\*\*\* Diagnostics: all from (\d+))`", page)
        if following is None:
            break
        assert int(following.group(2)) == seen + 1, (following.group(0), seen)
        line = following.group(1)
    assert seen == counts["total"]
    assert line != "*** Diagnostics: all", "one page held them all: the fixture is too small"


def test_the_budget_is_set_per_request_in_the_text_format(big: Bridge) -> None:
    small = text_request(big, BEGIN, "*** Max Tokens: 1000", "*** Diagnostics: all", *HOVERS, END)
    assert tokens(small) <= 1000
    assert "/*<hover:Console>" in small and "`*** Diagnostics: all from " in small


# Every mode but the edits, as an agent would first ask; and lists asked for at their longest.
DEFAULTS: list[dict[str, Any]] = [
    {"mode": "hover", "locate": "big/symbols.py:Giant"},
    {"mode": "definition", "locate": "big/symbols.py:giant@<|>Giant()"},
    {"mode": "declaration", "locate": "big/symbols.py:giant@<|>Giant()"},
    {"mode": "type_definition", "locate": "big/symbols.py:giant@<|>giant"},
    {"mode": "implementations", "locate": "big/symbols.py:Giant"},
    {"mode": "references", "locate": "big/core.py:hub"},
    {"mode": "references", "locate": "big/core.py:hub", "max_items": 1000},
    {"mode": "outline", "locate": "big/symbols.py"},
    {"mode": "outline", "locate": "big/symbols.py", "max_items": 1000},
    {"mode": "outline", "locate": "big/"},
    {"mode": "search", "query": "function"},
    {"mode": "diagnostics"},
    {"mode": "diagnostics", "max_items": 1000},
    {"mode": "inspect", "locate": "big/core.py:hub"},
    {"mode": "calls", "locate": "big/core.py:hub"},
    {"mode": "types", "locate": "big/symbols.py:Giant"},
    {"mode": "completion", "locate": "big/user_00.py:use_0@total += <|>hub(0)"},
    {"mode": "signature_help", "locate": "big/user_00.py:use_0@hub(<|>0)"},
    {"mode": "inlay_hints", "file_path": "big/user_00.py"},
    {"mode": "locate", "locate": "big/core.py:hub"},
    {"mode": "editor"},
    {"mode": "schema"},
    {"mode": "schema", "modes": ["calls", "code_actions", "diagnostics", "references", "rename", "search"]},
    {"mode": "rename_preview", "locate": "big/core.py:hub", "new_name": "center"},
    {"mode": "batch", "requests": [{"mode": "references", "locate": "big/core.py:hub", "max_items": 1000},
                                   {"mode": "diagnostics", "max_items": 1000}]},
]
SUGGESTED = re.compile(r"`(\{\"mode\":.*?\})`")
# A field to add to the request answered: "ask again with `…`", or what was left out,
# `+6 lines of docs: `"compact": false``.
OPTION = re.compile(r"(?:ask again with|^\+\d+ [^:`\n]*:) `(\"\w+\": [^`]+)`", re.M)


def follow_ups(payload: dict[str, Any], text: str) -> list[dict[str, Any]]:
    """The requests an answer suggests: whole ones, and options to add to the one it answered."""
    found = [json.loads(m) for m in SUGGESTED.findall(text)]
    found += [{**payload, **json.loads("{" + m + "}")} for m in OPTION.findall(text)]
    return found


@pytest.mark.parametrize("payload", DEFAULTS, ids=lambda p: "-".join(str(v) for v in p.values())[:60])
def test_every_mode_answers_within_the_budget_and_its_next_requests_run(big: Bridge, payload: dict[str, Any]) -> None:
    answered = within_budget(big, payload, DEFAULT_MAX_TOKENS)
    # What it suggests, and what those suggest in turn (a definition's `max_code_lines`,
    # then the `max_tokens` that holds that): each valid, run, and within its own budget.
    for request in follow_ups(payload, answered):
        if request["mode"] == "rename_execute":
            continue  # it would edit the project the other requests read
        followed = within_budget(big, request, request.get("max_tokens", DEFAULT_MAX_TOKENS))
        for further in follow_ups(request, followed)[:3]:
            if further["mode"] != "rename_execute":
                within_budget(big, further, further.get("max_tokens", DEFAULT_MAX_TOKENS))


def within_budget(bridge: Bridge, payload: dict[str, Any], budget: int) -> str:
    """The answer, checked: no error, within the budget, and when it was paged or cut for
    the budget, it says how to go on."""
    response = bridge.request(payload)
    assert response.ok, (payload, response.text)
    assert tokens(response.text) <= budget, (payload, response.text[-600:])
    if "budget of" in response.text:
        assert follow_ups(payload, response.text), response.text[-600:]
    return response.text


def strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def on(bridge: Bridge, surface: Surface, payload: dict[str, Any]) -> Response:
    """The answer to a request as one surface asks it: its hints written for that surface."""
    async def asked() -> Response:
        SURFACE.set(surface)
        return await bridge.service.handle(payload)

    return bridge.loop.run(asked())


def read_back(bridge: Bridge, surface: Surface, call: str) -> dict[str, Any]:
    """A suggested call turned into the request its surface would send: the CLI's own
    parser, the MCP tool's arguments, the Lua command parser and the service's `:Lsap` path."""
    if surface != "nvim":
        return read_cli_or_mcp(surface, call)
    mode, _, rest = call[len(":Lsap "):].partition(" ")
    anchor, options = bridge.loop.run(bridge.embedded.gateway.exec_lua(
        "local a, o = require('lsap.commands').parse(...); return { a or vim.NIL, o }", mode, rest))
    command = {"mode": mode, "anchor": anchor, "options": options or {}, "cursor": {}}
    return bridge.loop.run(bridge.service.command_request(command))


def suggested(bridge: Bridge, surface: Surface, text: str) -> list[dict[str, Any]]:
    found = []
    for call in CALLS[surface].findall(text):
        if not is_request(surface, call):
            continue
        found.append(read_back(bridge, surface, call))
    return found


@pytest.mark.parametrize("fmt", ["markdown", "json"])
@pytest.mark.parametrize("surface", ["cli", "mcp", "nvim"])
@pytest.mark.parametrize("payload", DEFAULTS, ids=lambda p: "-".join(str(v) for v in p.values())[:40])
def test_every_answer_keeps_its_budget_and_its_hints_run_on_every_surface(
        big: Bridge, payload: dict[str, Any], surface: Surface, fmt: str) -> None:
    asked = {**payload, "format": fmt}
    answer = on(big, surface, asked)
    assert answer.ok, (surface, asked, answer.text[-600:])
    assert tokens(answer.text) <= DEFAULT_MAX_TOKENS, (surface, asked, answer.text[-600:])
    text = answer.text
    if fmt == "json":
        data = json.loads(text)  # still JSON, cut or not
        cut = data.get("budget_cut")
        if cut is not None:
            assert cut["left_out"] or cut["tokens"], cut
            assert cut["next"] is None or CALLS[surface].fullmatch(f"`{cut['next']}`"), cut
        # Hints inside JSON are phrased for the surface too: the values that are whole calls.
        text = " ".join(f"`{value}`" for value in strings(data) if CALLS[surface].fullmatch(f"`{value}`"))
    elif "budget of" in text:
        assert suggested(big, surface, text), (surface, text[-600:])
    follow = suggested(big, surface, text)
    if payload["mode"] in ("references", "diagnostics", "search", "outline", "rename_preview"):
        assert follow, (surface, fmt, text[-600:])  # 2,000 uses, 1,063 diagnostics: never one page
    for request in follow:
        if request["mode"] in ("rename_execute", "code_action_execute"):
            continue  # it would edit the project the other requests read
        followed = on(big, surface, request)
        assert followed.ok, (surface, request, followed.text[-600:])
        assert tokens(followed.text) <= request.get("max_tokens", DEFAULT_MAX_TOKENS), (surface, request)


def test_a_class_longer_than_any_request_may_ask_for_gets_a_hint_that_is_valid(big: Bridge) -> None:
    # An agent's default (the signature): the outline that lists its members.
    payload = {"mode": "definition", "locate": "big/symbols.py:giant@<|>Giant()"}
    answer = big.request(payload).text
    assert follow_ups(payload, answer) == [{"mode": "outline", "file_path": "big/symbols.py", "symbol_path": "Giant"}]
    assert "method_0" in within_budget(big, follow_ups(payload, answer)[0], DEFAULT_MAX_TOKENS)
    # Its code asked for: the head, its members, and a member's definition.
    payload = {**payload, "max_code_lines": 40}
    answer = big.request(payload).text
    assert "max_code_lines" not in follow_ups(payload, answer)[-1], answer[-800:]
    member = follow_ups(payload, answer)[-1]
    assert member == {"mode": "definition", "locate": "big/symbols.py:Giant.method_0"}
    assert "def method_0(self) -> int:" in within_budget(big, member, DEFAULT_MAX_TOKENS)
    # A class of 1,202 lines: all of it may be asked for, then it is cut to the budget, with
    # the budget that holds it.
    payload = {"mode": "definition", "locate": "big/symbols.py:large@<|>Large()"}
    whole = follow_ups(payload, within_budget(big, payload, DEFAULT_MAX_TOKENS))[-1]
    assert whole == {**payload, "max_code_lines": 1202}
    cut = follow_ups(whole, within_budget(big, whole, DEFAULT_MAX_TOKENS))
    assert [r.get("max_code_lines") for r in cut] == [1202] and cut[0]["max_tokens"] > DEFAULT_MAX_TOKENS
    assert "|         return 399\n```" in within_budget(big, cut[0], cut[0]["max_tokens"])


def test_the_session_budget_comes_from_the_environment_of_the_embedded_neovim(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LSAP_MAX_TOKENS", "1200")  # read by setup()'s default when the session starts
    root = big_project.build(tmp_path / "big")
    bridge = Bridge(root, ["basedpyright"])
    try:
        assert bridge.embedded.gateway.max_tokens == 1200
        answer = bridge.request({"mode": "references", "locate": "big/core.py:hub", "max_items": 1000}).text
        assert tokens(answer) <= 1200 and "within its budget of 1200 tokens" in answer, answer[-400:]
        wider = bridge.request({"mode": "references", "locate": "big/core.py:hub", "max_items": 1000,
                                "max_tokens": 4000}).text
        assert 1200 < tokens(wider) <= 4000 and "within its budget of 4000 tokens" in wider
    finally:
        bridge.close()


def test_a_page_shortened_for_the_budget_costs_no_more_language_server_requests(big: Bridge) -> None:
    payload = {"mode": "references", "locate": "big/core.py:hub", "max_items": 1000}
    stats = big.embedded.gateway.stats

    def lsp_requests(request: dict[str, Any]) -> tuple[int, str]:
        before = stats["lsp_requests"]
        text = big.request(request).text
        return stats["lsp_requests"] - before, text

    lsp_requests({**payload, "max_tokens": 100_000})  # warm: the server's answer known
    whole, text = lsp_requests({**payload, "max_tokens": 100_000})
    assert "budget of" not in text
    shortened, text = lsp_requests(payload)
    assert "keep the answer within its budget of 8000 tokens" in text
    assert shortened == whole
