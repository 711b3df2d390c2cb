"""An agent's hover (issue 50): the signature on one line, the docs' first paragraph, the
rest of the docs counted; Neovim's report window and `compact: false` keep all of it."""

from __future__ import annotations

from lsap_bridge.capabilities.hover import brief

PYRIGHT = """```python
(method) def send(
    self: Self@Client,
    request: Request,
    *,
    stream: bool = False
) -> Response
```
---
Send a request.

The request is sent as-is, unmodified.

```python
client.send(request)
```"""


def test_a_wrapped_signature_is_one_line_and_the_docs_their_first_paragraph() -> None:
    """basedpyright's `(method)` before `def` says what `def` and `self` say, and `self`'s
    type `Self@Client` what `self` is: left out."""
    assert brief(PYRIGHT) == (
        "def send(self, request: Request, *, stream: bool = False) -> Response\n"
        "Send a request.", 4)


def test_a_type_literal_is_joined_and_code_that_is_no_declaration_kept() -> None:
    ts = "```typescript\nfunction f<E = Enhancer<{\n    dispatch: D;\n}>>(o: O): S\n```\nMakes a store.\nSee docs."
    assert brief(ts) == ("function f<E = Enhancer<{ dispatch: D; }>>(o: O): S\nMakes a store.\nSee docs.", 0)
    block = "```python\nx = 1\ny = 2\n```"
    assert brief(block) == (block, 0)
    assert brief("Only words.\n\nMore words.") == ("Only words.", 1)
    assert brief("") == ("", 0)


def test_what_a_server_puts_before_its_code_is_kept() -> None:
    """clangd opens with the kind and where it comes from, the declaration last."""
    clangd = ("### function `f`\n\n---\n→ `int`\n\nProvided by `\"x.h\"`\n\n```cpp\n// In x.h\n"
              "int f(int a,\n      int b)\n```")
    assert brief(clangd) == ("### function `f`\n---\n→ `int`\nProvided by `\"x.h\"`\n```cpp\n// In x.h\n"
                             "int f(int a,\n      int b)\n```", 0)


def test_a_kind_the_declaration_does_not_say_is_kept() -> None:
    assert brief("```python\n(variable) limit: int\n```") == ("(variable) limit: int", 0)
    assert brief("```python\n(function) async def f() -> None\n```") == ("async def f() -> None", 0)
    assert brief("```python\n(method) def make(cls: type[Self@A]) -> A\n```") == ("def make(cls) -> A", 0)
    assert brief("```python\n(function) def f(self: int) -> None\n```") == ("def f(self: int) -> None", 0)
