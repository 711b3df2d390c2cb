"""A change set as the modes read it, its texts only (nothing here writes): the one a request
names (`_target`), its files and hunks left (`_left`, `numbered`), a merge's conflicts with
the unsaved text (`_conflicted`), a hunk as a diff, the files with hunks decided
(`_decide`), and the hunks as the editor shows them in the buffers (`inline`)."""

from __future__ import annotations

import dataclasses
import difflib
import time
from collections.abc import Callable
from pathlib import Path

from ...changes import ChangeSet, FileText
from ...errors import ErrorCode, LsapError
from ...jsonvalue import Params
from ...surface import phrase
from .models import ReviewRequest, UndoRequest

# A merged disk change's conflict with the unsaved text is decided in the buffer alone.
MERGE_KEYS = "decide it in the buffer (keep mine, take theirs, both: :help lsap-merge)"
NOTHING = "nothing was changed"


def _when(stamp: float) -> str:
    today = time.strftime("%Y-%m-%d") == time.strftime("%Y-%m-%d", time.localtime(stamp))
    return time.strftime("%H:%M:%S" if today else "%Y-%m-%d %H:%M", time.localtime(stamp))


def _left(change: ChangeSet) -> list[FileText]:
    """Its files not put back yet, nor whose every hunk was decided (none when its texts
    were too large to keep)."""
    return [f for f in change.files if change.texts and f.path not in change.reverted
            and (f.before != f.after or f.origin is not None)]


def _conflicted(file: FileText) -> set[int]:
    """The numbers of a merged file's hunks in conflict with the human's unsaved text, not
    decided yet (`FileText.conflicts`)."""
    return {n for numbers in file.conflicts for n in numbers}


def _target(found: list[ChangeSet], request: UndoRequest) -> ChangeSet:
    """The change set asked for, or the newest agent change with files left to undo."""
    if request.id is not None:
        match = next((c for c in found if c.id == request.id), None)
        if match is None:
            raise LsapError(ErrorCode.NOT_FOUND, f"no change set {request.id} in this workspace",
                            hint=f"`{phrase({'mode': 'changes'}, None)}` lists them")
        return match
    match = next((c for c in found if c.by_agent and not c.undoes and _left(c)), None)
    if match is None:
        raise LsapError(ErrorCode.NOT_FOUND, "no agent change is left to undo",
                        hint=f"`{phrase({'mode': 'changes'}, None)}` lists every change set")
    return match


def _hunks(file: FileText) -> list[tuple[int, int, int, int]]:
    """The hunks of a file's change: (before start, before end, after start, after end)."""
    matcher = difflib.SequenceMatcher(None, file.before or [], file.after, autojunk=False)
    return [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def numbered(file: FileText) -> list[tuple[int, tuple[int, int, int, int]]]:
    """The hunks left with their numbers in the review, which stay theirs while others are
    decided (`FileText.numbers`)."""
    hunks = _hunks(file)
    numbers = file.numbers if file.numbers is not None and len(file.numbers) == len(hunks) else None
    return list(zip(numbers or range(1, len(hunks) + 1), hunks, strict=True))


def _hunk_diff(file: FileText, hunk: tuple[int, int, int, int]) -> str:
    """One hunk as a unified diff (one line of context), as the report's lists read it."""
    i1, i2, j1, j2 = hunk
    before, after = file.before or [], file.after
    start, end = max(0, i1 - 1), min(len(before), i2 + 1)
    context_after = after[j2:j2 + (end - i2)]
    lines = [f"@@ -{start + 1},{end - start} +{max(0, j1 - (i1 - start)) + 1},"
             f"{(i1 - start) + (j2 - j1) + len(context_after)} @@"]
    lines += [" " + line for line in before[start:i1]]
    lines += ["-" + line for line in before[i1:i2]]
    lines += ["+" + line for line in after[j1:j2]]
    lines += [" " + line for line in context_after]
    return "\n".join(lines)


def _decide(change: ChangeSet, request: ReviewRequest,
            display: Callable[[Path], str]) -> tuple[list[FileText], list[FileText]]:
    """The change's files with the decision made (texts only), and those whose "after"
    text changes (rejected hunks, to be written)."""
    chosen = [f for f in _left(change)
              if request.file_path is None or display(Path(f.path)) == request.file_path.rstrip("/")]
    if not chosen:
        raise LsapError(ErrorCode.NOT_FOUND, f"change {change.id} has nothing left to decide in "
                        f"{request.file_path or 'any file'}",
                        hint=f"`{phrase({'mode': 'review', 'id': change.id}, 'id')}` shows what is left")
    files, written, taken = [], [], 0
    for file in change.files:
        if file not in chosen:
            files.append(file)
            continue
        picked = _picked(change, file, request.hunk, display)
        decided = _decided_file(file, picked, request.decision == "reject")
        files.append(decided)
        taken += len(picked)
        if request.decision == "reject" and picked:
            written.append(decided)
    if not taken and any(_conflicted(f) for f in chosen):
        raise LsapError(ErrorCode.CONFLICT, f"every hunk left in change {change.id} is a conflict with "
                        f"the unsaved text: {MERGE_KEYS}", hint=NOTHING)
    if not taken:
        raise LsapError(ErrorCode.NOT_FOUND, f"change {change.id} has no hunk left to decide in "
                        f"{request.file_path or 'any file'}", hint=NOTHING)
    return files, written


def _picked(change: ChangeSet, file: FileText, hunk: int | None,
            display: Callable[[Path], str]) -> list[int]:
    """The numbers of `file`'s hunks a decision takes: `hunk`, else every one left but the
    conflicts of a merge (decided in the buffer, `MERGE_KEYS`)."""
    hunks = [n for n, _ in numbered(file)]
    conflicts = _conflicted(file)
    if hunk is None:
        return [n for n in hunks if n not in conflicts]
    if hunk not in hunks:
        left = ", ".join(str(n) for n in hunks)
        raise LsapError(ErrorCode.NOT_FOUND, f"{display(Path(file.path))} has no hunk {hunk} left "
                        f"to decide in change {change.id} (left: {left})",
                        hint=f"`{phrase({'mode': 'review', 'id': change.id}, 'id')}` numbers them")
    if hunk in conflicts:
        raise LsapError(ErrorCode.CONFLICT, f"hunk {hunk} of {display(Path(file.path))} in change {change.id} "
                        f"is a conflict with the unsaved text in its buffer: {MERGE_KEYS}", hint=NOTHING)
    return [hunk]


def _decided_file(file: FileText, numbers: list[int], reject: bool) -> FileText:
    """`file` with the hunks `numbers` decided: rejected (its "after" takes their "before"
    lines back) or accepted (its "before" takes their "after" lines); they leave the
    review, and the merge's conflicts."""
    hunks = numbered(file)
    before, after = list(file.before or []), list(file.after)
    for _, (i1, i2, j1, j2) in reversed([(n, h) for n, h in hunks if n in numbers]):  # from the end
        if reject:
            after[j1:j2] = (file.before or [])[i1:i2]
        else:
            before[i1:i2] = file.after[j1:j2]
    return dataclasses.replace(file, before=before, after=after,
                               numbers=[n for n, _ in hunks if n not in numbers],
                               conflicts=[[n for n in c if n not in numbers] for c in file.conflicts])


def inline(change: ChangeSet, display: Callable[[Path], str]) -> Params:
    """The hunks left as the editor shows them in the buffers: per file (its absolute path, its
    name in requests, the key of the editor's merge that made it, if so) each hunk's number,
    where its lines start in the change's text (0-based), the lines it wrote, the lines it
    removed, the line above it (to find it again where the text moved), and, a merge's hunk
    in conflict with the unsaved text, the merge's number of that conflict (1-based)."""
    files: list[Params] = []
    for file in _left(change):
        before, after = file.before or [], file.after
        conflict = {n: index for index, numbers in enumerate(file.conflicts, 1) for n in numbers}
        files.append({"path": file.path, "name": display(Path(file.path)), "merged": file.merged, "hunks": [
            {"number": n, "line": j1, "added": after[j1:j2], "removed": before[i1:i2],
             "above": after[j1 - 1] if j1 else None, "conflict": conflict.get(n)}
            for n, (i1, i2, j1, j2) in numbered(file)]})
    return {"id": change.id, "label": change.label, "who": change.who, "files": files}


def _merge(change: ChangeSet) -> bool:
    """A disk change the editor merged into a buffer with unsaved text (`FileText.merged`)."""
    return any(f.merged is not None for f in change.files)
