"""Bad input everywhere: thousands of generated inputs per parser, only the project's own
errors come out, and every error names what was wrong.

The parsers are the first code any agent's bytes reach (JSON requests, anchor strings, find
texts, Language Server Request blocks), so a crash there is a crash of the whole request.
"""

from __future__ import annotations

import json
import os
import re
import string
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsap_bridge.capabilities import REGISTRY, Request
from lsap_bridge.errors import ErrorCode, LsapError
from lsap_bridge.filestate import read_disk
from lsap_bridge.locate.anchor import parse_anchor
from lsap_bridge.locate.matcher import find_matches, parse_find
from lsap_bridge.lsreq.parser import BEGIN, END, FILE, parse
from lsap_bridge.requests import parse_request
from lsap_bridge.workspace import Workspace
from tests.conftest import EXAMPLE
from tests.unit.test_anchor import assert_parsed_or_refused

WORKSPACE = Workspace.of(EXAMPLE)
MANY = settings(max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck))

# JSON-like values: what `json.loads` can produce, including huge numbers and deep nesting.
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False),
    st.text(max_size=30),
    st.sampled_from(["", "shop/models.py", "../../etc/passwd", "/etc/passwd", "x" * 5000]),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=12), inner, max_size=5)
    ),
    max_leaves=25,
)
field_names = st.sampled_from(
    sorted(
        {name for cap in REGISTRY.values() for name in cap.model.model_fields}
        | {"locate", "scope", "find", "file_path", "symbol_path", "bogus"}
    )
)
locates = st.one_of(
    json_values,
    st.text(alphabet=string.printable, max_size=40),
    st.fixed_dictionaries(
        {},
        optional={
            "file_path": st.one_of(st.text(max_size=20), st.just("shop/models.py"), json_values),
            "scope": st.one_of(
                json_values,
                st.fixed_dictionaries(
                    {},
                    optional={
                        "symbol_path": json_values,
                        "start_line": json_values,
                        "end_line": json_values,
                    },
                ),
            ),
            "find": st.one_of(st.text(max_size=20), json_values),
        },
    ),
)
payloads = st.one_of(
    json_values,
    st.dictionaries(field_names, json_values, max_size=6).flatmap(
        lambda extra: st.builds(
            lambda mode, locate: {**extra, "mode": mode, "locate": locate},
            st.one_of(st.sampled_from(sorted(REGISTRY)), json_values),
            locates,
        )
    ),
)


def assert_named(error: LsapError) -> None:
    """An error a caller can act on: a stable code, a sentence, and (for fields) the field."""
    assert isinstance(error.code, ErrorCode)
    assert len(error.message) >= 10, error.message
    assert "Traceback" not in error.message
    json.dumps(error.to_dict())  # every error travels as JSON


@MANY
@given(payloads)
def test_json_requests_validate_or_fail_with_a_named_invalid_request(payload: Any) -> None:
    try:
        request = parse_request(payload, WORKSPACE)
    except LsapError as error:
        assert error.code is ErrorCode.INVALID_REQUEST
        assert_named(error)
        if (
            isinstance(payload, dict)
            and str(payload.get("mode")) in REGISTRY
            and "invalid " in error.message
        ):
            # pydantic failures name a field (`…`) or the unknown one
            assert "`" in error.message, error.message
        return
    assert isinstance(request, Request)
    assert request.mode in REGISTRY


@MANY
@given(
    st.sampled_from(sorted(REGISTRY)),
    st.dictionaries(st.text(min_size=1, max_size=10), scalars, min_size=1, max_size=3),
)
def test_an_unknown_field_is_named_in_the_error(mode: str, extra: dict[str, Any]) -> None:
    unknown = {
        k: v
        for k, v in extra.items()
        if k not in REGISTRY[mode].model.model_fields and k not in ("locate", "mode")
    }
    if not unknown:
        return
    with pytest.raises(LsapError) as caught:
        parse_request({"mode": mode, **unknown}, WORKSPACE)
    assert caught.value.code is ErrorCode.INVALID_REQUEST
    # Each unknown field is named, whatever else is wrong (a required field left out too).
    for name in unknown:
        assert f"unknown field `{name}`" in caught.value.message, (name, caught.value.message)


anchor_text = st.one_of(
    st.text(max_size=60),
    st.text(
        alphabet=st.sampled_from(list("shop/models.py:@.,0123456789 <|>\n\t\\()[]-_Ué")),
        max_size=60,
    ),
    st.builds(
        lambda a, b, c: f"shop/models.py{a}{b}{c}",
        st.sampled_from([":", "@", ""]),
        st.text(max_size=20),
        st.text(max_size=20),
    ),
)


@MANY
@given(anchor_text)
def test_anchor_strings_parse_or_fail_with_a_named_invalid_request(text: str) -> None:
    try:
        locate = parse_anchor(text, WORKSPACE.is_file)
    except LsapError as error:
        assert error.code is ErrorCode.INVALID_REQUEST
        assert_named(error)
        assert error.hint, "anchor errors show the expected form"
        return
    assert locate.file_path
    assert_parsed_or_refused(text, WORKSPACE.is_file)  # what was read is what the anchor says


lines_of_code = st.lists(
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40),
    max_size=30,
)
finds = st.one_of(
    st.text(max_size=40),
    st.builds(lambda a, b: a + "<|>" + b, st.text(max_size=15), st.text(max_size=15)),
    st.text(alphabet=st.sampled_from(list("<|> ab\n\u201c\u2014\u00a0.")), max_size=30),
)


@MANY
@given(lines_of_code, finds, st.integers(-5, 40), st.one_of(st.none(), st.integers(-5, 40)))
def test_matcher_finds_or_fails_with_a_named_invalid_request(
    lines: list[str], find: str, start: int, end: int | None
) -> None:
    try:
        needle = parse_find(find)
        result = find_matches(lines, needle, start, end)
    except LsapError as error:
        assert error.code is ErrorCode.INVALID_REQUEST
        assert_named(error)
        return
    for match in [*result.matches, *result.closest]:
        assert 0 <= match.line < len(lines) and 0 <= match.end_line < len(lines)
        assert 0 <= match.column <= len(lines[match.line])


request_lines = st.one_of(
    st.sampled_from(
        [
            BEGIN,
            END,
            f"{FILE} a.ts",
            f"{FILE}",
            "@@ const x = 1",
            "@@",
            "^ x",
            "^",
            "^ x[docs]",
            "^ x[nope]",
            "? y",
            "! x RENAME_TO y",
            "! x RENAME_TO 1y",
            "! RENAME_TO",
            "[@ a",
            "(@ a",
            "@] b",
            "@) b",
            "! MOVE_TO_FILE b.ts",
            "! MOVE_TO_FILE",
            "! MOVE_TO_FILE ../x.ts",
            "",
        ]
    ),
    st.text(max_size=30),
)


@MANY
@given(st.lists(request_lines, max_size=16), st.booleans())
def test_text_requests_parse_or_fail_naming_the_line_and_rule(
    lines: list[str], framed: bool
) -> None:
    text = "\n".join([BEGIN, *lines, END] if framed else lines)
    try:
        parse(text)
    except LsapError as error:
        assert error.code is ErrorCode.INVALID_REQUEST
        assert_named(error)
        assert error.message.startswith("line "), error.message
        assert error.hint, "text-format errors quote the grammar rule"


def test_outside_paths_in_a_request_are_not_probed(tmp_path: Path) -> None:
    """Splitting an anchor asks whether a prefix is a file; outside the roots it is never one."""
    assert not WORKSPACE.is_file("/etc/passwd")
    assert not WORKSPACE.is_file("../../../../etc/passwd")
    locate = parse_anchor("/etc/passwd:1", WORKSPACE.is_file)
    assert (
        locate.file_path == "/etc/passwd"
    )  # parsed, then refused when resolved (test_confinement)


@settings(max_examples=2000, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("ab \t\n\r\x0c\x0b\x1c\u2028\u2029\x85é")), max_size=40)
)
def test_disk_text_breaks_lines_where_lsp_and_neovim_do(text: str) -> None:
    """Form feeds and U+2028 are characters, not line ends: otherwise every line number after
    them disagrees with the language server's."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "f.py"
        path.write_bytes(text.encode())
        lines = read_disk(path).lines
    expected = re.split(r"\r\n|\r|\n", text)
    if len(expected) > 1 and expected[-1] == "":
        expected.pop()
    assert lines == expected
    assert all("\n" not in line and "\r" not in line for line in lines)


def test_nul_in_a_buffer_line_is_one_character_not_a_line_break() -> None:
    """Neovim returns a NUL byte of a buffer as "\\n" inside the line."""
    lines = ["x = '\n'", "value = 1"]
    result = find_matches(lines, parse_find("value = <|>1"))
    assert [(m.line, m.column) for m in result.matches] == [(1, 8)]


@pytest.fixture(scope="module")
def linked_root(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """A root with links leading out (a directory, a file, a loop) and one staying in."""
    base = tmp_path_factory.mktemp("confined")
    root, outside = base / "root", base / "outside"
    (root / "pkg").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.py").write_text("x = 1\n")
    (root / "pkg" / "a.py").write_text("a = 1\n")
    (root / "out").symlink_to(outside, target_is_directory=True)
    (root / "pkg" / "passwd.py").symlink_to("/etc/passwd")
    (root / "inner").symlink_to(root / "pkg", target_is_directory=True)
    (root / "loop").symlink_to(root / "loop")
    return Workspace.of(root)


path_parts = st.sampled_from(
    [
        "..",
        ".",
        "pkg",
        "a.py",
        "out",
        "secret.py",
        "inner",
        "passwd.py",
        "loop",
        "~",
        "~root",
        "",
        "etc",
        "x",
    ]
)


@MANY
@given(st.lists(path_parts, min_size=1, max_size=6), st.booleans())
def test_resolved_paths_are_inside_the_root_or_refused(
    linked_root: Workspace, parts: list[str], absolute: bool
) -> None:
    text = ("/" if absolute else "") + "/".join(parts)
    try:
        path = linked_root.resolve(text)
    except LsapError as error:
        assert error.code in (ErrorCode.OUTSIDE_WORKSPACE, ErrorCode.INVALID_REQUEST), error
        assert_named(error)
        return
    assert os.path.realpath(path) == str(path)  # symlink-free
    assert path == linked_root.root or path.is_relative_to(linked_root.root)
    assert linked_root.contains(path)
