"""Issue 33, the held-out anchor benchmark in small (`benchmarks/variants.py`): its
generator's near misses on this repository's own code and TypeScript fixture, which the
matcher was not tuned on. The full run, on four registry code bases, is in RESULTS.md."""

from __future__ import annotations

import random

import pytest

from benchmarks.corpus import Sources
from benchmarks.variants import SLIPS, evaluate, generate
from tests.conftest import ROOT

SOURCES = [
    Sources("lsap_bridge", "repo", ROOT, "lsap_bridge/**/*.py", "python"),
    Sources("ts_shop", "repo", ROOT / "tests" / "fixtures" / "ts_shop", "src/*.ts", "typescript"),
]


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.name)
def test_near_misses_of_another_generator(source: Sources) -> None:
    outcomes = evaluate(source.root, generate(source, 12, random.Random(33)))
    wrong = [o for o in outcomes if o.verdict == "wrong"]
    assert not wrong, [(o.case.kind, o.case.find, o.line, o.column) for o in wrong]
    plain = [o for o in outcomes if o.case.kind in ("exact", "ambiguous", "absent")]
    assert plain and all(o.verdict == "right" for o in plain), [
        (o.case.kind, o.case.find, o.answer) for o in plain if o.verdict != "right"]
    near = [o for o in outcomes if o.case.kind in SLIPS]
    right = sum(o.verdict == "right" for o in near)
    assert near and right >= 0.9 * len(near), [(o.case.kind, o.case.find, o.answer) for o in near
                                               if o.verdict != "right"]
