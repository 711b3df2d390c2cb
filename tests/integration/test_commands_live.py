"""Commands through the remote plugin and the real service, in a Neovim installed as
documented with basedpyright: a range, the bang form's quickfix list, the picker."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pynvim
import pytest

from tests.conftest import EXAMPLE

from .nvim_home import make_home, wait_for

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("live") / "shop"
    shutil.copytree(EXAMPLE, root)
    return root


@pytest.fixture(scope="module")
def nvim(tmp_path_factory: pytest.TempPathFactory, project: Path) -> Iterator[pynvim.Nvim]:
    home = make_home(tmp_path_factory.mktemp("home"))
    home.register()
    nvim = home.attach(project)
    yield nvim
    nvim.close()


def report(nvim: pynvim.Nvim, title: str) -> list[str]:
    """The report buffer once its first line is `title` (reports replace each other)."""

    def shown() -> list[str]:
        if nvim.call("bufnr", "lsap://report") < 0:
            return []
        lines: list[str] = nvim.call("getbufline", "lsap://report", 1, "$")
        return lines if lines[0].startswith(title) else []

    return wait_for(shown, 90, f"a report titled {title!r}")


def test_range_becomes_a_line_scope(nvim: pynvim.Nvim) -> None:
    nvim.command("edit shop/checkout.py")
    nvim.command("7,10Lsap inlay_hints")
    lines = report(nvim, "# Inlay hints: shop/checkout.py:7")
    assert "Anchor: `shop/checkout.py:7,11`" in lines
    numbered = [m.group(1) for line in lines if (m := re.match(r"(\d+)\|", line))]
    assert numbered == ["7", "8", "9", "10"]
    assert any("order/*<inlay>: Order</inlay>*/ = Order()" in line for line in lines)


def test_bang_fills_the_quickfix_list(nvim: pynvim.Nvim, project: Path) -> None:
    nvim.command("LsapReferences! shop/models.py:Product")
    title = wait_for(lambda: nvim.call("getqflist", {"title": 1})["title"], 90, "a quickfix list")
    assert title == "lsap references"
    items = nvim.call("getqflist")
    places = {(nvim.call("expand", f"#{i['bufnr']}:p"), i["lnum"], i["col"]) for i in items}
    catalog = (project / "shop" / "catalog.py").read_text().splitlines()
    line = next(n for n, text in enumerate(catalog, 1) if text.startswith("CROISSANT"))
    assert (
        str(project / "shop" / "catalog.py"),
        line,
        catalog[line - 1].index("Product") + 1,
    ) in places
    assert len(items) >= 10
    nvim.command("cclose")


def test_picker_runs_the_chosen_mode_at_the_cursor(nvim: pynvim.Nvim) -> None:
    nvim.command("only | edit shop/checkout.py")
    nvim.call("cursor", 8, 13)  # `Order()` in checkout()
    nvim.exec_lua("vim.ui.select = function(items, opts, choose) choose('hover') end")
    nvim.command("Lsap")
    lines = report(nvim, "# Hover: `Order`")
    assert any(line.startswith("Anchor: `shop/checkout.py:checkout@") for line in lines)
