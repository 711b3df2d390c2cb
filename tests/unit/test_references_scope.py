"""`include_tests: false` (issue 50, item 7): the uses in test files are counted, not
listed, with the request that lists them; the scope grep has when an agent searches the
library's directory only. The default lists them all."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from lsap_bridge.capabilities import REGISTRY
from lsap_bridge.errors import LsapError
from lsap_bridge.gateway import LspAnswer, LspCall
from lsap_bridge.render import render_report
from lsap_bridge.session.warm import Session
from lsap_bridge.workspace import uri_of
from tests.fakes import fake_session

FILES = {
    "pkg/client.py": "def build():\n    return 1\n\n\ndef send():\n    return build()\n",
    "pkg/stream.py": "from pkg.client import build\n\n\ndef stream():\n    return build()\n",
    "tests/test_client.py": "from pkg.client import build\n\n\ndef test_build():\n    assert build() == 1\n",
    "pkg/test_helpers.py": "from pkg.client import build\n\nVALUE = build()\n",
}
FUNCTIONS = {"pkg/client.py": [("build", 0, 1), ("send", 4, 5)], "pkg/stream.py": [("stream", 3, 4)],
             "tests/test_client.py": [("test_build", 3, 4)]}
USES = [("pkg/client.py", 0, 4), ("pkg/client.py", 5, 11), ("pkg/stream.py", 0, 22), ("pkg/stream.py", 4, 11),
        ("tests/test_client.py", 0, 22), ("tests/test_client.py", 4, 11), ("pkg/test_helpers.py", 0, 22),
        ("pkg/test_helpers.py", 2, 8)]


def shop(root: Path) -> Session:
    """The files, and a session whose server answers `USES` for every references call."""
    for path, text in FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)

    def answer(call: LspCall) -> LspAnswer:
        if call.method == "textDocument/documentSymbol":
            path = Path(call.params["textDocument"]["uri"].removeprefix("file://")).relative_to(root).as_posix()
            return LspAnswer(result=[{"name": name, "kind": 12, "range": {
                "start": {"line": first, "character": 0}, "end": {"line": last, "character": 20}}, "selectionRange": {
                "start": {"line": first, "character": 4}, "end": {"line": first, "character": 4 + len(name)}}}
                for name, first, last in FUNCTIONS.get(path, [])])
        if call.method != "textDocument/references":
            return LspAnswer(result=[])
        return LspAnswer(result=[{"uri": uri_of(root / path), "range": {
            "start": {"line": line, "character": column}, "end": {"line": line, "character": column + 5}}}
            for path, line, column in USES])

    return fake_session(root, answer)


def references(root: Path | Session, **options: object) -> tuple[str, dict[str, object]]:
    session = root if isinstance(root, Session) else shop(root)
    capability = REGISTRY["references"]
    request = capability.model.model_validate({"mode": "references", "locate": {
        "file_path": "pkg/client.py", "find": "def <|>build"}, **options})
    report = asyncio.run(session.run(capability, request)).report
    return render_report("references", report), report.model_dump(exclude_none=True)


def test_the_uses_in_test_files_are_counted_not_listed(tmp_path: Path) -> None:
    text, report = references(tmp_path, include_tests=False)
    assert "· 4 references in 2 files" in text, text
    assert "tests/" not in text and "test_helpers" not in text, text
    assert "6| return build()" in text and "### pkg/stream.py > stream\n5| return build()" in text, text
    assert text.rstrip().endswith('+4 in 2 test files: `"include_tests": true`'), text
    assert (report["tests_left_out"], report["test_files_left_out"]) == (4, 2)


def test_a_later_page_says_the_same_counts(tmp_path: Path) -> None:
    """The page after the first lists the rest and still counts what it leaves out."""
    session = shop(tmp_path)
    first, report = references(session, include_tests=False, max_items=1)
    later, _ = references(session, include_tests=False, max_items=1, start_index=1,
                          pagination_id=report["pagination_id"])
    for text in (first, later):
        assert "· 4 references in 2 files" in text and '+4 in 2 test files: `"include_tests": true`' in text, text
    assert "showing 2–2" in later, later


def test_the_last_page_a_page_past_the_end_names_is_answered(tmp_path: Path) -> None:
    """The error for a page past the end keeps the answer for the last page it names, as
    every page does (a later page once got the bare list and failed on it)."""
    session = shop(tmp_path)
    with pytest.raises(LsapError) as past:
        references(session, include_tests=False, max_items=3, start_index=9)
    last = json.loads((past.value.hint or "").split("`")[-2])
    assert last["start_index"] == 3 and last["pagination_id"], last
    text, _ = references(session, **{k: v for k, v in last.items() if k not in ("mode", "locate")})
    assert "showing 4–4" in text and '+4 in 2 test files: `"include_tests": true`' in text, text


def test_by_default_every_use_is_listed(tmp_path: Path) -> None:
    text, report = references(tmp_path)
    assert "· 8 references in 4 files" in text and "### tests/test_client.py > (tests)\n5| assert build() == 1" in text
    assert "include_tests" not in text and "tests_left_out" not in report, text
