"""What every capability needs, as small objects by concern (`Texts`, `Servers`, `Symbols`,
`Diagnostics`, `Kept`, composed by `Session`): text, servers, symbols and positions over
the editor, and the one warm path a capability runs on (`Session.run`).

It keeps the caches that make reports cheap (doc/architecture.md, Costs): symbol trees per
file version, readiness per server, so that per-item work happens once and only for items
shown; and the state of the answers given (pages, previewed renames, parsed anchors), each
bounded and keyed by what makes it valid (doc/architecture.md, Where state lives).

The package's modules, each importing only those below it (`.importlinter`'s session
contract): `warm.py` (`Session`, the warm path); `trees.py` (`Symbols`), `diagnosed.py`
(`Diagnostics`), `kept.py` (`Kept`); `calls.py` (`Servers`); `texts.py` (`Texts`);
`targets.py` (`Target`, `Resolved`, `Location`, the servers ranked) and `approval.py`
(the edit policy's hook).
"""
