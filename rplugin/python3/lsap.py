"""Remote-plugin adapter: hands everything to `lsap_bridge` (see lsap_bridge/host.py)."""

from typing import Any

import pynvim

from lsap_bridge.host import start_in_editor


@pynvim.plugin
class LsapPlugin:
    def __init__(self, nvim: pynvim.Nvim) -> None:
        self.nvim = nvim

    @pynvim.function("LsapStart", sync=False)
    def start(self, args: list[Any]) -> None:
        start_in_editor(args[0] if args else {})
