"""A real headless Neovim with real language servers, driven from synchronous tests."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from lsap_bridge import changes, check_store
from lsap_bridge.diskwatch import CREATED
from lsap_bridge.edits.switch import journal_dir
from lsap_bridge.embedded import Embedded, start_embedded
from lsap_bridge.gateway import Timeouts
from lsap_bridge.lsp import FileEventData
from lsap_bridge.pipeline import Response
from lsap_bridge.service import Service
from lsap_bridge.workspace import CODE_SUFFIXES, Workspace, uri_of
from tests.conftest import EXAMPLE

T = TypeVar("T")

#: The TypeScript servers every TypeScript integration test runs on (module fixtures take
#: them as `params`): typescript-language-server and vtsls, both from package.json.
TS_SERVERS = ("ts_ls", "vtsls")


class Loop:
    """An asyncio loop in a thread, so fixtures can outlive a single test."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 120) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


class Bridge:
    """The embedded Neovim + service over one project root."""

    def __init__(self, root: Path, servers: list[str], timeouts: Timeouts | None = None) -> None:
        self.root = root
        self.loop = Loop()
        self.embedded: Embedded = self.loop.run(
            start_embedded(root, servers, timeouts or Timeouts(request=60, attach=30)))
        self.service = Service(self.embedded.gateway, Workspace.of(root))
        self.embedded.gateway.on_command(self.service.handle_command)
        self.fixture = Tree.of(root)  # what `reset` puts back
        gateway = self.embedded.gateway
        self._started = (gateway.timeouts, gateway.max_tokens)
        self.lua(LISTINGS_LUA)

    @property
    def servers(self) -> list[str]:
        return self.embedded.servers

    def request(self, payload: dict[str, Any]) -> Response:
        return self.loop.run(self.service.handle(payload))

    def ask(self, **payload: Any) -> dict[str, Any]:
        """The JSON report of a request that must succeed."""
        response = self.request({**payload, "format": "json"})
        assert response.ok, response.text
        data: dict[str, Any] = json.loads(response.text)
        return data

    def text(self, path: str, *lines: str) -> Response:
        """A Language Server Request block about one file, answered."""
        block = "\n".join(["*** Begin Language Server Request", f"*** File: {path}", *lines,
                           "*** End Language Server Request"])
        return self.loop.run(self.service.handle_text(block))

    def buffer_lines(self, path: Path) -> list[str]:
        """The loaded buffer's lines (unsaved text included), or [] when not loaded."""
        lines: list[str] = self.lua(
            "local b = vim.fn.bufnr(...); "
            "return b > 0 and vim.api.nvim_buf_get_lines(b, 0, -1, false) or {}",
            str(path),
        )
        return lines

    def modified(self, path: Path) -> bool:
        return bool(self.lua("local b = vim.fn.bufnr(...); return b > 0 and vim.bo[b].modified", str(path)))

    def lua(self, code: str, *args: Any) -> Any:
        return self.loop.run(self.embedded.gateway.exec_lua(code, *args))

    @property
    def alive(self) -> bool:
        process = self.embedded.conn.process
        return self.loop.thread.is_alive() and process is not None and process.returncode is None

    def reset(self, restart: bool = False) -> None:
        """Make this warm bridge what a fresh one on the fixture would be, for the next test:
        every buffer and extra window gone (unsaved text dropped), the fixture's files put
        back (changed ones rewritten, added ones deleted, modes restored), the servers told
        through the session's own disk sync, then a new Service (no pages, anchors, renames,
        actions, check records or held texts), and no change sets or stored checks of the project.
        The servers are then told that every code file of the fixture was created anew
        (`workspace/didChangeWatchedFiles`, through the same disk sync): basedpyright leaves a
        file whose buffer was closed out of its renames (it renames in the declaring file
        only) until it lists the workspace's files again, which a file created makes it do,
        on a timer after its next 250 ms without requests; the reset waits until each
        basedpyright has said it listed them ("Found N source files", `LISTINGS_LUA`), at
        most `LISTED_WITHIN` s (else the pool replaces the bridge), not a fixed time. That
        is enough for basedpyright's renames, moves and checks (every module that once
        restarted it passes warm). `restart` stops the servers instead (the next file opened
        starts them again), for a server whose caches a reset cannot reach (pylsp's jedi
        keeps a parse by mtime)."""
        self.lua(RESET_LUA)
        if restart:
            self.lua(RESTART_LUA)
        self.fixture.restore(self.root)
        self.loop.run(self.service.session.servers.sync_disk())
        if not restart:
            created: list[FileEventData] = [{"uri": uri_of(self.root / rel), "type": CREATED}
                                            for rel in self.fixture.files if Path(rel).suffix in CODE_SUFFIXES]
            listed = self.lua("return _G.lsap_test_listings")
            self.loop.run(self.embedded.gateway.sync(created))
            self.lua(HEARD_LUA)  # the servers have read the events: they answered a later request
            if not self.lua(LISTED_LUA, listed, LISTED_WITHIN * 1000):
                raise RuntimeError(f"basedpyright did not list the files again within {LISTED_WITHIN} s")
        journals = self.loop.run(journal_dir(self.embedded.gateway))
        workspace = Workspace.of(self.root)
        for change in changes.load(journals, workspace):
            (journals / changes.DIRECTORY / f"{change.id}.json").unlink(missing_ok=True)
        for kept in (journals / check_store.DIRECTORY).glob("*.json"):  # the stored checks of this root
            with contextlib.suppress(OSError, ValueError):
                if json.loads(kept.read_text()).get("root") == str(self.root):
                    kept.unlink()
        gateway = self.embedded.gateway
        gateway.timeouts, gateway.max_tokens = self._started
        gateway._texts.clear()
        gateway.stats.clear()
        self.service = Service(gateway, workspace)
        gateway.on_command(self.service.handle_command)

    def close(self) -> None:
        self.loop.run(self.embedded.close())
        self.loop.close()


# Windows and tabs closed, floats too, then every buffer wiped without saving: what the
# last test opened or typed is gone, and the servers hear didClose; the agents and change
# sets the editor lists, and its report history, are emptied.
RESET_LUA = """
vim.cmd('silent! tabonly! | silent! only!')
for _, win in ipairs(vim.api.nvim_list_wins()) do
  if vim.api.nvim_win_get_config(win).relative ~= '' then pcall(vim.api.nvim_win_close, win, true) end
end
local keep = vim.api.nvim_create_buf(true, false)
vim.api.nvim_win_set_buf(0, keep)
for _, buf in ipairs(vim.api.nvim_list_bufs()) do
  if buf ~= keep then pcall(vim.api.nvim_buf_delete, buf, {force = true}) end
end
for name, lists in pairs({['lsap.presence'] = {'agents', 'order', 'changes'}, ['lsap.report'] = {'history'}}) do
  local module = package.loaded[name]
  for _, list in ipairs(module and lists or {}) do
    for key in pairs(type(module[list]) == 'table' and module[list] or {}) do module[list][key] = nil end
  end
end
"""

RESTART_LUA = """
local ids = vim.tbl_map(function(c) return c.id end, vim.lsp.get_clients())
vim.lsp.stop_client(ids)
local gone = vim.wait(10000, function()
  return vim.iter(ids):all(function(id) return vim.lsp.get_client_by_id(id) == nil end)
end, 20)
if not gone then vim.lsp.stop_client(ids, true) end
"""

# A request every server answers at once; its answer means the notifications sent before it
# were read.
HEARD_LUA = """
for _, client in ipairs(vim.lsp.get_clients()) do
  client:request_sync('workspace/symbol', {query = 'lsap-reset'}, 10000)
end
"""

# Each client's count of workspace listings, from its log ("Found 12 source files", which
# basedpyright logs each time it lists the workspace's files).
LISTINGS_LUA = """
_G.lsap_test_listings = {}
local default = vim.lsp.handlers['window/logMessage']
vim.lsp.handlers['window/logMessage'] = function(err, result, ctx, config)
  local message = result and result.message
  local listing = type(message) == 'string'
    and (message:match('^Found %d+ source files?$') or message == 'No source files found.')
  if listing then
    _G.lsap_test_listings[ctx.client_id] = (_G.lsap_test_listings[ctx.client_id] or 0) + 1
  end
  return default(err, result, ctx, config)
end
"""
# Whether every basedpyright listed the workspace's files after the counts `before`.
LISTED_LUA = """
local before, within = ...
return vim.wait(within, function()
  for _, client in ipairs(vim.lsp.get_clients({ name = 'basedpyright' })) do
    if (_G.lsap_test_listings[client.id] or 0) <= (before[client.id] or 0) then return false end
  end
  return true
end, 10)
"""
# Seconds: a hang bound. The listing follows the events after basedpyright's 250 ms timer
# (0.3 to 0.7 s measured, on a loaded machine): over 10x.
LISTED_WITHIN = 10


@dataclass(frozen=True)
class Tree:
    """A project's files (bytes and mode) and directories (mode), to put back after a test."""

    files: dict[str, tuple[bytes, int]]
    dirs: dict[str, int]

    @classmethod
    def of(cls, root: Path) -> Tree:
        files: dict[str, tuple[bytes, int]] = {}
        dirs: dict[str, int] = {}
        for path in root.rglob("*"):
            rel = path.relative_to(root).as_posix()
            if path.is_symlink() or not (path.is_file() or path.is_dir()):
                continue
            if path.is_dir():
                dirs[rel] = path.stat().st_mode & 0o7777
            else:
                files[rel] = (path.read_bytes(), path.stat().st_mode & 0o7777)
        return cls(files, dirs)

    def restore(self, root: Path) -> None:
        """Delete what was added (links included), rewrite what changed, recreate what went."""
        for directory in [root, *(root / d for d in self.dirs)]:
            with contextlib.suppress(FileNotFoundError):
                directory.chmod(0o700)  # a test made it read-only: open it to fix its files
        for path in sorted(root.rglob("*"), key=lambda p: len(p.parts), reverse=True):
            rel = path.relative_to(root).as_posix()
            if path.is_symlink() or (path.is_file() and rel not in self.files):
                path.unlink()
            elif path.is_dir() and rel not in self.dirs:
                shutil.rmtree(path)
            elif not (path.is_file() or path.is_dir()):
                path.unlink()
        for rel in sorted(self.dirs):
            (root / rel).mkdir(parents=True, exist_ok=True)
        for rel, (data, mode) in self.files.items():
            path = root / rel
            if path.is_dir():
                shutil.rmtree(path)
            if not path.is_file() or path.read_bytes() != data:
                with contextlib.suppress(FileNotFoundError):
                    path.chmod(0o600)
                path.write_bytes(data)
            os.chmod(path, mode)
        for rel, mode in sorted(self.dirs.items(), key=lambda item: -item[0].count("/")):
            os.chmod(root / rel, mode)


Prepare = Callable[[Path], None]


class Pool:
    """Warm bridges shared by the whole run, one per (language servers, fixture project):
    a test takes one `reset` to its fixture instead of starting Neovim and the servers
    (4.6 s with basedpyright, 6.3 s with typescript-language-server). A bridge that died
    (a test killed it) or whose reset failed is replaced by a fresh one. At most `KEEP`
    stay alive, the least recently taken closed first."""

    KEEP = 4

    def __init__(self, base: Path) -> None:
        self.base = base
        self.bridges: dict[tuple[tuple[str, ...], str], Bridge] = {}

    def take(self, servers: tuple[str, ...] = ("basedpyright",), project: str = "shop",
             source: Path = EXAMPLE, prepare: Prepare | None = None, restart: bool = False) -> Bridge:
        """The warm bridge of `servers` on `project`: `source` copied, then `prepare`d (the
        same `project` name must always mean the same source and preparation); `restart`:
        with its language servers started again (`Bridge.reset`)."""
        key = (servers, project)
        bridge = self.bridges.pop(key, None)
        if bridge is not None:
            try:
                if not bridge.alive:
                    raise RuntimeError("closed")
                bridge.reset(restart)
            except Exception:  # whatever broke it, a fresh one replaces it
                with contextlib.suppress(Exception):
                    self._close(bridge)  # a closed one is not closed twice
                bridge = None
        if bridge is None:
            root = self.base / f"{'-'.join(servers) or 'none'}-{project}-{len(os.listdir(self.base))}"
            shutil.copytree(source, root)
            if prepare is not None:
                prepare(root)
            bridge = Bridge(root, list(servers))
        self.bridges[key] = bridge  # newest last
        while len(self.bridges) > self.KEEP:
            oldest = next(iter(self.bridges))
            self._close(self.bridges.pop(oldest))
        return bridge

    @staticmethod
    def _close(bridge: Bridge) -> None:
        if bridge.alive:
            bridge.close()

    def close(self) -> None:
        for bridge in self.bridges.values():
            self._close(bridge)
        self.bridges.clear()


DELAY_PROXY = Path(__file__).with_name("delay_server.py")
# Lua: the command of config `name` run behind a proxy (the arguments given first). Before
# any buffer starts the server; the config keeps its name, so the bridge treats the server
# as it treats that server.
BEHIND = """
local name, prefix = ...
vim.lsp.config(name, {cmd = vim.list_extend(prefix, vim.lsp.config[name].cmd)})
"""


def behind_delay_proxy(lua: Callable[..., Any], name: str, *args: str) -> None:
    """Config `name`'s server behind `delay_server.py` with `args` (see that file), in the
    Neovim `lua` runs code in (`Bridge.lua`, `HumanNvim.lua`)."""
    lua(BEHIND, name, [sys.executable, str(DELAY_PROXY), *args])


def rich_copy(base: Path) -> Path:
    """A copy of rich 13.9.4's package (the benchmark corpus, fetched from PyPI once) under
    `base`, as a project of its own; the test is skipped where it cannot be fetched."""
    from benchmarks.corpus import fetch_rich

    try:
        corpus = fetch_rich()
    except (OSError, subprocess.CalledProcessError) as error:  # no network, no copy
        pytest.skip(f"the rich corpus is not obtainable here: {error}")
    root = base / "rich"
    shutil.copytree(corpus.root / "rich", root / "rich")
    (root / "pyproject.toml").write_text('[project]\nname = "rich"\nversion = "13.9.4"\n')
    return root


def shop_bridge(bridges: Pool, servers: tuple[str, ...] = ("basedpyright",),
                also: dict[str, Path] | None = None) -> Bridge:
    """examples/shop with basedpyright from the run's pool, reset to the fixture, for a
    module-scoped fixture. `also`: more trees copied in, by the directory they go to
    (`{"web": TS_SHOP}`), for the `servers` that read them; the servers stay warm across
    the reset (see `Bridge.reset`)."""
    trees = also or {}

    def prepare(root: Path) -> None:
        for where, tree in trees.items():
            shutil.copytree(tree, root / where)

    project = "+".join(["shop", *(f"{where}={tree}" for where, tree in trees.items())])
    return bridges.take(servers, project, prepare=prepare)
