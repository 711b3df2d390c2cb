"""Where a request came from, and how a follow-up request is written for it.

Reports suggest requests to send next: the next page, the references of an inspected
symbol, the rename to apply, where to read a mode's fields or see the servers. The asker
must be able to run one as written, so the suggestion takes the form of the surface that
asked: an Ex command for the human in Neovim, a shell command for the `lsap` CLI, a tool
call for an MCP agent, a JSON request for other clients of the socket. `phrase` and its
siblings are the one place that writes them; the surface is set once per request
(`SURFACE`: by `:Lsap …` commands, or from the `surface` a socket client names), never
passed through capabilities.
"""

from __future__ import annotations

import json
import logging
import shlex
from contextvars import ContextVar
from typing import Literal, get_args

from .jsonvalue import Json, JsonObject
from .locate.anchor import format_anchor
from .models import Locate

Surface = Literal["agent", "cli", "mcp", "nvim"]
SURFACES: tuple[Surface, ...] = get_args(Surface)

# The surface of the request being answered; `nvim` for `:Lsap …` commands.
SURFACE: ContextVar[Surface] = ContextVar("lsap_surface", default="agent")
# The name of the agent client whose request is running (its `client`, else `agent-N`),
# None for the human's own commands: the edit policy asks only about agents' edits, and a
# change set names who made it (`changes.py`).
CLIENT: ContextVar[str | None] = ContextVar("lsap_current_client", default=None)
# The request being answered, as sent (a change set keeps it: what made the change).
REQUEST: ContextVar[Json] = ContextVar("lsap_request", default=None)
# Where the request being answered resolved its anchors (path, 0-based line), a list the
# socket sets per call and the request's tasks share: agents' presence in the editor
# (`lua/lsap/presence.lua`) and `:Lsap agents` show it.
LOOKED: ContextVar[list[tuple[str, int]] | None] = ContextVar("lsap_looked", default=None)
LOOKED_LIMIT = 4  # places kept per request
# The change sets the call being answered applied (their ids), a list the socket sets per
# call and the call's tasks share: an answer cut short after its edit was applied (an error,
# the session ending) says so, with the change, instead of "send it again" (`applied_note`).
APPLIED: ContextVar[list[str] | None] = ContextVar("lsap_applied", default=None)
NOT_AGAIN = "do not send the request again: its edit is in place"


def looked_at(path: str, line: int) -> None:
    """Note that the request resolved an anchor there (when anyone listens)."""
    places = LOOKED.get()
    if places is not None and len(places) < LOOKED_LIMIT and (path, line) not in places:
        places.append((path, line))


def applied_note(ids: list[str]) -> str:
    """What an answer cut short says of the edits its call had applied: which changes, and
    how to take them back (`NOT_AGAIN`: the request must not be sent again)."""
    undo = " then ".join(f"`{phrase({'mode': 'undo', 'id': i}, 'id')}`" for i in reversed(ids))
    return f"its edit was applied: change {', '.join(ids)} ({undo} takes it back)"


def phrase(request: JsonObject, positional: str | None = "locate") -> str:
    """A request as the asker sends it. `positional`: the field written bare after the mode
    in an Ex command or on the command line (`:Lsap outline shop/`, `lsap outline shop/`),
    `locate` as an anchor string."""
    surface = SURFACE.get()
    if surface == "nvim" and (command := ex_command(request, positional)) is not None:
        return command
    if surface == "cli":
        return cli_command(request, positional)
    body = json.dumps(request, separators=(",", ":"), ensure_ascii=False)
    if surface == "mcp":
        return f'lsap_query {{"request":{body}}}'
    return body


def phrase_option(key: str, value: Json) -> str:
    """One field to add to the request just sent: `key=value` in Neovim, `--set key=value`
    on the command line, JSON elsewhere."""
    surface = SURFACE.get()
    if surface == "nvim":
        return f"{key}={_word(value)}"
    if surface == "cli":
        return "--set " + shlex.quote(f"{key}={_cli_value(value)}")
    return f"{json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}"


def fields_help(mode: str) -> str:
    """Where the asker reads the fields of a mode."""
    surface = SURFACE.get()
    if surface == "nvim":
        return f"`:help lsap-mode-{mode}` lists its options"
    if surface == "cli":
        return f"`lsap schema {mode}` prints the fields of `{mode}`"
    return f"`{phrase({'mode': 'schema', 'modes': [mode]})}` lists the fields of `{mode}`"


def servers_help() -> str:
    """Where the asker sees which language servers are attached, and to what."""
    surface = SURFACE.get()
    if surface == "nvim":
        return "`:checkhealth lsap` lists what is attached"
    if surface == "cli":
        return "`lsap info` lists the attached servers"
    if surface == "mcp":
        return "the `lsap_info` tool lists the attached servers"
    return "the socket's `info` method lists the attached servers"


def formatter_help() -> str:
    """How the asker gets a formatter attached: `ruff server` for Python (basedpyright and
    pyright format nothing), typescript-language-server formats TypeScript itself."""
    surface = SURFACE.get()
    if surface == "nvim":
        return ("attach a formatting server: for Python `ruff server` (`vim.lsp.enable('ruff')`, with "
                "nvim-lspconfig or a `vim.lsp.config('ruff', …)`; `pip install ruff`)")
    return ("no formatter is attached: for Python install ruff (`pip install ruff`, or the `embedded` extra) "
            "and restart the session (`lsap daemon stop` in the embedded mode; the next call starts "
            "`ruff server` beside the Python server)")


def log_help() -> str:
    """Where the asker finds a traceback: `:checkhealth lsap` names the log in Neovim;
    elsewhere the log file itself, which an agent can read but not look up."""
    if SURFACE.get() == "nvim":
        return "the traceback is in the log (`:checkhealth lsap` shows where)"
    files = [h.baseFilename for h in logging.getLogger().handlers if isinstance(h, logging.FileHandler)]
    return f"the traceback is in the log, {files[0]}" if files else "the traceback is in the service's log"


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


def cli_command(request: JsonObject, positional: str | None) -> str:
    """`lsap mode 'anchor' --set key=value …`: each word quoted for a POSIX shell."""
    fields = dict(request)
    words = ["lsap", str(fields.pop("mode"))]
    if positional in fields:
        words += _bare_words(fields.pop(str(positional)))
    for key, value in fields.items():
        words += ["--set", f"{key}={_cli_value(value)}"]
    return " ".join(shlex.quote(word) for word in words)


def _bare_words(value: Json) -> list[str]:
    """The positional field as words: an anchor in its string form, a list word by word
    (`lsap schema hover search`)."""
    if isinstance(value, dict):
        return [format_anchor(Locate.model_validate(value))]
    if isinstance(value, list):
        return [str(item) for item in value]
    return [str(value)]


def _cli_value(value: Json) -> str:
    """A value as `--set key=…` reads it: JSON, except a string JSON would not take back as
    that string (the CLI reads such text as it is)."""
    if isinstance(value, str):
        try:
            json.loads(value)
        except json.JSONDecodeError:
            return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def ex_command(request: JsonObject, positional: str | None) -> str | None:
    """`:Lsap mode anchor key=value …`, or None when a value cannot be one word."""
    fields = dict(request)
    words = [f":Lsap {fields.pop('mode')}"]
    if positional in fields:
        words += _bare_words(fields.pop(str(positional)))
    for key, value in fields.items():
        text = _word(value)
        if not text or any(ch.isspace() for ch in text) or text[0] == '"':
            return None
        words.append(f"{key}={text}")
    return " ".join(words)


def _word(value: Json) -> str:
    """A value as typed after `key=` on an Ex command line (lists and tables as JSON)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
