"""The disk is the truth for every file the human is not editing (issue 12, items 1 and 2),
on a real Neovim with basedpyright, and pylsp where it applies.

An agent edits, creates and deletes files with its own tools while the bridge holds them
(a hidden buffer it opened, or the human's unmodified buffer): the very next request sees
the disk. A buffer with the human's unsaved changes stays the truth, and answers say that
the disk differs.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from .harness import Bridge, Pool, shop_bridge

pytestmark = pytest.mark.integration

T = TypeVar("T")

CUSTOMER = '''from shop.models import Product


class Customer:
    """Someone who buys."""

    def __init__(self, name: str) -> None:
        self.name = name

    def points(self) -> int:
        return len(self.name)


def greet(customer: Customer) -> str:
    return "hello " + customer.name
'''
# The agent's edit (as apply_patch would write it): a new method and two new uses.
EDITED = CUSTOMER.replace("        return len(self.name)\n", """        return len(self.name)

    def loyalty_points(self) -> int:
        return self.points() * 2
""") + """

def upgrade(customer: Customer, product: Product) -> Customer:
    return customer
"""


UNTOUCHED = {"defs.py": CUSTOMER, "user.py": "from shop.untouched.defs import Customer\n\nC = Customer\n"}


@pytest.fixture(scope="module", params=["basedpyright", "pylsp"])
def bridge(request: pytest.FixtureRequest, bridges: Pool, tmp_path_factory: pytest.TempPathFactory) -> Bridge:
    # Files in the tree before the servers start: a file created since the last request is
    # opened for the servers at the next one (`Servers.attach`), these never are.
    made = tmp_path_factory.mktemp("untouched")
    for name, text in UNTOUCHED.items():
        (made / name).write_text(text)
    return shop_bridge(bridges, (request.param,), also={"shop/untouched": made})


@pytest.fixture
def basedpyright(bridge: Bridge) -> Bridge:
    if bridge.servers != ["basedpyright"]:
        pytest.skip("basedpyright only")
    return bridge


def eventually(ask: Callable[[], T], done: Callable[[T], bool], timeout: float = 100.0) -> T:
    """For what depends on a server's own pace (indexing a file created on disk). The bound
    detects a hang: 5x the 20 s it was, which basedpyright missed beside three workers."""
    deadline = time.monotonic() + timeout
    while True:
        value = ask()
        if done(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.3)


def write(path: Path, text: str) -> None:
    """An agent's write: straight to the file, as its own tools do."""
    path.write_text(text)


def new_module(bridge: Bridge, name: str, text: str = CUSTOMER) -> tuple[Path, str]:
    path = bridge.root / "shop" / f"{name}.py"
    write(path, text)
    return path, f"shop/{name}.py"


def loaded(bridge: Bridge, path: Path) -> bool:
    return bool(bridge.lua("return vim.fn.bufloaded(...) == 1", str(path)))


def human_opens(bridge: Bridge, path: Path) -> None:
    """The human edits the file in the window (a listed buffer, the cursor on line 3)."""
    bridge.lua("vim.cmd.edit(vim.fn.fnameescape(...)); vim.api.nvim_win_set_cursor(0, {3, 0})", str(path))


def human_leaves(bridge: Bridge) -> None:
    bridge.lua("vim.cmd('silent! enew!')")


def ref_count(bridge: Bridge, anchor: str) -> int:
    total: int = bridge.ask(mode="references", locate=anchor, max_items=500)["total"]
    return total


def request_block(bridge: Bridge, body: str) -> str:
    text = f"*** Begin Language Server Request\n{body}\n*** End Language Server Request"
    return bridge.loop.run(bridge.service.handle_text(text)).text


def every_mode_sees_the_edit(bridge: Bridge, path: Path, rel: str, refs_before: int) -> None:
    """The very next locate, outline, references and request block see the new text."""
    found = bridge.ask(mode="locate", locate=f"{rel}@def <|>loyalty_points")
    assert found["line"] == 13
    symbols = {s["symbol"] for g in bridge.ask(mode="outline", file_path=rel)["groups"] for s in g["symbols"]}
    assert {"Customer.loyalty_points", "upgrade"} <= symbols
    assert ref_count(bridge, f"{rel}:Customer") == refs_before + 2
    block = request_block(bridge, f"*** File: {rel}\n@@ def loyalty_points(self) -> int:\n^ loyalty_points")
    assert "error" not in block, block
    assert "hover:loyalty_points" in block and "int" in block, block
    assert bridge.buffer_lines(path) == path.read_text().splitlines()


def test_a_disk_edit_under_a_hidden_bridge_buffer_is_seen_at_once(bridge: Bridge) -> None:
    path, rel = new_module(bridge, "loyal_hidden")
    before = ref_count(bridge, f"{rel}:Customer")  # opens a hidden buffer for the server
    bridge.ask(mode="hover", locate=f"{rel}:Customer.points")
    assert loaded(bridge, path) and not bridge.lua("return vim.fn.buflisted(...) == 1", str(path))
    write(path, EDITED)
    every_mode_sees_the_edit(bridge, path, rel, before)
    assert loaded(bridge, path), "brought up to date, not closed"


def test_a_disk_edit_under_the_humans_unmodified_buffer_reloads_it_in_place(bridge: Bridge) -> None:
    """Neovim's own reload, without a prompt even where 'autoread' is off and a handler of
    FileChangedShell would ask; the human's cursor stays where it was."""
    path, rel = new_module(bridge, "loyal_human")
    human_opens(bridge, path)
    before = ref_count(bridge, f"{rel}:Customer")
    bridge.lua("""
        vim.o.autoread = false
        vim.api.nvim_create_autocmd('FileChangedShell', { group = vim.api.nvim_create_augroup('t', {}),
          callback = function() vim.g.asked = true; vim.v.fcs_choice = 'ask' end })
    """)
    try:
        write(path, EDITED)
        every_mode_sees_the_edit(bridge, path, rel, before)
        state = bridge.lua("""return { vim.api.nvim_buf_get_name(0), vim.api.nvim_win_get_cursor(0),
            vim.bo.modified, vim.g.asked or false, vim.o.autoread,
            vim.api.nvim_get_option_value('autoread', { scope = 'local', buf = 0 }) == nil }""")
        assert state == [str(path), [3, 0], False, False, False, True], "options as they were"
    finally:
        bridge.lua("vim.o.autoread = true; vim.api.nvim_del_augroup_by_name('t')")
        human_leaves(bridge)


def test_a_disk_edit_of_a_file_nobody_has_open_is_seen_by_references(bridge: Bridge) -> None:
    """The servers read such a file once and keep it: they are told it changed."""
    user = bridge.root / "shop/untouched/user.py"
    anchor = "shop/untouched/defs.py:Customer"
    # the class, its use in greet(), the import and `C = Customer`, once the server indexed it
    before = eventually(lambda: ref_count(bridge, anchor), lambda n: n == 4)
    assert before == 4 and not loaded(bridge, user)
    write(user, user.read_text() + "\n\ndef make() -> Customer:\n    return Customer('x')\n")
    assert ref_count(bridge, anchor) == before + 2
    assert not loaded(bridge, user), "seen without a buffer"


def test_a_warm_hover_sees_lines_added_on_disk(bridge: Bridge) -> None:
    path, rel = new_module(bridge, "loyal_warm")
    anchor = f"{rel}:Customer.points"
    first = bridge.ask(mode="hover", locate=anchor)
    bridge.ask(mode="hover", locate=anchor)  # warm: the held text, guarded
    write(path, "# one\n# two\n" + CUSTOMER)
    moved = bridge.ask(mode="hover", locate=anchor)
    assert moved["line"] == first["line"] + 2
    assert "points" in moved["hover"]


def test_a_file_created_on_disk_is_found_once_the_server_reports_it(basedpyright: Bridge) -> None:
    bridge = basedpyright
    anchor = "shop/models.py:Product"
    before = ref_count(bridge, anchor)
    write(bridge.root / "shop" / "brand_new.py",
          "from shop.models import Product\n\n\ndef brand_new_helper(p: Product) -> Product:\n    return p\n")

    def search() -> str:
        return bridge.request({"mode": "search", "query": "brand_new_helper"}).text

    assert "shop/brand_new.py" in eventually(search, lambda text: "shop/brand_new.py" in text)
    assert eventually(lambda: ref_count(bridge, anchor), lambda n: n == before + 3) == before + 3


def test_a_file_deleted_on_disk_is_not_found_for_every_mode(bridge: Bridge) -> None:
    hidden, hidden_rel = new_module(bridge, "doomed_hidden")
    shown, shown_rel = new_module(bridge, "doomed_shown")
    for rel in (hidden_rel, shown_rel):
        for _ in range(2):  # warm: hover then answers from the held text, guarded
            bridge.ask(mode="hover", locate=f"{rel}:Customer.points")
    human_opens(bridge, shown)
    try:
        hidden.unlink()
        shown.unlink()
        for rel in (hidden_rel, shown_rel):
            anchor = f"{rel}:Customer.points"
            payloads: list[dict[str, Any]] = [
                {"mode": mode, "locate": anchor}
                for mode in ("hover", "locate", "definition", "references", "inspect", "inlay_hints")
            ]
            payloads += [{"mode": "outline", "file_path": rel}, {"mode": "diagnostics", "file_path": rel}]
            for payload in payloads:
                response = bridge.request(payload)
                assert response.error is not None, (payload, response.text)
                assert response.error.code.value == "not_found", (payload, response.text)
            block = request_block(bridge, f"*** File: {rel}\n@@ def points(self) -> int:\n^ points")
            assert "error:not_found" in block and "hover:points" not in block, block
        assert not loaded(bridge, hidden), "the bridge's hidden buffer is closed"
        assert loaded(bridge, shown), "the human's buffer is left to the human"
    finally:
        human_leaves(bridge)


def test_unsaved_changes_and_a_different_disk_carry_the_note(bridge: Bridge) -> None:
    path, rel = new_module(bridge, "unsaved")
    anchor = f"{rel}:Customer.points"
    human_opens(bridge, path)
    try:
        bridge.lua("vim.api.nvim_buf_set_lines(0, 0, 0, false, {'UNSAVED = 1'})")
        plain = bridge.ask(mode="hover", locate=anchor)
        assert "notes" not in plain, "unsaved changes alone: the disk has not changed"
        write(path, EDITED)  # an agent writes the file under the human's edit
        note = f"the buffer of {rel} has unsaved changes and the file on disk differs"
        for mode in ("hover", "locate", "references", "hover"):  # the last one warm
            data = bridge.ask(mode=mode, locate=anchor)
            # (references may add that the index is incomplete while basedpyright analyses the edit)
            notes = [n for n in data["notes"] if not n.startswith("the index may be incomplete")]
            assert notes == [note], (mode, data)
            assert data["line"] == plain["line"], "answered from the buffer"
        markdown = bridge.request({"mode": "locate", "locate": f"{rel}@UNSAVED = 1"})
        assert markdown.ok and f"> Note: {note}." in markdown.text.splitlines()[2], markdown.text
        block = request_block(bridge, f"*** File: {rel}\n@@ def points(self) -> int:\n^ points")
        assert f"/*<note>{note}</note>*/" in block.replace("\n", ""), block
        assert bridge.buffer_lines(path)[0] == "UNSAVED = 1" and bridge.modified(path)
        assert path.read_text() == EDITED, "the disk copy is left alone"
        path.unlink()
        gone = bridge.ask(mode="locate", locate=f"{rel}@UNSAVED = 1")
        assert gone["notes"] == [f"the buffer of {rel} has unsaved changes and the file on disk was deleted"]
    finally:
        human_leaves(bridge)


def test_a_rewrite_that_keeps_size_and_mtime_is_seen(bridge: Bridge) -> None:
    """Two writes in one timestamp tick leave size, mtime and inode alike: a stamp taken so
    soon after a write is not trusted, and the content decides (buffer and disk alike)."""
    path, rel = new_module(bridge, "racy")
    bridge.ask(mode="locate", locate=f"{rel}@def <|>greet")  # a hidden buffer, read at once
    reader, _ = new_module(bridge, "racy_reader", "from shop.racy import greet\n")
    session = bridge.service.session
    bridge.loop.run(session.texts.documents([reader]))  # read from disk at once: no buffer holds it
    assert not loaded(bridge, reader)
    for target, old, new in ((path, "def greet(", "def grexx("), (reader, "import greet", "import gre_t")):
        stat = os.stat(target)
        text = target.read_text().replace(old, new)
        with open(target, "r+") as file:  # in place: the same inode
            file.write(text)
        os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        after = os.stat(target)
        assert (after.st_size, after.st_mtime_ns, after.st_ino) == (stat.st_size, stat.st_mtime_ns, stat.st_ino)
    assert bridge.ask(mode="locate", locate=f"{rel}@def <|>grexx")["line"] == 14
    docs = bridge.loop.run(session.texts.documents([reader]))
    assert docs[reader].lines == ["from shop.racy import gre_t"]


def test_a_settled_file_rewritten_with_its_mtime_put_back_is_seen(bridge: Bridge) -> None:
    """Long settled (its stamp trusted without reading), then rewritten in place and
    `os.utime`d back to the old mtime: size, mtime and inode alike. It used to stay stale
    for good (locate answered the old text, every rename of it was a `conflict`); the change
    time moved, so the next request sees it, and a rename of it goes through."""
    path, rel = new_module(bridge, "settled")
    os.utime(path, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))  # written long ago
    time.sleep(2.1)  # past the racy window of its change time too (filestate.RACY_NS)
    bridge.ask(mode="locate", locate=f"{rel}@def <|>greet")  # a hidden buffer, read now
    assert loaded(bridge, path)
    stat = os.stat(path)
    with open(path, "r+") as file:  # in place: the same inode
        file.write(path.read_text().replace("def greet(", "def grexx("))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (stat.st_size, stat.st_mtime_ns, stat.st_ino)
    assert bridge.ask(mode="locate", locate=f"{rel}@def <|>grexx")["line"] == 14
    renamed = bridge.request({"mode": "rename", "locate": f"{rel}@def <|>grexx", "new_name": "welcome"})
    assert renamed.ok, renamed.text
    assert "def welcome(" in path.read_text() and "grexx" not in path.read_text()


def test_json_and_markdown_of_a_report_without_disk_trouble_have_no_note(bridge: Bridge) -> None:
    response = bridge.request({"mode": "hover", "locate": "shop/models.py:Product", "format": "json"})
    assert "notes" not in json.loads(response.text)
    assert "Note:" not in bridge.request({"mode": "hover", "locate": "shop/models.py:Product"}).text


def test_the_servers_get_a_disk_edit_as_a_change_and_neovim_takes_the_file_as_read(bridge: Bridge) -> None:
    """The human's unmodified buffer, brought up to date: the servers see a didChange, never
    didClose + didOpen (basedpyright would stop renaming across files from it); Neovim takes
    the file as read, so a later `:checktime` neither reloads it nor warns, 'autoread' or
    not; one undo step brings back the old text; the cursor stays on its line."""
    path, rel = new_module(bridge, "loyal_change")
    human_opens(bridge, path)
    try:
        bridge.ask(mode="hover", locate=f"{rel}:Customer.points")
        bridge.lua("""
            local uri = vim.uri_from_fname(...)
            vim.g.sent = {}
            vim.api.nvim_create_autocmd('LspNotify', { group = vim.api.nvim_create_augroup('t', {}),
              callback = function(ev)
                local doc = ev.data.params and ev.data.params.textDocument
                if doc and doc.uri == uri then vim.g.sent = vim.list_extend(vim.g.sent, { ev.data.method }) end
              end })
        """, str(path))
        write(path, EDITED)
        assert bridge.ask(mode="locate", locate=f"{rel}@def <|>loyalty_points")["line"] == 13
        sent = bridge.lua("return vim.g.sent")
        assert "textDocument/didChange" in sent and "textDocument/didClose" not in sent, sent
        assert "textDocument/didOpen" not in sent, sent
        state = bridge.lua("""
            local tick = vim.b.changedtick
            vim.v.warningmsg = ''
            vim.cmd('checktime')
            vim.bo.autoread = false
            vim.cmd('checktime')
            vim.cmd('set autoread<')
            return { vim.b.changedtick - tick, vim.v.warningmsg, vim.bo.modified, vim.api.nvim_win_get_cursor(0) }
        """)
        assert state == [0, "", False, [3, 0]]
        bridge.lua("vim.cmd('silent undo')")
        assert bridge.buffer_lines(path) == CUSTOMER.splitlines()
        bridge.lua("vim.cmd('silent redo')")
        assert bridge.buffer_lines(path) == EDITED.splitlines()
        assert bridge.lua("return vim.g.sent")[-1] == "textDocument/didChange"
    finally:
        bridge.lua("vim.api.nvim_del_augroup_by_name('t'); vim.cmd('silent edit!')")
        human_leaves(bridge)


def test_files_in_another_encoding_or_with_dos_line_ends_are_brought_up_to_date(bridge: Bridge) -> None:
    """Latin-1 text is left to Neovim's own reload (its bytes are not the buffer's lines);
    CRLF text is put in as lines, as Neovim reads it, and stays unmodified."""
    latin, latin_rel = new_module(bridge, "latin", "")
    latin.write_bytes(CUSTOMER.replace("Someone who buys.", "Caf\xe9 client.").encode("latin-1"))
    dos, dos_rel = new_module(bridge, "dos", "")
    dos.write_bytes(CUSTOMER.replace("\n", "\r\n").encode())
    for rel in (latin_rel, dos_rel):
        bridge.ask(mode="locate", locate=f"{rel}@def <|>greet")
    formats = "local a, b = ...; return { vim.bo[vim.fn.bufnr(a)].fileencoding, vim.bo[vim.fn.bufnr(b)].fileformat }"
    assert bridge.lua(formats, str(latin), str(dos)) == ["latin1", "dos"]
    latin.write_bytes(EDITED.replace("Someone who buys.", "Caf\xe9 cliente.").encode("latin-1"))
    dos.write_bytes(EDITED.replace("\n", "\r\n").encode())
    for path, rel in ((latin, latin_rel), (dos, dos_rel)):
        assert bridge.ask(mode="locate", locate=f"{rel}@def <|>loyalty_points")["line"] == 13
        assert not bridge.modified(path)
    assert bridge.buffer_lines(latin)[4] == '    """Café cliente."""'
    assert bridge.buffer_lines(dos) == EDITED.splitlines()
