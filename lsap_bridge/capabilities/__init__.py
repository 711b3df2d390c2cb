"""One module per capability; importing them fills the registry."""

from . import definition, hover, locate, references
from .base import REGISTRY, Capability, Report, Request

__all__ = ["REGISTRY", "Capability", "Report", "Request", "definition", "hover", "locate", "references"]
