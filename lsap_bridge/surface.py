"""Where a request came from, and how a follow-up request is written for it.

Reports suggest requests to send next: the next page, the references of an inspected
symbol, the rename to apply. The asker must be able to run one as written, so the
suggestion takes the form of the surface that asked: an Ex command for the human in
Neovim, a JSON request for agents (socket, CLI, MCP). `phrase` is the one place that
writes them; the surface is set once per request (`SURFACE`), never passed through
capabilities.
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from typing import Any, Literal

from .locate.anchor import format_anchor
from .models import Locate

Surface = Literal["agent", "nvim"]

# The surface of the request being answered; `nvim` for `:Lsap …` commands.
SURFACE: ContextVar[Surface] = ContextVar("lsap_surface", default="agent")


def phrase(request: dict[str, Any], positional: str | None = "locate") -> str:
    """A request as the asker sends it. `positional`: the field written bare after the mode
    in an Ex command (`:Lsap outline shop/`), `locate` as an anchor string."""
    if SURFACE.get() == "nvim" and (command := ex_command(request, positional)) is not None:
        return command
    return json.dumps(request, separators=(",", ":"), ensure_ascii=False)


def phrase_option(key: str, value: Any) -> str:
    """One field to add to the request just sent: `key=value` in Neovim, JSON elsewhere."""
    if SURFACE.get() == "nvim":
        return f"{key}={_word(value)}"
    return f"{json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}"


def fields_help(mode: str) -> str:
    """Where the asker reads the fields of a mode."""
    if SURFACE.get() == "nvim":
        return f"`:help lsap-mode-{mode}` lists its options"
    return f"`lsap schema` prints the fields of `{mode}`"


def restart_help(server: str, client_id: int, embedded: bool) -> str:
    """How the asker restarts a language server that is stuck: in Neovim by its command, in
    the embedded mode by stopping the daemon; an agent of the human's Neovim asks them."""
    command = (f"`:LspRestart {server}` (nvim-lspconfig) or `:lua vim.lsp.stop_client({client_id}, true)`; "
               "the next lsap request starts it again")
    if SURFACE.get() == "nvim":
        return "restart it: " + command
    if embedded:
        return "restart it: `lsap daemon stop`, and the next `lsap` call starts a fresh Neovim and servers"
    return "ask the human to restart it in their Neovim: " + command


def ex_command(request: dict[str, Any], positional: str | None) -> str | None:
    """`:Lsap mode anchor key=value …`, or None when a value cannot be one word."""
    fields = dict(request)
    words = [f":Lsap {fields.pop('mode')}"]
    if positional in fields:
        bare = fields.pop(str(positional))
        words.append(format_anchor(Locate.model_validate(bare)) if isinstance(bare, dict) else str(bare))
    for key, value in fields.items():
        text = _word(value)
        if not text or any(ch.isspace() for ch in text) or text[0] == '"':
            return None
        words.append(f"{key}={text}")
    return " ".join(words)


def _word(value: Any) -> str:
    """A value as typed after `key=` on an Ex command line (lists and tables as JSON)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
