"""Locate: semantic anchors (doc/architecture.md, Anchors) resolved to positions."""
