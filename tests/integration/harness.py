"""A real headless Neovim with real language servers, driven from synchronous tests."""

from __future__ import annotations

import asyncio
import json
import shutil
import threading
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

from lsap_bridge.embedded import Embedded, start_embedded
from lsap_bridge.gateway import Timeouts
from lsap_bridge.service import Response, Service
from lsap_bridge.workspace import Workspace
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

    def close(self) -> None:
        self.loop.run(self.embedded.close())
        self.loop.close()


def shop_bridge(tmp_path_factory: Any, name: str, servers: tuple[str, ...] = ("basedpyright",),
                also: dict[str, Path] | None = None) -> Iterator[Bridge]:
    """A module's own copy of examples/shop with basedpyright, closed when the module ends
    (`yield from` it in a module-scoped fixture). `also`: more trees copied in, by the
    directory they go to (`{"web": TS_SHOP}`), for the `servers` that read them."""
    root = tmp_path_factory.mktemp(name) / "shop"
    shutil.copytree(EXAMPLE, root)
    for where, tree in (also or {}).items():
        shutil.copytree(tree, root / where)
    bridge = Bridge(root, list(servers))
    yield bridge
    bridge.close()
