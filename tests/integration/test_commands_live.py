"""Commands through the remote plugin and the real service, in a Neovim installed as
documented with basedpyright: a range, the bang form's quickfix list, the picker, every
location-bearing report as a list (<CR> and `]]` to the exact line and column), footers as
Ex commands, anchor completion from the server, and the error for a file no server covers."""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pynvim
import pytest

from tests import stress
from tests.conftest import EXAMPLE

from .nvim_home import make_home, wait_for

pytestmark = pytest.mark.integration

PASTRY = '''"""Products from the oven."""

from .models import Product


class Pastry(Product):
    """Something baked."""
'''


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("live") / "shop"
    shutil.copytree(EXAMPLE, root)
    (root / "shop" / "pastry.py").write_text(PASTRY)  # a subtype, for `types`
    (root / "notes.md").write_text("# Notes\n\nNothing serves Markdown here.\n")
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


def run(nvim: pynvim.Nvim, command: str) -> list[str]:
    """Run a command and wait for its answer (the next report shown, or quickfix list)."""
    nvim.exec_lua("_G.lsap_last = require('lsap.report').history[1]")
    nvim.command(command)
    wait_for(lambda: nvim.exec_lua("return require('lsap.report').history[1] ~= _G.lsap_last"),
             90, f"the answer to {command!r}")
    lines: list[str] = nvim.call("getbufline", "lsap://report", 1, "$")
    return lines


def position_of(path: Path, text: str, word: str) -> tuple[int, int]:
    """Line (1-based) and byte column (0-based) of `word` on the line containing `text`."""
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if text in line:
            return number, len(line[: line.index(word, line.index(text))].encode())
    raise AssertionError(f"{text!r} not in {path}")


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
    line, col = position_of(project / "shop" / "catalog.py", "CROISSANT", "Product")
    assert (str(project / "shop" / "catalog.py"), line, col + 1) in places
    assert len(items) >= 10
    nvim.command("cclose")


def test_picker_runs_the_chosen_mode_at_the_cursor(nvim: pynvim.Nvim) -> None:
    nvim.command("only | edit shop/checkout.py")
    nvim.call("cursor", 8, 13)  # `Order()` in checkout()
    nvim.exec_lua("vim.ui.select = function(items, opts, choose) choose('hover') end")
    nvim.command("Lsap")
    lines = report(nvim, "# Hover: `Order`")
    assert any(line.startswith("Anchor: `shop/checkout.py:checkout@") for line in lines)


# Each location-bearing report: the command, and where its first entry is (file, the text of
# its line, the word the cursor lands on).
LISTS = {
    "references": ("LsapReferences shop/models.py:Product", "shop/catalog.py", "from .models import", "Product"),
    "definition": ("Lsap definition shop/checkout.py:checkout@order = <|>Order()", "shop/models.py",
                   "class Order:", "Order"),
    "outline": ("LsapOutline shop/models.py", "shop/models.py", "class Product:", "Product"),
    "calls": ("LsapCalls shop/models.py:Order.total direction=incoming", "shop/checkout.py",
              "total = order.total()", "total()"),
    "types": ("Lsap types shop/models.py:Product direction=subtypes", "shop/pastry.py", "class Pastry", "Pastry"),
    "search": ("LsapSearch summer_sale", "shop/promotions.py", "def summer_sale", "summer_sale"),
    "diagnostics": ("LsapDiagnostics shop/promotions.py", "shop/promotions.py", "self.percent =", "percent"),
    "implementations": ("Lsap implementations shop/models.py:Product", "shop/models.py", "class Product:",
                        "Product"),
    "rename_preview": ("Lsap rename_preview shop/promotions.py:Promotion.apply new_name=apply_to",
                       "shop/promotions.py", "def apply", "apply"),
}


@pytest.mark.parametrize("mode", list(LISTS))
def test_each_report_is_a_list_to_the_exact_line_and_column(nvim: pynvim.Nvim, project: Path, mode: str) -> None:
    command, path, text, word = LISTS[mode]
    nvim.command("only | edit shop/checkout.py")
    lines = run(nvim, command)
    assert nvim.current.buffer.name == "lsap://report", lines
    line, col = position_of(project / path, text, word)
    nvim.feedkeys("]]", "x", False)  # the first entry
    row = nvim.current.window.cursor[0]
    assert row > 1 and (str(line) in lines[row - 1] or lines[row - 1].startswith("-")), lines[row - 1]
    nvim.feedkeys("]]", "x", False)
    nvim.feedkeys("[[", "x", False)
    assert nvim.current.window.cursor[0] == row  # and back
    nvim.feedkeys(nvim.replace_termcodes("<CR>", True, True, True), "x", False)
    assert Path(nvim.current.buffer.name) == project / path
    assert nvim.current.window.cursor == (line, col), f"{lines[row - 1]!r}"
    # The bang form: the same location first in the quickfix list.
    nvim.command("only")
    run(nvim, command.replace(" ", "! ", 1))
    first = nvim.call("getqflist")[0]
    assert (nvim.call("expand", f"#{first['bufnr']}:p"), first["lnum"], first["col"]) == (
        str(project / path), line, col + 1)
    nvim.command("cclose")


def test_a_command_inside_the_report_works_at_the_entry_under_the_cursor(nvim: pynvim.Nvim) -> None:
    nvim.command("only | edit shop/checkout.py")
    run(nvim, "LsapReferences shop/models.py:Order")
    nvim.feedkeys("]]", "x", False)
    lines = run(nvim, "LsapHover")
    assert lines[0] == "# Hover: `Order`", lines
    assert not any("no such file" in line for line in lines)
    nvim.command("normal! gg")  # a line with no location: said at once, nothing sent
    with pytest.raises(pynvim.NvimError, match="no location on this line of the report"):
        nvim.command("LsapHover")


def test_footers_suggest_the_ex_command_which_runs(nvim: pynvim.Nvim) -> None:
    lines = run(nvim, "LsapReferences shop/models.py:Product max_items=2")
    [footer] = [line for line in lines if line.startswith("Next page")]
    command = re.search(r"`(:Lsap [^`]+)`", footer)
    assert command, footer
    assert command.group(1).startswith(":Lsap references shop/models.py:Product max_items=2 start_index=2 ")
    assert "{" not in footer  # not an agent's JSON
    lines = run(nvim, command.group(1)[1:])
    assert any(", showing 3–4 · " in line for line in lines), lines


@pytest.mark.stress  # "at once": within a second, under stress
def test_a_file_no_server_covers_fails_at_once_naming_the_configs(nvim: pynvim.Nvim) -> None:
    run(nvim, "LsapHover shop/models.py:Product")  # the service is up
    nvim.command("only | edit notes.md")
    nvim.call("cursor", 3, 1)
    started = time.monotonic()
    lines = run(nvim, "LsapReferences")
    elapsed = time.monotonic() - started
    text = "\n".join(lines)
    assert "no language server is attached to notes.md: none is configured for markdown files" in text, text
    assert "basedpyright (python)" in text  # what is enabled, and for what
    stress.figure("a file no server covers: the answer", elapsed, at_most=1.0)
    # A hang bound: 5x the 1 s target, and half the 10 s a wait for a server to attach takes.
    assert elapsed < 5.0, f"{elapsed:.2f} s"


def test_anchor_completion_offers_the_files_symbols_without_waiting(nvim: pynvim.Nvim) -> None:
    nvim.command("only | edit shop/checkout.py")
    line = "Lsap references shop/promotions.py:"
    # The first <Tab> asks and returns at once, with nothing known yet: it did not wait.
    assert nvim.call("getcompletion", line, "cmdline") == []
    offered = wait_for(lambda: nvim.call("getcompletion", line, "cmdline"), 30, "symbol paths")
    assert {"shop/promotions.py:Promotion", "shop/promotions.py:Promotion.apply",
            "shop/promotions.py:summer_sale"} <= set(offered)
    assert nvim.call("getcompletion", line + "Promotion.a", "cmdline") == ["shop/promotions.py:Promotion.apply"]
    # With no anchor yet, the current file comes first.
    assert nvim.call("getcompletion", "LsapReferences ", "cmdline")[0] == "shop/checkout.py"


def test_code_actions_at_the_cursor_and_the_one_the_report_offers(nvim: pynvim.Nvim, project: Path) -> None:
    """`:LsapActions` at the cursor lists the actions there; its footer is the Ex command
    that runs the first one, through the same safe edits."""
    path = project / "shop" / "tidy.py"
    path.write_text("import os\n\n\ndef one() -> int:\n    return 1\n")
    nvim.command("edit shop/tidy.py")
    lines = run(nvim, "LsapActions")
    assert lines[0] == "# Code actions: shop/tidy.py@<|>import os (line 1)", lines  # the cursor as an anchor
    assert any("Add `# pyright: ignore[reportUnusedImport]` · quickfix · basedpyright" in line for line in lines)
    [footer] = [line for line in lines if line.startswith("Run one:")]
    assert "preview=true" in footer
    command = re.search(r"`(:Lsap code_action_execute [0-9a-f]+)`", footer)
    assert command, footer
    lines = run(nvim, command.group(1)[1:])
    assert lines[0] == "# Add `# pyright: ignore[reportUnusedImport]` (quickfix)", lines
    assert path.read_text().startswith("import os  # pyright: ignore[reportUnusedImport]\n")
    assert not nvim.eval("&modified")
