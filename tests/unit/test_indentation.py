"""The indent a file's code uses, and when the buffer's own settings win (issue 35)."""

from __future__ import annotations

from lsap_bridge.indentation import code_lines, detect, options

# rxjs's filter.ts, shortened: a JSDoc comment (` * ` lines) and 2-space code.
JSDOC = """import { operate } from '../util/lift';

/**
 * Filter items emitted by the source Observable.
 *
 * ```ts
 *     const clicks = fromEvent(document, 'click');
 * ```
 */
export function filter<T>(predicate: (value: T, index: number) => boolean): MonoTypeOperatorFunction<T> {
  return operate((source, subscriber) => {
    // An index passed to our predicate function on each call.
    let index = 0;
    source.subscribe(
      createOperatorSubscriber(subscriber, (value) => predicate(value, index++) && subscriber.next(value))
    );
  });
}
""".splitlines()

TEMPLATE = """const page = `
 <p>
   one-space markup inside a template literal
 </p>`;
function f() {
    return page; /* a comment */ const quoted = "/*";
}
class A {
    m() {
        return 1;
    }
}
""".splitlines()

PYTHON = '''def f():
    """A docstring
  with a two-space continuation.
    """
    if True:
        return 1
'''.splitlines()

UNSET = {"shiftwidth": 8, "tabstop": 8, "expandtab": False, "editorconfig": False}


def test_a_jsdoc_comment_is_not_a_one_space_indent() -> None:
    assert detect(JSDOC) == {"tabSize": 2, "insertSpaces": True}
    assert not any(line.lstrip().startswith("*") for line in code_lines(JSDOC))


def test_strings_and_comments_that_close_on_the_line_are_code() -> None:
    # The template literal's lines are not code; the line with `/* */` and a quoted "/*" is,
    # and leaves the scanner in code (the class's 4-space steps count).
    assert detect(TEMPLATE) == {"tabSize": 4, "insertSpaces": True}
    assert "   one-space markup inside a template literal" not in code_lines(TEMPLATE)
    assert "        return 1;" in code_lines(TEMPLATE)


def test_a_python_docstring_is_not_code() -> None:
    assert detect(PYTHON) == {"tabSize": 4, "insertSpaces": True}


def test_tabs_and_nothing_indented() -> None:
    assert detect(["function f() {", "\treturn 1;", "}"]) == {"tabSize": 4, "insertSpaces": False}
    assert detect(["const a = 1;", "/**", " * doc", " */"]) is None


def test_the_buffers_settings_win_when_set() -> None:
    # An `.editorconfig` (or 'expandtab') set them: they are what the human wants.
    assert options({**UNSET, "editorconfig": True, "shiftwidth": 4}, JSDOC) == {
        "tabSize": 4, "insertSpaces": False}
    assert options({**UNSET, "expandtab": True, "shiftwidth": 0, "tabstop": 3}, JSDOC) == {
        "tabSize": 3, "insertSpaces": True}
    # Neovim's defaults (`--clean`): the code's own indent, else the defaults.
    assert options(UNSET, JSDOC) == {"tabSize": 2, "insertSpaces": True}
    assert options(UNSET, ["x = 1"]) == {"tabSize": 8, "insertSpaces": False}
    assert options({**UNSET, "tabstop": 4}, ["if x:", "\ty = 1"]) == {"tabSize": 4, "insertSpaces": False}


def test_steps_out_count_as_well_as_steps_in() -> None:
    # A messy line indented 4 between 2-space ones: the 2-space steps out outvote it.
    messy = ["export function label(item: Item):string {", "    const   name = item.name ;",
             "  return    name.toUpperCase( );", "}"]
    assert detect(messy) == {"tabSize": 2, "insertSpaces": True}
