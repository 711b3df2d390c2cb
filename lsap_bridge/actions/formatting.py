"""Formatting and organising imports: the formatter chosen, the imports organised (its own
action, then removing unused imports where that is another), then the format; each step
through the engine.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from ..editor import Client
from ..edits.apply import EditResult, apply_workspace_edit
from ..errors import ErrorCode, LsapError
from ..gateway import LspCall
from ..session.targets import Target
from ..session.warm import Session
from ..workspace import uri_of
from .choose import one
from .gather import Action, gather, of_kind
from .lsp_calls import (
    FORMATTING,
    ORGANIZE_IMPORTS,
    RANGE_FORMATTING,
    REMOVE_UNUSED_IMPORTS,
    formatting_options,
    lsp_range,
)
from .place import Place
from .run import Apply, Ran, run_action


async def formatter(session: Session, path: Path, lines: tuple[int, int] | None,
                    server: str | None) -> tuple[Target, Client]:
    """The server that formats the file (or `lines` of it): the one named, else the
    formatter (`session.targets.ranked`)."""
    method = RANGE_FORMATTING if lines is not None else FORMATTING
    target = await session.servers.target(path, method, server)
    return target, target.client


async def formatting(session: Session, path: Path, lines: tuple[int, int] | None,
                     target: Target, client: Client) -> dict[str, Any]:
    """The server's formatting of the file or of `lines` now, as a WorkspaceEdit."""
    method = RANGE_FORMATTING if lines is not None else FORMATTING
    doc = await session.texts.document(path)
    options = await formatting_options(session, target.bufnr, doc.lines)
    params: dict[str, Any] = {"textDocument": {"uri": uri_of(path)}, "options": options}
    if lines is not None:
        params["range"] = lsp_range(doc, lines[0], lines[1], client)
    answer = (await session.servers.lsp([LspCall(client.id, method, params, target.bufnr)]))[0]
    if answer.error:
        raise LsapError(ErrorCode.SERVER_ERROR,
                        f"{client.name} failed {method}: {answer.error.get('message', answer.error)}",
                        hint="nothing was changed; check the file parses, then ask again")
    return {"changes": {uri_of(path): answer.result or []}}


async def organize(session: Session, path: Path, where: str, server: str | None, apply: Apply,
                   client: Client | None = None) -> Ran:
    """Organise the imports of `path`: the organise-imports action of `client` (the
    formatting server) when it offers one, else the only one offered; then that server's
    remove-unused-imports action when it has one (typescript-language-server's organise
    only sorts and combines). The remarks say what each step changed."""
    found = await gather(session, path, None, kind="source", server=server)
    organizing = [a for a in found.actions if of_kind(a.kind, ORGANIZE_IMPORTS)]
    own = [a for a in organizing if client is not None and a.client.id == client.id]
    first = one(own or organizing, f"of kind {ORGANIZE_IMPORTS!r}", where)
    removing = [a for a in found.actions
                if a.client.id == first.client.id and of_kind(a.kind, REMOVE_UNUSED_IMPORTS)]
    ran = Ran()
    changed = await _organize_step(session, first, apply, ran)
    if removing and changed:  # listed before the first step changed the file: ask again
        again = await gather(session, path, None, kind=REMOVE_UNUSED_IMPORTS, server=first.client.name)
        removing = [a for a in again.actions if a.client.id == first.client.id]
    if removing:
        changed = await _organize_step(session, one(removing, "removing unused imports", where),
                                       apply, ran) or changed
    if not changed:
        ran.remarks.append("the imports were already organised" if removing else
                           f"the imports were already sorted ({first.client.name} offers no "
                           "action that removes unused imports: see the diagnostics)")
    return ran


async def _organize_step(session: Session, action: Action, apply: Apply, ran: Ran) -> bool:
    """Run one step of organising the imports, adding to `ran` what it did and a remark
    saying what it changed; False when it changed nothing."""
    before = (await session.texts.document(action.path)).lines
    try:
        done = await run_action(session, action, apply)
    except LsapError as error:
        if error.code is ErrorCode.NOT_FOUND and "changed nothing" in error.message:
            return False
        raise
    after = (await session.texts.document(action.path)).lines
    if before == after:  # an empty edit: nothing to report (nor to call organised, if the format fails)
        return False
    ran.results += done.results
    ran.servers += done.servers
    ran.remarks += done.remarks
    ran.remarks.append(f"{action.title} ({action.client.name}): {change_note(before, after)}")
    return True


def change_note(before: list[str], after: list[str], shown: int = 3) -> str:
    """What an edit of a few lines did, in words: the lines it removed and added (up to
    `shown` of each), or that it only reordered them."""
    gone = list((Counter(before) - Counter(after)).elements())
    came = list((Counter(after) - Counter(before)).elements())
    if not gone and not came:
        return "reordered lines"

    def some(lines: list[str]) -> str:
        listed = ", ".join(f"`{line.strip()}`" for line in lines[:shown])
        return listed + (f" and {len(lines) - shown} more" if len(lines) > shown else "")

    parts = [f"removed {some(gone)}"] if gone else []
    parts += [f"added {some(came)}"] if came else []
    return "; ".join(parts)


async def format_steps(session: Session, place: Place, organize_imports: bool,
                       server: str | None, apply: Apply | None = None) -> Ran:
    """Organise the imports (when asked: the formatting server's own action if it offers
    one, else the only one offered), then format; each step through the engine (`apply`:
    `edits.apply.apply_workspace_edit` unless given)."""
    target, client = await formatter(session, place.path, place.lines, server)
    ran = Ran()

    async def engine(edit: object, by: Client, label: str) -> EditResult:
        return await apply_workspace_edit(session, edit, by, label=label)

    apply = apply or engine
    if organize_imports:
        done = await organize(session, place.path, place.where, server, apply, client)
        ran.results += done.results
        ran.servers += done.servers
        ran.remarks += done.remarks
    try:
        edit = await formatting(session, place.path, place.lines, target, client)
        ran.add(await apply(edit, client, f"format {place.where} ({client.name})"), client)
    except LsapError as error:
        if not ran.results:
            raise  # nothing was applied: the error is the whole answer
        # The imports were organised (and stay so): the report says so, and why the format was not.
        ran.stopped = f"the format was not applied ({error.code.value}: {error.message}); the imports were organised"
    return ran
