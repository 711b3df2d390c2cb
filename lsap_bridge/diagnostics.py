"""Diagnostics as plain data, shared by the `diagnostics` mode, rename reports and the text format.

Positions are 0-based lines and code-point columns, like every other position in the bridge,
whatever unit the server or `vim.diagnostic` counted in.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from lsprotocol import types

from .jsonvalue import Json, JsonObject, to_int
from .lsp import json_list, json_object, optional_text, range_of
from .models import Wait
from .position import Encoding, column_at

SEVERITIES = ("error", "warning", "information", "hint")
SETTLE_STEP = 1.0  # seconds between two looks at the diagnostics after files came or went
SETTLE_LIMIT = 10.0  # seconds those looks go on for, at most
#: Short source names, as editors print them next to a code: `ts(2322)`.
SOURCE_NAMES = {"typescript": "ts", "javascript": "js"}


def short_source(source: str | None) -> str:
    """A diagnostic's source as one word (`ts`, `basedpyright`; `lsp` when none is given)."""
    name = SOURCE_NAMES.get(source or "", source or "lsp")
    return name.replace(":", "_").replace(" ", "_")


def labelled(message: str, source: str | None, code: str | None) -> str:
    """A diagnostic's message with its source and code, in one form everywhere: `message ·
    basedpyright(reportDeprecated)`; after a message that ends a sentence, the editors'
    `… 'string'.ts(2322)` (the form of the text format's seed)."""
    message = message.replace("\u00a0", " ")  # pyright indents with no-break spaces
    if not code and not source:
        return message
    label = f"{short_source(source)}({code})" if code else short_source(source)
    return message + label if code and message.endswith(".") else f"{message} · {label}"


def severity_name(value: object) -> str:
    """LSP and `vim.diagnostic` both number severities 1 (error) to 4 (hint)."""
    try:
        return SEVERITIES[int(value) - 1] if isinstance(value, (int, float, str)) else "error"
    except (TypeError, ValueError, IndexError):
        return "error"


def severity_rank(name: str) -> int:
    return SEVERITIES.index(name)


@dataclass(frozen=True)
class Diagnostic:
    line: int
    col: int
    end_line: int
    end_col: int
    severity: str  # error | warning | information | hint
    message: str
    code: str | None = None
    source: str | None = None
    # The server's own Diagnostic and the client that reported it: a code action request
    # hands them back to that server (its fixes are keyed by them).
    lsp: JsonObject | None = field(default=None, compare=False, repr=False)
    client: int | None = field(default=None, compare=False, repr=False)

    def at_least(self, minimum: str) -> bool:
        return severity_rank(self.severity) <= severity_rank(minimum)


class DiagnosticMap(dict[Path, list[Diagnostic]]):
    """Diagnostics per file, plus the files a server had not analysed yet (and why), and
    those whose server stayed silent after a change, so that their earlier diagnostics are
    taken to still hold (servers that publish only when diagnostics change)."""

    def __init__(self) -> None:
        super().__init__()
        self.pending: dict[Path, str] = {}
        self.quiet: dict[Path, str] = {}


def _code(value: object) -> str | None:
    return None if value is None or value == "" else str(value)


def message_of(message: str, roots: Sequence[Path] = ()) -> str:
    """A diagnostic's message, with the workspace's roots taken off the paths it names
    (basedpyright's import cycles list absolute paths): reports name files by their path
    in the workspace."""
    message = message.strip()
    for root in roots:
        message = message.replace(f"{root}{os.sep}", "")
    return message


_SEVERITIES = {int(severity): severity for severity in types.DiagnosticSeverity}


def diagnostic_of(raw: Json) -> types.Diagnostic:
    """An LSP Diagnostic as lsprotocol types it (what the bridge reads of it: range,
    severity, code, source, message), made directly; a severity out of LSP's four is none
    (read as an error, as `vim.diagnostic` does)."""
    item = json_object(raw)
    code, severity = item.get("code"), item.get("severity")
    if code is not None and not isinstance(code, (int, str)):
        raise TypeError(f"a code that is no number or string: {str(code)[:40]!r}")
    return types.Diagnostic(range_of(item["range"]), cast(str, item["message"]),
                            _SEVERITIES.get(severity) if isinstance(severity, int) else None,
                            code, source=optional_text(item.get("source")))


def pulled_report(raw: Json) -> list[tuple[types.Diagnostic, JsonObject]] | None:
    """A `textDocument/diagnostic` answer's diagnostics (a full report; None for any other),
    each with the server's own dict, which a code action request hands back to it."""
    report = json_object(raw)
    if report.get("kind") not in ("full", None):
        return None
    return [(diagnostic_of(item), json_object(item)) for item in json_list(report.get("items"))]


def from_lsp(item: types.Diagnostic, lines: list[str], encoding: Encoding, server: str,
             client: int | None = None, roots: Sequence[Path] = (), raw: JsonObject | None = None) -> Diagnostic:
    """An LSP Diagnostic (pull answer: `pulled_report`) with columns in the server's encoding;
    `roots`: see `message_of`; `raw`: the server's own dict."""
    start, end = item.range.start, item.range.end
    return Diagnostic(
        line=start.line,
        col=column_at(lines, start.line, start.character, encoding),
        end_line=end.line,
        end_col=column_at(lines, end.line, end.character, encoding),
        severity=severity_name(item.severity or 1),
        message=message_of(item.message, roots),
        code=_code(item.code),
        source=item.source or server,
        lsp=raw,
        client=client,
    )


def from_vim(item: JsonObject, lines: list[str], roots: Sequence[Path] = ()) -> Diagnostic:
    """A `vim.diagnostic` item: 0-based lines, byte columns (with the LSP Diagnostic it came
    from and its client, where `lua/lsap/transport/diagnostics.lua` found them)."""
    line, end_line = to_int(item.get("lnum") or 0), to_int(item.get("end_lnum") or item.get("lnum") or 0)
    client = item.get("client")
    return Diagnostic(
        line=line,
        col=column_at(lines, line, to_int(item.get("col") or 0), "utf-8"),
        end_line=end_line,
        end_col=column_at(lines, end_line, to_int(item.get("end_col") or item.get("col") or 0), "utf-8"),
        severity=severity_name(item.get("severity", 1)),
        message=message_of(str(item.get("message", "")), roots),
        code=_code(item.get("code")),
        source=str(item.get("source") or "") or None,
        lsp=lsp if isinstance(lsp := item.get("lsp"), dict) else None,
        client=client if isinstance(client, int) else None,
    )


@dataclass
class DiagnosticDelta:
    """What an edit changed, per file of `after`: diagnostics that are new afterwards, and
    those of before that are gone."""

    new: dict[Path, list[Diagnostic]] = field(default_factory=dict)
    gone: dict[Path, list[Diagnostic]] = field(default_factory=dict)

    @classmethod
    def between(
        cls,
        before: dict[Path, list[Diagnostic]],
        after: dict[Path, list[Diagnostic]],
    ) -> DiagnosticDelta:
        """Compared by message, code and severity, since an edit moves lines around; then
        what is left by code, severity and line: a rename changes the message of a
        diagnostic that stays where it was (`"Item" is not accessed`), which is not new."""
        delta = cls()
        for path, items in after.items():
            old = list(before.get(path, []))
            keys = [(d.severity, d.message, d.code) for d in old]
            unmatched = []
            for d in items:
                key = (d.severity, d.message, d.code)
                if key in keys:
                    del old[keys.index(key)]
                    keys.remove(key)
                else:
                    unmatched.append(d)
            fresh = []
            places = [(d.severity, d.code, d.line) for d in old]
            for d in unmatched:
                place = (d.severity, d.code, d.line)
                if d.code is not None and place in places:
                    del old[places.index(place)]
                    places.remove(place)
                else:
                    fresh.append(d)
            if fresh:
                delta.new[path] = fresh
            if old:
                delta.gone[path] = old
        return delta


def _same(a: DiagnosticMap, b: DiagnosticMap) -> bool:
    return dict(a) == dict(b) and a.pending.keys() == b.pending.keys()


def budget_of(wait: Wait) -> float | None:
    """An edit's wait in seconds; None: no budget but the look's own bounds ("settled")."""
    return None if wait == "settled" else max(0.0, float(wait))


async def settled(look: Callable[[], Awaitable[DiagnosticMap]], structural: bool,
                  until: float | None = None) -> tuple[DiagnosticMap, bool]:
    """The diagnostics after a change (the files changed on disk, or the bridge's own edit),
    as `look` gets them: `Session.diagnostics(files, after_sync=True)`, whose evidence is
    each server's analysis after it read the change (see `when_diagnosed`); and whether they
    held. After files were created or deleted (`structural`), asked again every
    `SETTLE_STEP` until two answers in a row are the one before, for at most
    `SETTLE_LIMIT`: basedpyright still resolves the imports of a deleted module for up to a
    second and a half after it first republished (it re-resolves imports later). Files
    without that evidence in time are `pending`, with the reason: `check`, rename and code
    actions name them. One wait for all three. `until` (a `time.monotonic()` deadline: an
    edit's `diagnostics_wait`): no look again that would end after it."""
    found = await look()
    need, held = (2 if structural and found else 0), 0
    deadline = time.monotonic() + SETTLE_LIMIT
    while held < need and time.monotonic() < deadline and (until is None or time.monotonic() + SETTLE_STEP < until):
        await asyncio.sleep(SETTLE_STEP)
        again = await look()
        held = held + 1 if _same(again, found) else 0
        found = again
    return found, held >= need
