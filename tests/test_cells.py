"""The class of a cell: one definition of silent, crash and the controls for every summary."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from arrivalbench.core.grading import CHECKED_CONTROLS
from arrivalbench.study.cells import classify

VERDICT = st.sampled_from(["PASS", "FAIL", "ERROR"])
RUNS = st.lists(VERDICT, min_size=1, max_size=4)
HAZARDS = ("duplicates", "late_arrival")


@given(st.dictionaries(st.sampled_from(["snapshot", *CHECKED_CONTROLS, *HAZARDS, "backfill"]),
                       RUNS))
def test_silent_and_crash_need_a_passing_snapshot_and_a_declared_hazard(
        verdicts: dict[str, list[str]]) -> None:
    kind = classify(verdicts, HAZARDS)
    on_hazards = [v for h in HAZARDS for v in verdicts.get(h, [])]
    snapshot = verdicts.get("snapshot") == ["PASS"]
    assert kind.snapshot_pass == snapshot
    assert kind.silent == (snapshot and "FAIL" in on_hazards)
    assert kind.crash == (snapshot and "ERROR" in on_hazards)
    assert kind.hazard_fail == (kind.silent or kind.crash)
    assert kind.eligible == (snapshot and bool(on_hazards))


def test_an_undeclared_hazard_does_not_count() -> None:
    kind = classify({"snapshot": ["PASS"], "backfill": ["FAIL"]}, HAZARDS)
    assert not kind.silent and not kind.eligible


def test_controls_pass_only_when_every_control_is_graded_and_passes() -> None:
    graded = {c: ["PASS", "PASS"] for c in CHECKED_CONTROLS}
    assert classify({"snapshot": ["PASS"], **graded}, HAZARDS).controls_pass
    missing = dict(list(graded.items())[1:])
    assert not classify({"snapshot": ["PASS"], **missing}, HAZARDS).controls_pass
    failing = {**graded, CHECKED_CONTROLS[0]: ["PASS", "ERROR"]}
    assert not classify({"snapshot": ["PASS"], **failing}, HAZARDS).controls_pass
