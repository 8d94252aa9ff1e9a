"""One owner per concept: the facts every layer asks of an engine, the order of a plan, and no
second spelling of either."""

from __future__ import annotations

import re
from pathlib import Path

from arrivalbench.core.engine import ENGINES, FACTS
from arrivalbench.core.grading import CHECKED_CONTROLS, plan, plan_kinds
from arrivalbench.core.schedules import CONTROLS
from arrivalbench.core.task import TaskSpec

SRC = Path(__file__).parents[1] / "src" / "arrivalbench"


def test_every_engine_has_its_facts() -> None:
    assert set(FACTS) == set(ENGINES)
    assert [FACTS[e].title for e in ENGINES] == ["DuckDB", "PostgreSQL"]


def test_the_plan_order_is_spelled_once(tiny: TaskSpec) -> None:
    assert plan_kinds(tiny.hazards) == ("snapshot", *CHECKED_CONTROLS, *tiny.hazards)
    assert tuple(c for c in CONTROLS if c != "snapshot") == CHECKED_CONTROLS
    assert list(dict.fromkeys(p.schedule for p in plan(tiny, 2))) == list(
        plan_kinds(tiny.hazards))
    # No module outside core/grading rebuilds the order or names an engine by a literal test.
    mine = [p for p in SRC.rglob("*.py") if p.name != "grading.py"
            and "engine" not in p.parts and "artifacts" not in p.parts
            and p.name not in ("executors.py", "gate.py")]
    for path in mine:
        text = path.read_text(encoding="utf-8")
        assert "CONTROLS[1:]" not in text, path
        assert not re.search(r"engine [!=]= \"duckdb\"", text), path
