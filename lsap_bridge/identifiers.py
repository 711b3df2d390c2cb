"""Whether a rename's new name is a name in the file's language, checked before any server
is asked.

Servers are no guard: typescript-language-server writes `export class 1abc` or a name with
a line break into every file, and basedpyright answers "nothing to rename", which names
the wrong problem. Per language, a new name is an identifier of that language (Python:
`str.isidentifier`, PEP 3131; TypeScript and JavaScript: ECMAScript's IdentifierName, with
`$`), is not one of its reserved words, and is at most `MAX_LENGTH` characters. Other
languages get a permissive check (no spaces, no control characters, the length): their
servers have the last word, and their refusal is reported as theirs (`declined`).
"""

from __future__ import annotations

import keyword
import unicodedata
from collections.abc import Sequence

from .errors import ErrorCode, LsapError, invalid
from .workspace import language_of

MAX_LENGTH = 255  # characters: longer is a mistake in any language, never a name someone means

# ECMAScript reserved words, those of strict mode code (modules and classes, so every
# TypeScript file), and `await` (a module's reserved word). `let`, `static`, `yield`… are
# names in sloppy scripts, but not where a rename would put them.
JS_RESERVED = frozenset({
    "break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete",
    "do", "else", "enum", "export", "extends", "false", "finally", "for", "function", "if",
    "import", "in", "instanceof", "new", "null", "return", "super", "switch", "this", "throw",
    "true", "try", "typeof", "var", "void", "while", "with", "implements", "interface", "let",
    "package", "private", "protected", "public", "static", "yield", "await",
})

_SCRIPT = {"python": "python", "typescript": "js", "tsx": "js", "javascript": "js", "jsx": "js"}
_VALID = {
    "python": "a Python name is an identifier: a letter or `_`, then letters, digits or `_` "
    "(no spaces, not starting with a digit), and not a keyword such as `class` or `None`",
    "js": "a TypeScript or JavaScript name is an identifier: a letter, `_` or `$`, then "
    "letters, digits, `_` or `$` (no spaces, not starting with a digit), and not a reserved "
    "word such as `class` or `default`",
    "other": "a name is one word: no spaces, line breaks or non-printing characters (the server "
    "checks the rest of its language's rules)",
}


def check_new_name(new_name: str, path: str) -> None:
    """Raise `invalid_request` unless `new_name` can name a symbol in the file at `path`
    (its language told by the suffix), saying what a valid name is."""
    rules = _SCRIPT.get(language_of(path), "other")
    problem = _problem(new_name, rules)
    if problem is not None:
        raise invalid(
            f"{_quoted(new_name)} cannot be the new name: {problem}",
            hint=f"{_VALID[rules]}; at most {MAX_LENGTH} characters",
        )


def _quoted(name: str) -> str:
    """The name as an error quotes it: whole, or its start and its length."""
    return repr(name) if len(name) <= 60 else repr(name[:40]) + f"… ({len(name):,} characters)"


def _problem(name: str, rules: str) -> str | None:
    if not name:
        return "it is empty"
    if len(name) > MAX_LENGTH:
        return f"it is {len(name):,} characters long, over the limit of {MAX_LENGTH}"
    odd = next((ch for ch in name if ch.isspace() or unicodedata.category(ch).startswith("C")), None)
    if odd is not None:
        return "it contains " + _describe(odd)
    if rules == "python" and keyword.iskeyword(name):
        return f"`{name}` is a Python keyword"
    if rules == "js" and name in JS_RESERVED:
        return f"`{name}` is a reserved word in TypeScript and JavaScript"
    return _bad_character(name, "$" if rules == "js" else "") if rules != "other" else None


def _describe(ch: str) -> str:
    if len(f"a{ch}b".splitlines()) > 1:
        return "a line break"
    return "a space" if ch.isspace() else f"the non-printing character U+{ord(ch):04X}"


def _bad_character(name: str, extra: str) -> str | None:
    """What keeps `name` from being an identifier: a character that may not start one
    (XID_Start, `_`), or continue one (XID_Continue), besides `extra` (JavaScript's `$`)."""
    for i, ch in enumerate(name):
        if ch in extra or (ch if i == 0 else "a" + ch).isidentifier():
            continue
        return "it starts with a digit" if i == 0 and ch.isdigit() else f"{ch!r} cannot be part of a name"
    return None


def declined(server: str, old_name: str, new_name: str, said: Sequence[str] = ()) -> LsapError:
    """A server that can rename the symbol (its prepareRename said so) but answers no edit
    for this name: its refusal, reported as its own, with what it told the human about it
    (`said`: its `window/showMessage`s, kept off the human's screen)."""
    reason = "; ".join(s.strip().rstrip(":") for s in said if s.strip())
    return LsapError(
        ErrorCode.INVALID_REQUEST,
        f"{server} refused to rename `{old_name}` to {_quoted(new_name)}: "
        + (f"it said: {reason}" if reason else
           f"it can rename `{old_name}` (its prepareRename said so) but answered no edit for this name"),
        hint="choose another name" + ("" if reason else
                                      f": {server} gave no reason, and refuses names it does not take"),
    )
