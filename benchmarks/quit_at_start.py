"""`:qa!` right after start, Neovim with lsap against the same Neovim without it.

    python -m benchmarks.run --only quit            # 20 quits of each, 0.2–1.0 s after start
    python -m benchmarks.quit_at_start --runs 5     # fewer (both write their block of RESULTS.md)

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
from dataclasses import dataclass, field
from pathlib import Path

import msgpack

from .corpus import HERE, REPO, example_copy
from .report import QUIT_MARKERS, write_measured
from .soak import isolated

INIT = """\
vim.lsp.config('basedpyright', {
  cmd = { 'basedpyright-langserver', '--stdio' },
  filetypes = { 'python' }, root_markers = { 'pyproject.toml', '.git' },
})
vim.lsp.enable('basedpyright')
"""
TARGET = 0.3  # seconds lsap may add to Neovim's own quit (issue 47)
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
    """When the process `pid` started (None: there is none, or it has exited and waits to be
    reaped: tmux, busy, left Neovim's TUI a zombie for seconds at times): a pid used again
    is another."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return fields[19] if len(fields) > 19 and fields[0] != "Z" else None


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


@dataclass
class Quits:
    """The pairs of one run, (delay, seconds without lsap, seconds with it), and what was slow."""

    pairs: list[tuple[float, float, float]] = field(default_factory=list)
    slow: list[str] = field(default_factory=list)
    stalled: int = 0  # TUIs left hanging (either Neovim), their pair measured again

    def over(self) -> list[float]:
        return [lsap - alone for _, alone, lsap in self.pairs]

    def within(self) -> int:
        return sum(1 for d in self.over() if d <= TARGET)

    def summary(self) -> dict[str, object]:
        return {"runs": len(self.pairs), "pairs (delay, without lsap, with lsap)": self.pairs,
                "median without lsap": statistics.median(alone for _, alone, _ in self.pairs),
                "median with lsap": statistics.median(lsap for _, _, lsap in self.pairs),
                "median over": round(statistics.median(self.over()), 3), "max over": round(max(self.over()), 3),
                f"within {TARGET} s": self.within(), "slow": self.slow, "stalled TUIs, measured again": self.stalled}

    def markdown(self) -> list[str]:
        """RESULTS.md's block: the count within target, the medians of the same run, each pair."""
        alone = statistics.median(a for _, a, _ in self.pairs)
        lsap = statistics.median(b for _, _, b in self.pairs)
        lines = [f"**{self.within()} of {len(self.pairs)}** quits within {TARGET} s of the same Neovim without "
                 f"lsap at the same moment (target: all). Median quit {lsap:.3f} s with lsap, {alone:.3f} s "
                 f"without (same run); lsap's extra time: median {statistics.median(self.over()):+.3f} s, "
                 f"max {max(self.over()):+.3f} s. TUIs left hanging and measured again: {self.stalled}.", "",
                 "| `:qa!` after | without lsap | with lsap | extra |", "|---:|---:|---:|---:|"]
        lines += [f"| {delay:.2f} s | {a:.3f} s | {b:.3f} s | {b - a:+.3f} s |" for delay, a, b in self.pairs]
        return lines


def measure(runs: int) -> Quits:
    base = Path(os.environ["XDG_RUNTIME_DIR"]).parent
    with_lsap, plain = home(base / "lsap", True), home(base / "plain", False)
    tmux = Tmux(example_copy(base).root)
    quits = Quits()
    try:
        for n in range(runs):
            delay = 0.2 + 0.8 * n / max(1, runs - 1)
            for _ in range(3):  # a TUI left hanging (either Neovim, rarely): that pair again
                pair = (round(delay, 2), round(quit_after(tmux, plain, delay, quits.slow), 3),
                        round(quit_after(tmux, with_lsap, delay, quits.slow), 3))
                if max(pair[1:]) < STALLED:
                    break
                quits.stalled += 1
            quits.pairs.append(pair)
    finally:
        tmux.close()
    return quits


def run(out: Path, runs: int) -> dict[str, object]:
    """Measure `runs` pairs in a temporary home and write their block into `out`."""
    if shutil.which("tmux") is None:
        raise SystemExit("needs tmux")
    begun, environ = time.monotonic(), dict(os.environ)
    try:
        with tempfile.TemporaryDirectory(prefix="lsap-quit-") as tmp:
            isolated(Path(tmp))
            quits = measure(runs)
    finally:  # the rest of a `benchmarks.run` keeps its own environment
        os.environ.clear()
        os.environ.update(environ)
    write_measured(
        out, "## Quitting right after start (issue 47)",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} in {time.monotonic() - begun:.0f} s: "
        f"{runs} pairs, Neovim in tmux with basedpyright set up on examples/shop, `:qa!` sent 0.2–1.0 s after "
        "start, timed until Neovim is gone, first without lsap, then with it (set up, the agent socket on). "
        "Reproduce: `python -m benchmarks.run --only quit`.", quits.markdown(), QUIT_MARKERS)
    return quits.summary()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.quit_at_start", description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md", help="where to write the results")
    args = parser.parse_args(argv)
    print(json.dumps(run(args.out, args.runs)))


if __name__ == "__main__":
    main()
