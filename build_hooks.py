"""Build hook: the wheel carries the Neovim half of lsap.nvim inside `lsap_bridge/nvim/`.

The repository keeps ONE copy of the Lua modules, the plugin file, the remote-plugin
adapter and the help file at its top level, where Neovim's 'runtimepath' wants them. A
wheel built from it copies them into the package, so `pip`, `pipx` and `uvx` installs
run the embedded Neovim without a checkout (`lsap_bridge.embedded.plugin_root` looks
there). They are listed as sources too, so the sdist carries them and a wheel built
from the sdist is the same. An editable install uses the checkout's own files.
"""

from __future__ import annotations

from pathlib import Path

from setuptools.command.build_py import build_py

# What Neovim loads from the plugin directory, relative to the project root.
NVIM_FILES = ("lua/lsap/**/*.lua", "plugin/*.lua", "rplugin/python3/*.py", "doc/lsap.txt")
TARGET = Path("lsap_bridge", "nvim")


def nvim_files() -> list[Path]:
    return sorted(path for pattern in NVIM_FILES for path in Path().glob(pattern))


class BuildPy(build_py):
    """`build_py` that also puts the Neovim half into the built package."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        for source in nvim_files():
            target = Path(self.build_lib, TARGET, source)
            self.mkpath(str(target.parent))
            self.copy_file(str(source), str(target))

    def get_source_files(self) -> list[str]:
        return [*super().get_source_files(), *map(str, nvim_files())]

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        ours = [] if self.editable_mode else [str(Path(self.build_lib, TARGET, f)) for f in nvim_files()]
        return [*super().get_outputs(include_bytecode), *ours]
