"""`:qa!` right after start, Neovim with lsap against the same Neovim without it.

    python -m benchmarks.quit_at_start              # 20 quits of each, 0.2–1.0 s after start
    python -m benchmarks.quit_at_start --runs 5

Two homes of their own: the same init.lua (basedpyright set up for Python), one with lsap
as a user installs it (the package on the runtimepath, this Python as the host, the remote
plugin registered, `require('lsap').setup()`), one without. Each run opens Neovim in a tmux
window on a copy of examples/shop, waits 0.2 to 1.0 s (spread over the runs, the same for
both), sends `:qa!` (on its --listen socket: keys typed while the TUI starts may be lost) and
times until Neovim (its TUI and the editor process) is gone. The
target: every lsap quit within 0.3 s of the plain one at the same moment.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgpack

from .corpus import REPO, example_copy
from .soak import isolated

INIT = """\
vim.lsp.config('basedpyright', {
  cmd = { 'basedpyright-langserver', '--stdio' },
  filetypes = { 'python' }, root_markers = { 'pyproject.toml', '.git' },
})
vim.lsp.enable('basedpyright')
"""
STALLED = 5.0  # seconds after which a quit is a TUI left hanging, with lsap or without
LSAP = f"vim.opt.rtp:prepend({str(REPO)!r})\nvim.g.python3_host_prog = {sys.executable!r}\n"


def home(base: Path, lsap: bool) -> dict[str, str]:
    """The environment of a home under `base` (its config written, the plugin registered)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        (base / name.lower()).mkdir(parents=True, mode=0o700)
        env[name] = str(base / name.lower())
    env["XDG_RUNTIME_DIR"] = os.environ["XDG_RUNTIME_DIR"]
    (base / "xdg_config_home" / "nvim").mkdir()
    init = (LSAP + INIT + "require('lsap').setup({})\n") if lsap else INIT
    (base / "xdg_config_home" / "nvim" / "init.lua").write_text(init)
    if lsap:
        subprocess.run(["nvim", "--headless", "+UpdateRemotePlugins", "+qa"], env=env, check=True,
                       capture_output=True, timeout=120)
    return env


class Tmux:
    def __init__(self, cwd: Path) -> None:
        self.name, self.cwd = f"lsap-quit-{os.getpid()}", cwd
        self.run("new-session", "-d", "-x", "120", "-y", "40", "sh")

    def run(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.name, "-f", "/dev/null", *args], capture_output=True,
                              text=True, check=True, timeout=10).stdout

    def nvim(self, env: dict[str, str], address: Path) -> int:
        """Neovim in a new window, listening at `address`: the pid of its TUI."""
        return int(self.run("new-window", "-P", "-F", "#{pane_pid}", "-c", str(self.cwd), "env",
                            *(f"{k}={v}" for k, v in env.items() if k.startswith("XDG_") or k == "PATH"),
                            "TERM=xterm-256color", "nvim", "--listen", str(address)))

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.name, "kill-server"], capture_output=True, timeout=10)


def children(pid: int) -> set[int]:
    out: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out.update(int(c) for c in (task / "children").read_text().split())
        except OSError:
            continue
    return out


def tree(pid: int) -> set[int]:
    out: set[int] = set()
    todo = [pid]
    while todo:
        out.add(found := todo.pop())
        todo.extend(children(found))
    return out


def started(pid: int) -> str | None:
    """When the process `pid` started (None: there is none): a pid used again is another."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "?"


def name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ").rsplit("/", 1)[-1][:60]
    except OSError:
        return "?"


def quit_after(tmux: Tmux, env: dict[str, str], delay: float, slow: list[str]) -> float:
    """Seconds from `:qa!`, sent `delay` s after Neovim started, until it is gone; what
    outlived half a second of it goes to `slow`."""
    address = Path(env["XDG_RUNTIME_DIR"]) / f"quit-{time.monotonic_ns()}.sock"
    tui = tmux.nvim(env, address)
    opened = time.monotonic()
    time.sleep(max(0.0, opened + delay - time.monotonic()))
    quit_at = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    while True:
        try:
            quit_at.connect(str(address))
            break
        except OSError:  # not listening yet
            time.sleep(0.002)
    # The TUI and the editor (`nvim --embed`), and what they started: the host, servers.
    family = {p: started(p) for p in (tui, *children(tui)) if comm(p) == "nvim"}
    below = {p: name(p) for p in tree(tui)}
    begun = time.monotonic()
    # `:qa!` as Neovim's main loop takes it, like a key typed (keys sent to the terminal
    # while the TUI starts may be lost).
    quit_at.sendall(msgpack.packb([2, "nvim_command", ["qa!"]]))
    noted = False
    while any(started(p) == when for p, when in family.items()) and time.monotonic() - begun < 10:
        if not noted and time.monotonic() - begun > 0.5:
            noted = True
            now = {p: name(p) for p in tree(tui)}
            slow.append(f"{delay:.2f} s: " + "; ".join(f"{comm(p)} {n}" for p, n in {**below, **now}.items()
                                                       if Path(f"/proc/{p}").exists()))
        time.sleep(0.005)
    quit_at.close()
    return time.monotonic() - begun


def measure(runs: int) -> dict[str, object]:
    base = Path(os.environ["XDG_RUNTIME_DIR"]).parent
    with_lsap, plain = home(base / "lsap", True), home(base / "plain", False)
    tmux = Tmux(example_copy(base).root)
    pairs: list[tuple[float, float, float]] = []
    slow: list[str] = []
    stalled = 0
    try:
        for n in range(runs):
            delay = 0.2 + 0.8 * n / max(1, runs - 1)
            for _ in range(3):  # a TUI left hanging (either Neovim, rarely): that pair again
                pair = (round(delay, 2), round(quit_after(tmux, plain, delay, slow), 3),
                        round(quit_after(tmux, with_lsap, delay, slow), 3))
                if max(pair[1:]) < STALLED:
                    break
                stalled += 1
            pairs.append(pair)
    finally:
        tmux.close()
    over = [lsap - alone for _, alone, lsap in pairs]
    return {"runs": runs, "pairs (delay, without lsap, with lsap)": pairs,
            "median over": round(statistics.median(over), 3), "max over": round(max(over), 3),
            "within 0.3 s": sum(1 for d in over if d <= 0.3), "slow": slow, "stalled TUIs, measured again": stalled}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.quit_at_start", description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args(argv)
    if shutil.which("tmux") is None:
        raise SystemExit("needs tmux")
    with tempfile.TemporaryDirectory(prefix="lsap-quit-") as tmp:
        isolated(Path(tmp))
        print(json.dumps(measure(args.runs)))


if __name__ == "__main__":
    main()
