"""The modes: every module of this package is a capability, discovered here (nothing lists
them). A module declares its modes with `modes.mode(...)` (doc/architecture.md, How to add
a capability); importing this package fills `REGISTRY`."""

from __future__ import annotations

import importlib
import pkgutil

from ..models import Request
from ..modes import REGISTRY, Answer, Capability

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["REGISTRY", "Answer", "Capability", "Request"]
