"""The documented lazy.nvim spec installs the plugin into a fresh Python host: its `build`
step (require('lsap').build()) pip-installs lsap_bridge and registers the remote plugin,
and :checkhealth lsap then finds both."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT

from .nvim_home import checkhealth, lines, make_home, section

pytestmark = pytest.mark.integration


def lazy_spec() -> str:
    """The Lua table of the lazy.nvim spec, as doc/lsap.txt shows it."""
    doc = (ROOT / "doc" / "lsap.txt").read_text()
    block = doc.split("*lsap-lazy*", 1)[1].split(">lua\n", 1)[1].split("\n<", 1)[0]
    return textwrap.dedent(block)


def test_lazy_spec_build_installs_into_a_fresh_python_host(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    home = make_home(tmp_path / "home", python=python)
    spec = tmp_path / "spec.lua"
    spec.write_text("return " + lazy_spec())
    # What lazy.nvim does on install: load the plugin (it is on the runtimepath), run
    # `build` with the plugin, then call setup(opts).
    home.run(
        "-c",
        f"lua local spec = dofile({str(spec)!r}); "
        f"spec.build({{ dir = {str(ROOT)!r} }}); require('lsap').setup(spec.opts)",
        "+qa",
        timeout=600,
    )
    imported = subprocess.run(
        [python, "-c", "import lsap_bridge, pynvim; print(lsap_bridge.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    assert Path(imported.strip()) == ROOT / "lsap_bridge" / "__init__.py"
    manifest = (Path(home.env["XDG_DATA_HOME"]) / "nvim" / "rplugin.vim").read_text()
    assert "rplugin/python3/lsap.py'" in manifest
    assert "'name': 'LsapStart'" in manifest

    nvim = home.attach(tmp_path)
    try:
        text = checkhealth(nvim)
    finally:
        nvim.close()
    for name in ("Python host", "Remote plugin"):
        part = section(text, name)
        assert lines(part, "ERROR") == [] and lines(part, "WARNING") == [], part
    assert f"OK Python host: {python}" in text
