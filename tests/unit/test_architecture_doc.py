"""doc/architecture.md's table of layers says what `.importlinter` enforces (issue 49: the page had
put requests.py and render.py in a layer of their own): every module the contract layers is in
the table, and the table's rows go down the contract, never up."""

from __future__ import annotations

import configparser
import re

from tests.conftest import ROOT

_NAME = re.compile(r"`([A-Za-z_]\w*(?:/\w+)*)(?:\.py|/)`")


def module_name(name: str) -> str:
    """A name as the table writes it (`servers/registry.py`) as the contract does (`servers.registry`)."""
    head = name.split("/")[0]
    return name.replace("/", ".") if (ROOT / "lsap_bridge" / head).is_dir() else name


def contract_layers() -> dict[str, int]:
    """Each module the layers contract names, with its depth (0 is the top)."""
    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    lines = [line.strip() for line in config["importlinter:contract:layers"]["layers"].splitlines()]
    return {
        module.strip().removeprefix("lsap_bridge."): depth
        for depth, line in enumerate(line for line in lines if line)
        for module in line.split("|")
    }


def table_rows() -> list[tuple[str, list[str]]]:
    """The Python modules (and packages) of each row of the Layers table, top to bottom."""
    text = (ROOT / "doc" / "architecture.md").read_text()
    start = text.index("| layer | modules |")
    rows = []
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        layer, modules = line.split("|")[1:3]
        names = [m for m in map(module_name, _NAME.findall(modules)) if "/" not in m and m not in {"build_hooks"}]
        rows.append((layer.strip(), names))
    return rows


def test_every_module_the_contract_layers_is_in_the_table() -> None:
    named = {name for _, names in table_rows() for name in names}
    assert set(contract_layers()) - named == set()


def test_the_table_goes_down_the_contract_row_by_row() -> None:
    depth = contract_layers()
    deepest_above, above = -1, "the top"
    for layer, names in table_rows():
        depths = [depth[name] for name in names if name in depth]
        if not depths:
            continue
        assert min(depths) >= deepest_above, (layer, names, "is above", above)
        deepest_above, above = max(depths), layer
