"""Generated requests against a real Neovim with basedpyright: anchors at random places of
the example's files (any line, any text, the marker anywhere), odd paging and context
values, every read-only mode. Each answer is a report or an error with a stable code;
none is an unplanned failure (`failed on something unexpected`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.integration.harness import Bridge

pytestmark = pytest.mark.integration

FILES = ["shop/models.py", "shop/catalog.py", "shop/checkout.py", "shop/promotions.py"]
LOCATE_MODES = [
    "locate",
    "hover",
    "references",
    "definition",
    "declaration",
    "type_definition",
    "implementations",
    "inspect",
    "calls",
    "types",
    "signature_help",
    "completion",
    "inlay_hints",
]
SYMBOLS = [
    "Product",
    "Order",
    "Order.total",
    "Product.discounted",
    "find",
    "checkout",
    "Promotion",
    "Promotion.apply",
    "Nope",
    "Order.nope",
    "validate(self)",
]


@st.composite
def anchors(draw: st.DrawFn, root: Path) -> dict[str, Any]:
    path = draw(st.sampled_from(FILES))
    lines = (root / path).read_text().splitlines()
    locate: dict[str, Any] = {"file_path": path}
    scope = draw(st.sampled_from(["none", "symbol", "line", "range"]))
    if scope == "symbol":
        locate["scope"] = {"symbol_path": draw(st.sampled_from(SYMBOLS)).split(".")}
    elif scope == "line":
        start = draw(st.integers(1, len(lines) + 3))
        locate["scope"] = {"start_line": start, "end_line": start + 1}
    elif scope == "range":
        start = draw(st.integers(1, len(lines) + 3))
        locate["scope"] = {
            "start_line": start,
            "end_line": draw(st.sampled_from([0, start + 1, start + 40])),
        }
    if scope == "none" or draw(st.booleans()):
        line = draw(st.sampled_from([line for line in lines if line.strip()]))
        begin = draw(st.integers(0, len(line) - 1))
        end = draw(st.integers(begin + 1, len(line)))
        text = line[begin:end]
        if text.strip():
            mark = draw(st.integers(0, len(text)))
            noisy = draw(st.sampled_from(["", "  ", "x", "\u201c"]))  # near misses too
            locate["find"] = text[:mark] + "<|>" + text[mark:] + noisy
    if "find" not in locate and "scope" not in locate:
        locate["scope"] = {"start_line": 1, "end_line": 2}
    return locate


def requests(root: Path) -> st.SearchStrategy[dict[str, Any]]:
    common = st.fixed_dictionaries(
        {},
        optional={
            "max_items": st.integers(1, 1000),
            "start_index": st.integers(0, 400),
            "context_lines": st.integers(0, 50),
            "format": st.sampled_from(["markdown", "json"]),
        },
    )
    located = st.builds(
        lambda mode, locate, extra: {"mode": mode, "locate": locate, **extra},
        st.sampled_from(LOCATE_MODES),
        anchors(root),
        common,
    )
    others = st.one_of(
        st.builds(
            lambda path, extra: {"mode": "outline", "file_path": path, **extra},
            st.sampled_from([*FILES, "shop", ".", "shop/*.py", "**/*.py"]),
            common,
        ),
        st.builds(
            lambda query, extra: {"mode": "search", "query": query, **extra},
            st.text(alphabet="OrdPtuc_ .", min_size=1, max_size=8),
            common,
        ),
    )
    return st.one_of(located, others)


@pytest.fixture(scope="module")
def warm(bridge: Bridge) -> Bridge:
    assert bridge.request({"mode": "hover", "locate": "shop/models.py:Product"}).ok
    return bridge


def test_generated_requests_never_fail_unexpectedly(warm: Bridge) -> None:
    seen: dict[str, int] = {}

    @settings(
        max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True
    )
    @given(requests(warm.root))
    def one(payload: dict[str, Any]) -> None:
        response = warm.request(payload)
        code = response.error.code.value if response.error else "ok"
        seen[code] = seen.get(code, 0) + 1
        assert "failed on something unexpected" not in response.text, (payload, response.text)
        if response.error is not None:
            assert len(response.error.message) > 10, response.text

    one()
    print("\nLIVE FUZZ:", sum(seen.values()), seen)
    assert seen.get("ok", 0) > 100, seen  # most generated requests are answerable


@st.composite
def blocks(draw: st.DrawFn, root: Path) -> str:
    """Read-only Language Server Request blocks over the example's real lines."""
    out = ["*** Begin Language Server Request"]
    for path in draw(st.lists(st.sampled_from(FILES), min_size=1, max_size=2)):
        lines = [line.strip() for line in (root / path).read_text().splitlines() if line.strip()]
        out.append(f"*** File: {path}")
        for _ in range(draw(st.integers(1, 4))):
            line = draw(st.sampled_from(lines))
            kind = draw(st.sampled_from(["@@", "?", "@@"]))
            out.append(f"{kind} {line[: draw(st.integers(1, len(line)))]}")
            words = [
                w for w in line.replace("(", " ").replace(")", " ").split() if w.isidentifier()
            ]
            if kind == "@@":
                ask = draw(st.sampled_from([*words, "nope"])) if words else ""
                view = draw(st.sampled_from(["", "[docs]", "[refs]", "[def]", "[type]", "[calls]"]))
                out.append(f"^ {ask}{view}".rstrip() if ask else "^")
    out.append("*** End Language Server Request")
    return "\n".join(out)


def test_generated_text_requests_never_fail_unexpectedly(warm: Bridge) -> None:
    @settings(
        max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True
    )
    @given(blocks(warm.root))
    def one(text: str) -> None:
        response = warm.loop.run(warm.service.handle_text(text))
        assert "failed on something unexpected" not in response.text, (text, response.text)
        if response.error is None:
            assert response.text.startswith("*** Begin Language Server Response"), response.text

    one()
