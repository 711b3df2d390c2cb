"""The Language Server Request parser: every rule, and malformed input as errors that name
the line and the rule (never a crash)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsap_bridge.errors import ErrorCode, LsapError
from lsap_bridge.lsreq.parser import (
    AnchorKind,
    Check,
    Fix,
    Format,
    Hover,
    Move,
    OrganizeImports,
    Query,
    Rename,
    parse,
)

SEED_QUERY = """*** Begin Language Server Request
*** File: packages/dataflow/test/operators/multiply-schemas.test.ts
@@ type V = typeof vS['infer']
^ V
@@ type A = typeof aS['infer']
^ A
? const eq = math({ v: vS, a: aS }, `v * a`)
^ math[docs]
@@ const res = eq.evaluate({ v: 230, a: 5 })
^ res
*** End Language Server Request
"""

SEED_COMMANDS = """*** Begin Language Server Request
*** File: packages/dataflow/test/operators/multiply-schemas.test.ts
[@ const vS = schemaNumber({ unit: volts })
@@ const eq = math({ v: vS, a: aS }, `v * a`)
! eq RENAME_TO powerEquation
@@ const res = eq.evaluate({ v: 230, a: 5 })
! res RENAME_TO power
@) const wrong: string = 42
! MOVE_TO_FILE packages/dataflow/test/fixtures/electrical-power.ts
*** End Language Server Request
"""


def block(*lines: str) -> str:
    return "\n".join(
        ["*** Begin Language Server Request", *lines, "*** End Language Server Request"]
    )


def error_of(text: str) -> LsapError:
    with pytest.raises(LsapError) as caught:
        parse(text)
    assert caught.value.code is ErrorCode.INVALID_REQUEST
    return caught.value


def test_seed_query_exchange() -> None:
    request = parse(SEED_QUERY)
    assert not request.has_commands
    (block_,) = request.files
    assert block_.path == "packages/dataflow/test/operators/multiply-schemas.test.ts"
    kinds = [a.kind for a in block_.anchors]
    assert kinds == [AnchorKind.CONTEXT, AnchorKind.CONTEXT, AnchorKind.INLAY, AnchorKind.CONTEXT]
    assert block_.anchors[2].text == "const eq = math({ v: vS, a: aS }, `v * a`)"
    ops = [op for a in block_.anchors for op in a.operations]
    assert all(isinstance(op, Hover) for op in ops)
    assert [q for op in ops if isinstance(op, Hover) for q in op.queries] == [
        Query("V"),
        Query("A"),
        Query("math", "docs"),
        Query("res"),
    ]
    assert block_.anchors[0].line == 3 and ops[0].line == 4


def test_seed_command_exchange() -> None:
    request = parse(SEED_COMMANDS)
    assert request.has_commands
    (block_,) = request.files
    assert [a.kind for a in block_.anchors] == [
        AnchorKind.OPEN_INCLUSIVE,
        AnchorKind.CONTEXT,
        AnchorKind.CONTEXT,
        AnchorKind.CLOSE_EXCLUSIVE,
    ]
    (selection,) = block_.selections
    assert (selection.start, selection.end, selection.start_inclusive, selection.end_inclusive) == (
        0,
        3,
        True,
        False,
    )
    assert block_.anchors[1].operations == [
        Rename(5, "! eq RENAME_TO powerEquation", "eq", "powerEquation")
    ]
    assert block_.anchors[3].operations == [
        Move(
            9,
            "! MOVE_TO_FILE packages/dataflow/test/fixtures/electrical-power.ts",
            "packages/dataflow/test/fixtures/electrical-power.ts",
            0,
        ),
    ]


def test_bare_caret_several_symbols_views_and_several_files() -> None:
    request = parse(
        block(
            "*** File: a.ts",
            "@@ let x = f(y)",
            "^",
            "^ x f[def] y[refs] x[type] f[impl] f[calls]",
            "",
            "*** File: b.ts",
            "(@ one",
            "@] two",
        )
    )
    first, second = request.files
    bare, listed = first.anchors[0].operations
    assert isinstance(bare, Hover) and bare.queries == (Query(None),)
    assert isinstance(listed, Hover) and [q.view for q in listed.queries] == [
        "hover",
        "def",
        "refs",
        "type",
        "impl",
        "calls",
    ]
    assert (
        second.selections[0].start_inclusive is False and second.selections[0].end_inclusive is True
    )
    assert not request.has_commands


@pytest.mark.parametrize(
    ("text", "line", "rule", "words"),
    [
        ("*** File: a.ts\n@@ x\n*** End Language Server Request", 1, "begin", "Begin"),
        ("*** Begin Language Server Request\n*** File: a.ts\n@@ x", 3, "end", "End"),
        (block("*** File: a.ts", "@@ x", "% x"), 4, "anchor", "unknown operator"),
        (block("*** File: a.ts", "@@ x", "! x RENAME_TO"), 4, "rename", "new name"),
        (block("*** File: a.ts", "@@ x", "! RENAME_TO y"), 4, "rename", "one symbol"),
        (block("*** File: a.ts", "@@ x", "! x RENAME_TO a b"), 4, "rename", "one new name"),
        (
            block("*** File: a.ts", "@@ x", "! x RENAME_TO 9z"),
            4,
            "rename",
            "'9z' cannot be the new name: it starts with a digit",
        ),
        (block("*** File: a.ts", "[@ x", "@@ y"), 3, "select", "never closed"),
        (block("*** File: a.ts", "[@ x", "*** File: b.ts", "@@ y"), 3, "select", "never closed"),
        (block("*** File: a.ts", "@] x"), 3, "select", "none is open"),
        (block("*** File: a.ts", "[@ x", "(@ y", "@] z"), 4, "select", "already open"),
        (block("*** File: a.ts", "! x RENAME_TO y"), 3, "rename", "anchored line"),
        (block("*** File: a.ts", "^ x"), 3, "hover", "anchored line"),
        (block("*** File: a.ts", "! MOVE_TO_FILE b.ts"), 3, "move", "anchored line"),
        (block("*** File: a.ts", "@@ x", "! MOVE_TO_FILE b.ts"), 4, "move", "closes a selection"),
        (
            block("*** File: a.ts", "[@ x", "@] y", "@@ z", "! MOVE_TO_FILE b.ts"),
            6,
            "move",
            "closes a selection",
        ),
        (block("*** File: a.ts", "[@ x", "@] y", "! MOVE_TO_FILE"), 5, "move", "target path"),
        (block("*** File: a.ts", "@@ x", "! FROB x"), 4, "rename", "unknown command"),
        (block("*** File: a.ts", "! FIX 2304"), 3, "fix", "anchored line"),
        (block("*** File: a.ts", "@@ x", "! FIX"), 4, "fix", "diagnostic code"),
        (block("*** File: a.ts", "! FORMAT now"), 3, "format", "nothing after"),
        (block("*** File: a.ts", "! ORGANIZE_IMPORTS ruff again"), 3, "organize", "at most"),
        (block("*** File: a.ts", "@@ x", "^ x[colour]"), 4, "hover", "unknown view"),
        (block("*** File: a.ts", "@@"), 3, "anchor", "needs the text"),
        (block("*** File: a.ts", "?"), 3, "inlay", "needs the text"),
        (block("@@ x"), 2, "file", "before any"),
        (block("*** File:", "@@ x"), 2, "file", "no path"),
        (block("*** File: a.ts"), 2, "anchor", "no anchored line"),
        (block(), 2, "file", "names no file"),
        (
            block("*** File: a.ts", "@@ x", "*** Begin Language Server Request"),
            4,
            "begin",
            "second Begin",
        ),
        (block("*** File: a.ts", "@@ x", "*** Delete File: a.ts"), 4, "file", "unknown header"),
        (block("*** Check", "*** Check: a.ts"), 3, "check", "second `*** Check` line (the first is line 2)"),
        ("", 1, "begin", "Begin"),
    ],
)
def test_malformed_requests_name_the_line_and_rule(
    text: str, line: int, rule: str, words: str
) -> None:
    error = error_of(text)
    assert error.message.startswith(f"line {line}: "), error.message
    assert words in error.message
    assert error.hint is not None and error.hint.startswith(f"rule ({rule}):")


def test_a_check_line_runs_alone_or_after_the_files() -> None:
    alone = parse(block("*** Check"))
    assert alone.files == [] and alone.check == Check(2, None)
    after = parse(block("*** File: a.ts", "@@ x", "! x RENAME_TO y", "*** Check: src/"))
    assert len(after.files) == 1 and after.check == Check(5, "src/")
    assert parse(block("*** File: a.ts", "@@ x")).check is None


def test_code_action_commands() -> None:
    """`! ORGANIZE_IMPORTS` and a `! FORMAT` outside a selection are about the File block
    (which then needs no anchor); `! FORMAT` after a selection formats it; `! FIX` belongs to
    the anchored line above."""
    request = parse(block(
        "*** File: a.py", "! ORGANIZE_IMPORTS", "! FORMAT",
        "*** File: b.ts", "! ORGANIZE_IMPORTS ts_ls", "[@ x", "@] y", "! FORMAT",
        "@@ import os", "! FIX F401", "@@ z", "! FIX Add import from \"./pricing\"",
    ))
    a, b = request.files
    assert a.anchors == [] and a.operations == [OrganizeImports(3, "! ORGANIZE_IMPORTS", None),
                                                 Format(4, "! FORMAT", None)]
    assert b.operations == [OrganizeImports(6, "! ORGANIZE_IMPORTS ts_ls", "ts_ls")]
    assert b.anchors[1].operations == [Format(9, "! FORMAT", 0)]
    assert b.anchors[2].operations == [Fix(11, "! FIX F401", "F401")]
    assert b.anchors[3].operations == [Fix(13, '! FIX Add import from "./pricing"', 'Add import from "./pricing"')]
    assert request.has_commands


def test_text_after_end_is_an_error() -> None:
    error = error_of(block("*** File: a.ts", "@@ x") + "\ntrailing words")
    assert error.message.startswith("line 5: text after the End line")


def test_crlf_and_surrounding_blank_lines_are_accepted() -> None:
    request = parse("\n\n" + SEED_COMMANDS.replace("\n", "\r\n") + "\n\n")
    assert len(request.files[0].anchors) == 4


_pieces = st.sampled_from(
    [
        "*** Begin Language Server Request",
        "*** End Language Server Request",
        "*** File: a.ts",
        "*** File:",
        "@@ x",
        "@@",
        "? y",
        "?",
        "^",
        "^ a b[docs] c[x]",
        "! a RENAME_TO b",
        "! RENAME_TO",
        "! MOVE_TO_FILE c.ts",
        "[@ z",
        "(@ z",
        "@] z",
        "@) z",
        "",
        "***",
        "! ",
        "^ [",
        "\t",
        "\r",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_pieces, st.text()), max_size=14))
def test_arbitrary_text_never_crashes(lines: list[str]) -> None:
    try:
        parse("\n".join(lines))
    except LsapError as error:
        assert error.code is ErrorCode.INVALID_REQUEST
        assert error.message.startswith("line ")
