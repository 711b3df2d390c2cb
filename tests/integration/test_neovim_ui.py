"""The human's side without the service: commands, completion, the picker, ranges, setup
validation, the report window and the help file, in a real headless Neovim that installed
the plugin as documented."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pynvim
import pytest

from lsap_bridge.capabilities import REGISTRY, Request
from tests.conftest import EXAMPLE, ROOT

from .nvim_home import Home, make_home, wait_for

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Home:
    # No agent socket, so nothing starts the Python host but a command.
    home = make_home(tmp_path_factory.mktemp("home"), setup="{ socket = false }")
    home.register()
    return home


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ui") / "shop"
    shutil.copytree(EXAMPLE, root)
    return root


@pytest.fixture(scope="module")
def nvim(home: Home, project: Path) -> Iterator[pynvim.Nvim]:
    nvim = home.attach(project)
    yield nvim
    nvim.close()


@pytest.fixture
def sent(nvim: pynvim.Nvim) -> Iterator[Any]:
    """Record what the commands hand to the service instead of sending it."""
    nvim.exec_lua("""
        local lsap = require('lsap.service')
        _G.lsap_sent, _G.lsap_real_send = {}, lsap.send
        lsap.send = function(payload) table.insert(_G.lsap_sent, payload) end
        _G.lsap_notes, _G.lsap_real_notify = {}, vim.notify
        vim.notify = function(message) table.insert(_G.lsap_notes, message) end
    """)
    yield lambda: nvim.exec_lua("return _G.lsap_sent")
    nvim.exec_lua(
        "require('lsap.service').send = _G.lsap_real_send; vim.notify = _G.lsap_real_notify; "
        "vim.b.lsap_disable = nil"
    )


def complete(nvim: pynvim.Nvim, line: str) -> list[str]:
    result: list[str] = nvim.call("getcompletion", line, "cmdline")
    return result


def lua_names(nvim: pynvim.Nvim, table: str) -> set[str]:
    return set(nvim.exec_lua(f"return vim.tbl_keys(require('lsap.commands').{table})"))


# -- modes and completion ----------------------------------------------------------------


def test_lua_modes_equal_the_python_registry(nvim: pynvim.Nvim) -> None:
    assert lua_names(nvim, "modes") == set(REGISTRY)



def schema_values(prop: dict[str, Any], defs: dict[str, Any]) -> list[str] | None:
    """The values a field's JSON schema allows, as typed (`true`/`false` for a boolean)."""
    prop = defs[prop["$ref"].rsplit("/", 1)[1]] if "$ref" in prop else prop
    if "enum" in prop:
        return [str(v) for v in prop["enum"]]
    if prop.get("type") == "boolean":
        return ["true", "false"]
    for inner in [*prop.get("anyOf", []), *([prop["items"]] if "items" in prop else [])]:
        if found := schema_values(inner, defs):
            return found
    return None


def schema_string(prop: dict[str, Any]) -> bool:
    """A free string (no enum, no constant), alone or among other types."""
    free = prop.get("type") == "string" and "enum" not in prop and "const" not in prop
    return free or any(map(schema_string, prop.get("anyOf", [])))


def test_lua_options_and_values_equal_the_python_models(nvim: pynvim.Nvim) -> None:
    # Expected from each request's JSON schema (pydantic's), not from the annotation walk
    # lua_modes.py generates the tables with.
    lua = nvim.exec_lua(
        "local c = require('lsap.commands')"
        " return { modes = c.modes, values = c.values, shared = c.shared, strings = c.strings }"
    )
    assert set(lua["shared"]) == set(Request.model_json_schema()["properties"]) - {"mode"}
    for mode, capability in REGISTRY.items():
        schema = capability.model.model_json_schema()
        props, defs = schema["properties"], schema.get("$defs", {})
        assert set(lua["modes"][mode]) == set(props) - set(lua["shared"]) - {"mode", "locate"}, mode
        for key, prop in props.items():
            if key in ("mode", "locate"):
                continue
            values = schema_values(prop, defs) or list(capability.offer.values.get(key, ()))
            if values:
                offered = lua["values"].get(f"{mode}.{key}") or lua["values"].get(key)
                assert sorted(offered or []) == sorted(values), f"{mode} {key}="
            # A string field stays a string when typed as digits (`pagination_id=1234`).
            assert bool(lua["strings"].get(key)) >= schema_string(prop), f"{mode} {key} is a string field"
    assert lua["values"]["min_severity"] == ["error", "warning", "information", "hint"]
    assert lua["strings"].get("new_name") and lua["strings"].get("pagination_id")


def test_the_pickers_descriptions_are_the_capabilities_summaries(nvim: pynvim.Nvim) -> None:
    human = nvim.exec_lua("return require('lsap.commands').human")
    assert human and all(description == REGISTRY[mode].summary for mode, description in human)


def test_completing_lsap_offers_every_mode_and_subcommand(nvim: pynvim.Nvim) -> None:
    expected = sorted(REGISTRY) + sorted(lua_names(nvim, "subcommands"))
    assert complete(nvim, "Lsap ") == expected
    assert complete(nvim, "Lsap ref") == ["references"]
    assert complete(nvim, "'<,'>Lsap ref") == ["references"]


def test_completing_options_after_a_mode(nvim: pynvim.Nvim, project: Path) -> None:
    options = complete(nvim, "Lsap references ")
    assert {"max_items=", "start_index=", "context_lines=", "format=", "pagination_id="} <= set(
        options
    )
    assert complete(nvim, "LsapReferences max") == ["max_items=", "max_tokens="]
    assert complete(nvim, "Lsap hover format=") == ["format=markdown", "format=json"]
    assert complete(nvim, "Lsap hover format=j") == ["format=json"]
    assert complete(nvim, "LsapCalls direction=") == [
        "direction=incoming",
        "direction=outgoing",
        "direction=both",
    ]
    assert complete(nvim, "Lsap types direction=s") == [
        "direction=supertypes",
        "direction=subtypes",
    ]
    # An option already given is not offered again.
    assert "max_items=" not in complete(nvim, "Lsap references shop/models.py:Product max_items=3 ")
    # The anchor starts with a file path.
    assert "shop/" in complete(nvim, "Lsap references sh")


def test_completion_never_starts_the_python_host(nvim: pynvim.Nvim) -> None:
    complete(nvim, "Lsap ")
    complete(nvim, "Lsap references m")
    assert nvim.exec_lua("return require('lsap').state") == "stopped"
    hosts = [c for c in nvim.api.list_chans() if "python" in " ".join(c.get("argv") or [])]
    assert hosts == []
    assert nvim.call("exists", "*LsapStart") == 0  # still the lazy FuncUndefined stub


# -- what the commands send --------------------------------------------------------------


def test_anchor_options_and_range_reach_the_service(nvim: pynvim.Nvim, sent: Any) -> None:
    nvim.command("edit shop/models.py")
    nvim.command(
        "2,4LsapReferences! shop/models.py:Product@class <|>Product max_items=5 format=json"
    )
    payload = sent()[-1]
    assert payload["mode"] == "references"
    assert payload["anchor"] == "shop/models.py:Product@class <|>Product"
    assert payload["options"] == {"max_items": 5, "format": "json"}
    assert payload["range"] == [2, 4]
    assert payload["bang"] is True
    assert payload["cursor"]["path"].endswith("shop/models.py")


def test_lsap_request_sends_the_block_under_the_cursor(nvim: pynvim.Nvim, sent: Any) -> None:
    block = [
        "*** Begin Language Server Request",
        "*** File: shop/models.py",
        "@@ class Product:",
        "^ Product",
        "*** End Language Server Request",
    ]
    nvim.command("enew")
    nvim.current.buffer[:] = ["notes", *block, "more notes"]
    nvim.current.window.cursor = (4, 0)
    nvim.command("LsapRequest")
    assert sent()[-1]["mode"] == "request"
    assert sent()[-1]["text"] == "\n".join(block)
    nvim.command("1,2LsapRequest")
    assert sent()[-1]["text"] == "notes\n" + block[0]
    nvim.command("bwipe!")


def test_lsap_alone_opens_a_picker_over_the_modes(nvim: pynvim.Nvim, sent: Any) -> None:
    """Through `vim.ui.select` (so telescope, fzf-lua or snacks show it), one line per mode
    with its description, only the modes a human runs."""
    nvim.command("edit shop/models.py")
    nvim.exec_lua("""
        local select = vim.ui.select
        vim.ui.select = function(items, opts, on_choice)
          _G.lsap_offered = vim.tbl_map(opts.format_item, items)
          _G.lsap_kind = opts.kind
          vim.ui.select = select
          on_choice('hover')
        end
    """)
    nvim.command("Lsap")
    offered = nvim.exec_lua("return _G.lsap_offered")
    lines = {line.split()[0]: line for line in offered}
    assert "references" in lines and "resume" in lines and "approval" in lines
    assert not {"batch", "schema", "rename_execute", "editor"} & set(lines)
    assert lines["references"].endswith(REGISTRY["references"].summary)
    assert lines["log"].endswith("agents' requests and answers, live")
    assert nvim.exec_lua("return _G.lsap_kind") == "lsap.mode"
    assert sent()[-1]["mode"] == "hover"


def test_rename_without_a_name_asks_for_it_with_the_current_name(nvim: pynvim.Nvim, sent: Any) -> None:
    nvim.command("edit shop/models.py")
    nvim.call("cursor", nvim.call("search", "class Product"), 8)
    nvim.exec_lua("""
        local input = vim.ui.input
        vim.ui.input = function(opts, on_confirm)
          _G.lsap_asked = opts
          vim.ui.input = input
          on_confirm('Item')
        end
    """)
    nvim.command("LsapRename")
    assert nvim.exec_lua("return _G.lsap_asked") == {"prompt": "New name: ", "default": "Product"}
    assert sent()[-1]["mode"] == "rename" and sent()[-1]["options"] == {"new_name": "Item"}
    # An anchor's name: the identifier at its marker, else its symbol path's last part.
    names = nvim.exec_lua("""
        local c = require('lsap.commands')
        return { c.current_name('shop/models.py:Order.total'), c.current_name('shop/a.py@x = <|>total_of(y)'),
                 c.current_name('shop/models.py:Order@def add') }
    """)
    assert names == ["total", "total_of", "def"]
    # Cancelled or unchanged: nothing is sent.
    count = len(sent())
    nvim.exec_lua("vim.ui.input = function(opts, on_confirm) on_confirm(nil) end")
    nvim.command("Lsap rename_preview shop/models.py:Product")
    assert len(sent()) == count


def test_unknown_mode_and_disabled_buffer_send_nothing(nvim: pynvim.Nvim, sent: Any) -> None:
    nvim.command("Lsap nonsense")
    nvim.command("Lsap hovr")
    nvim.command("let b:lsap_disable = v:true")
    nvim.command("LsapReferences")
    assert sent() == []
    notes = nvim.exec_lua("return _G.lsap_notes")
    assert notes[0].startswith('(lsap) unknown mode "nonsense": use one of ')
    assert notes[1].startswith('(lsap) unknown mode "hovr" (did you mean hover?): use one of ')
    assert "vim.b.lsap_disable" in notes[2]


def test_plug_mappings_exist_and_no_default_mappings(nvim: pynvim.Nvim) -> None:
    plugs = {m["lhs"] for m in nvim.api.get_keymap("n") if "lsap" in m.get("desc", "")}
    assert "<Plug>(lsap-references)" in plugs
    assert all(lhs.startswith("<Plug>") for lhs in plugs)


def test_highlight_groups_are_linked_by_default_and_stay_overridable(nvim: pynvim.Nvim) -> None:
    hl = "return vim.api.nvim_get_hl(0, { name = 'LsapHeader' })"
    assert nvim.exec_lua(hl) == {"link": "Title", "default": True}
    nvim.command("highlight LsapHeader guifg=#ff0000 | doautocmd ColorScheme")
    assert nvim.exec_lua(hl)["fg"] == 0xFF0000


# -- setup --------------------------------------------------------------------------------


def test_setup_names_a_wrong_key_and_its_expected_type(nvim: pynvim.Nvim) -> None:
    ok, err = nvim.exec_lua(
        "return { pcall(require('lsap').setup, { report = { height = 'tall' } }) }"
    )
    assert not ok
    assert err == '(lsap) option "report.height" must be a number, got string'
    ok, err = nvim.exec_lua(
        "return { pcall(require('lsap').setup, { edit_policy = 'sometimes' }) }"
    )
    assert "allow, ask, deny" in err
    nvim.exec_lua("require('lsap').setup({ sokcet = false, report = { height = 9 } })")
    [unknown] = nvim.exec_lua("return require('lsap').unknown")
    assert unknown.startswith("sokcet (valid: agent_limits, approval, diagnostics_wait, edit_policy, ")
    assert ", socket" in unknown
    ok, err = nvim.exec_lua("return { pcall(require('lsap').setup, { approval = { window = 'modal' } }) }")
    assert err == '(lsap) option "approval.window" must be one of float, select, got "modal"'
    assert nvim.exec_lua("return require('lsap').config.report") == {
        "height": 9,
        "vertical": False,
        "width": 80,
        "focus": True,
    }
    nvim.exec_lua("require('lsap').setup({})")


def test_documented_defaults_are_the_defaults(nvim: pynvim.Nvim) -> None:
    doc = (ROOT / "doc" / "lsap.txt").read_text()
    block = doc.split("*lsap-defaults*", 1)[1].split(">lua\n", 1)[1].split("\n<", 1)[0]
    documented = nvim.exec_lua(
        """
        local captured
        local env = { require = function() return { setup = function(o) captured = o end } end }
        assert(load(..., 'doc', 't', env))()
        return captured
        """,
        block,
    )
    # `diagnostics_wait`'s default is documented as $LSAP_DIAGNOSTICS_WAIT when it is set, else 1:
    # the suite sets it to "settled" (tests/conftest.py), so that is the default here.
    assert documented["diagnostics_wait"] == 1 and os.environ["LSAP_DIAGNOSTICS_WAIT"] == "settled"
    assert {**documented, "diagnostics_wait": "settled"} == nvim.exec_lua("return require('lsap').defaults")


# -- the report window --------------------------------------------------------------------

REPORT = """# References: `Product`

Anchor: `shop/models.py:Product@class <|>Product:` → shop/models.py:7:7 in `Product`
2 references in 1 file · basedpyright

### shop/catalog.py
```python
3| from .models import Product
4|
5| CROISSANT = Product("croissant", 1.2)
```"""


def test_report_window_keys(nvim: pynvim.Nvim, project: Path) -> None:
    locations = [
        {"path": "shop/catalog.py", "line": 3, "col": 19, "text": "from .models import Product"},
        {"path": "shop/catalog.py", "line": 5, "col": 12, "text": "CROISSANT = …"},
    ]
    nvim.command("only | edit shop/models.py")
    origin = nvim.current.window
    nvim.exec_lua("require('lsap.report').show(...)", REPORT, locations, {"root": str(project)})
    assert nvim.current.buffer.name == "lsap://report"
    assert nvim.current.buffer.options["filetype"] == "markdown"
    assert nvim.exec_lua("return vim.treesitter.highlighter.active[vim.fn.bufnr()] ~= nil")
    assert len(nvim.windows) == 2
    nvim.feedkeys("]]", "x", False)
    assert nvim.current.window.cursor == (8, 0)  # `3| from .models import Product`
    nvim.feedkeys("]]", "x", False)
    assert nvim.current.window.cursor == (10, 0)  # `5| CROISSANT = …`; `4|` shows no location
    nvim.feedkeys("]]", "x", False)
    assert nvim.current.window.cursor == (10, 0)
    nvim.feedkeys("[[", "x", False)
    assert nvim.current.window.cursor == (8, 0)
    report = nvim.current.window
    nvim.feedkeys("]]p", "x", False)  # preview: the location shown, the cursor stays
    assert nvim.current.window == report
    assert Path(origin.buffer.name) == project / "shop" / "catalog.py" and origin.cursor == (5, 12)
    nvim.feedkeys(nvim.replace_termcodes("<CR>", True, True, True), "x", False)
    assert nvim.current.window == origin
    assert Path(nvim.current.buffer.name) == project / "shop" / "catalog.py"
    assert nvim.current.window.cursor == (5, 12)
    # The same buffer is reused; the anchor line jumps to its `path:line:col`.
    nvim.exec_lua("require('lsap.report').show(...)", REPORT, locations, {"root": str(project)})
    assert len([b for b in nvim.buffers if b.name == "lsap://report"]) == 1
    nvim.current.window.cursor = (3, 0)
    nvim.feedkeys(nvim.replace_termcodes("<CR>", True, True, True), "x", False)
    assert Path(nvim.current.buffer.name) == project / "shop" / "models.py"
    assert nvim.current.window.cursor == (7, 6)
    nvim.exec_lua("require('lsap.report').show(...)", REPORT, locations, {"root": str(project)})
    nvim.feedkeys("g?", "x", False)
    assert "next entry" in nvim.exec_lua("return vim.fn.execute('messages')")
    nvim.feedkeys("q", "x", False)
    assert len(nvim.windows) == 1
    # As the only window, `q` leaves the report for the previous buffer.
    nvim.exec_lua("require('lsap.report').show(...)", REPORT, locations, {"root": str(project)})
    nvim.command("only")
    nvim.feedkeys("q", "x", False)
    assert nvim.current.buffer.name != "lsap://report"


def test_bang_sends_locations_to_the_quickfix_list(nvim: pynvim.Nvim, project: Path) -> None:
    locations = [
        {"path": "shop/catalog.py", "line": 5, "col": 12, "text": "CROISSANT = Product(…)"}
    ]
    nvim.exec_lua(
        "require('lsap.report').show(...)",
        REPORT,
        locations,
        {"root": str(project), "bang": True, "title": "lsap references"},
    )
    items = nvim.call("getqflist", {"items": 1, "title": 1})
    assert items["title"] == "lsap references"
    assert [(i["lnum"], i["col"]) for i in items["items"]] == [(5, 13)]
    assert nvim.call("bufname", items["items"][0]["bufnr"]).endswith("shop/catalog.py")
    nvim.command("cclose")


def show(nvim: pynvim.Nvim, project: Path, text: str = REPORT, **options: Any) -> None:
    locations = [{"path": "shop/catalog.py", "line": 5, "col": 12, "text": "CROISSANT = …"}]
    nvim.exec_lua("require('lsap.report').show(...)", text, locations, {"root": str(project), **options})


def test_the_report_keeps_its_settings_whatever_is_done_to_buffers(nvim: pynvim.Nvim, project: Path) -> None:
    nvim.command("only | edit shop/models.py")
    show(nvim, project)
    nvim.command("%bd!")
    show(nvim, project)
    report = nvim.current.buffer
    assert report.name == "lsap://report"
    assert (report.options["buftype"], report.options["filetype"], report.options["buflisted"]) == (
        "nofile", "markdown", False)
    nvim.command("bdelete")
    show(nvim, project)
    nvim.feedkeys("q", "x", False)  # a map again, not the start of a macro recording
    assert nvim.call("reg_recording") == ""
    assert nvim.current.buffer.name != "lsap://report"
    # Reopened by name, as a session does: lsap's buffer again, with the last report.
    nvim.command("bwipeout! lsap://report | edit lsap://report")
    assert nvim.current.buffer.options["buftype"] == "nofile"
    assert nvim.current.buffer[0] == "# References: `Product`"
    assert any(m["lhs"] == "]]" for m in nvim.current.buffer.api.get_keymap("n"))
    nvim.command("enew")


def test_the_report_hides_the_users_window_options(nvim: pynvim.Nvim, project: Path) -> None:
    nvim.command("only | set number relativenumber list nowrap signcolumn=yes | edit shop/models.py")
    long_anchor = REPORT.replace("Product@class", "Product@" + "x" * 150 + " class")
    try:
        show(nvim, project, long_anchor)
        options = nvim.current.window.options
        assert (options["number"], options["relativenumber"], options["list"]) == (False, False, False)
        assert (options["wrap"], options["signcolumn"]) == (True, "no")  # long Anchor lines wrap
        nvim.command("wincmd p")
        assert nvim.current.window.options["number"]  # the human's windows keep theirs
    finally:
        nvim.command("set nonumber norelativenumber nolist wrap signcolumn=auto | only")


def test_resume_and_history_reopen_earlier_reports(nvim: pynvim.Nvim, project: Path) -> None:
    nvim.command("only | edit shop/models.py")
    show(nvim, project)
    show(nvim, project, "# Hover: `Order`\n\nAnchor: `shop/models.py:Order`")
    nvim.command("only")
    nvim.command("Lsap resume")
    assert nvim.current.buffer[0] == "# Hover: `Order`"
    nvim.command("Lsap resume 2")
    assert nvim.current.buffer[0] == "# References: `Product`"
    nvim.feedkeys("]]", "x", False)  # its entries came back with it
    assert nvim.current.window.cursor == (10, 0)
    nvim.exec_lua("""
        local select = vim.ui.select
        vim.ui.select = function(items, opts, on_choice)
          _G.lsap_reports = vim.tbl_map(opts.format_item, items)
          vim.ui.select = select
          on_choice(items[1])
        end
    """)
    nvim.command("Lsap history")
    reports = nvim.exec_lua("return _G.lsap_reports")
    assert reports[0].endswith(" Hover: Order (1 location)")
    assert reports[1].endswith(" References: Product (1 location)")
    assert nvim.current.buffer[0] == "# Hover: `Order`"
    nvim.command("only | enew")


def test_a_report_waits_while_the_human_types_and_opens_beside_them(nvim: pynvim.Nvim, project: Path) -> None:
    nvim.command("only | enew!")
    typing_in = nvim.current.window
    ticket = nvim.exec_lua("return require('lsap.ui').ticket('references')")
    nvim.input("ihello ")
    assert nvim.api.get_mode()["mode"] == "i"
    show(nvim, project, ticket=ticket)  # the answer arrives mid-typing
    assert nvim.call("bufwinid", "lsap://report") == -1  # not while typing
    nvim.input("world<Esc>")
    report = wait_for(lambda: nvim.call("bufwinid", "lsap://report") + 1, 5, "the report window") - 1
    assert nvim.current.window == typing_in and nvim.current.buffer[:] == ["hello world"]
    assert report != typing_in.handle
    notes = nvim.exec_lua("return vim.fn.execute('messages')")
    assert "(lsap) References: Product ready: <C-w>b goes there" in notes
    nvim.command("only | enew!")


def test_the_log_survives_bdelete_and_never_blocks_quitting(home: Home, project: Path) -> None:
    nvim = home.attach(project)
    entry = {"client": "agent", "phase": "start", "what": "references shop/models.py:Product"}
    nvim.exec_lua("require('lsap.log').append({...})", entry)
    nvim.command("Lsap log")
    nvim.command("%bd!")
    nvim.exec_lua("require('lsap.log').append({...})", entry)
    assert nvim.call("getbufinfo", {"bufmodified": 1}) == []
    assert nvim.exec_lua("return vim.bo[vim.fn.bufnr('lsap://log')].buftype") == "nofile"
    with pytest.raises((OSError, EOFError)):  # Neovim quit: E162 would be an error reply instead
        nvim.command("qa")


# -- the help file ------------------------------------------------------------------------


def test_help_file_is_clean_and_tags_every_command_and_mode(
    nvim: pynvim.Nvim, tmp_path: Path
) -> None:
    doc = tmp_path / "doc"
    shutil.copytree(ROOT / "doc", doc)
    nvim.command("helptags " + str(doc))  # raises on a duplicate tag or a bad file
    tags = {line.split("\t")[0] for line in (doc / "tags").read_text().splitlines()}
    commands = {"Lsap", *nvim.exec_lua("return vim.tbl_keys(require('lsap.commands').camel)")}
    assert {":" + c for c in commands} <= tags
    modes = set(REGISTRY) | lua_names(nvim, "modes")
    assert {f"lsap-mode-{m}" for m in modes} - tags == set()
    assert {f":Lsap-{s}" for s in lua_names(nvim, "subcommands")} - tags == set()
    plugs = {m["lhs"] for m in nvim.api.get_keymap("n") if m["lhs"].startswith("<Plug>(lsap-")}
    assert plugs == {t for t in tags if t.startswith("<Plug>(lsap-")}  # each mapping documented, no other
    text = (ROOT / "doc" / "lsap.txt").read_text()
    assert text.startswith("*lsap.txt*")
    assert text.rstrip().endswith("vim:tw=78:ts=8:noet:ft=help:norl:")
