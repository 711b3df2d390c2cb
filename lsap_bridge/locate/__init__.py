"""Locate: semantic anchors (DESIGN §3) resolved to positions."""
