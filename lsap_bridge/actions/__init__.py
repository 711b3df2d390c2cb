"""Code actions and formatting from every attached server, applied by the bridge's own edit
engine (doc/architecture.md, Code actions).

What the `code_actions`/`code_action`/`format` modes and the text format's `! FIX`,
`! ORGANIZE_IMPORTS` and `! FORMAT` share: gathering the actions of every server attached
to a file (each asked with its own diagnostics of the range), choosing one by kind, title
(the anchor matcher's tiers, applied to titles) or diagnostic, and running it: resolved
through `codeAction/resolve` when the server sends it bare, its edit through
`edits.apply.apply_workspace_edit`, its command through `workspace/executeCommand`.

A command's edits come back as `workspace/applyEdit` requests while it runs. The bridge
takes them (`EditorGateway.lsp(taking=…)`, a handler of that client only while the command
is pending and for `gateway.TAKE_GRACE` after its reply) instead of letting Neovim apply
them: each is checked as it comes (well formed, inside the workspace) and answered at once
(`applied: false` for a refused one, and for every one after it), and once the command
has returned the edits it sent are applied through the engine as ONE edit, or none of
them. So a command that fails part-way, or sends one edit the bridge refuses, changes
nothing, and the edit policy, the checks before writing and the one undo step per buffer
hold as for any other edit.

The package's modules, each importing only those below it (`.importlinter`'s actions
contract): `formatting.py` (format and organise imports) and `applied.py` (the report
after an edit); `run.py` (one action run); `choose.py` (one action chosen); `gather.py`
(every server's actions gathered); `place.py` (where they apply) and `lsp_calls.py` (the
methods, and tsserver's calls).
"""
