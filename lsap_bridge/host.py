"""The service inside the human's Neovim, started by the remote plugin.

The remote plugin's host runs pynvim's own loop; the bridge runs its asyncio loop in a
thread of its own with a separate channel to Neovim (`v:servername`), so that agents and
slow language servers never hold the host, and the host never holds them. The session's
life is `lifecycle.py`'s, as the daemon's is; what is the editor's own is here: the human's
commands go ahead of agents', agents' activity goes to `:Lsap log`, and their edits pass the
edit policy.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import TypedDict

from .errors import ErrorCode, LsapError
from .fair_share import Limits, Scheduler
from .gateway import EditorGateway
from .jsonvalue import JsonObject, Params, obj
from .lifecycle import Lifecycle, Plan
from .logfile import log_to_file
from .nvim_rpc import NvimConnection
from .server import call_time, current_client, progress
from .service import Service
from .session.approval import HUMAN_APPROVED, Doubt, EditApproval
from .workspace import Workspace

_started: threading.Thread | None = None
_starting = threading.Lock()

# The longest an `ask` prompt may wait (Neovim's `approval.timeout`, default 300 s, is the
# real limit; this bounds it should Neovim never answer).
ASK_LIMIT = 3600.0
# Seconds of a request's own `timeout` kept back from its approval, so that the human's
# silence is answered `approval_timeout` before the request's time is up.
ANSWER_MARGIN = 0.5
LOG_FLUSH = 0.1  # seconds between batches sent to `:Lsap log`


class ActivityLog:
    """Collects socket events and sends them to Neovim in batches, so a busy agent costs
    the editor one small call per tenth of a second rather than two per request."""

    def __init__(self, gateway: EditorGateway) -> None:
        self.gateway = gateway
        self.pending: list[Params] = []
        self.flushing: asyncio.Task[None] | None = None

    def add(self, event: Params) -> None:
        self.pending.append({**event, "time": int(time.time())})
        if self.flushing is None or self.flushing.done():
            self.flushing = asyncio.get_running_loop().create_task(self._flush())

    async def _flush(self) -> None:
        # The first event after a quiet spell goes at once (an agent's presence shows as
        # it happens), the ones after it a tenth of a second later, together. Until
        # nothing is left: events that came while a batch was on its way to Neovim found
        # this task still running and started none of their own.
        while self.pending:
            entries, self.pending = self.pending, []
            with contextlib.suppress(Exception):
                await self.gateway.log_activity(entries)
            await asyncio.sleep(LOG_FLUSH)


def edit_policy(gateway: EditorGateway, timeout: float = ASK_LIMIT) -> EditApproval:
    """The session's approval hook: agents' edits go to Neovim, where the `edit_policy`
    option (read at each edit, so `setup()` changes it live) allows, denies or asks.

    An edit the human started with a command (no agent client in the context) always goes
    ahead without a round trip. The agent's call waits as long as the question can: its
    default time limit stands still meanwhile, its own `timeout` bounds the question
    (server.CallTime). An edit not applied is a `denied` error that tells the agent why
    (the human refused, the policy denies), or `approval_timeout` when nobody answered.
    """

    async def approve(summary: str, preview: str, doubt: Doubt | None = None) -> bool:
        client = current_client.get()
        if client is None:
            return True
        limit = call_time.get()
        ask = timeout if limit is None or not limit.explicit else max(0.1, limit.left() - ANSWER_MARGIN)
        # Told only when a human is asked: `allow` and `deny` answer at once.
        if (say := progress.get()) is not None and await gateway.call("edit_policy") == "ask":
            say(f"waiting for the human's approval of {summary} (up to {min(timeout, ask):g} s; "
                "sending it again joins this question)")
        with limit.approval() if limit is not None else contextlib.nullcontext():
            decision = await (
                gateway.edit_decision(client, summary, preview, min(timeout, ask)) if doubt is None
                else gateway.edit_decision(client, summary, f"{doubt.note}\n\n{preview}", min(timeout, ask),
                                           must_ask=True))
        if decision.applied:
            HUMAN_APPROVED.set(decision.asked)
            return True
        if decision.decision == "withheld" and doubt is not None:  # `allow` asks nobody
            raise doubt.refusal
        code = ErrorCode.APPROVAL_TIMEOUT if decision.decision == "timeout" else ErrorCode.DENIED
        raise LsapError(code, *REFUSALS[decision.decision](summary, decision.waited))

    return approve


# Why an agent's edit was not applied: the message and the hint of its `denied` error.
REFUSALS: dict[str, Callable[[str, float], tuple[str, str]]] = {
    "refuse": lambda summary, _: (
        f"the human refused the edit ({summary})",
        "nothing was changed; ask the human what they want instead"),
    "deny": lambda summary, _: (
        f"the editor's edit_policy denies agents' edits ({summary})",
        "nothing was changed; the human can set edit_policy to 'ask' or 'allow'"),
    "timeout": lambda summary, waited: (
        f"the human did not answer within {waited:g} s: the edit was not applied ({summary})",
        "nothing was changed; the human may be away: ask again later, or ask the human first"),
}


class HostOptions(TypedDict, total=False):
    """What `LsapStart` hands the host (lua/lsap/service.lua): Neovim's address, its working
    directory, setup()'s configuration and the log file."""

    address: str
    cwd: str
    config: JsonObject
    log_file: str | None


async def serve_editor(address: str, options: HostOptions) -> None:
    conn = await NvimConnection.connect(address)
    gateway = EditorGateway(conn)
    service = Service(gateway, Workspace.of(options.get("cwd") or os.getcwd()))
    config = options.get("config") or {}
    limits = Limits.of(obj(config.get("agent_limits")))
    scheduler = Scheduler(limits.running)
    gateway.on_command(scheduler.ahead(service.handle_command))  # the human goes first
    await gateway.start()
    service.session.approve_edit = edit_policy(gateway)
    plan = Plan("editor", f"nvim-{gateway.nvim_pid}", socket=bool(config.get("socket", True)),
                limits=limits, tcp=str(config.get("tcp") or ""), tcp_force=bool(config.get("tcp_force")))
    await Lifecycle(service, gateway, plan, scheduler=scheduler, on_event=ActivityLog(gateway).add,
                    tell=lambda message: gateway.notify(message, "warn")).run()


def start_in_editor(options: HostOptions) -> None:
    """Start the service thread once per host; later calls are no-ops (the remote plugin
    calls this from a thread of its own, `LsapStart`'s)."""
    global _started
    with _starting:
        if _started is not None and _started.is_alive():
            return
        _started = _start_thread(options)


def _start_thread(options: HostOptions) -> threading.Thread:
    address = str(options["address"])

    def run() -> None:
        try:
            asyncio.run(serve_editor(address, options))
        except Exception:
            logging.getLogger(__name__).exception("the lsap service stopped")

    config = options.get("config") or {}
    log_to_file(options.get("log_file"), str(config.get("log_level", "warn")))

    started = threading.Thread(target=run, name="lsap-bridge", daemon=True)
    started.start()
    return started
