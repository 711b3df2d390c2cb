"""`rename_preview`, `rename_execute`, `rename`: a workspace-wide rename, previewed or applied.

The preview shows each file's diff and an id; executing the id applies exactly what was
previewed (refused if a file changed since), minus `exclude_files`. Application goes
through `edits.apply.apply_workspace_edit` (checked twice, one undo step per buffer, all or
nothing), and the report ends with the diagnostics the rename introduced, so a broken
rename is visible.

Guard rail: the server is asked for the symbol's `references` along with the rename. A
rename whose edits leave uses with the old name (a server answering 1 edit where it finds
5 uses: basedpyright renames in the declaring file only once its index of the other files
went stale) is not written: it is refused, naming the uses it misses, or under
`edit_policy = 'ask'` the human is asked with them shown; `allow_uncovered` writes it
anyway (the uses are then listed in the report). Every file that uses the symbol has its
diagnostics checked afterwards, not only the files that changed.

The modules, top down (`.importlinter`, contract `rename`): `modes.py` (the three modes and
applying a rename), `pending.py` (a rename computed and kept between preview and execute),
`coverage.py` (the guard rail), `models.py` (requests, reports, the pending rename).
"""
