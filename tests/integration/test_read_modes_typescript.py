"""Issue 3, the read-only modes on TypeScript: typescript-language-server and vtsls (issue
35), each with typescript 5."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from .harness import TS_SERVERS, Bridge

pytestmark = pytest.mark.integration

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "ts_shop"


@pytest.fixture(scope="module", params=TS_SERVERS)
def ts(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    root = tmp_path_factory.mktemp("ts") / "ts_shop"
    shutil.copytree(FIXTURE, root)
    bridge = Bridge(root, [request.param])
    assert bridge.servers == [request.param]
    yield bridge
    bridge.close()


def test_implementations_of_an_interface(ts: Bridge) -> None:
    data = ts.ask(mode="implementations", locate="src/pricing.ts:Priced")
    assert {d["symbol"] for d in data["definitions"]} == {"Item", "WeighedItem", "Fee", "BulkItem"}
    assert all(d["language"] == "typescript" for d in data["definitions"])


def test_type_definition_of_a_variable(ts: Bridge) -> None:
    data = ts.ask(mode="type_definition", locate="src/basket.ts@const <|>bread")
    assert [(d["path"], d["symbol"]) for d in data["definitions"]] == [("src/pricing.ts", "Item")]


def test_inspect_a_function(ts: Bridge) -> None:
    data = ts.ask(mode="inspect", locate="src/basket.ts:total")
    assert "function total(things: Priced[]): number" in data["hover"]
    assert "Sum the prices" in data["hover"]
    assert [r["name"] for r in data["callers"]["rows"]] == ["sample"]
    assert [r["name"] for r in data["callees"]["rows"]] == ["price", "round"]
    assert data["references"]["total"] == 1


def test_outline_in_file_order(ts: Bridge) -> None:
    data = ts.ask(mode="outline", file_path="src/pricing.ts")
    rows = [(s["line"], s["symbol"]) for g in data["groups"] for s in g["symbols"]]
    assert rows == sorted(rows, key=lambda r: r[0])
    assert rows[0] == (2, "Priced") and (21, "WeighedItem.price") in rows
    every = ts.ask(mode="outline", file_path="src")
    assert [g["path"] for g in every["groups"]] == ["src/basket.ts", "src/pricing.ts"]


def test_search_classes(ts: Bridge) -> None:
    data = ts.ask(mode="search", query="Item", kinds=["class"])
    assert [s["name"] for s in data["symbols"]] == ["Item", "WeighedItem", "BulkItem"]


def test_calls_incoming_to_depth_two(ts: Bridge) -> None:
    data = ts.ask(mode="calls", locate="src/pricing.ts:round", direction="incoming", depth=2)
    rows = [(r["name"], r["depth"]) for r in data["sections"][0]["rows"]]
    assert ("total", 1) in rows and ("sample", 2) in rows and ("price", 1) in rows


def test_types_derived_both_ways(ts: Bridge) -> None:
    data = ts.ask(mode="types", locate="src/pricing.ts:WeighedItem", depth=2)
    assert data["derived"] == f"{ts.servers[0]} lacks textDocument/prepareTypeHierarchy"
    supertypes, subtypes = data["sections"]
    assert [(r["name"], r["depth"]) for r in supertypes["rows"]] == [("Item", 1), ("Priced", 2)]
    assert [r["name"] for r in subtypes["rows"]] == ["BulkItem"]
    down = ts.ask(mode="types", locate="src/pricing.ts:Priced", direction="subtypes", depth=3)
    rows = [(r["name"], r["depth"]) for r in down["sections"][0]["rows"]]
    assert rows == [("Item", 1), ("WeighedItem", 2), ("BulkItem", 3), ("Fee", 1)]


def test_inlay_hints_parameter_names(ts: Bridge) -> None:
    data = ts.ask(mode="inlay_hints", locate="src/basket.ts@const apples")
    [line] = data["lines"]
    assert line["text"] == (
        '  const apples = new WeighedItem(/*<inlay>name:</inlay>*/"apples", '
        "/*<inlay>base:</inlay>*/3, /*<inlay>kilos:</inlay>*/1.5);"
    )


def test_signature_help_in_a_call(ts: Bridge) -> None:
    data = ts.ask(mode="signature_help", locate="src/basket.ts@describe(bread, <|>2)")
    [signature] = data["signatures"]
    assert signature["label"].startswith("describe(item: Item, quantity: number)")
    assert [p["label"] for p in signature["parameters"] if p["active"]] == ["quantity: number"]


def test_completion_of_members(ts: Bridge) -> None:
    data = ts.ask(mode="completion", locate="src/basket.ts@${item.<|>name}")
    labels = {i["label"] for i in data["items"]}
    assert {"name", "price"} <= labels
    assert next(i for i in data["items"] if i["label"] == "price")["kind"] == "method"


def test_search_names_a_language_whose_server_is_not_running(tmp_path: Path) -> None:
    from tests.conftest import EXAMPLE

    root = tmp_path / "mixed"
    shutil.copytree(EXAMPLE, root)
    shutil.copytree(FIXTURE / "src", root / "web")
    bridge = Bridge(root, ["basedpyright", "ts_ls"])
    try:
        assert bridge.request(
            {"mode": "hover", "locate": "shop/models.py:Product"}
        ).ok  # python only
        data = bridge.ask(mode="search", query="Item")
        assert data["symbols"] == []
        assert any(
            note.startswith("typescript files: no language server runs") for note in data["lacking"]
        )
        assert bridge.ask(mode="outline", file_path="web/pricing.ts")["total"] > 0  # starts ts_ls
        data = bridge.ask(mode="search", query="Item", kinds=["class"])
        assert data["lacking"] == [] and data["symbols"][0]["path"] == "web/pricing.ts"
    finally:
        bridge.close()


#: rxjs 7.8.1, src/internal/Observable.ts (Apache-2.0), shortened: overload signatures of
#: `pipe` and its implementation, as typescript-language-server outlines them.
OVERLOADS = """export class Observable<T> {
  constructor(public value: T) {}

  pipe(): Observable<T>;
  pipe<A>(op1: (x: T) => A): Observable<A>;
  pipe<A, B>(op1: (x: T) => A, op2: (x: A) => B): Observable<B>;
  pipe<A, B, C>(
    op1: (x: T) => A,
    op2: (x: A) => B,
    op3: (x: B) => C
  ): Observable<C>;
  pipe(...operations: ((x: any) => any)[]): Observable<any> {
    return operations.reduce((prev: any, fn) => new Observable(fn(prev.value)), this);
  }
}
"""


def test_overloads_and_their_implementation_are_one_place(ts: Bridge) -> None:
    """Issue 33: `Observable.pipe` is one symbol to an agent, not five."""
    (ts.root / "lib").mkdir(exist_ok=True)
    (ts.root / "lib" / "observable.ts").write_text(OVERLOADS)
    data = ts.ask(mode="locate", locate="lib/observable.ts:Observable.pipe")
    assert (data["line"], data["text"]) == (12, "pipe(...operations: ((x: any) => any)[]): Observable<any> {")
    assert "5 signatures of pipe" in data["overloads"] and "4, 5, 6, 7" in data["overloads"]
    text = ts.request({"mode": "locate", "locate": "lib/observable.ts:Observable.pipe"}).text
    assert "> One symbol: 5 signatures of pipe: the implementation at line 12" in text


def test_a_marker_at_a_gap_names_the_other_reading(ts: Bridge) -> None:
    """Issue 33: `public` is missing right before the marker: taken on `value`, and the
    approximate note says the other reading is the gap, before `public`."""
    (ts.root / "lib").mkdir(exist_ok=True)
    (ts.root / "lib" / "observable.ts").write_text(OVERLOADS)
    data = ts.ask(mode="locate", locate="lib/observable.ts@constructor(<|>value: T) {}")
    assert (data["line"], data["column"]) == (2, 22)
    assert data["approximate"]["gap"] == ("The find lacks `public` at its marker: taken after the gap; "
                                          "the other reading is before it, line 2 column 15")
    text = ts.request({"mode": "locate", "locate": "lib/observable.ts@constructor(<|>value: T) {}"}).text
    assert "matched `constructor(public value: T) {}`. The find lacks `public` at its marker: taken" in text


SUBJECTS = """export class Subject<T> {
  next(value: T): void {
    console.log(value);
  }
}

export class BehaviorSubject<T> extends Subject<T> {
  constructor(private _value: T) {
    super();
  }
}

export const handler = (input: number): number => {
  const doubled = input * 2;
  function helper(): number {
    return doubled;
  }
  return helper();
};

export const settings = {
  depth: 2,
  read: () => {
    const hidden = 1;
    return hidden;
  },
};
"""


def test_a_generic_class_is_not_its_own_supertype(ts: Bridge) -> None:
    """Issue 35: the `T` of `class BehaviorSubject<T> extends Subject<T>` is defined in the
    class's own header; only `Subject` is a supertype."""
    (ts.root / "lib").mkdir(exist_ok=True)
    (ts.root / "lib" / "subjects.ts").write_text(SUBJECTS)
    data = ts.ask(mode="types", locate="lib/subjects.ts:BehaviorSubject", direction="supertypes")
    assert [r["name"] for r in data["sections"][0]["rows"]] == ["Subject"]


def test_outline_leaves_out_the_locals_of_arrow_functions(ts: Bridge) -> None:
    (ts.root / "lib").mkdir(exist_ok=True)
    (ts.root / "lib" / "subjects.ts").write_text(SUBJECTS)
    data = ts.ask(mode="outline", file_path="lib/subjects.ts", compact=False)
    rows = [s["symbol"] for g in data["groups"] for s in g["symbols"]]
    assert "handler" in rows and "handler.doubled" not in rows and "handler.helper" not in rows
    # An object's members are its structure (a method's locals are not).
    assert {"settings.depth", "settings.read"} <= set(rows) and "settings.read.hidden" not in rows
    # Asked for, the arrow function shows its locals.
    inside = ts.ask(mode="outline", file_path="lib/subjects.ts", symbol_path="handler")
    assert "handler.doubled" in [s["symbol"] for g in inside["groups"] for s in g["symbols"]]


def test_an_agents_outline_is_the_files_exports(ts: Bridge) -> None:
    """Issue 50: an agent's outline of one file is what it exports (declared `export`, or
    named in `export { … }`), a class's members listed, other members counted; the rest is
    counted, and `compact: false` lists it."""
    (ts.root / "lib").mkdir(exist_ok=True)
    (ts.root / "lib" / "exports.ts").write_text(
        "export interface Shape {\n  area: number;\n  name: string;\n}\n\n"
        "const hidden = 1;\n\nfunction helper(): number {\n  return hidden;\n}\n\n"
        "export class Square {\n  side = 1;\n  area(): number {\n    return this.side * helper();\n  }\n}\n\n"
        "type Named = { name: string };\n\nexport { helper as help, Named };\n")
    text = ts.request({"mode": "outline", "file_path": "lib/exports.ts"}).text
    assert text.startswith("# Outline: lib/exports.ts · exported: 6 of 9 symbols\n"), text
    assert "1| interface Shape (2 members)\n" in text and "12| class Square\n" in text, text
    assert "  method: area\n" in text and "8| function helper\n" in text and "19| variable Named\n" in text, text
    assert "hidden" not in text and text.endswith("\n+3 not exported: `\"compact\": false`\n"), text
    every = ts.ask(mode="outline", file_path="lib/exports.ts", compact=False)
    assert {"hidden", "Shape.area", "Shape.name"} <= {s["symbol"] for g in every["groups"] for s in g["symbols"]}


def test_an_export_default_anchor_is_the_declaration(ts: Bridge) -> None:
    """Issue 35: `en.ts:default` (zod's locales) names the `default` keyword of
    `export default function () {}`, whose references are the importers'. (In `src`: the
    project's files, which tsserver searches; the last test of the module, as it adds to
    the outline of `src`.)"""
    (ts.root / "src" / "locales").mkdir(exist_ok=True)
    (ts.root / "src" / "locales" / "en.ts").write_text(
        'export default function () {\n  const message = "hello";\n  return { localeError: message };\n}\n')
    (ts.root / "src" / "uses.ts").write_text('import en from "./locales/en";\n\nexport const error = en();\n')
    text = ts.request({"mode": "references", "locate": "src/locales/en.ts:default"}).text
    assert text.startswith("# References: `default`"), text
    assert "(src/locales/en.ts:1)" in text and "### src/uses.ts" in text, text
