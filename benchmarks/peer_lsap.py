"""The lsap-sdk side of the peers benchmark: runs inside lsap-sdk's own virtual environment.

    <venv>/bin/python benchmarks/peer_lsap.py < spec.json > results.json

lsap-sdk is a Python library, so it is called the way its README and tests call it: an
`lsp_client.BasedpyrightClient` on the workspace, one capability object per kind of request
(`ReferenceCapability(client)` …) called with the request model, and the response rendered
with its own Markdown template (`response.format()`), which is what an agent would be shown.
The server is the given basedpyright, started through the counting tap (`lsp_tap.py`).

The spec (JSON on stdin): root, server (the command that starts the server, tap included),
log (the tap's log), and calls: [{task, capability, request, reps}]. The answer (JSON on
stdout): per call, its first answer and the seconds of each repetition, with the LSP
requests each made. The first call's first answer is the cold one: it includes the start.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from lsap.capability import (
    DefinitionCapability,
    OutlineCapability,
    ReferenceCapability,
    SearchCapability,
)
from lsap.schema.definition import DefinitionRequest
from lsap.schema.outline import OutlineRequest
from lsap.schema.reference import ReferenceRequest
from lsap.schema.search import SearchRequest
from lsp_client import BasedpyrightClient, LocalServer

CAPABILITIES = {
    "references": (ReferenceCapability, ReferenceRequest),
    "definition": (DefinitionCapability, DefinitionRequest),
    "outline": (OutlineCapability, OutlineRequest),
    "search": (SearchCapability, SearchRequest),
}


def requests_logged(log: Path) -> int:
    return len(log.read_text(encoding="utf-8").splitlines()) if log.exists() else 0


async def answer(capability: Any, request: Any) -> dict[str, Any]:
    """What the agent is shown: the rendered response, None, or the error raised."""
    try:
        response = await capability(request)
    except Exception as error:  # the agent sees the error, whatever it is
        return {"ok": False, "text": f"{type(error).__name__}: {error}", "locations": None}
    if response is None:
        return {"ok": False, "text": "None (the capability returned no response)", "locations": None}
    items = getattr(response, "items", None) or []
    locations = [
        [str(item.location.file_path), item.location.range.start.line]  # 1-based already
        for item in items
        if hasattr(item, "location")
    ]
    return {"ok": True, "text": response.format(), "locations": locations}


async def run(spec: dict[str, Any], out: dict[str, Any]) -> None:
    log = Path(spec["log"])
    started = time.perf_counter()
    program, *args = spec["server"]
    server = LocalServer(program=program, args=args, cwd=Path(spec["root"]))
    out["calls"] = []
    async with BasedpyrightClient(workspace=spec["root"], server=server) as client:
        out["ready_seconds"] = time.perf_counter() - started
        capabilities = {name: cls(client) for name, (cls, _) in CAPABILITIES.items()}
        for call in spec["calls"]:
            request = CAPABILITIES[call["capability"]][1].model_validate(call["request"])
            record: dict[str, Any] = {"task": call["task"], "seconds": [], "lsp_requests": []}
            for rep in range(call["reps"]):
                before, start = requests_logged(log), time.perf_counter()
                result = await answer(capabilities[call["capability"]], request)
                record["seconds"].append(time.perf_counter() - start)
                record["lsp_requests"].append(requests_logged(log) - before)
                if rep == 0:
                    record["first"] = result
                    record["since_start"] = time.perf_counter() - started
            out["calls"].append(record)
        out["done"] = True


def main() -> None:
    """The answers are printed even when the client fails to shut down (lsp-client 0.3.9
    raises `ClosedResourceError` as basedpyright exits): the failure is reported beside them."""
    spec = json.load(sys.stdin)
    out: dict[str, Any] = {}
    try:
        anyio.run(run, spec, out)
    except BaseException as error:
        out["error"] = f"{'on shutdown: ' if out.get('done') else ''}{type(error).__name__}: {error!r}"[:2000]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
