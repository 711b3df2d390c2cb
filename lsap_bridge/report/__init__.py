"""What the modes share to build their reports (doc/architecture.md, Layers): how an anchor
resolved, numbered code, paging, definitions' code, hierarchies, the files of a directory or
a glob. A capability imports these, never another capability."""
