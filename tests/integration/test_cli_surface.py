"""The CLI surface an agent falls into (issue: every answer bounded, every hint runnable):
`lsap schema [MODE…]`, the budget of `$LSAP_MAX_TOKENS` sent with each call, JSON answers
cut like Markdown ones, "did you mean", whole-file modes with a bare path, and a closed
stdout. One warm embedded daemon (basedpyright and ruff) on a copy of the example project for all."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.cl100k import tokens
from tests.conftest import EXAMPLE

pytestmark = pytest.mark.integration


SERVERS = {"LSAP_SERVERS": "basedpyright,ruff"}


def lsap(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lsap_bridge", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env={**os.environ, **SERVERS, **(env or {})})


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("cli_surface") / "shop"
    shutil.copytree(EXAMPLE, root)
    (root / "shop" / "messy.py").write_text("def f( x ):\n    return x+1\n")
    warm = lsap(root, "references", "shop/models.py:Product", "--idle-timeout", "300")
    assert warm.returncode == 0, warm.stdout + warm.stderr
    yield root
    lsap(root, "daemon", "stop")


def test_schema_is_an_index_and_names_a_modes_fields(project: Path) -> None:
    index = lsap(project, "schema")
    assert index.returncode == 0, index.stderr
    assert index.stdout.startswith("# Schema: ") and "| hover |" in index.stdout
    assert "`lsap schema references`" in index.stdout  # how to get one mode's fields, as a CLI line
    assert "| references |" in index.stdout and '"locate"' in index.stdout  # its required field
    assert tokens(index.stdout) <= 1500, tokens(index.stdout)

    hover = lsap(project, "schema", "hover")
    assert hover.returncode == 0, hover.stderr
    assert hover.stdout.startswith("# Schema: 1 mode") and "### hover" in hover.stdout
    assert "### references" not in hover.stdout
    assert tokens(hover.stdout) <= 500, tokens(hover.stdout)

    two = json.loads(lsap(project, "schema", "hover", "search", "--format", "json").stdout)
    assert sorted(two["schemas"]) == ["hover", "search"]

    wrong = lsap(project, "schema", "hovr")
    assert wrong.returncode == 2 and "did you mean `hover`" in wrong.stdout, wrong.stdout


def test_an_invalid_request_points_at_its_modes_schema_and_that_runs(project: Path) -> None:
    bad = lsap(project, "search", "Product", "--set", "kinds=7")
    assert bad.returncode == 2
    assert "`lsap schema search`" in bad.stdout, bad.stdout
    assert lsap(project, "schema", "search").returncode == 0


def test_mistyped_modes_and_fields_get_did_you_mean(project: Path) -> None:
    mode = lsap(project, "hovr", "shop/models.py:Product")
    assert mode.returncode == 2 and "did you mean `hover`" in mode.stdout, mode.stdout
    field = lsap(project, "references", "shop/models.py:Product", "--set", "max_item=3")
    assert field.returncode == 2 and "did you mean `max_items`" in field.stdout, field.stdout


def test_the_environments_budget_travels_with_each_call(project: Path) -> None:
    whole = lsap(project, "references", "shop/models.py:Product", "--max-items", "200", "--context-lines", "12",
                 "--set", "compact=false")
    assert whole.returncode == 0 and tokens(whole.stdout) > 1500, tokens(whole.stdout)
    # The daemon was started without $LSAP_MAX_TOKENS: the call's own value still counts.
    small = lsap(project, "references", "shop/models.py:Product", "--max-items", "200", "--context-lines", "12",
                 "--set", "compact=false", env={"LSAP_MAX_TOKENS": "1500"})
    assert small.returncode == 0, small.stdout
    assert tokens(small.stdout) <= 1500, tokens(small.stdout)
    assert "lsap references" in small.stdout  # the footer's next request, as a CLI line


def test_a_json_answer_over_its_budget_is_cut_and_still_parses(project: Path) -> None:
    answer = lsap(project, "schema", *sorted(["hover", "references", "rename", "search", "outline",
                                              "calls", "diagnostics", "code_actions"]),
                  "--format", "json", "--max-tokens", "1000")
    assert answer.returncode == 0, answer.stderr
    assert tokens(answer.stdout) <= 1000, tokens(answer.stdout)
    data = json.loads(answer.stdout)
    cut = data["budget_cut"]
    assert cut["budget"] == 1000 and cut["tokens"] > 0 and sum(cut["left_out"].values()) > 0
    assert cut["next"].startswith("lsap schema ") and "max_tokens=" in cut["next"]
    # The request it names holds the whole answer.
    whole = subprocess.run(cut["next"], shell=True, cwd=project, capture_output=True, text=True, timeout=120,
                           env={**os.environ, **SERVERS})
    assert whole.returncode == 0, whole.stdout + whole.stderr
    assert "budget_cut" not in json.loads(whole.stdout) and len(json.loads(whole.stdout)["schemas"]) == 8


def test_whole_file_modes_take_a_bare_path(project: Path) -> None:
    formatted = lsap(project, "format", "shop/messy.py")
    assert formatted.returncode == 0 and "1 file changed" in formatted.stdout, formatted.stdout
    assert (project / "shop" / "messy.py").read_text() == "def f(x):\n    return x + 1\n"
    listed = lsap(project, "code_actions", "shop/messy.py")
    assert listed.returncode == 0, listed.stdout
    assert listed.stdout.startswith("# Code actions"), listed.stdout


def test_a_closed_stdout_ends_quietly(project: Path) -> None:
    # Every mode's schema as JSON: far more than a pipe holds, so the write meets a closed pipe.
    command = (f"{sys.executable} -m lsap_bridge query "
               "'{\"mode\": \"schema\", \"modes\": %s, \"format\": \"json\", \"max_tokens\": 100000}'"
               "| head -c 100; echo; echo \"status ${PIPESTATUS[0]}\"")
    from lsap_bridge.modes import REGISTRY

    piped = subprocess.run(["bash", "-c", command % json.dumps(sorted(REGISTRY))], cwd=project,
                           capture_output=True, text=True, timeout=120,
                           env={**os.environ, **SERVERS})
    assert piped.stdout.startswith("{"), piped.stdout
    assert "Traceback" not in piped.stderr and "BrokenPipe" not in piped.stderr, piped.stderr
    assert piped.stdout.rstrip().endswith("status 0"), piped.stdout
