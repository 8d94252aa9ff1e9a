"""The documents `--json` prints: canonical JSON, one per command."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from arrivalbench.core.engine import duckdb as duckdb_engine
from arrivalbench.core.engine.cost import Cost
from arrivalbench.core.task import TaskSpec
from arrivalbench.core.values import JSON
from arrivalbench.core.verdict import Verdict


def grade_document(spec: TaskSpec, verdicts: Sequence[Verdict],
                   costs: Sequence[Cost | None] | None = None,
                   nondeterministic: dict[str, JSON] | None = None) -> dict[str, JSON]:
    """`grade --json`: the task, the artifact, the engine, and one entry per verdict (with
    `costs`, one per verdict, each entry also carries its cost). `nondeterministic`, what a
    second snapshot replay changed, is there only when something did: a deterministic
    pipeline's document keeps its bytes."""
    entries: list[JSON] = []
    for index, v in enumerate(verdicts):
        entry: dict[str, JSON] = {"schedule": v.schedule, "seed": v.seed, "verdict": v.status,
                                  "detail": v.detail}
        cost = costs[index] if costs is not None else None
        if cost is not None:
            entry["cost"] = dict(cost.document())
        entries.append(entry)
    document: dict[str, JSON] = {
        "task": spec.id,
        "artifact": verdicts[0].artifact if verdicts else None,
        # The engine the verdicts ran on (DuckDB's when there are none).
        "engine": f"{verdicts[0].engine} {verdicts[0].engine_version}" if verdicts
        else f"{duckdb_engine.NAME} {duckdb_engine.VERSION}",
        "verdicts": entries,
    }
    if nondeterministic is not None:
        document["nondeterministic"] = nondeterministic
    return document


def project_document(project: Path, data: Path | None, models: Mapping[str, dict[str, JSON]],
                     not_passing: Sequence[str]) -> dict[str, JSON]:
    """`grade PROJECT --data DIR --json` over several models: each model's `grade_document`
    under its name, and the models that do not pass. One model graded prints its own document
    alone, as before there were several."""
    return {"project": str(project), "data": None if data is None else str(data),
            "models": dict(models), "not_passing": list(not_passing)}
