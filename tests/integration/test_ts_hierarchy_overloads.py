"""TypeScript hierarchies and overloads with typescript-language-server (issue 50, item 3),
on a code base written without semicolons like @reduxjs/toolkit: a type parameter's bound
is no supertype (`class Tuple<Items extends ReadonlyArray<unknown>> extends Array<…>`), a
library base is one row however many lib .d.ts files declare it, and a function with
overload signatures is one symbol for references, definition, hover and rename."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .harness import Bridge

pytestmark = pytest.mark.integration

SHAPES = '''export interface Named {
  name: string
}

export class Base {
  constructor(public id: number) {}
}

export class Tuple<Items extends ReadonlyArray<unknown> = []> extends Array<Items[number]> {
  head(): Items[number] | undefined {
    return this[0]
  }
}

export class Shape<T extends Tagged = Tagged> extends Base implements Named {
  name = "shape"
  tag?: T
}

export type Action = { type: string; payload?: number }

export function createAction(type: string): Action
export function createAction(type: string, payload: number): Action
export function createAction(type: string, payload?: number): Action {
  return payload === undefined ? { type } : { type, payload }
}

export interface Tagged {
  tag: string
}
'''

USE = '''import { createAction, Shape, Tuple } from "./shapes"

export const a = createAction("a")
export const b = createAction("b", 1)
export const s = new Shape(1)
export const t = new Tuple<[number]>()
'''


@pytest.fixture(scope="module")
def ts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    root = tmp_path_factory.mktemp("ts_overloads") / "proj"
    (root / "src").mkdir(parents=True)
    (root / "package.json").write_text('{"name": "shapes", "version": "0.1.0", "private": true}\n')
    (root / "tsconfig.json").write_text('{"compilerOptions": {"target": "ES2020", "module": "commonjs", '
                                        '"strict": true, "noEmit": true}, "include": ["src"]}\n')
    (root / "src" / "shapes.ts").write_text(SHAPES)
    (root / "src" / "use.ts").write_text(USE)
    bridge = Bridge(root, ["ts_ls"])
    yield bridge
    bridge.close()


def supertypes(ts: Bridge, anchor: str) -> list[str]:
    data = ts.ask(mode="types", locate=anchor, direction="supertypes", include_external=True)
    return [row["name"] for section in data["sections"] for row in section["rows"]]


def test_supertypes_are_bases_and_interfaces_one_row_each(ts: Bridge) -> None:
    # `ReadonlyArray` bounds the type parameter; six lib .d.ts files declare `Array`.
    assert supertypes(ts, "src/shapes.ts:Tuple") == ["Array"]
    # Not `Tagged`: the bound of its type parameter.
    assert sorted(supertypes(ts, "src/shapes.ts:Shape")) == ["Base", "Named"]


def test_an_overloaded_function_is_one_symbol(ts: Bridge) -> None:
    anchor = "src/shapes.ts:createAction"
    refs = ts.ask(mode="references", locate=anchor)
    uses = {(g["path"], u["line"]) for g in refs["groups"] for u in g["uses"]}
    assert {("src/use.ts", 3), ("src/use.ts", 4)} <= uses, refs
    assert refs["line"] == 24 and "3 signatures of createAction" in refs["overloads"], refs
    definition = ts.ask(mode="definition", locate="src/use.ts@export const a = <|>createAction")
    assert {d["line"] for d in definition["definitions"]} <= {22, 23, 24}, definition
    hover = ts.request({"mode": "hover", "locate": anchor})
    assert hover.ok and "createAction" in hover.text, hover.text
    renamed = ts.request({"mode": "rename", "locate": anchor, "new_name": "makeAction"})
    assert renamed.ok, renamed.text
    assert (ts.root / "src" / "shapes.ts").read_text().count("export function makeAction(") == 3
    assert "makeAction(\"a\")" in (ts.root / "src" / "use.ts").read_text()
