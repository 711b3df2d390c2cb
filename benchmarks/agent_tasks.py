"""Everyday agent questions answered with lsap and with grep-and-read (issue 50, item 7).

    .venv/bin/python -m benchmarks.agent_tasks          # prints the table, writes RESULTS.md
    .venv/bin/python -m benchmarks.agent_tasks --print  # prints only

Two code bases no test uses, fetched from their registries like the rest of the corpus:
httpx 0.27.2 (PyPI sdist, basedpyright) and @reduxjs/toolkit 2.16.0 (npm tarball with its
`src/`, typescript-language-server, no node_modules; the tarball has no tsconfig, so the
benchmark writes the one its repository's package has in substance, `include: ["src"]`:
without one tsserver's inferred project holds only the open files and finds no references).
Each task has a question, the grep commands an agent without lsap runs (`grep -rn`, then
`sed -n` to read what it found, as it must to answer), the lsap call(s), and a ground truth
written from the sources by hand: the lines that must be shown (`path:line`) and the words
that must appear. Tokens are cl100k over each command and its output (what enters the
agent's context); a side is complete when its output shows every line and word of the truth.
The lsap calls use the defaults, as an agent sends them, but where the question is narrower
than the whole workspace: the task whose grep searches the library only
(`py-callers-build-request`) asks for the same scope (`include_tests: false`).
Wall time is each side's own (lsap: requests to a warm embedded daemon's service; grep: the
processes).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shlex
import subprocess
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from lsap_bridge.embedded import start_embedded
from lsap_bridge.service import Service
from lsap_bridge.workspace import Workspace

from .cl100k import tokens
from .corpus import HERE, _npm_package, _pypi_sdist
from .peers import bridge_lines
from .report import AGENT_TASKS_MARKERS, write_block
from .rig import TIMEOUTS

HTTPX, REDUX = ("httpx", "0.27.2"), ("@reduxjs/toolkit", "2.16.0")
Line = tuple[str, int]
TSCONFIG = {"compilerOptions": {"target": "ES2020", "module": "ESNext", "moduleResolution": "Bundler",
                                "strict": True, "skipLibCheck": True, "noEmit": True, "jsx": "react"},
            "include": ["src"]}


@dataclass(frozen=True)
class Task:
    """A question, the grep-and-read commands and lsap calls that answer it, and its truth."""

    name: str
    question: str
    grep: tuple[str, ...]
    lsap: tuple[dict[str, Any], ...]
    lines: tuple[Line, ...] = ()
    words: tuple[str, ...] = ()


def _refs(anchor: str, **options: Any) -> dict[str, Any]:
    """A references call as an agent sends it: the defaults (the declaration is the title's
    place, not listed again), and the options of a narrower question."""
    return {"mode": "references", "locate": anchor, **options}


def _lines(path: str, *numbers: int) -> tuple[Line, ...]:
    return tuple((path, n) for n in numbers)


PY = "httpx/_client.py"
HTTPX_TASKS = (
    Task("py-callers-ssl", "Where is create_ssl_context called?",
         ("grep -rnw create_ssl_context httpx tests",),
         (_refs("httpx/_config.py:create_ssl_context"),),
         _lines("httpx/_transports/default.py", 139, 280)
         + _lines("tests/test_config.py", 12, 19, 23, 37, 47, 53, 62, 73, 80, 84, 91, 97, 185, 194, 198)),
    Task("py-callers-primitive", "Who uses primitive_value_to_str?",
         ("grep -rnw primitive_value_to_str httpx tests",),
         (_refs("httpx/_utils.py:primitive_value_to_str"),),
         _lines("httpx/_multipart.py", 56) + _lines("httpx/_content.py", 142, 144)
         + _lines("httpx/_urls.py", 459, 549, 564)),
    Task("py-callers-proxies", "Who calls get_environment_proxies?",
         ("grep -rnw get_environment_proxies httpx tests",),
         (_refs("httpx/_utils.py:get_environment_proxies"),),
         _lines(PY, 220) + _lines("tests/test_utils.py", 208)),
    Task("py-callers-merge-url", "Who calls Client._merge_url?",
         ("grep -rnw _merge_url httpx tests",),
         (_refs("httpx/_client.py:BaseClient._merge_url"),),
         _lines(PY, 346)),
    Task("py-subclasses-transport-error", "Which exceptions derive from TransportError, at any depth?",
         ("grep -rn '(TransportError)' httpx",
          "grep -rnE '\\((TimeoutException|NetworkError|ProxyError|UnsupportedProtocol|ProtocolError)\\)' httpx"),
         ({"mode": "types", "locate": "httpx/_exceptions.py:TransportError", "direction": "subtypes",
           "depth": 3},),
         (), ("TimeoutException", "ConnectTimeout", "ReadTimeout", "WriteTimeout", "PoolTimeout",
              "NetworkError", "ReadError", "WriteError", "ConnectError", "CloseError", "ProxyError",
              "UnsupportedProtocol", "ProtocolError", "LocalProtocolError", "RemoteProtocolError")),
    Task("py-implementations-transport", "Which classes implement BaseTransport?",
         ("grep -rnE 'class \\w+\\(.*\\bBaseTransport\\b' httpx",),
         ({"mode": "types", "locate": "httpx/_transports/base.py:BaseTransport", "direction": "subtypes"},),
         (), ("HTTPTransport", "WSGITransport", "MockTransport")),
    Task("py-signature-send", "What are Client.send's parameters?",
         ("grep -n 'def send' httpx/_client.py", "sed -n '891,898p' httpx/_client.py"),
         ({"mode": "hover", "locate": "httpx/_client.py:Client.send"},),
         (), ("request: Request", "stream: bool", "auth:", "follow_redirects:", "Response")),
    Task("py-return-transport-for-url", "What does Client._transport_for_url return?",
         ("grep -n 'def _transport_for_url' httpx/_client.py",),
         ({"mode": "hover", "locate": "httpx/_client.py:Client._transport_for_url"},),
         (), ("BaseTransport",)),
    Task("py-definition-headers", "Where is the Headers class defined?",
         ("grep -rn 'class Headers' httpx",),
         ({"mode": "definition", "locate": "httpx/_client.py@self.headers = <|>Headers(headers)"},),
         _lines("httpx/_models.py", 59)),
    Task("py-url-properties", "What properties does URL have?",
         ("grep -n '    def ' httpx/_urls.py",),
         ({"mode": "outline", "file_path": "httpx/_urls.py"},),
         (), ("scheme", "host", "port", "path", "query", "fragment", "raw_path", "is_absolute_url")),
    Task("py-callers-build-request", "Who calls Client.build_request?",
         ("grep -rnw build_request httpx",),
         (_refs("httpx/_client.py:BaseClient.build_request", include_tests=False),),
         _lines(PY, 824, 867, 1572, 1615)),
)

TS_TASKS = (
    Task("ts-callers-builder-callback", "Who calls executeReducerBuilderCallback?",
         ("grep -rnw executeReducerBuilderCallback src",),
         (_refs("src/mapBuilders.ts:executeReducerBuilderCallback"),),
         _lines("src/createReducer.ts", 149) + _lines("src/createSlice.ts", 688)),
    Task("ts-callers-mini-serialize", "Where is miniSerializeError used?",
         ("grep -rnw miniSerializeError src",),
         (_refs("src/createAsyncThunk.ts:miniSerializeError"),),
         _lines("src/createAsyncThunk.ts", 599) + _lines("src/index.ts", 118)),
    Task("ts-callers-default-middleware", "Who calls buildGetDefaultMiddleware?",
         ("grep -rnw buildGetDefaultMiddleware src",),
         (_refs("src/getDefaultMiddleware.ts:buildGetDefaultMiddleware"),),
         _lines("src/configureStore.ts", 130)),
    Task("ts-callers-immutable", "Who calls createImmutableStateInvariantMiddleware?",
         ("grep -rnw createImmutableStateInvariantMiddleware src",),
         (_refs("src/immutableStateInvariantMiddleware.ts:createImmutableStateInvariantMiddleware"),),
         _lines("src/getDefaultMiddleware.ts", 82) + _lines("src/index.ts", 78)),
    Task("ts-callers-create-reducer", "Who calls createReducer?",
         ("grep -rnw createReducer src",),
         (_refs("src/createReducer.ts:createReducer"),),
         _lines("src/createSlice.ts", 696) + _lines("src/index.ts", 47)),
    Task("ts-signature-configure-store", "What does configureStore take and return?",
         ("grep -rn 'export function configureStore' src", "sed -n '121,130p' src/configureStore.ts"),
         ({"mode": "hover", "locate": "src/configureStore.ts:configureStore"},),
         (), ("ConfigureStoreOptions", "EnhancedStore")),
    Task("ts-type-of-local", "What is the type of getDefaultMiddleware in configureStore?",
         ("grep -n 'const getDefaultMiddleware' src/configureStore.ts", "grep -rn 'buildGetDefaultMiddleware =' src",
          "sed -n '53,56p' src/getDefaultMiddleware.ts"),
         ({"mode": "hover", "locate": "src/configureStore.ts@const <|>getDefaultMiddleware"},),
         (), ("GetDefaultMiddleware<S>",)),
    Task("ts-definition-nanoid", "Where is nanoid defined?",
         ("grep -rn 'nanoid =' src",),
         ({"mode": "definition", "locate": "src/combineSlices.ts@{ type: <|>nanoid() }"},),
         _lines("src/nanoid.ts", 11)),
    Task("ts-outline-async-thunk", "What does createAsyncThunk.ts export?",
         ("grep -n '^export' src/createAsyncThunk.ts",),
         ({"mode": "outline", "file_path": "src/createAsyncThunk.ts"},),
         (), ("createAsyncThunk", "miniSerializeError", "unwrapResult", "SerializedError")),
    Task("ts-callers-draft-safe", "Where is createDraftSafeSelector used?",
         ("grep -rnw createDraftSafeSelector src",),
         (_refs("src/createDraftSafeSelector.ts@export const <|>createDraftSafeSelector"),),
         _lines("src/entities/state_selectors.ts", 25) + _lines("src/index.ts", 13)),
    Task("ts-supertypes-tuple", "What does Tuple extend?",
         ("grep -n 'class Tuple' src/utils.ts", "sed -n '29,31p' src/utils.ts"),
         ({"mode": "types", "locate": "src/utils.ts:Tuple", "direction": "supertypes"},),
         (), ("Array",)),
)


@dataclass
class Side:
    """One way's cost on a task: tokens, calls, seconds, and what it left out."""

    tokens: int = 0
    calls: int = 0
    seconds: float = 0.0
    missing: tuple[str, ...] = ()


def _grep_lines(text: str) -> set[Line]:
    return {(m[1], int(m[2])) for m in re.finditer(r"^(?:\./)?([^:\s]+):(\d+):", text, re.M)}


def _missing(task: Task, text: str, shown: set[Line]) -> tuple[str, ...]:
    return (*(f"{p}:{n}" for p, n in task.lines if (p, n) not in shown),
            *(w for w in task.words if w not in text))


def run_grep(task: Task, root: Path) -> Side:
    side, out = Side(), []
    for command in task.grep:
        started = time.perf_counter()
        done = subprocess.run(command, shell=True, cwd=root, capture_output=True, text=True, check=False)
        side.seconds += time.perf_counter() - started
        out.append(f"$ {command}\n{done.stdout}")
        side.calls += 1
    text = "\n".join(out)
    side.tokens = tokens(text)
    side.missing = _missing(task, text, _grep_lines(text))
    return side


async def run_lsap(task: Task, service: Service) -> Side:
    side, out = Side(), []
    for payload in task.lsap:
        started = time.perf_counter()
        answer = await service.handle(dict(payload))
        side.seconds += time.perf_counter() - started
        words = [payload["mode"], shlex.quote(str(payload.get("locate") or payload.get("file_path")))]
        words += [f"--set {k}={json.dumps(v)}" for k, v in payload.items() if k not in ("mode", "locate", "file_path")]
        out.append(f"$ lsap {' '.join(words)}\n{answer.text}")
        side.calls += 1
    text = "\n".join(out)
    side.tokens = tokens(text)
    side.missing = _missing(task, text, bridge_lines(text))
    return side


async def settle(service: Service, tasks: tuple[Task, ...], bound: float = 300) -> None:
    """Ask each task once, then until no answer says the server is still indexing (at most
    `bound` seconds): the table measures a warm session, not a server loading its project."""
    deadline = time.monotonic() + bound
    for task in tasks:
        while "index may be incomplete" in (await service.handle(dict(task.lsap[0]))).text:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{task.name}: the server still indexes after {bound:.0f} s")
            await asyncio.sleep(2)


def unscoped(task: Task) -> Task | None:
    """The task asked of the whole workspace (the defaults), when its lsap call narrows it."""
    if not any("include_tests" in payload for payload in task.lsap):
        return None
    return replace(task, lsap=tuple({k: v for k, v in p.items() if k != "include_tests"} for p in task.lsap))


Rows = list[tuple[Task, Side, Side]]


async def measure(tasks: tuple[Task, ...], root: Path, servers: list[str]) -> tuple[Rows, dict[str, int]]:
    """Each task's two sides, and the lsap tokens of each scoped task asked of the whole
    workspace instead (reported beside the table, so the scope's share is plain)."""
    embedded = await start_embedded(root, servers, TIMEOUTS)
    try:
        service = Service(embedded.gateway, Workspace.of(root))
        await settle(service, tasks)
        rows = [(task, await run_lsap(task, service), run_grep(task, root)) for task in tasks]
        wide = {task.name: (await run_lsap(whole, service)).tokens for task in tasks if (whole := unscoped(task))}
        return rows, wide
    finally:
        await embedded.close()


def table(rows: list[tuple[Task, Side, Side]]) -> list[str]:
    lines = ["| task | question | lsap tokens | grep tokens | ratio | lsap calls | grep calls | lsap complete "
             "| grep complete | lsap s | grep s |", "|---|---|---|---|---|---|---|---|---|---|---|"]

    def mark(side: Side) -> str:
        return "yes" if not side.missing else "no: " + ", ".join(side.missing[:4]) + " …" * (len(side.missing) > 4)

    for task, lsap, grep in rows:
        lines.append(f"| {task.name} | {task.question} | {lsap.tokens} | {grep.tokens} | "
                     f"{lsap.tokens / max(1, grep.tokens):.2f}x | {lsap.calls} | {grep.calls} | {mark(lsap)} | "
                     f"{mark(grep)} | {lsap.seconds:.2f} | {grep.seconds:.2f} |")
    lt, gt = sum(r[1].tokens for r in rows), sum(r[2].tokens for r in rows)
    lines.append(f"| **total** | {len(rows)} tasks | {lt} | {gt} | {lt / max(1, gt):.2f}x | "
                 f"{sum(r[1].calls for r in rows)} | {sum(r[2].calls for r in rows)} | "
                 f"{sum(not r[1].missing for r in rows)}/{len(rows)} | "
                 f"{sum(not r[2].missing for r in rows)}/{len(rows)} | "
                 f"{sum(r[1].seconds for r in rows):.1f} | {sum(r[2].seconds for r in rows):.1f} |")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.agent_tasks", description=__doc__.split("\n\n")[0])
    parser.add_argument("--print", action="store_true", help="print the table, do not write RESULTS.md")
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    args = parser.parse_args(argv)
    rows, wide = asyncio.run(measure(HTTPX_TASKS, _pypi_sdist(*HTTPX), ["basedpyright"]))
    redux = _npm_package(*REDUX)
    (redux / "tsconfig.json").write_text(json.dumps(TSCONFIG, indent=2) + "\n")
    ts_rows, ts_wide = asyncio.run(measure(TS_TASKS, redux, ["ts_ls"]))
    rows, wide = rows + ts_rows, {**wide, **ts_wide}
    lt, gt = sum(r[1].tokens for r in rows), sum(r[2].tokens for r in rows)
    met = lt <= 0.7 * gt and all(not r[1].missing for r in rows)
    scoped = {r[0].name: r[1].tokens for r in rows if r[0].name in wide}
    whole = lt + sum(wide.values()) - sum(scoped.values())
    block = ["## Agent tasks against grep (issue 50)", "",
             f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; reproduce: "
             "`python -m benchmarks.agent_tasks`.", "", __doc__.split("\n\n", 2)[2].strip() if __doc__ else "", "",
             "Target: lsap's total tokens <= 0.7x grep's, every lsap answer complete: "
             + ("met." if met else "NOT met."), "", *table(rows), "",
             *(["Asked of the whole workspace instead (the defaults: the uses in tests listed too), "
                + ", ".join(f"{name} costs {wide[name]} tokens (scoped: {scoped[name]})" for name in wide)
                + f": lsap's total {whole}, {whole / max(1, gt):.2f}x grep's.", ""] if wide else [])]
    if not args.print:
        write_block(args.out, block, *AGENT_TASKS_MARKERS)
    print("\n".join(block))


if __name__ == "__main__":
    main()
