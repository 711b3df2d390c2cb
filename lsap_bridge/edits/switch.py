"""Carrying out a plan: every file checked once more, the new contents written beside their
files through a journal, Neovim switching files and buffers in one main-loop call, rolled
back whole on failure, and recorded as a change set; the journals a crash left, settled at
start-up.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from .. import changes
from ..editor import Editor
from ..errors import ErrorCode, LsapError
from ..filestate import DiskStamp, Snapshot, snapshot
from ..journal import Change, Journal, Recovery, recover
from ..jsonvalue import Packable
from ..session.warm import Session
from ..surface import APPLIED
from ..workspace import Workspace
from .files import unwritable
from .plan import Plan
from .text import NOTHING


def recheck(plan: Plan, workspace: Workspace) -> None:
    """Every file the edit writes, once more, before anything is written: the same real
    path (no directory swapped for a symlink), the same content, still writable."""
    display = workspace.display
    for file in plan.on_disk:
        path = file.path
        real = Path(os.path.realpath(path if file.disk is not None else path.parent))
        if real != (path if file.disk is not None else path.parent):
            where = real if file.disk is not None else real / path.name
            if not workspace.contains(where):
                raise LsapError(
                    ErrorCode.OUTSIDE_WORKSPACE,
                    f"{display(path)} now leads to {where}, outside the workspace (a symlink "
                    "changed after the edit was planned)",
                    hint=NOTHING,
                )
            raise LsapError(
                ErrorCode.CONFLICT,
                f"{display(path)} now leads to {display(where)} (a symlink changed after the "
                "edit was planned)",
                hint=NOTHING + "; ask again",
            )
        found = snapshot(path)
        what = None
        if file.disk is None and (found is not None or os.path.lexists(path)):
            what = "was created by someone else"
        elif file.disk is not None and found is None:
            what = "was deleted"
        elif file.disk is not None and found is not None and found.digest != file.disk.digest:
            what = "changed on disk"
        elif problem := unwritable(path, None if found is None else os.stat(path)):
            what = f"cannot be written any more: {problem}"
        if what:
            raise LsapError(
                ErrorCode.CONFLICT,
                f"{display(path)} {what} after the edit was planned",
                hint=NOTHING + "; ask again",
            )


def _changes(plan: Plan) -> list[Change]:
    out = [Change(f.path, None, f.disk.digest if f.disk else None) for f in plan.removed]
    for file in plan.files:
        if not file.buffer_only:
            # A loaded buffer is written by Neovim, in place; other files get theirs renamed in.
            out.append(Change(file.path, file.new_bytes(), file.disk.digest if file.disk else None,
                              in_place=file.doc is not None and file.under is None))
    return out


def _ops(plan: Plan, journal: Journal | None, now: dict[Path, Snapshot | None],
         display: Callable[[Path], str]) -> list[dict[str, Packable]]:
    """What `lua/lsap/edits.lua` applies: per file, the disk switch and the buffer's edits."""
    temps = {Path(e.path): e.temp for e in journal.entries} if journal else {}

    def stamp(path: Path) -> dict[str, int] | None:
        found = now.get(path)
        return None if found is None else _lua_stamp(found.stamp)

    def content(path: Path) -> bytes | None:
        """The bytes proven, for a file whose stamp is racy: Neovim compares them right
        before the switch (two writes in one clock tick can leave the stamp alike)."""
        found = now.get(path)
        return found.data if found is not None and found.stamp.racy() else None

    ops: list[dict[str, Packable]] = []
    for file in plan.removed:
        ops.append({"kind": "remove", "path": str(file.path), "name": display(file.path),
                    "dir": str(file.path.parent), "stamp": stamp(file.path),
                    "content": content(file.path)})
    for file in plan.files:
        kind = "buffer" if file.buffer_only else "write" if file.disk else "create"
        loaded = file.doc is not None
        ops.append({
            "kind": kind,
            "path": str(file.path),
            "name": display(file.path),
            "dir": str(file.path.parent),
            "temp": temps.get(file.path),
            "stamp": stamp(file.path),
            "content": None if file.buffer_only else content(file.path),
            "origin": str(file.origin) if file.origin else None,
            # The buffer keeps the human's unsaved changes beside the edit; its file gets the
            # edit on the disk's text.
            "unsaved": file.under is not None,
            # A rename onto an existing file (consented): a buffer holding that file is
            # the bridge's own, closed, or is reloaded once the file switched.
            "overwrites": file.origin is not None and file.overwrote is not None,
            "tick": file.tick,
            # A buffer loaded when planned takes the edits (then Neovim writes it, unless the
            # human has unsaved changes in it); files no buffer holds get the new content.
            "steps": file.steps if loaded else None,
            "lines": file.lines if loaded else None,
        })
    return ops


def _lua_stamp(s: DiskStamp) -> dict[str, int]:
    """A stamp as `lua/lsap/edits.lua` checks and reports it."""
    return {"size": s.size, "sec": s.mtime_ns // 10**9, "nsec": s.mtime_ns % 10**9,
            "ino": s.ino, "dev": s.dev, "csec": s.ctime_ns // 10**9, "cnsec": s.ctime_ns % 10**9}


def _told(session: Session, stamps: object) -> None:
    """The files an edit switched, as Neovim saw them right after (`stamps`: path → its
    stamp, false for none): those still so are recorded as what the servers know
    (`DiskWatch.told`): they heard of each as it was written (a buffer's didChange and save,
    didChangeWatchedFiles of the others). A file changed since is left for the next sync."""
    seen: dict[str, DiskStamp | None] = {}
    for path, given in (stamps.items() if isinstance(stamps, dict) else ()):
        now = DiskStamp.of(path)
        if (now is None and not given) or (now is not None and given == _lua_stamp(now)):
            seen[str(path)] = now
    session.servers.watch.told(seen)


def _rolled_back(problems: list[str]) -> str:
    if not problems:
        return "every change was rolled back"
    return "rolling back failed for: " + "; ".join(problems)


class Completed(LsapError):
    """The call failed (Neovim went away) after the switch began: the journal completed the
    edit, which is applied and recorded as its change set (`recorded` keeps it)."""


async def _switch(session: Session, journal: Journal | None, ops: list[dict[str, Packable]],
                  label: str) -> None:
    """Have Neovim switch files and buffers, then settle the journal whatever happened."""
    marker = str(journal.marker) if journal else None
    try:
        outcome = await session.gateway.apply_edits({"marker": marker, "ops": ops})
    except BaseException as exc:
        # Neovim went away (or failed) mid-call: complete the edit if the switch began.
        settled = await asyncio.to_thread(journal.settle) if journal else None
        if not isinstance(exc, LsapError):
            raise
        if settled is not None and settled.outcome == "completed":  # applied all the same
            raise Completed(exc.code, f"{exc.message} while {label} was applied; {settled.message}",
                            hint=exc.hint) from None
        raise LsapError(ErrorCode.SERVER_ERROR,
                        f"applying {label} failed: {exc.message}"
                        + (f"; {settled.message}" if settled else "; nothing was changed"),
                        hint="ask again") from None
    lost = await asyncio.to_thread(journal.overwritten) if journal and outcome.get("ok") else []
    if lost and journal is not None:  # a write that landed in a file as it was replaced: the edit goes back
        outcome = {"switched": await asyncio.to_thread(journal.as_switched), "conflict": True, "error": ", ".join(
            session.workspace.display(Path(p)) for p in lost) + " changed on disk as the edit replaced it"}
    if outcome.get("ok") or "switched" not in outcome:
        if journal is not None:
            await asyncio.to_thread(journal.finish)
        if outcome.get("ok"):
            _told(session, outcome.get("stamps"))
            return
        raise LsapError(
            ErrorCode.CONFLICT,
            f"{label} was not applied: {outcome.get('error')}",
            hint=NOTHING + ("; ask again once the human has left Insert mode" if outcome.get("busy")
                            else "; ask again"),
        )
    switched = outcome.get("switched")
    restored, problems = (await asyncio.to_thread(journal.roll_back, switched) if journal
                          else ([], []))
    # A buffer whose file was put back here (Neovim could not write it back) re-reads it.
    await session.gateway.call("reload", restored)
    raise LsapError(
        ErrorCode.CONFLICT if not problems else ErrorCode.SERVER_ERROR,
        f"applying {label} failed: {outcome.get('error')}; {_rolled_back(problems)}",
        hint="ask again" if outcome.get("conflict") and not problems
        else "fix the cause (e.g. make the file writable) and ask again",
    )


def _proved(plan: Plan, display: Callable[[Path], str]) -> dict[Path, Snapshot | None]:
    """Every file the edit writes, as the last thing before Neovim switches them (the
    journal is written): the very content the edit was planned on, by its hash. Returns
    the stamps then, which Neovim checks in the same call that switches the file: any
    write since (an `os.utime` too) moves the change time."""
    now: dict[Path, Snapshot | None] = {}
    for file in plan.on_disk:
        found = snapshot(file.path)
        if (found is None) != (file.disk is None) or (
                found is not None and file.disk is not None and found.digest != file.disk.digest):
            raise LsapError(
                ErrorCode.CONFLICT,
                f"{display(file.path)} changed on disk while the edit was being applied",
                hint=NOTHING + "; ask again",
            )
        now[file.path] = found
    return now


async def _journalled(session: Session, plan: Plan, directory: Path, label: str) -> None:
    """Write the journal and the new contents, prove the files once more (`_proved`), then
    have Neovim switch (see `_switch`)."""
    journal = None
    changes = _changes(plan)
    if changes:
        try:
            journal = await asyncio.to_thread(Journal.prepare, directory, label, changes,
                                              session.workspace.roots)
        except OSError as exc:
            raise LsapError(ErrorCode.SERVER_ERROR, f"{label} could not be prepared: {exc}",
                            hint=NOTHING) from None
    display = session.workspace.display
    try:
        now = await asyncio.to_thread(_proved, plan, display)
    except BaseException:
        if journal is not None:
            await asyncio.to_thread(journal.finish)
        raise
    await _switch(session, journal, _ops(plan, journal, now, display), label)


def _made(path: Path) -> list[str]:
    """The directories a file created at `path` makes (those missing now), deepest first."""
    missing = []
    for parent in path.parents:
        if parent.exists():
            break
        missing.append(str(parent))
    return missing


def _texts(plan: Plan) -> list[changes.FileText]:
    """Each changed file's text before and after, for its change set."""
    return [changes.FileText(str(f.path), None if f.created else f.original, f.lines, f.buffer_only,
                             str(f.origin) if f.origin else None, f.overwrote if f.origin else None,
                             _made(f.path) if f.created else [])
            for f in plan.files]


async def recorded(session: Session, plan: Plan, directory: Path, label: str) -> str:
    """`_journalled`, its change set kept first (`changes.py`) and dropped if it failed;
    an agent's changed lines are marked in the editor. The set's id."""
    change = await asyncio.to_thread(changes.begin, directory, label, _texts(plan))
    applied = APPLIED.get()
    try:
        await _journalled(session, plan, directory, label)
    except Completed:  # Neovim went away mid-switch and the journal completed it: kept, told
        if applied is not None:
            applied.append(change.id)
        raise
    except BaseException:
        await asyncio.to_thread(changes.discard, directory, change)
        raise
    if applied is not None:  # an answer cut short from here on says it was applied
        applied.append(change.id)
    if change.by_agent:  # its lines get the agent's sign in the human's editor
        with contextlib.suppress(LsapError):
            await session.gateway.call("presence_changed", changes.signs(change))
    return change.id


async def applied_before(session: Session) -> changes.ChangeSet | None:
    """The change this very request made when it was sent before, if it is the asker's
    latest and was not taken back: an agent whose answer was lost (the session ended)
    sends it again, and is told it is applied rather than that its anchor is gone."""
    request = changes.request_text()
    if request is None:
        return None
    directory = await journal_dir(session.gateway)
    last = await asyncio.to_thread(changes.last_of, directory, session.workspace, changes.who())
    return last if last is not None and last.request == request and not last.undone else None


async def journal_dir(gateway: Editor) -> Path:
    """Where this Neovim keeps edit journals (under its state directory)."""
    return Path(str(await gateway.call("journal_dir")))


async def recover_edits(gateway: Editor, roots: Sequence[Path]) -> list[Recovery]:
    """Settle the edits a crash left unfinished in this workspace (`roots`, see
    `journal.recover`), at start-up before any request; buffers already loaded of the files
    settled re-read them."""
    directory = await journal_dir(gateway)
    found = await asyncio.to_thread(recover, directory, roots)
    for recovery in found:  # nothing of it was applied: its change set is not listed as applied
        if recovery.outcome == "rolled back" and recovery.started is not None:
            await asyncio.to_thread(changes.rolled_back, directory, recovery.label, recovery.paths,
                                    recovery.started)
    paths = [path for recovery in found for path in recovery.paths]
    if paths:
        await gateway.call("reload", paths)
    return found
