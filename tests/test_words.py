"""A verdict put into words: the terminal, the gate's one line and the model's feedback all read
the same verdict detail."""

from __future__ import annotations

from arrivalbench import words
from arrivalbench.core.task import TaskSpec
from arrivalbench.core.verdict import Verdict

ERROR = {"phase": "run", "batch": 2, "statement": 0, "message": "Constraint Error: boom"}
FAIL = {"schema": [], "rows": {"expected": 3, "got": 4}, "counts": {"duplicated": 1},
        "examples": {"duplicated": [{"key": {"id": 1}, "copies": 1}]}}


def verdict(kind: str, detail: dict[str, object]) -> Verdict:
    return Verdict("t", "d", "snapshot", 0, "s", "a", kind, detail,  # type: ignore[arg-type]
                   "duckdb", "2.0.1")


def test_an_error_reads_where_it_stopped_in_every_variant(tiny: TaskSpec) -> None:
    v = verdict("ERROR", ERROR)
    # Statement index 0 is the first statement: counted from 1, as aborts and plans count.
    assert words.terminal(v) == "run error at batch 2, statement 1: Constraint Error: boom"
    assert words.line(v) == "ERROR (run, batch 2, statement 1): Constraint Error: boom"
    told = words.for_model(tiny, v, ["INSERT INTO t SELECT 1"])
    assert told is not None and "statement 1 (`INSERT INTO t SELECT 1`)" in told


def test_a_difference_reads_its_counts_and_an_example(tiny: TaskSpec) -> None:
    v = verdict("FAIL", FAIL)
    assert words.line(v) == 'FAIL: 1 duplicated (expected 3 rows, got 4); e.g. duplicated {"id":1}'
    assert "  duplicated {\"id\":1}: +1 copies" in words.terminal(v)
    told = words.for_model(tiny, v)
    assert told is not None and "(id=1) appears 2 times" in told


def test_values_are_quoted_one_way_in_every_variant() -> None:
    changed = {"counts": {"changed": 1}, "examples": {"changed": [
        {"key": {"id": 1}, "column": "x", "got": "it's", "expected": None}]}}
    v = verdict("FAIL", changed)
    assert "x: got 'it''s', expected NULL" in words.terminal(v)
    assert "x: got 'it''s', expected NULL" in words.line(v)
    assert "x: got 'it''s', expected NULL" in words.diff_line(changed)


def test_a_pass_needs_no_words(tiny: TaskSpec) -> None:
    assert words.line(verdict("PASS", {})) == "PASS"
    assert words.for_model(tiny, verdict("PASS", {})) is None
