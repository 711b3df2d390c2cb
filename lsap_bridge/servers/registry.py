"""The adapters by client name: the one place the bridge learns which server it talks to.
A new server is one module in this package with its `ADAPTER`, found here with no change
elsewhere (doc/architecture.md, Adding a language server)."""

from __future__ import annotations

import importlib
import pkgutil

from . import __name__ as PACKAGE
from . import __path__ as PACKAGE_PATH
from .adapter import Adapter
from .default import ADAPTER as DEFAULT

_BY_NAME: dict[str, Adapter] = {}


def adapters() -> list[Adapter]:
    """Every server's adapter, in the order of their modules' names. Found when first asked
    (then kept): the modules are found, not listed, and the package's other modules (the
    tsserver pull) load only once the editor boundary has."""
    if not _BY_NAME:
        for info in sorted(pkgutil.iter_modules(PACKAGE_PATH), key=lambda info: info.name):
            adapter = getattr(importlib.import_module(f"{PACKAGE}.{info.name}"), "ADAPTER", None)
            if isinstance(adapter, Adapter) and adapter.names:
                _BY_NAME.update(dict.fromkeys(adapter.names, adapter))
    return list(dict.fromkeys(_BY_NAME.values()))


def adapter_for(name: str) -> Adapter:
    """The adapter of the server whose client is called `name`; the default one for any other."""
    if not _BY_NAME:
        adapters()
    return _BY_NAME.get(name, DEFAULT)


def config_files() -> tuple[str, ...]:
    """Every server's configuration files (`Session.reconfigure` watches them all)."""
    return tuple(dict.fromkeys(name for adapter in adapters() for name in adapter.config_files))


def exclude_sources() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Every server's JSON configuration files with an `exclude` list, and pyproject.toml
    sections with one (the file watcher skips what any server excludes)."""
    found = adapters()
    return (tuple(dict.fromkeys(f for adapter in found for f in adapter.exclude_files)),
            tuple(dict.fromkeys(t for adapter in found for t in adapter.exclude_tools)))
