"""A check whose answer never reached the agent (issue 44, item 2) on a real Neovim with
basedpyright: it had compared the broken caller, then the session went away before the
answer was delivered. The record did not move on, so the next check reports the break."""

from __future__ import annotations

import pytest

from lsap_bridge import pipeline
from lsap_bridge.errors import ErrorCode, LsapError

from .harness import Bridge, Pool, shop_bridge
from .test_check import BROKEN, SIGNATURE, edit

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def bridge(bridges: Pool) -> Bridge:
    return shop_bridge(bridges)


def test_a_check_lost_before_its_answer_loses_no_break(bridge: Bridge, monkeypatch: pytest.MonkeyPatch) -> None:
    catalog = bridge.root / "shop" / "catalog.py"
    bridge.ask(mode="check")  # whatever came before: the record is now
    edit(catalog, SIGNATURE, BROKEN)
    try:
        with monkeypatch.context() as patched:
            async def gone(*args: object, **kwargs: object) -> None:
                raise LsapError(ErrorCode.SESSION_GONE, "Neovim is gone")  # as the answer was rendered
            patched.setattr(pipeline, "fit", gone)
            lost = bridge.request({"mode": "check", "format": "json"})
        assert lost.error is not None and lost.error.code == ErrorCode.SESSION_GONE
        answered = bridge.ask(mode="check")
    finally:
        edit(catalog, BROKEN, SIGNATURE)
    assert {"path": "shop/catalog.py", "how": "changed"} in answered["changed"]
    new = [(g["path"], d["message"]) for g in answered["groups"] if g["status"] == "new"
           for d in g["diagnostics"] if d["severity"] == "error"]
    assert ("shop/checkout.py", 'Argument missing for parameter "strict"') in new, answered
    bridge.ask(mode="check")  # the fix, answered: the record is as the test found it
