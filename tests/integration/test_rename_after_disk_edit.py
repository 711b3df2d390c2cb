"""A rename right after an agent's own disk edit renames every use, on every server.

The agent queries, edits a file with its own tools while the bridge holds it (a hidden
buffer, or the human's window), then asks for a rename; the bridge brings the buffer up to
date first. Neovim's own reload (`:checktime`) would send the servers didClose + didOpen,
and basedpyright stops counting a file that a client opened before basedpyright had found
it on disk (a module the agent just created, or the file whose opening started the server)
as the project's own once it is closed: its next rename then edits the declaring file
alone, or leaves out the reopened file's uses, while `references` still finds them all.
"""

from __future__ import annotations

import json
import re
import time

import pytest

from tests.conftest import ROOT

from .harness import Bridge, Pool

pytestmark = pytest.mark.integration

TS_SHOP = ROOT / "tests" / "fixtures" / "ts_shop"
PRODUCT_USE = "\n\ndef loyalty_points(product: Product) -> int:\n    return int(product.price)\n"
REWARDS = '''from shop.models import Product


class Reward:
    """Points for a product bought."""

    def __init__(self, product: Product) -> None:
        self.product = product


def reward_for(product: Product) -> Reward:
    return Reward(product)
'''
PERKS = "from shop.rewards import Reward, reward_for\n\n\ndef perk(reward: Reward) -> Reward:\n    return reward\n"
REWARD_USE = "\n\ndef double(reward: Reward) -> Reward:\n    return reward_for(reward.product)\n"


@pytest.fixture
def bridge(request: pytest.FixtureRequest, bridges: Pool) -> Bridge:
    server: str = request.param
    if server == "ts_ls":
        return bridges.take((server,), "ts_shop", TS_SHOP)
    return bridges.take((server,))


def hold(bridge: Bridge, rel: str, held: str) -> None:
    """A hidden buffer the bridge opens for an outline, or the human's window."""
    if held == "window":
        bridge.lua("vim.cmd.edit(vim.fn.fnameescape(...))", str(bridge.root / rel))
    else:
        bridge.ask(mode="outline", file_path=rel)


def references(bridge: Bridge, anchor: str, expected: int | None = None) -> None:
    """The agent's query; a file created on disk counts once the server has indexed it."""
    deadline = time.monotonic() + 20
    while (found := bridge.ask(mode="references", locate=anchor)["total"]) != (expected or found):
        assert time.monotonic() < deadline, f"{found} references, not {expected}"
        time.sleep(0.3)


def agent_appends(bridge: Bridge, rel: str, text: str) -> None:
    path = bridge.root / rel
    path.write_text(path.read_text() + text)


def renamed_everywhere(bridge: Bridge, payload: dict[str, str], old: re.Pattern[str], use: str) -> None:
    """The rename succeeds, its edits cover every use `references` finds (no guard-rail
    report), no file keeps the old name, the agent's new use is renamed, and every buffer
    is its file, unmodified."""
    response = bridge.request({**payload, "format": "json"})
    assert response.ok, response.text
    data = json.loads(response.text)
    assert data["uncovered_total"] == 0, data["uncovered"]
    sources = [p for p in sorted(bridge.root.rglob("*.*")) if p.suffix in (".py", ".ts")]
    for path in sources:
        text = path.read_text()
        assert not old.search(text), (path.name, text)
        if bridge.buffer_lines(path):
            assert bridge.buffer_lines(path) == text.splitlines() and not bridge.modified(path)
    assert sum(use in path.read_text() for path in sources) == 1


@pytest.mark.parametrize(
    ("bridge", "rel", "held"),
    [
        pytest.param("basedpyright", "shop/models.py", "hidden", id="basedpyright-declaring-hidden"),
        pytest.param("basedpyright", "shop/catalog.py", "window", id="basedpyright-using-window"),
        pytest.param("pylsp", "shop/models.py", "hidden", id="pylsp-declaring-hidden"),
        pytest.param("pylsp", "shop/catalog.py", "window", id="pylsp-using-window"),
    ],
    indirect=["bridge"],
)
def test_python_rename_after_an_agents_disk_edit(bridge: Bridge, rel: str, held: str) -> None:
    """`rel` is the first file opened, so the one that starts the server."""
    hold(bridge, rel, held)
    references(bridge, "shop/models.py:Product")
    agent_appends(bridge, rel, PRODUCT_USE)
    # A string annotation ("Product") is jedi's to leave alone; names are not.
    renamed_everywhere(
        bridge,
        {"mode": "rename", "locate": "shop/models.py@class <|>Product", "new_name": "Item"},
        re.compile(r'(?<!")\bProduct\b(?!")'),
        "def loyalty_points(product: Item) -> int:",
    )


REWARD = ({"mode": "rename", "locate": "shop/rewards.py@class <|>Reward", "new_name": "Bonus"},
          REWARD_USE, r"\bReward\b", "def double(reward: Bonus) -> Bonus:")
PRODUCT = ({"mode": "rename", "locate": "shop/models.py@class <|>Product", "new_name": "Item"},
           PRODUCT_USE, r"\bProduct\b", "def loyalty_points(product: Item) -> int:")


@pytest.mark.parametrize("bridge", ["basedpyright"], indirect=True)
@pytest.mark.parametrize(
    ("rename", "held"),
    [pytest.param(REWARD, "hidden", id="declaring-hidden"), pytest.param(PRODUCT, "window", id="using-window")],
)
def test_rename_after_an_agents_disk_edit_of_a_module_it_created(
    bridge: Bridge, rename: tuple[dict[str, str], str, str, str], held: str
) -> None:
    """The agent creates rewards.py (which perks.py imports) while the server runs, opens it
    before the server has found it on disk, queries, edits it and renames a symbol it
    declares, or one it uses: basedpyright without fail."""
    payload, use, old, renamed = rename
    references(bridge, "shop/models.py:Product", 18)
    (bridge.root / "shop" / "rewards.py").write_text(REWARDS)
    (bridge.root / "shop" / "perks.py").write_text(PERKS)
    hold(bridge, "shop/rewards.py", held)
    references(bridge, "shop/rewards.py:Reward", 6)
    agent_appends(bridge, "shop/rewards.py", use)
    renamed_everywhere(bridge, payload, re.compile(old), renamed)


@pytest.mark.parametrize(
    ("bridge", "rel"),
    [pytest.param("ts_ls", "src/pricing.ts", id="declaring"), pytest.param("ts_ls", "src/basket.ts", id="using")],
    indirect=["bridge"],
)
def test_typescript_rename_after_an_agents_disk_edit(bridge: Bridge, rel: str) -> None:
    hold(bridge, rel, "hidden")
    references(bridge, "src/pricing.ts:round")
    agent_appends(bridge, rel, "\nexport const rounded = round(1.234);\n")
    renamed_everywhere(
        bridge,
        {"mode": "rename", "locate": "src/pricing.ts@function <|>round", "new_name": "roundTo"},
        re.compile(r"(?<!\.)\bround\b"),
        "export const rounded = roundTo(1.234);",
    )
