"""8: organise imports through the bridge (`code_action`, kind `source.organizeImports`)
against the same raw requests through the same Neovim: every attached server's code actions,
the chosen one resolved where it needs it, applied with Neovim's own
`vim.lsp.util.apply_workspace_edit` and written, and the diagnostics pulled after. The
bridge adds what the raw side skips: the edit policy, the checks before writing, the
journal, and waiting for the servers that push their diagnostics to publish them for the
new text (most of its time).

A generated file with unsorted imports is put back before every repetition (untimed), so
that each side organises the same text. Python corpora get `ruff server` beside their
servers (the set-up that offers organise imports), enabled for the generated file only.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from lsap_bridge.editor import Client
from lsap_bridge.gateway import LspCall
from lsap_bridge.jsonvalue import Params, items, obj
from lsap_bridge.workspace import uri_of

from ..report import Results
from ..rig import Rig, Settings, median_ms, timed

PYTHON = "import sys\nimport os\nfrom collections import OrderedDict\nimport json\n\n\n" \
         "def main() -> None:\n    print(json.dumps(OrderedDict()), sys.argv, os.sep)\n"
TYPESCRIPT = 'import { b, a } from "./lsap_bench_two";\nimport { c } from "./lsap_bench_one";\n\n' \
             "export const sum = a + b + c;\n"
ONE, TWO = "export const c = 1;\n", "export const a = 1;\nexport const b = 2;\n"
KIND = "source.organizeImports"


RUFF_DEFAULTS = "# lsap benchmarks: ruff's defaults here, not a parent directory's config\n"


def _files(rig: Rig) -> tuple[Path, str]:
    root = rig.corpus.root
    if rig.corpus.language == "python":
        # Without a ruff config of its own, a corpus under this checkout gets the checkout's,
        # which excludes benchmarks/.corpus: ruff would offer nothing there.
        pyproject = root / "pyproject.toml"
        own = (root / "ruff.toml").exists() or (root / ".ruff.toml").exists() or (
            pyproject.exists() and "[tool.ruff" in pyproject.read_text())
        if not own:
            (root / "ruff.toml").write_text(RUFF_DEFAULTS)
        return root / "lsap_bench_imports.py", PYTHON
    (root / "lsap_bench_one.ts").write_text(ONE)
    (root / "lsap_bench_two.ts").write_text(TWO)
    return root / "lsap_bench_imports.ts", TYPESCRIPT


def _clean(root: Path) -> None:
    for generated in root.glob("lsap_bench_*"):
        generated.unlink()
    config = root / "ruff.toml"
    if config.exists() and config.read_text() == RUFF_DEFAULTS:
        config.unlink()


async def _raw(rig: Rig, path: Path, bufnr: int, clients: list[Client]) -> bool:
    """The raw side: every server's organise-imports actions (one batch), the first one
    resolved if it came bare, applied by Neovim and written, then the diagnostics pulled
    from the servers that offer them. Returns whether it changed the file."""
    doc = await rig.service.session.texts.document(path)
    last = len(doc.lines) - 1
    params: Params = {"textDocument": {"uri": uri_of(path)},
              "range": {"start": {"line": 0, "character": 0}, "end": {"line": last, "character": 0}},
              "context": {"diagnostics": [], "only": ["source"], "triggerKind": 1}}
    answers = await rig.gateway.lsp([LspCall(c.id, "textDocument/codeAction", params, bufnr) for c in clients])
    found = [(c, obj(a)) for c, answer in zip(clients, answers, strict=True) for a in items(answer.result)
             if str(obj(a).get("kind", "")).startswith(KIND)]
    if not found:
        return False
    client, action = found[0]
    if not action.get("edit"):
        action = obj((await rig.gateway.lsp([LspCall(client.id, "codeAction/resolve", action, bufnr)]))[0].result)
    changed = await rig.gateway.exec_lua(
        "local edit, encoding, bufnr = ...; vim.lsp.util.apply_workspace_edit(edit, encoding); "
        "local changed = vim.bo[bufnr].modified; "
        "vim.api.nvim_buf_call(bufnr, function() vim.cmd('silent noautocmd write!') end); return changed",
        action["edit"], client.offset_encoding, bufnr)
    pull = {"textDocument": {"uri": uri_of(path)}}
    await rig.gateway.lsp([LspCall(c.id, "textDocument/diagnostic", pull, bufnr) for c in clients
                           if c.supports("textDocument/diagnostic")])
    return changed is True


async def measure(rig: Rig, results: Results, settings: Settings) -> None:
    path, text = _files(rig)
    path.write_text(text)
    try:
        await _measure(rig, results, settings, path, text)
    finally:
        _clean(path.parent)
        await rig.service.session.servers.sync_disk()


async def _measure(rig: Rig, results: Results, settings: Settings, path: Path, text: str) -> None:
    session = rig.service.session
    if rig.corpus.language == "python" and "ruff" not in rig.corpus.servers:
        await rig.gateway.exec_lua("require('lsap.servers').enable({ 'ruff' }, ...)", str(rig.corpus.root))
    payload = {"mode": "code_action", "file_path": session.workspace.display(path), "kind": KIND,
               "format": "json"}
    _, first = await rig.bridge(payload)  # attaches the servers, warms up
    if not first["ok"]:
        results.note(f"organise imports through the bridge failed: {first['text'][:200]}")
        return
    server = json.loads(first["text"])["server"]
    target = await session.servers.target(path, "textDocument/codeAction")
    clients = [c for c in await session.gateway.wait_for_clients(target.bufnr, "*")
               if c.supports("textDocument/codeAction")]

    async def reset() -> None:
        path.write_text(text)
        await session.servers.sync_disk()  # the buffer takes the file back (the bridge's `fresh`)
        await session.texts.document(path)

    async def bridge() -> bool:
        _, answer = await rig.bridge(payload)
        return bool(answer["ok"] and json.loads(answer["text"])["changed"])

    async def raw() -> bool:
        return await _raw(rig, path, target.bufnr, clients)

    sides = [bridge, raw]
    times: list[list[float]] = [[], []]
    done = [0, 0]
    for rep in range(settings.reps):
        for i in (rep % 2, 1 - rep % 2):  # each side first in turn
            await reset()
            start = time.perf_counter()
            done[i] += await sides[i]()
            times[i].append(time.perf_counter() - start)
    b, r = median_ms(times[0]), median_ms(times[1])
    names = ", ".join(c.name for c in clients)
    results.add("8 actions", f"organise imports ({server}; asked: {names}), median of {settings.reps}",
                b, r, "ms")
    results.add("8 actions", "  repetitions that changed the file", done[0], done[1])
    # What of that is the wait for the diagnostics of the new text: the bridge's
    # `diagnostics` of the file right after the raw side changed it.
    waits = []
    for _ in range(settings.reps):
        await reset()
        await raw()
        waits.append(await timed(rig.bridge({"mode": "diagnostics", "file_path": payload["file_path"]})))
    results.add("8 actions", "  of which the diagnostics of the changed file (the bridge's)",
                median_ms(waits), None, "ms")
