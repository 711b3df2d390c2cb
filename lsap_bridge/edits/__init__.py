"""Applying an LSP WorkspaceEdit safely: checked first, previewable, all or nothing.

Every edit an agent causes (rename, move, code actions) goes through here, so that the
rules hold in one place: nothing outside the workspace, no write without proof, one undo
step per buffer, the human's unsaved work never written behind their back, and either
every file changes or none does, a crash included.

No write without proof: the plan records what each file was when the edit was computed
(the buffer's changedtick, the disk's stamp and content hash; a loaded buffer must hold
what is on disk), and right before anything changes every target is checked again (after
an `ask` approval, however long it took): the same real path inside the workspace, the
same content, writable in place. Then every new content is written beside its file
through a journal (`journal.py`), and Neovim switches files and buffers in one
main-loop call that checks the ticks and stamps once more (`lua/lsap/edits.lua`).

Who writes: the service writes the new contents (temporary files, fsynced, off Neovim's
main loop) and the journal; Neovim renames them into place for files no buffer holds, and
writes loaded buffers itself once they took the edits, so that each ends unmodified, in
step with its file, and its servers saw an ordinary change.

Positions are turned into code points (for the preview and the disk's text) and byte
columns (for the buffers) using the server's offset encoding.

The engine's modules, each below the ones after it:
`text.py` (a file's lines and the text edits on them), `workspace_edit.py` (a server's edit
checked well formed and confined), `files.py` (each file as planned on, proven),
`names.py` (a rename's edits checked against the old name), `plan.py` (the whole edit
checked and computed before anything changes), `switch.py` (checked again, journalled,
switched by Neovim, recorded), `apply.py` (the entry, `apply_workspace_edit`).
"""
