"""The `path:scope@find` string form of an anchor."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsap_bridge.errors import ErrorCode, LsapError
from lsap_bridge.locate.anchor import format_anchor, parse_anchor, split_path
from lsap_bridge.models import LineScope, Locate, SymbolScope

FILES = {
    "src/models.py",
    "a.py",
    "node_modules/@types/node/index.d.ts",
    "C:\\src\\app.py",
    "C:/src/app.py",
    "weird:name.py",
    "pkg@2/mod.py",
}


def exists(path: str) -> bool:
    return path in FILES


def nothing_exists(path: str) -> bool:
    return False


def parse(text: str, file_exists: Callable[[str], bool] = exists) -> Locate:
    return parse_anchor(text, file_exists)


def symbol(*names: str) -> SymbolScope:
    return SymbolScope(symbol_path=list(names))


def lines(start: int, end: int) -> LineScope:
    return LineScope(start_line=start, end_line=end)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "src/models.py:User.validate@return <|>result",
            Locate(
                file_path="src/models.py", scope=symbol("User", "validate"), find="return <|>result"
            ),
        ),
        ("src/models.py:User", Locate(file_path="src/models.py", scope=symbol("User"))),
        ("a.py:42", Locate(file_path="a.py", scope=lines(42, 43))),
        ("a.py:10,20", Locate(file_path="a.py", scope=lines(10, 20))),
        ("a.py: 10 , 0 ", Locate(file_path="a.py", scope=lines(10, 0))),
        ("a.py:10,20@x = 1", Locate(file_path="a.py", scope=lines(10, 20), find="x = 1")),
        ("a.py@x: int = 1", Locate(file_path="a.py", find="x: int = 1")),
        ("a.py:User@@property", Locate(file_path="a.py", scope=symbol("User"), find="@property")),
        ("a.py@@dataclass", Locate(file_path="a.py", find="@dataclass")),
        ("a.py@ a@b:c ", Locate(file_path="a.py", find=" a@b:c ")),
        ("a.py@x\n  <|>y", Locate(file_path="a.py", find="x\n  <|>y")),
        ("a.py:User . validate", Locate(file_path="a.py", scope=symbol("User", "validate"))),
        ("a.py:(*T).M", Locate(file_path="a.py", scope=symbol("(*T)", "M"))),
        (
            "a.py:Outer.validate(self)",
            Locate(file_path="a.py", scope=symbol("Outer", "validate(self)")),
        ),
        ("a.py:ns::Foo.bar", Locate(file_path="a.py", scope=symbol("ns::Foo", "bar"))),
        ("a.py:@x", Locate(file_path="a.py", find="x")),
        ("a.py:User@", Locate(file_path="a.py", scope=symbol("User"))),
        ("  a.py:3", Locate(file_path="a.py", scope=lines(3, 4))),
    ],
)
def test_parse(text: str, expected: Locate) -> None:
    assert parse(text) == expected


@pytest.mark.parametrize(
    ("text", "path", "find"),
    [
        (
            "node_modules/@types/node/index.d.ts:Buffer@from",
            "node_modules/@types/node/index.d.ts",
            "from",
        ),
        ("C:\\src\\app.py:3@x", "C:\\src\\app.py", "x"),
        ("C:/src/app.py@x", "C:/src/app.py", "x"),
        ("weird:name.py:3@x", "weird:name.py", "x"),
        ("pkg@2/mod.py@x", "pkg@2/mod.py", "x"),
    ],
)
def test_paths_with_colons_and_ats_split_at_the_existing_file(
    text: str, path: str, find: str
) -> None:
    locate = parse(text)
    assert (locate.file_path, locate.find) == (path, find)


def test_the_longest_existing_prefix_wins() -> None:
    both = {"a", "a:b"}
    assert parse("a:b:3", both.__contains__) == Locate(file_path="a:b", scope=lines(3, 4))


@pytest.mark.parametrize(
    ("text", "path", "rest"),
    [
        ("src/new.py:User@x", "src/new.py", ":User@x"),
        ("src/new.py@x:y", "src/new.py", "@x:y"),
        ("node_modules/@types/y.d.ts:3", "node_modules/@types/y.d.ts", ":3"),
        ("D:\\new\\app.py:3", "D:\\new\\app.py", ":3"),
        ("c:/new/app.py@x", "c:/new/app.py", "@x"),
        ("src/new.py", "src/new.py", ""),
        ("src/new.py  ", "src/new.py", ""),
        ("src/new.py :3", "src/new.py", ":3"),
    ],
)
def test_without_an_existing_file_the_first_plausible_separator_splits(
    text: str, path: str, rest: str
) -> None:
    assert split_path(text, nothing_exists) == (path, rest)


def test_split_path_serves_file_only_modes() -> None:
    assert split_path("src/models.py", exists) == ("src/models.py", "")
    assert split_path("weird:name.py", exists) == ("weird:name.py", "")
    assert split_path("src/models.py:User", exists) == ("src/models.py", ":User")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", ["no file path"]),
        (":3", ["no file path"]),
        ("@find", ["no file path"]),
        ("a.py", ["'a.py'", "scope or a find"]),
        ("a.py:", ["empty scope and find"]),
        ("a.py: @  ", ["empty scope and find"]),
        ("a.py:0", ["start_line"]),
        ("a.py:5,3", ["end_line (3)", "start_line (5)"]),
        ("a.py:5,5", ["end_line (5)"]),
        ("a.py:User..validate", ["empty", "User..validate"]),
        ("a.py:.User", ["empty"]),
        ("a.py:" + "9" * 5000, ["too long"]),
        ("a.py:10-20", ["10-20", "start,end"]),
        ("a.py:10:20@x", ["10:20", "start,end"]),
        ("new.py\n:3", ["line break"]),
    ],
)
def test_errors_name_the_problem_and_show_the_form(text: str, words: list[str]) -> None:
    with pytest.raises(LsapError) as caught:
        parse(text)
    error = caught.value
    assert error.code is ErrorCode.INVALID_REQUEST
    for word in words:
        assert word in error.message
    assert error.hint is not None
    assert "path:scope@find" in error.hint


@pytest.mark.parametrize(
    ("locate", "text"),
    [
        (
            Locate(file_path="a.py", scope=symbol("User", "validate"), find="return <|>x"),
            "a.py:User.validate@return <|>x",
        ),
        (Locate(file_path="a.py", scope=lines(42, 43)), "a.py:42"),
        (Locate(file_path="a.py", scope=lines(42, 50)), "a.py:42,50"),
        (Locate(file_path="a.py", scope=lines(42, 0)), "a.py:42,0"),
        (Locate(file_path="a.py", find="@property"), "a.py@@property"),
    ],
)
def test_format(locate: Locate, text: str) -> None:
    assert format_anchor(locate) == text
    assert parse(text) == locate


# --- properties ---------------------------------------------------------------


def assert_parsed_or_refused(text: str, file_exists: Callable[[str], bool]) -> None:
    """An anchor is refused as an invalid request, or parsed into a Locate read from it (its
    path where the text starts, its find where it ends) that its canonical form
    (`format_anchor`) parses back to: what the anchor says, not only something the model's
    validator accepts (issue 48)."""
    try:
        locate = parse_anchor(text, file_exists)
    except LsapError as error:
        assert error.code is ErrorCode.INVALID_REQUEST, error
        return
    # (Leading blanks are not part of an anchor: `split_path` strips them.)
    assert text.lstrip().startswith(locate.file_path) and text.endswith(locate.find or ""), (text, locate)
    formatted = format_anchor(locate)
    assert parse_anchor(formatted, lambda path: path == locate.file_path) == locate, (text, formatted)


@settings(max_examples=1000)
@given(st.text(), st.data())
def test_parse_anchor_only_raises_lsap_errors(text: str, data: st.DataObject) -> None:
    prefixes = {text[:i] for i in range(len(text) + 1)}
    existing = data.draw(st.sets(st.sampled_from(sorted(prefixes))))
    assert_parsed_or_refused(text, existing.__contains__)


@settings(max_examples=1000)
@given(st.text(alphabet=st.sampled_from("ab:@/\\ .,0123456789\n")))
def test_anchor_punctuation_only_raises_lsap_errors(text: str) -> None:
    for file_exists in (exists, nothing_exists, lambda path: True):
        assert_parsed_or_refused(text, file_exists)


names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
paths = st.from_regex(r"[A-Za-z0-9_@:./\\-]{0,20}[A-Za-z0-9_]", fullmatch=True)
scopes = st.one_of(
    st.none(),
    st.lists(names, min_size=1, max_size=4).map(lambda path: SymbolScope(symbol_path=path)),
    st.integers(1, 10**6).map(lambda line: LineScope(start_line=line, end_line=line + 1)),
    st.tuples(st.integers(1, 10**6), st.integers(1, 10**6)).map(
        lambda pair: LineScope(start_line=pair[0], end_line=pair[0] + pair[1])
    ),
    st.integers(1, 10**6).map(lambda line: LineScope(start_line=line, end_line=0)),
)
finds = st.one_of(st.none(), st.text(min_size=1).filter(str.strip))


@settings(max_examples=1000)
@given(paths, scopes, finds)
def test_format_and_parse_round_trip(
    path: str, scope: SymbolScope | LineScope | None, find: str | None
) -> None:
    if scope is None and find is None:
        find = "x"
    locate = Locate(file_path=path, scope=scope, find=find)
    assert parse_anchor(format_anchor(locate), {path}.__contains__) == locate
