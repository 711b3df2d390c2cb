"""Remote-plugin adapter: hands everything to `lsap_bridge` (see lsap_bridge/host.py)."""

import sys
from typing import Any

import pynvim


@pynvim.plugin
class LsapPlugin:
    def __init__(self, nvim: pynvim.Nvim) -> None:
        self.nvim = nvim
        # Before anything heavy is imported: Neovim's quit ends this host at once, status 0.
        try:
            from lsap_bridge.hostexit import install
        except ImportError:
            return  # `start` says why
        install()

    @pynvim.function("LsapStart", sync=False)
    def start(self, args: list[Any]) -> None:
        # Imported here, not at the top: Neovim waits for the host to load its plugins, and
        # lsap_bridge (pydantic, jinja2, …) would hold the editor for most of a second.
        try:
            from lsap_bridge.host import start_in_editor
        except ImportError as exc:
            # The remote plugin is registered but this Python lacks the package (or one of
            # its dependencies): say so in the editor, with the step that installs it.
            self.nvim.exec_lua(
                "require('lsap.rpc').call('start_failed', ...)",
                f"lsap_bridge does not import in Neovim's Python host {sys.executable} ({exc}): "
                "run :lua require(\"lsap\").build(), then restart Neovim (see :checkhealth lsap)",
            )
            return
        start_in_editor(args[0] if args else {})
