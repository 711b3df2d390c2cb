"""Every server without an adapter of its own: one that does what its capabilities say."""

from __future__ import annotations

from .adapter import Adapter

ADAPTER = Adapter()
