"""The modes: every module of this package is a capability, discovered here (nothing lists
them). A module declares its modes with `modes.mode(...)` (doc/architecture.md, How to add
a capability); importing this package fills `REGISTRY`. A capability too large for one
module is a package of its own (`rename/`, `undo/`), whose modules are discovered too."""

from __future__ import annotations

import importlib
import pkgutil

from ..models import Request
from ..modes import REGISTRY, Answer, Capability

for _module in pkgutil.walk_packages(__path__, f"{__name__}."):
    importlib.import_module(_module.name)

__all__ = ["REGISTRY", "Answer", "Capability", "Request"]
