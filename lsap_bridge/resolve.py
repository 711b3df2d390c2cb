"""Resolve a `Locate` anchor to one position in a file, or say precisely why not."""

from __future__ import annotations

import re
import time
from collections.abc import Hashable
from dataclasses import replace
from pathlib import Path

from .cpu import off_loop
from .editor import Client
from .errors import Candidate, ErrorCode, LsapError, shown_score
from .locate.anchor import format_anchor
from .locate.matcher import INLINE_FIND, decide, find_in, has_exact, parse_find
from .locate.matches import Match, MatchResult, Needle, Tier
from .models import LineScope, Locate, SymbolScope
from .position import Document, line_at
from .servers.adapter import CROSS_FILE
from .servers.registry import adapter_for
from .session.targets import Resolved, Target
from .session.trees import SYMBOLS
from .session.warm import Session
from .surface import looked_at, phrase
from .symbols import Symbol, SymbolTree

__all__ = ["Resolved", "resolve"]


async def resolve(session: Session, locate: Locate, method: str) -> Resolved:
    """Find the anchor's position; the file is opened for a server that supports `method`.

    Warm (inside `Session.run`): an anchor resolved before, on the same held text by the
    same server, comes back without the work: agents ask hover, definition and references
    of one anchor in a row, and repeat requests.
    """
    resolved = await _resolve(session, locate, method)
    # Keyed apart from the file's own notes (a buffer that differs from its file).
    note = adapter_for(resolved.target.client.name).index_note(
        method, resolved.path, session.workspace.display(resolved.path))
    if note is not None:
        session.texts.note(*note)
    client = resolved.target.client
    # Counts from an index (references, implementations, calls), of a server whose work in
    # progress may leave them short (tsserver loading a project; not basedpyright's analysis).
    if method in CROSS_FILE and adapter_for(client.name).short_while_working:
        for gap in await incomplete(session, [client], recent=False):
            session.texts.note(Path(f"<index of {resolved.target.client.name}>"),
                         f"the index may be incomplete ({gap}): the count may grow; ask again soon")
    looked_at(str(resolved.path), resolved.line)
    return resolved


async def file_symbols(session: Session, path: Path) -> tuple[Target, Document, SymbolTree]:
    """A file opened for the server of its symbols, its text and its symbol tree: what the
    text format finds a File block's anchors in (run on the warm path, `Session.run_warm`)."""
    target = await session.servers.target(path, SYMBOLS)
    doc = target.doc or await session.texts.document(path)
    return target, doc, await session.symbols.tree(target, doc)


async def incomplete(session: Session, clients: list[Client], recent: bool = True) -> list[str]:
    """The servers whose index may not hold every symbol yet (an answer without a name is
    then no proof it is not there; a count of uses may be short): work in progress
    (`$/progress`); `recent`: also attached, or told of files changed on disk, moments ago.
    `search` says so, with `recent`; every cross-file answer too (`resolve`), of work in
    progress only (references already ask a young server again until its count holds)."""
    working = set(await session.gateway.working([c.id for c in clients]))
    changed = session.servers.watch.changed_at
    notes = []
    for client in clients:
        age, young = client.age(), adapter_for(client.name).young
        if client.id in working:
            notes.append(f"{client.name} reports work in progress (indexing or analysing)")
        elif not recent:
            continue
        elif age is not None and age < young:
            notes.append(f"{client.name} started {age:.0f} s ago")
        elif changed is not None and time.monotonic() - changed < young:
            notes.append(f"{client.name} heard of files changed on disk "
                         f"{time.monotonic() - changed:.0f} s ago")
    return notes


async def _resolve(session: Session, locate: Locate, method: str) -> Resolved:
    key = _key(locate)
    before = session.kept.resolved.get(key) if session.texts.warm else None
    # The path was confined when it was first resolved: trusted as long as `contains` is.
    path = before.path if before else session.workspace.resolve(locate.file_path)
    target = await session.servers.target(path, method)
    if before and target.doc is not None and _same_text(target.doc, before.doc) and (
            target.client.id == before.target.client.id):
        return replace(before, target=target, doc=target.doc)
    resolved = await _resolve_on(session, locate, target)
    if target.doc is not None:  # resolved on a held text: worth remembering
        session.kept.resolved[key] = resolved
    return resolved


def _same_text(doc: Document, other: Document) -> bool:
    """The same buffer at the same changedtick (a held text is only ever a buffer's)."""
    return doc.bufnr == other.bufnr and doc.version == other.version


def _key(locate: Locate) -> tuple[Hashable, ...]:
    scope = locate.scope
    if isinstance(scope, SymbolScope):
        where: tuple[Hashable, ...] = tuple(scope.symbol_path)
    elif isinstance(scope, LineScope):
        where = (scope.start_line, scope.end_line)
    else:
        where = ()
    return (locate.file_path, where, locate.find)


async def _resolve_on(session: Session, locate: Locate, target: Target) -> Resolved:
    path = target.path
    doc = target.doc or await session.texts.document(path)
    tree = await session.symbols.tree(target, doc)
    regions = _regions(locate, tree, doc, session.workspace.display(path))

    if locate.find is None:
        one, overloads = _one_symbol([sym for _, _, sym in regions if sym], doc.lines)
        if len(regions) > 1 and one is None:
            raise _ambiguous_symbols(locate, [sym for _, _, sym in regions if sym], doc, tree)
        start, _end, symbol = regions[0] if one is None else (one.span.start_line, one.span.end_line + 1, one)
        if symbol is not None:
            line, col = symbol.selection.start_line, _name_column(symbol, doc.lines)
        else:
            text = doc.line(start)
            line, col = start, len(text) - len(text.lstrip())
        return Resolved(target, doc, line, col, tree.enclosing_path(line, col), None, format_anchor(locate),
                        overloads=overloads)

    needle = parse_find(locate.find)
    # An exact match anywhere beats every other tier: regions without one (an overload's
    # signature, say) need not run the whitespace, unicode and fuzzy tiers.
    exact = [r for r in regions if has_exact(doc.lines, needle, r[0], r[1])]
    searched = exact or regions
    # Without an exact match the other tiers compute (a long find: seconds): off the loop.
    heavy = not exact and len(needle.text) > INLINE_FIND
    results = await off_loop(heavy, find_in, doc.lines, needle, [(start, end) for start, end, _ in searched])
    match, note = _decide(locate, needle, results, doc, tree, session.workspace.display(path))
    return Resolved(
        target, doc, match.line, match.column, tree.enclosing_path(match.line, match.column),
        match, format_anchor(locate), note,
    )


def _name_column(symbol: Symbol, lines: list[str]) -> int:
    """Where the symbol's name is written on its selection's first line: a server selects a
    whole declaration that has no name of its own (tsserver's `export default function
    () {}`), and the name (the `default` keyword) is where its references are asked."""
    line, col = symbol.selection.start_line, symbol.selection.start_col
    text = line_at(lines, line)
    name = symbol.bare_name
    if not name or text.startswith(name, col):
        return col
    found = re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text[col:])
    return col + found.start() if found else col


def _regions(locate: Locate, tree: SymbolTree, doc: Document, name: str) -> list[tuple[int, int, Symbol | None]]:
    """The 0-based line ranges [start, end) the find is searched in."""
    scope = locate.scope
    total = len(doc.lines)
    if isinstance(scope, SymbolScope):
        symbols = tree.find(scope.symbol_path)
        if not symbols:
            wanted = ".".join(scope.symbol_path)
            suggestions = tree.suggest(scope.symbol_path)
            raise LsapError(
                ErrorCode.NOT_FOUND,
                f"no symbol {wanted} in {name}",
                # The suggestions are shown once, as such; the hint says what else to do.
                hint=f"`{phrase({'mode': 'outline', 'file_path': name}, 'file_path')}` lists the file's symbols",
                suggestions=suggestions,
            )
        return [(s.span.start_line, s.span.end_line + 1, s) for s in symbols]
    if isinstance(scope, LineScope):
        if scope.start_line > total:
            raise LsapError(
                ErrorCode.NOT_FOUND,
                f"line {scope.start_line} is past the end of {name} ({total} lines)",
            )
        end = total if scope.end_line == 0 else min(scope.end_line - 1, total)
        return [(scope.start_line - 1, end, None)]
    return [(0, total, None)]


def _decide(locate: Locate, needle: Needle, results: list[MatchResult], doc: Document, tree: SymbolTree,
            name: str) -> tuple[Match, str | None]:
    """The one match and its note, or the `not_found` / `ambiguous` error with the candidates."""
    decision = decide(results, needle.line)
    if decision.match is not None:
        return decision.match, decision.note
    candidates = [_candidate(m, doc, tree) for m in decision.candidates]
    if decision.tier is None:
        raise LsapError(
            ErrorCode.NOT_FOUND,
            f"{locate.find!r} is not in {name}" + (" within the scope" if locate.scope else ""),
            hint="the closest lines are listed; copy the text exactly, or widen the scope"
            if candidates else "check the text: nothing close to it was found",
            candidates=candidates,
        )
    best = decision.tier
    raise LsapError(
        ErrorCode.AMBIGUOUS,
        f"{locate.find!r} matches {len(candidates)} places in {name}"
        + ("" if best is Tier.EXACT else f" ({best.name.lower()} match)"),
        hint="narrow it: add a `scope` (a symbol path like `Class.method`, or lines "
        "`start,end`), or put more of the line in `find`",
        candidates=candidates,
    )


def _candidate(match: Match, doc: Document, tree: SymbolTree) -> Candidate:
    text = doc.line(match.line)
    return Candidate(
        line=match.line + 1,
        text=text.strip(),
        symbol=tree.enclosing_path(match.line, match.column),
        score=shown_score(match.score) if match.tier is Tier.FUZZY else None,
    )


def _one_symbol(symbols: list[Symbol], lines: list[str]) -> tuple[Symbol | None, str | None]:
    """Overload signatures and the implementation of one symbol (or a declaration and its
    definition) are one place: the implementation, with the others listed (`overloads`).
    They share name and kind, and all but at most one have no body."""
    if len(symbols) < 2 or len({(s.bare_name, s.kind) for s in symbols}) > 1:
        return None, None
    bodies = [s for s in symbols if not _bodiless(s, lines)]
    if len(bodies) > 1:
        return None, None
    one = bodies[0] if bodies else symbols[0]
    others = ", ".join(str(s.selection.start_line + 1) for s in symbols if s is not one)
    return one, f"{len(symbols)} signatures of {one.bare_name}: the {'implementation' if bodies else 'first'} " \
        f"at line {one.selection.start_line + 1}; the others at lines {others}"


def _bodiless(symbol: Symbol, lines: list[str]) -> bool:
    """A signature without a body: a TypeScript overload or declaration (`f(x: T): U;`, or
    without the `;` where a code base leaves semicolons out: its last line no `}`), a Python
    `@overload` (its body `...`)."""
    span = symbol.span
    end = line_at(lines, span.end_line).rstrip()  # a range may stop before `;`
    above = lines[span.start_line - 1].strip() if span.start_line > 0 else ""
    decorated = "overload" in " ".join([above, *lines[span.start_line : symbol.selection.start_line + 1]])
    python = _DEF.match(line_at(lines, symbol.selection.start_line)) is not None
    return end.endswith(";") or (decorated and end.endswith("...")) or (not python and not end.endswith("}"))


_DEF = re.compile(r"\s*(?:async\s+)?def\s")


def _ambiguous_symbols(locate: Locate, symbols: list[Symbol], doc: Document, tree: SymbolTree) -> LsapError:
    return LsapError(
        ErrorCode.AMBIGUOUS,
        f"{len(symbols)} symbols match {format_anchor(locate)}",
        hint="add a `find` with text from the one you mean",
        candidates=[
            Candidate(
                line=s.selection.start_line + 1,
                text=doc.lines[s.selection.start_line].strip() if s.selection.start_line < len(doc.lines) else "",
                symbol=tree.enclosing_path(s.selection.start_line, s.selection.start_col),
            )
            for s in symbols
        ],
    )
