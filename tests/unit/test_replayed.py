"""Golden reports made by the real capabilities from real servers' answers: each request of
`tests/replayed.py` runs through the service's own path (validation, the warm-path run, the
report model, its template) over a fake editor answering from `tests/fixtures/recorded/`
(`python -m tests.record` records them). A capability that renames or drops a report field
fails here: the model refuses it, or the template (StrictUndefined) does."""

from __future__ import annotations

import asyncio
import contextvars
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge.capabilities import REGISTRY
from lsap_bridge.errors import ErrorCode, LsapError
from lsap_bridge.gateway import LspAnswer, LspCall
from lsap_bridge.render import render_error, render_json, render_report
from lsap_bridge.requests import parse_request
from lsap_bridge.session.warm import Session
from lsap_bridge.surface import SURFACE
from tests.conftest import EXAMPLE
from tests.fakes import ROOT_MARK, Recording, client, fake_session
from tests.golden import assert_golden, check_report_shape
from tests.replayed import CASES, Case
from tests.surfaces import CALLS, is_request, read_cli_or_mcp


def case_session(case: Case) -> Session:
    """A session over the fake editor as the case sets it up, answering from the recording."""
    recorded = Recording("shop", EXAMPLE)

    def answer(call: LspCall) -> LspAnswer:
        return LspAnswer(case.answers[call.method]) if call.method in case.answers else recorded(call)

    state = json.loads(json.dumps(case.editor).replace(ROOT_MARK, str(EXAMPLE)))
    return fake_session(EXAMPLE, answer, clients=[client(methods=recorded.methods - case.lacking)],
                        indexing=case.indexing, state=state)


def replay(name: str, **answers: Any) -> tuple[str, str]:
    """The case's report as Markdown and as JSON; `answers`: more methods answered by the
    case itself (`textDocument_hover=…`)."""
    case = replace(CASES[name], answers={**CASES[name].answers,
                                         **{k.replace("_", "/", 1): v for k, v in answers.items()}})
    session = case_session(case)
    try:
        request = parse_request(case.request, session.workspace, session.kept.anchors)
        capability = REGISTRY[request.mode]
        result = asyncio.run(session.run(capability, request))
    except LsapError as error:
        return render_error(error), render_error(error, "json")
    return render_report(capability.template, result.report), render_json(request.mode, result.report)


@pytest.mark.parametrize("name", sorted(CASES))
def test_replayed_golden(name: str) -> None:
    """The report in both formats against its reviewed golden files (the JSON is compared
    with what it was, not with the model that dumps it)."""
    text, as_json = replay(name)
    assert check_report_shape(text) == []
    assert_golden(f"replayed/{name}.md", text)
    assert_golden(f"replayed/{name}.json", as_json + "\n")
    data = json.loads(as_json)
    assert "error" in data or data["mode"] == CASES[name].request["mode"]


def test_json_format_carries_the_same_content() -> None:
    text, as_json = replay("references_paged")
    data = json.loads(as_json)
    for group in data["groups"]:
        assert group["lines"][0]["text"] in as_json and group["lines"][0]["text"] in text
    assert data["total"] == 18 and data["next"] and data["pagination_id"]


def test_server_docs_keep_the_report_rules() -> None:
    hover = "```python\n#### not a heading in code\n```\n#### Examples\n```\nf(1)\n```"
    text, _ = replay("inspect", textDocument_hover={"contents": {"kind": "markdown", "value": hover}})
    assert "**Examples**" in text and "#### not a heading in code" in text
    assert "```text\nf(1)\n```" in text
    assert check_report_shape(text) == []


def test_a_pagination_id_of_another_mode_is_an_invalid_request() -> None:
    """A references answer's id given to `diagnostics` (it used to crash with a TypeError)."""
    session = fake_session(EXAMPLE, Recording("shop", EXAMPLE))

    def run(payload: dict[str, Any]) -> Any:
        request = parse_request(payload, session.workspace, session.kept.anchors)
        return asyncio.run(session.run(REGISTRY[request.mode], request))

    first = run(CASES["references_paged"].request).report
    page_id = first.pagination_id
    assert page_id and run({**CASES["references_paged"].request, "start_index": 3,
                            "pagination_id": page_id}).report.start == 4
    with pytest.raises(LsapError) as caught:
        run({"mode": "diagnostics", "file_path": "shop/models.py", "pagination_id": page_id})
    assert caught.value.code is ErrorCode.INVALID_REQUEST
    assert caught.value.message == f"pagination_id {page_id!r} is of a references answer, not of diagnostics"
    assert "leave `pagination_id` out" in (caught.value.hint or "")


def test_a_pagination_id_sent_with_another_anchor_is_an_invalid_request() -> None:
    """The id of `references Product` sent with `references Order` used to answer
    Product's references under Order's header: the id is bound to every field that decides
    the list, and the error names the one that differs."""
    session = fake_session(EXAMPLE, Recording("shop", EXAMPLE))

    def run(payload: dict[str, Any]) -> Any:
        request = parse_request(payload, session.workspace, session.kept.anchors)
        return asyncio.run(session.run(REGISTRY[request.mode], request))

    asked = CASES["references_paged"].request
    page_id = run(asked).report.pagination_id
    other = {**asked, "locate": "shop/models.py:Order", "start_index": 3, "pagination_id": page_id}
    with pytest.raises(LsapError) as caught:
        run(other)
    assert caught.value.code is ErrorCode.INVALID_REQUEST
    assert caught.value.message.startswith(
        f"pagination_id {page_id!r} continues another references request: locate: ")
    assert "Product" in caught.value.message and "Order" in caught.value.message
    with pytest.raises(LsapError) as caught:
        run({**asked, "context_lines": 0, "start_index": 3, "pagination_id": page_id})
    assert "context_lines: 1 there, 0 here" in caught.value.message
    # The page and the format may change.
    assert run({**asked, "max_items": 2, "format": "json", "start_index": 3,
                "pagination_id": page_id}).report.start == 4


@pytest.mark.parametrize("name", ["references", "references_paged"])
def test_a_compact_references_report_loses_no_use(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32: the compact form lists imports and annotation-only uses as `path:line`
    instead of printing them; every use of the JSON answer is still a file and line of the
    Markdown, as in the full form (`compact: false`), which prints them all as code."""
    from benchmarks.peers import bridge_lines as shown
    from benchmarks.references_compact import lost

    text, as_json = replay(name)
    report = json.loads(as_json)
    uses = [(g["path"], u) for g in report["groups"] for u in g["uses"]]
    assert len(uses) == report["end"] - report["start"] + 1, "JSON keeps every location"
    assert lost(text, report) == []
    assert {u.get("kind") for _, u in uses} >= {"import", None}
    monkeypatch.setitem(CASES, "full", replace(CASES[name], request={**CASES[name].request, "compact": False}))
    full_text, full_json = replay("full")
    full = json.loads(full_json)
    assert lost(full_text, full) == [] and "imported in" not in full_text
    pairs = {(path, u["line"]) for path, u in uses}
    assert shown(full_text) & pairs == shown(text) & pairs == pairs, "every use's line, in either form"
    assert len(full_text) > len(text)


def read_back(surface: str, call: str) -> dict[str, Any]:
    """A suggested call as the request its surface sends: the CLI's own parser, the MCP
    tool's arguments, and for an Ex command its `key=value` words (JSON where they parse,
    as the Lua parser converts them) after the anchor."""
    if surface != "nvim":
        return read_cli_or_mcp(surface, call)
    mode, *words = call[len(":Lsap "):].split(" ")
    options: dict[str, Any] = {}
    fields = REGISTRY[mode].model.model_fields
    while words and re.fullmatch(r"[a-z_]+=\S*", words[-1]) and words[-1].split("=")[0] in fields:
        key, _, value = words.pop().partition("=")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    anchor = " ".join(words)
    return {"mode": mode, **({"locate": anchor} if anchor else {}), **options}


# The calls each golden answer suggests (cases and surfaces not named suggest none), so that
# a surface's call pattern or `is_request` that stopped matching cannot pass by following
# nothing (issue 48). On Neovim an invalid request points to `:help`, not to a call.
ONE, TWO = {"cli": 1, "mcp": 1, "nvim": 1}, {"cli": 2, "mcp": 2, "nvim": 2}
SUGGESTED = {"batch": {"cli": 1, "mcp": 1}, "completion_paged": ONE, "inspect_lacking": ONE, "references_paged": ONE,
             "inspect": TWO, "outline_directory_paged": TWO, "rename_preview": TWO}


@pytest.mark.parametrize("surface", ["cli", "mcp", "nvim"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_every_call_a_golden_answer_offers_runs_on_every_surface(name: str, surface: str) -> None:
    """Issue 30: each golden's answer as each surface gets it; every call it suggests is
    read back by that surface's parser and run (on the same recording): never refused as
    invalid. A call whose language-server answers were never recorded cannot be replayed
    here; it must still validate. The calls followed are at least those `SUGGESTED` names."""

    def on_surface() -> str:
        SURFACE.set(surface)  # type: ignore[arg-type]
        return replay(name)[0]

    text = contextvars.copy_context().run(on_surface)
    calls = [call for call in CALLS[surface].findall(text) if is_request(surface, call)]
    for call in calls:
        contextvars.copy_context().run(follow, CASES[name], surface, call)
    assert len(calls) >= SUGGESTED.get(name, {}).get(surface, 0), text


def follow(case: Case, surface: str, call: str) -> str:
    """Run one suggested call on the case's recording: `ran`, `unrecorded` (its servers'
    answers were never recorded: it validated, and that is all that can be shown here),
    or the error code it answered, which is never `invalid_request`."""
    SURFACE.set(surface)  # type: ignore[arg-type]
    session = case_session(case)
    request = parse_request(read_back(surface, call), session.workspace, session.kept.anchors)  # valid as written
    try:
        asyncio.run(session.run(REGISTRY[request.mode], request))
    except LsapError as error:
        assert error.code is not ErrorCode.INVALID_REQUEST, (call, error.message)
        return error.code.value
    except AssertionError as unrecorded:
        assert "no recorded answer" in str(unrecorded), unrecorded
        return "unrecorded"
    return "ran"


@pytest.mark.parametrize("name", sorted(CASES))
def test_neovim_keeps_its_full_forms(name: str) -> None:
    """The agents' forms (issue 50: one title line, members and runs on a line per kind) are
    not Neovim's: its report window keeps the `Anchor:` line, which teaches the anchor form,
    and one row per symbol, each a jump target."""
    token = SURFACE.set("nvim")
    try:
        text, _ = replay(name)
    finally:
        SURFACE.reset(token)
    assert check_report_shape(text) == []
    mode = CASES[name].request["mode"]
    if mode in ("hover", "definition", "type_definition", "types", "calls", "inspect") and "# Error" not in text:
        assert "\n\nAnchor: `" in text, text
    if mode == "outline":
        assert re.search(r"^- \d+\| \w+ `", text, re.M), text


def test_inspect_asks_for_the_calls_before_it_reads_the_definitions_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """After the first batch, the calls go to Neovim before the definition's file is read:
    Neovim answers its calls in turn, and the server computes the calls meanwhile, not
    after the read (benchmarks: section 1's `inspect` row)."""
    session = case_session(CASES["inspect"])
    gateway = session.gateway
    events: list[str] = []
    read, lsp = gateway.read, gateway.lsp

    async def reading(paths: list[Path]) -> dict[Path, Any]:
        events.append("read")
        return await read(paths)

    async def asking(calls: list[LspCall], *args: Any, **kwargs: Any) -> list[LspAnswer]:
        events.extend(call.method for call in calls)
        return await lsp(calls, *args, **kwargs)

    monkeypatch.setattr(gateway, "read", reading)
    monkeypatch.setattr(gateway, "lsp", asking)
    request = parse_request(CASES["inspect"].request, session.workspace, session.kept.anchors)
    asyncio.run(session.run(REGISTRY["inspect"], request))
    after_first = events[events.index("textDocument/prepareCallHierarchy") + 1:]
    assert after_first[:2] == ["callHierarchy/incomingCalls", "callHierarchy/outgoingCalls"], events
