"""`lsap`: the agent's command line (doc/architecture.md, Agents: socket, CLI, MCP).

    lsap <mode> <anchor> [--max-items N] [--format json] …
    lsap query '<json>' | lsap query -
    lsap request < block.txt          (a Language Server Request block on stdin)
    lsap schema [MODE…]               (the modes, or the fields of the named ones)
    lsap info | lsap sessions [--json] | lsap daemon status|stop
    lsap mcp [--root DIR]             (a stdio MCP server for agents)
    lsap hook | lsap hook install claude-code|codex [--project] [--print]
                                      (a harness's hook event on stdin; adding the hook)
    lsap doctor | lsap --version      (where each part was found; what is missing and the fix)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from .client import ClientError, Connection, answered, call_session, env_servers, find_session, with_env_budget
from .discovery import SessionInfo, sessions
from .errors import error_report
from .jsonvalue import Jsonable, JsonObject

OPTIONS = ("max_items", "start_index", "pagination_id", "context_lines", "max_tokens", "format")

# The exit status a shell agent acts on, by the answer's error code (doc/lsap.txt, lsap-exit-codes):
# 1 the servers' answer is an error report, 2 the request is invalid (fix the call), 3 no
# session to ask, 4 busy or out of time (sending it again may help), 5 a report that left
# out what it should have compared (its status `incomplete`: send the request it gives).
EXIT_CODES = {"invalid_request": 2, "outside_workspace": 2, "session_gone": 3,
              "busy": 4, "timeout": 4, "conflict": 4, "incomplete": 5}
EXIT_HELP = """exit status:
  0  a report
  1  the language servers' answer is an error report (not_found, ambiguous, unsupported, ...),
     or approval_timeout: the human did not answer the edit in time (nothing was changed)
  2  the request itself is invalid (bad JSON, unknown mode or field, wrong types, a path
     outside the workspace): fix the call
  3  no session to ask (none could be found or started, or it went away)
  4  busy, timed out, or the file kept changing: sending it again may help
  5  a report that is incomplete: files it should have compared were not (not analysed in
     time, users not looked for); it says which and the request that completes it. After an
     edit: the edit IS applied, the diagnostics of some files were not confirmed in time:
     run the check it names, never the edit again"""


def exit_code(code: str | None) -> int:
    """The exit status of an answer whose error code is `code` (None: a report)."""
    return 0 if code is None else EXIT_CODES.get(code, 1)


HELP_WIDTH = 100


def help_formatter(prog: str) -> argparse.HelpFormatter:
    """Help at a fixed width (the epilog as written): argparse makes a formatter for every
    argument it adds, and its default one sizes itself to the terminal each time (a shutil
    import and a query per argument: most of what parsing costs a warm call;
    doc/architecture.md, Costs)."""
    return argparse.RawDescriptionHelpFormatter(prog, width=HELP_WIDTH)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lsap",
        formatter_class=help_formatter,
        description="Ask the language servers of a Neovim (yours, or an embedded one) "
        "with text anchors.",
        epilog="Anchors: path:Symbol.path@text with <|> marking the spot, e.g.\n"
        "'shop/models.py:Order.total@return <|>result'. Modes: lsap schema lists them; lsap schema MODE\n"
        "prints one's fields.\n\n"
        + EXIT_HELP,
    )
    parser.add_argument("--root", type=Path, help="workspace root (default: nearest project root)")
    parser.add_argument("--session", help="session name or pid (see `lsap sessions`)")
    parser.add_argument("--servers", default=None,
                        help="embedded mode: comma-separated servers (basedpyright,pylsp,ts_ls,…)")
    parser.add_argument("--idle-timeout", type=float, default=900.0,
                        help="embedded mode: seconds the daemon stays warm (default 900)")
    parser.add_argument("words", nargs="*", help="<mode> <anchor>, or query/schema/sessions/daemon/doctor/hook")
    parser.add_argument("--version", action="store_true",
                        help="the version, and where the Lua half, Neovim and the servers were found")
    parser.add_argument("--max-items", type=int)
    parser.add_argument("--start-index", type=int)
    parser.add_argument("--pagination-id")
    parser.add_argument("--context-lines", type=int)
    parser.add_argument("--max-tokens", type=int, help="the answer's token budget (default: the session's, 8000)")
    parser.add_argument("--format", choices=("markdown", "json"))
    parser.add_argument("--json", action="store_true", help="sessions/info: print JSON")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=JSON",
                        help="any other request field, e.g. --set include_declaration=false")
    return parser


def parse(argv: list[str] | None) -> argparse.Namespace:
    """The command line, options before or after the words (`lsap check --max-items 1 shop/`
    as much as `lsap check shop/ --max-items 1`)."""
    return build_parser().parse_intermixed_args(argv)


def mode_request(args: argparse.Namespace) -> JsonObject:
    mode, *rest = args.words
    request: JsonObject = {"mode": mode}
    if rest:
        request["locate"] = " ".join(rest)
    for key in OPTIONS:
        value = getattr(args, key)
        if value is not None:
            request[key] = value
    for item in args.set:
        key, _, raw = item.partition("=")
        try:
            request[key] = json.loads(raw)
        except json.JSONDecodeError:
            request[key] = raw
    return request


def servers(args: argparse.Namespace) -> list[str]:
    """The embedded mode's servers: `--servers`, else `$LSAP_SERVERS`."""
    return args.servers.split(",") if args.servers else env_servers()


def session(args: argparse.Namespace) -> SessionInfo | None:
    return find_session(Path.cwd(), args.root, args.session, servers(args), args.idle_timeout)


def run(args: argparse.Namespace) -> int:
    command = args.words[0]
    if command == "sessions":
        if args.json:
            print(json.dumps([live._asdict() for live in sessions()], indent=1))
            return 0
        for live in sessions():
            print(f"{live.name}\t{live.kind}\tpid {live.pid}\t{', '.join(live.roots)}")
        return 0
    if command == "daemon":
        action = args.words[1] if len(args.words) > 1 else "status"
        info = find_session(Path.cwd(), args.root, args.session, servers(args), args.idle_timeout,
                            start=action == "start")
        if info is None or info.kind != "daemon":
            print("no embedded daemon for this directory")
            return 0 if action in ("status", "stop") else 1
        if action == "stop":
            with Connection(info.socket) as conn:
                conn.call("shutdown")
            print(f"stopped {info.name}")
        else:
            roots = ", ".join(info.roots)
            print(f"{info.name}\tpid {info.pid}\tneovim pid {info.nvim_pid}\t{roots}")
        return 0
    if command == "doctor":
        from .doctor import main as doctor

        return doctor(with_session=True, chosen=servers(args))
    if command == "mcp":
        import asyncio

        from .mcp_server import serve

        asyncio.run(serve(Path.cwd(), args.root, args.session, servers(args), args.idle_timeout))
        return 0
    # Read and check the input before reaching a session: bad input starts no daemon.
    params: Jsonable
    if command == "info":
        method, params = command, None
    elif command == "request":
        method, params = "text", {"text": sys.stdin.read()}
    elif command == "query":
        raw = sys.stdin.read() if len(args.words) < 2 or args.words[1] == "-" else args.words[1]
        try:
            method, params = "request", with_env_budget(json.loads(raw))
        except json.JSONDecodeError as exc:
            sys.stderr.write(error_report("invalid_request", f"the query is not JSON: {exc}"))
            return 2
    else:
        method, params = "request", with_env_budget(mode_request(args))
    found = call_session(lambda: session(args), method, params, name="lsap cli", surface="cli")
    if command == "info":
        print(json.dumps(found, indent=1))
        return 0
    result = answered(found)
    sys.stdout.write(result["text"])
    if not result["ok"]:
        return exit_code(str((result.get("error") or {}).get("code", "server_error")))
    return exit_code(result.get("status"))


def main(argv: list[str] | None = None) -> None:
    words = sys.argv[1:] if argv is None else argv
    if words[:1] == ["hook"]:  # its own arguments (lsap_bridge/hook.py)
        from .hook import main as hook

        raise SystemExit(hook(words[1:]))
    args = parse(argv)
    if args.version:
        from .doctor import main as doctor

        raise SystemExit(doctor(with_session=False, chosen=servers(args)))
    if not args.words:
        build_parser().print_help()
        raise SystemExit(2)
    try:
        raise SystemExit(run(args))
    except BrokenPipeError:
        # The reader went away (`lsap schema | head`): what it read was all it wanted.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(0) from None
    except ClientError as exc:
        print(f"lsap: {exc.code + ': ' if exc.code else ''}{exc}", file=sys.stderr)
        raise SystemExit(exit_code(exc.code or "session_gone")) from None
