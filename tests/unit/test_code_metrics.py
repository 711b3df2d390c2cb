"""scripts/code_metrics.py, the ratchet of `make check` (issue 49): one exception root, and
the counts it keeps from growing."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from tests.conftest import ROOT


def metrics() -> ModuleType:
    spec = importlib.util.spec_from_file_location("code_metrics", ROOT / "scripts" / "code_metrics.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["code_metrics"] = module
    spec.loader.exec_module(module)
    return module


def test_exactly_one_class_derives_from_a_built_in_exception() -> None:
    """Every error of the bridge has one root, to catch and to translate (httpx's model)."""
    assert metrics().exception_roots() == ["lsap_bridge/errors.py:LsapBaseError"]


def test_every_exception_class_of_the_bridge_is_an_lsap_error() -> None:
    from lsap_bridge import client, errors, journal, nvim_rpc, wire

    for error in (errors.LsapError, errors.StaleText, errors.ClientGone, nvim_rpc.NvimRpcError,
                  nvim_rpc.NvimDisconnected, client.ClientError, wire.RpcFailure,
                  wire.Malformed, journal.Unsettled):
        assert issubclass(error, errors.LsapBaseError), error


def test_the_root_changes_what_no_except_catches() -> None:
    """Today's `LsapError` still catches only itself: a stale text is retried, not reported."""
    from lsap_bridge import errors

    assert not issubclass(errors.StaleText, errors.LsapError)


def test_the_command_lines_error_report_is_the_renderers() -> None:
    from lsap_bridge.errors import ErrorCode, LsapError, error_report
    from lsap_bridge.render import render_error

    error = LsapError(ErrorCode.INVALID_REQUEST, "the query is not JSON")
    assert render_error(error) == error_report("invalid_request", "the query is not JSON")


def test_a_module_naming_a_server_in_code_is_counted_and_a_docstring_is_not(tmp_path: Path) -> None:
    (tmp_path / "servers").mkdir()
    (tmp_path / "servers" / "vtsls.py").write_text('NAME = "vtsls"\n')
    (tmp_path / "quirk.py").write_text('"""vtsls does this."""\nSLOW = {"clangd"}\n')
    (tmp_path / "clean.py").write_text('"""clangd and vtsls."""\n# pylsp\n')
    assert metrics().server_modules(tmp_path) == [f"{tmp_path.name}/quirk.py"]


def test_the_ratchet_holds_one_number_per_line_and_the_code_is_within_it() -> None:
    module = metrics()
    ceiling = module.read_ratchet()
    assert set(ceiling) == set(module.TARGETS)
    for name, (number, found) in module.measure().items():
        assert number <= ceiling[name], (name, found)


def test_a_module_over_600_lines_is_counted_as_wc_counts_it(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "long.py").write_text("x = 1\n" * 601)
    (tmp_path / "pkg" / "at_the_limit.py").write_text("x = 1\n" * 600)
    (tmp_path / "short.py").write_text("x = 1\n" * 599 + "y = 2")  # 600 lines, the last without a newline
    assert metrics().long_modules(tmp_path) == [f"{tmp_path.name}/pkg/long.py: 601 lines"]
