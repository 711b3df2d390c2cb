"""`check` (issue 14, item 2) on a real Neovim with basedpyright: the agent edits files
with its own tools, and `check` reports the diagnostics its edits added — in the files
that use what it changed, not only in the file it edited — and, once it fixed them, that
they are gone.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks.cl100k import tokens
from lsap_bridge.capabilities import check as check_module
from lsap_bridge.models import DEFAULT_MAX_TOKENS
from tests.golden import check_report_shape

from .harness import TS_SERVERS, Bridge, Pool, shop_bridge

pytestmark = pytest.mark.integration

TS_SHOP = Path(__file__).resolve().parent.parent / "fixtures" / "ts_shop"

SIGNATURE = "def find(name: str, products: list[Product]) -> Product | None:"
BROKEN = "def find(name: str, products: list[Product], strict: bool) -> Product | None:"


@pytest.fixture(scope="module")
def bridge(bridges: Pool) -> Bridge:
    return shop_bridge(bridges)


def edit(path: Path, old: str, new: str) -> None:
    """The agent's own edit, straight to the file."""
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def findings(report: dict[str, Any], status: str) -> list[tuple[str, str, str]]:
    return [(g["path"], d["severity"], d["message"])
            for g in report["groups"] if g["status"] == status for d in g["diagnostics"]]


def test_a_broken_signature_is_reported_in_its_callers_then_gone(bridge: Bridge) -> None:
    catalog = bridge.root / "shop" / "catalog.py"
    first = bridge.ask(mode="check")
    assert first["baseline"] and first["number"] == 1
    assert first["checked"] == 5  # the workspace's code files
    assert first["groups"] == []

    edit(catalog, SIGNATURE, BROKEN)
    broken = bridge.ask(mode="check")
    assert not broken["baseline"]
    assert {"path": "shop/catalog.py", "how": "changed"} in broken["changed"]
    assert "shop/checkout.py" in broken["dependents"]  # it calls find()
    new = findings(broken, "new")
    errors = [(path, message) for path, severity, message in new if severity == "error"]
    # The caller's, not the edited file's (which gets a warning: `strict` is not used yet).
    assert errors and all(path == "shop/checkout.py" for path, _ in errors), new
    assert new[0] == ("shop/checkout.py", "error", 'Argument missing for parameter "strict"')  # errors first
    assert findings(broken, "gone") == []

    edit(catalog, BROKEN, SIGNATURE)
    fixed = bridge.ask(mode="check")
    assert findings(fixed, "new") == [], fixed
    assert sorted(findings(fixed, "gone")) == sorted(new)

    quiet = bridge.ask(mode="check")
    assert quiet["changed"] == [] and quiet["groups"] == []


def test_a_check_runs_once_after_an_edit(bridge: Bridge, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file a check asked about before, edited on disk: its held text is forgotten when
    the servers hear of the change, so the check is not turned away by a stale guard and
    made again (a second wait for the diagnostics to hold)."""
    catalog = bridge.root / "shop" / "catalog.py"
    runs: list[int] = []
    compare = check_module.compare

    async def counted(*args: Any) -> dict[str, Any]:
        runs.append(1)
        return await compare(*args)

    bridge.ask(mode="check")  # whatever came before: the record is now
    monkeypatch.setattr(check_module, "compare", counted)
    for old, new in ((SIGNATURE, BROKEN), (BROKEN, SIGNATURE), (SIGNATURE, BROKEN), (BROKEN, SIGNATURE)):
        edit(catalog, old, new)
        before = len(runs)
        assert bridge.ask(mode="check")["changed"] == [{"path": "shop/catalog.py", "how": "changed"}]
        assert len(runs) - before == 1


def test_the_markdown_report_leads_with_the_new_errors(bridge: Bridge) -> None:
    catalog = bridge.root / "shop" / "catalog.py"
    bridge.ask(mode="check")  # whatever came before: the record is now
    edit(catalog, SIGNATURE, BROKEN)
    try:
        text = bridge.request({"mode": "check"}).text
    finally:
        edit(catalog, BROKEN, SIGNATURE)
    assert re.match(r"# Check \d+: new 1 error, 3 warnings since \d\d:\d\d:\d\d\n", text), text
    assert "### New: shop/checkout.py" in text
    assert "10|         product = find(name, everything())" in text  # the line it is on, numbered
    assert check_report_shape(text) == []
    gone = bridge.request({"mode": "check"}).text
    assert "### Gone: shop/checkout.py" in gone and "### New" not in gone, gone


def test_later_pages_show_the_same_check(bridge: Bridge) -> None:
    catalog = bridge.root / "shop" / "catalog.py"
    bridge.ask(mode="check")
    edit(catalog, SIGNATURE, BROKEN)
    try:
        first = bridge.ask(mode="check", max_items=1, min_severity="warning")  # its warnings listed too
        assert first["total"] == 4 and first["end"] == 1, first
        second = bridge.ask(**{**json.loads(first["next"]), "max_items": 3})
    finally:
        edit(catalog, BROKEN, SIGNATURE)
    assert (second["number"], second["start"], second["end"]) == (first["number"], 2, 4)
    shown = findings(first, "new") + findings(second, "new")
    assert shown[0] == ("shop/checkout.py", "error", 'Argument missing for parameter "strict"')
    after = bridge.ask(mode="check", min_severity="warning")
    assert after["number"] == first["number"] + 1  # the pages were not checks of their own
    assert sorted(findings(after, "gone")) == sorted(shown)


def test_the_human_s_command_checks_what_changed(bridge: Bridge) -> None:
    """`:LsapCheck` alone is not about the current buffer; `:Lsap check shop/` is about shop/."""
    cursor = {"path": str(bridge.root / "shop" / "models.py"), "text": "class Product:", "col": 8, "line": 6}

    def command(**given: Any) -> dict[str, Any]:
        request: dict[str, Any] = bridge.loop.run(
            bridge.service.command_request({"mode": "check", "cursor": cursor, "options": {}, **given}))
        return request

    assert command() == {"mode": "check"}
    assert command(anchor="shop/") == {"mode": "check", "file_path": "shop"}


def test_a_check_line_in_a_request_block(bridge: Bridge) -> None:
    """`*** Check` in the text format: the check after the block's own work."""
    catalog = bridge.root / "shop" / "catalog.py"

    def block(*lines: str) -> str:
        text = "\n".join(["*** Begin Language Server Request", *lines, "*** End Language Server Request"])
        return bridge.loop.run(bridge.service.handle_text(text)).text

    block("*** Check")
    edit(catalog, SIGNATURE, BROKEN)
    try:
        text = block("*** File: shop/checkout.py", "@@ product = find(name, everything())", "^ find", "*** Check")
    finally:
        edit(catalog, BROKEN, SIGNATURE)
    check = text[text.index("\n*** Check\n"):]
    assert "strict: bool" in text[:-len(check)]  # the hover sees the edit
    assert "/*<check>\n# Check " in check and "### New: shop/checkout.py" in check, text
    assert text.endswith("</check>*/\n*** End Language Server Response\n")
    assert "### Gone: shop/checkout.py" in block("*** Check: shop/catalog.py")


def test_a_created_file_is_reported_as_it_is(bridge: Bridge) -> None:
    """No earlier check saw a new file: its diagnostics are shown as current, then recorded."""
    bridge.ask(mode="check")
    created = bridge.root / "shop" / "extra.py"
    created.write_text('COUNT: int = "three"\n')
    try:
        first = bridge.ask(mode="check")
        assert {"path": "shop/extra.py", "how": "created"} in first["changed"]
        current = findings(first, "current")
        assert [(p, s) for p, s, _ in current] == [("shop/extra.py", "error")], first
        assert findings(first, "new") == []
        created.write_text('COUNT: int = 3\n')
        assert findings(bridge.ask(mode="check"), "gone") == current
    finally:
        created.unlink()
        bridge.ask(mode="check")


def test_hundreds_of_new_errors_stay_within_the_budget(bridge: Bridge) -> None:
    """An edit that brings 400 errors: the answer keeps the session's token budget (cl100k),
    and the next page it offers runs, within it too, without making a check of its own."""
    bridge.ask(mode="check")
    many = bridge.root / "shop" / "many.py"
    many.write_text("".join(f'VALUE_{i}: int = "{i}"\n' for i in range(400)))
    try:
        text = bridge.request({"mode": "check", "max_items": 1000}).text
        assert tokens(text) <= DEFAULT_MAX_TOKENS
        assert text.startswith("# Check ") and ": 400 errors in files no check saw before since" in text
        assert "budget of 8000 tokens" in text, text[-400:]
        following = json.loads(re.findall(r"Next page \(\d+–\): `(\{.*?\})`", text)[0])
        again = bridge.request(following).text
        assert tokens(again) <= DEFAULT_MAX_TOKENS
        first, second = (re.match(r"# Check (\d+)", t) for t in (text, again))
        assert first and second and first.group(1) == second.group(1)  # the same check
        shown = [int(n) for n in re.findall(r"^- (\d+):\d+ error", again, re.M)]
        assert shown and min(shown) > max(int(n) for n in re.findall(r"^- (\d+):\d+ error", text, re.M))
    finally:
        many.unlink()
        bridge.ask(mode="check")


def test_a_deleted_module_takes_its_users_along(bridge: Bridge) -> None:
    """A file removed since the last check: its users, found by an earlier check, are checked."""
    promotions = bridge.root / "shop" / "promotions.py"
    extra = bridge.root / "shop" / "sale.py"
    extra.write_text("from .promotions import summer_sale\n\nSALE = summer_sale([])\n")
    saved = promotions.read_text()
    try:
        bridge.ask(mode="check", file_path="shop/promotions.py")  # its users now on record
        promotions.unlink()
        gone = bridge.ask(mode="check")
        assert {"path": "shop/promotions.py", "how": "deleted"} in gone["changed"]
        assert "shop/sale.py" in gone["dependents"]
        assert any(path == "shop/sale.py" and severity == "error"
                   for path, severity, _ in findings(gone, "new")), json.dumps(gone, indent=1)
    finally:
        promotions.write_text(saved)
        extra.unlink()
        bridge.ask(mode="check")


@pytest.fixture(scope="module", params=TS_SERVERS)
def ts(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    root = tmp_path_factory.mktemp("check-ts") / "ts_shop"
    shutil.copytree(TS_SHOP, root)
    bridge = Bridge(root, [request.param])
    yield bridge
    bridge.close()


def test_a_server_that_pushes_its_diagnostics(ts: Bridge) -> None:
    """typescript-language-server publishes diagnostics (no pull): the caller's come once
    it republished them for the change; vtsls's are pulled (lsap_bridge/tsserver.py)."""
    pricing = ts.root / "src" / "pricing.ts"
    old = "export function round(value: number, digits = 2): number {"
    new = "export function round(value: number, digits: number, mode: string): number {"
    first = ts.ask(mode="check")
    # Both files analysed: only then can the next check call an error in them new (a file
    # the baseline left pending is `current`, a cold ts_ls initializing for 13 s on a loaded machine).
    assert first["baseline"] and first["pending"] == [], json.dumps(first, indent=1)
    edit(pricing, old, new)
    broken = ts.ask(mode="check")
    shown = json.dumps(broken, indent=1)  # pending, dependents, groups: why it failed
    assert "src/basket.ts" in broken["dependents"], shown
    errors = [(path, message) for path, severity, message in findings(broken, "new") if severity == "error"]
    assert ("src/basket.ts", "Expected 3 arguments, but got 1.") in errors, shown
    edit(pricing, new, old)
    fixed = ts.ask(mode="check")
    assert findings(fixed, "new") == [], json.dumps(fixed, indent=1)
    assert sorted(findings(fixed, "gone")) == sorted(findings(broken, "new"))
