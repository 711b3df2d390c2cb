"""Anchors as text (doc/architecture.md, Anchors): the string form `path:scope@find` and the
matcher that finds a `find` in a file's lines, tier by tier. Pure functions; resolving an
anchor against the servers is `lsap_bridge.resolve`."""
