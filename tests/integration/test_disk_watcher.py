"""Disk truth from inotify (issue 32): on a real Neovim with basedpyright, an agent's edit
to a deep file nobody has open is seen by the next request, a request while nothing
changed makes no sync call into Neovim, and where the watches run out the disk watch
scans and the answer says so."""

from __future__ import annotations

from typing import Any

import pytest

from lsap_bridge.diskwatch import DiskWatch
from lsap_bridge.watcher import Watcher

from .harness import Bridge, Pool, shop_bridge
from .test_disk_truth import eventually, ref_count, write

pytestmark = pytest.mark.integration

DEEP = "shop/deep/a/b/c/d/e/f/leaf.py"
USES = "from shop.models import Product\n\n\ndef first(items: list[Product]) -> Product:\n    return items[0]\n"


@pytest.fixture(scope="module")
def bridge(bridges: Pool, tmp_path_factory: pytest.TempPathFactory) -> Bridge:
    # The deep file is in the tree before the servers start, as in a monorepo.
    made = tmp_path_factory.mktemp("watcher-src")
    (made / DEEP).parent.mkdir(parents=True)
    (made / DEEP).write_text(USES)
    return shop_bridge(bridges, also={"shop/deep": made / "shop/deep"})


def syncs(bridge: Bridge) -> list[list[dict[str, Any]]]:
    """Record the sync calls into Neovim from here on (the real call still runs)."""
    gateway = bridge.embedded.gateway
    calls: list[list[dict[str, Any]]] = []
    real = type(gateway).sync

    async def counted(changes: list[dict[str, Any]]) -> list[str] | None:
        calls.append(changes)
        return await real(gateway, changes)

    gateway.sync = counted  # type: ignore[method-assign]
    return calls


def test_a_deep_disk_edit_is_seen_by_the_next_request_and_quiet_costs_no_call(bridge: Bridge) -> None:
    watch = bridge.service.session.servers.watch
    assert watch.scanning is None and watch.covers(str(bridge.root / DEEP))
    anchor = "shop/models.py:Product"
    before = eventually(lambda: ref_count(bridge, anchor), lambda n: n > 0 and bridge.root.joinpath(DEEP).exists())
    calls = syncs(bridge)
    try:
        assert ref_count(bridge, anchor) == before
        assert calls == [], "nothing changed on disk: no sync call into Neovim"
        write(bridge.root / DEEP, USES + "\n\nSPARE = Product\n")
        assert ref_count(bridge, anchor) == before + 1
        assert [[c["uri"].endswith(DEEP) for c in changes] for changes in calls] == [[True]]
        ignored = bridge.root / "node_modules" / "pkg" / "index.py"
        ignored.parent.mkdir(parents=True)
        ignored.write_text("x = 1\n")
        assert ref_count(bridge, anchor) == before + 1
        assert len(calls) == 1, "a change in node_modules/ costs nothing"
    finally:
        del bridge.embedded.gateway.sync  # type: ignore[attr-defined]


def test_where_the_watches_run_out_the_scan_finds_the_edit_and_the_answer_says_so(bridge: Bridge) -> None:
    session = bridge.service.session
    watched = session.servers.watch
    session.servers.watch = DiskWatch(session.workspace, watched.max_size, watcher=Watcher(session.workspace.roots, 0))
    try:
        assert session.servers.watch.scanning == "the directory watches ran out (LSAP_WATCHES=0)"
        session.servers.watch.changes()  # the baseline, as a session takes it
        anchor = "shop/models.py:Product"
        before = ref_count(bridge, anchor)
        write(bridge.root / DEEP, (bridge.root / DEEP).read_text() + "\nMORE = Product\n")
        assert ref_count(bridge, anchor) == before + 1
        text = bridge.request({"mode": "references", "locate": anchor}).text
        assert "> Note: disk changes are found by a scan of up to 10,000 code files per root " \
               "(the directory watches ran out (LSAP_WATCHES=0))" in text, text
        assert "scan" not in bridge.request({"mode": "hover", "locate": anchor}).text, "only where it syncs"
    finally:
        session.servers.watch = watched
        watched.changes()
    assert "scan" not in bridge.request({"mode": "references", "locate": "shop/models.py:Product"}).text
