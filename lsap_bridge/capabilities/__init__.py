"""One module per capability; importing them fills the registry."""

from . import (  # the read-only modes of issue 3
    calls as calls,
)
from . import (
    declaration as declaration,
)
from . import definition, hover, locate, references
from . import (
    implementations as implementations,
)
from . import (
    inspect as inspect,
)
from . import (
    type_definition as type_definition,
)
from .base import REGISTRY, Capability, Report, Request

__all__ = ["REGISTRY", "Capability", "Report", "Request", "definition", "hover", "locate", "references"]
