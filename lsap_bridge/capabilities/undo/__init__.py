"""`changes` and `undo`: the change sets the bridge recorded (`changes.py`), listed newest
first, and one taken back whole, across every file, buffers and disk alike, through the
same safe, journalled edit engine as every edit (`edits.apply.apply_workspace_edit`).

An undo is an edit from each file's "after" text back to its "before": every file must
still hold "after" exactly (checked here, and again by the engine right before it plans),
else it is a conflict, named, and nothing is undone unless the request says `partial`.
The edit is line by line (only the lines the change touched), so a buffer where the
change stayed beside the human's unsaved text keeps that text, and each buffer gets one
undo step. The undo is a change set too: undoing it redoes the change.

`review` decides a change hunk by hunk (rejected hunks are put back the same way) and
`merge` keeps the editor's merge of a disk change into unsaved text as a change set.

The modules, top down (`.importlinter`, contract `undo`): the modes, one module each
(`listing.py` for `changes`, `undo.py`, `review.py`, `merge.py`); `putback.py` (writing a
change set back through the engine) beside `sets.py` (a change set's texts and hunks as
the modes read them); `models.py` (requests and reports).
"""
