"""`--compare`: the paired shift between two arms, on properties that need no hand derivation."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from arrivalbench.core.task import HAZARDS
from arrivalbench.report.compare import compare
from arrivalbench.report.metrics import CellFacts

VERDICT = st.sampled_from(("PASS", "FAIL", "ERROR"))


@st.composite
def arm_cells(draw: st.DrawFn) -> list[CellFacts]:
    facts = []
    for t in range(draw(st.integers(1, 6))):
        for r in range(draw(st.integers(1, 3))):
            hazards = draw(st.dictionaries(st.sampled_from(HAZARDS),
                                           st.tuples(VERDICT, VERDICT), max_size=4))
            facts.append(CellFacts("a", f"t{t}", r, True,
                                   draw(st.sampled_from(("PASS", "FAIL", None))), {}, hazards))
    return facts


def leaves(node: dict[str, object]) -> list[dict[str, object]]:
    if "shift" in node:
        return [node]
    return [leaf for v in node.values() if isinstance(v, dict) for leaf in leaves(v)]


@settings(max_examples=40, deadline=None)
@given(arm_cells())
def test_an_arm_against_its_copy_shifts_nothing(facts: list[CellFacts]) -> None:
    copy = [dataclasses.replace(f, arm="b") for f in facts]
    got = compare("a", "b", facts + copy, seed=0, resamples=50)
    assert got["cells"] == {"compared": len(facts), "only_a": 0, "only_b": 0, "changed": []}
    metrics = got["metrics"]
    assert isinstance(metrics, dict)
    for leaf in leaves(metrics):
        shift = leaf["shift"]
        assert isinstance(shift, dict)
        assert leaf["a"] == leaf["b"]
        if leaf["a"] is not None:
            assert (shift["value"], shift["low"], shift["high"]) == (0.0, 0.0, 0.0)


def test_only_common_tasks_are_compared() -> None:
    a = [CellFacts("a", "t1", 0, True, "PASS", {}, {"duplicates": ("PASS",)}),
         CellFacts("a", "t2", 0, True, "PASS", {}, {"duplicates": ("FAIL",)})]
    b = [CellFacts("b", "t1", 0, True, "PASS", {}, {"duplicates": ("FAIL",)}),
         CellFacts("b", "t3", 0, True, "PASS", {}, {"duplicates": ("PASS",)})]
    got = compare("a", "b", a + b, seed=0, resamples=50)
    assert got["tasks"] == 1
    metrics = got["metrics"]
    assert isinstance(metrics, dict)
    assert metrics["silent"] == {"a": 0.0, "b": 1.0,
                                 "shift": {"value": 1.0, "low": 1.0, "high": 1.0, "n": 1}}
    assert got["cells"] == {"compared": 1, "only_a": 0, "only_b": 0, "changed": [
        {"task": "t1", "replicate": 0, "a": "pass", "b": "silent"}]}
