"""Remote-plugin adapter: hands everything to `lsap_bridge` (see lsap_bridge/host.py)."""

from typing import Any

import pynvim


@pynvim.plugin
class LsapPlugin:
    def __init__(self, nvim: pynvim.Nvim) -> None:
        self.nvim = nvim

    @pynvim.function("LsapStart", sync=False)
    def start(self, args: list[Any]) -> None:
        # Imported here, not at the top: Neovim waits for the host to load its plugins, and
        # lsap_bridge (pydantic, jinja2, …) would hold the editor for most of a second.
        from lsap_bridge.host import start_in_editor

        start_in_editor(args[0] if args else {})
