"""Remote-plugin adapter: hands everything to `lsap_bridge` (see lsap_bridge/host.py)."""

import sys
import threading
from typing import Any

import pynvim


def _quit_at_once() -> None:
    """Neovim's quit ends this host at once, with status 0 (lsap_bridge/hostexit.py)."""
    try:
        from lsap_bridge.hostexit import install
    except ImportError:
        return  # `start` says why
    install()


@pynvim.plugin
class LsapPlugin:
    def __init__(self, nvim: pynvim.Nvim) -> None:
        self.nvim = nvim
        _quit_at_once()

    @pynvim.function("LsapStart", sync=False)
    def start(self, args: list[Any]) -> None:
        _quit_at_once()  # pynvim's loop set its own SIGTERM handler as it started: ours again
        # lsap_bridge (pydantic, jinja2, …) is imported on a thread of its own: not at the
        # top (:UpdateRemotePlugins, and a host Neovim starts, wait for the host to load its
        # plugins), nor on pynvim's loop (a quit meanwhile, its SIGTERM or the end of its
        # channel, would wait for the imports). lsap starts this host without waiting for it
        # (lua/lsap/service.lua).
        options = args[0] if args else {}
        threading.Thread(target=self._start, args=(options,), name="lsap-start", daemon=True).start()

    def _start(self, options: Any) -> None:
        try:
            from lsap_bridge.host import start_in_editor
        except ImportError as exc:
            # The remote plugin is registered but this Python lacks the package (or one of
            # its dependencies): say so in the editor, with the step that installs it.
            message = (f"lsap_bridge does not import in Neovim's Python host {sys.executable} ({exc}): "
                       "run :lua require(\"lsap\").build(), then restart Neovim (see :checkhealth lsap)")
            self.nvim.async_call(self.nvim.exec_lua, "require('lsap.rpc').call('start_failed', ...)", message)
            return
        start_in_editor(options)
