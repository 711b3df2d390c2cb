"""One module per capability; importing them fills the registry."""

from . import (
    calls,
    declaration,
    definition,
    hover,
    implementations,
    inspect,
    locate,
    outline,
    references,
    search,
    type_definition,
    types,
)
from .base import REGISTRY, Capability, Report, Request

__all__ = [
    "REGISTRY",
    "Capability",
    "Report",
    "Request",
    "calls",
    "declaration",
    "definition",
    "hover",
    "implementations",
    "inspect",
    "locate",
    "outline",
    "references",
    "search",
    "type_definition",
    "types",
]
