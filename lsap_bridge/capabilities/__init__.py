"""One module per capability; importing them fills the registry."""

from . import (
    calls,
    completion,
    declaration,
    definition,
    hover,
    implementations,
    inlay_hints,
    inspect,
    locate,
    outline,
    references,
    search,
    signature_help,
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
    "completion",
    "declaration",
    "definition",
    "hover",
    "implementations",
    "inlay_hints",
    "inspect",
    "locate",
    "outline",
    "references",
    "search",
    "signature_help",
    "type_definition",
    "types",
]
