"""How read amplification grows with the log: a pipeline that reads the stored history on every
run against an incremental gold, on a task's log and on the same log repeated at N times the
records.

The Nx log repeats the task's log N times, one copy after the other: copy k shifts every
TIMESTAMP and DATE column by k times the log's span (rounded up to whole weeks, so days and
ISO weeks keep their shape) and makes the record key and entity key columns distinct per copy
(integers offset by k times a power of ten above the largest value, strings suffixed). It is
built as a task folder in a temporary directory, so the reference, the schedules and the
pipelines run on it exactly as on a built-in task.

`trickle` is replayed (seed 0) twice on the Nx log: with N times the runs (batches of the same
size as on the 1x log: the log keeps arriving at the same pace, the case that matters in
production) and with the usual number of runs (N times bigger batches). The history pipeline is
the task's `gold.sql`; the incremental one its `incremental.sql`.

    python benchmarks/scale.py [--task ID]... [--scale N]

Default tasks: payment_captures (append), order_status_current (upsert), store_daily_revenue
(aggregate): each gold reads the stored history or target on every run.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import tempfile
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from arrivalbench.core.grading import judge
from arrivalbench.core.log import load_log
from arrivalbench.core.schedules import Params, make
from arrivalbench.core.task import TaskSpec, load_spec

DEFAULT_TASKS = ("payment_captures", "order_status_current", "store_daily_revenue")
TRICKLE_RUNS = Params().trickle_batches


def _parse_time(value: str) -> datetime:
    return datetime.fromisoformat(value)


def _span(spec: TaskSpec) -> timedelta:
    """The log's time span, rounded up to whole weeks (at least one)."""
    times: list[datetime] = []
    for source, path in zip(spec.sources, spec.log_files, strict=True):
        stamp = [c.name for c in source.columns if c.type.upper() == "TIMESTAMP"]
        for line in path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                times += [_parse_time(row[c]) for c in stamp if row.get(c) is not None]
    days = (max(times) - min(times)).days + 1 if times else 1
    return timedelta(weeks=max(1, math.ceil(days / 7)))


def _key_columns(spec: TaskSpec, source_name: str) -> set[str]:
    source = next(s for s in spec.sources if s.name == source_name)
    return set(source.record_key) | set(source.entity_key or ())


def _shift(value: Any, kind: str, copy: int, span: timedelta, key: bool, offset: int) -> Any:
    if value is None or copy == 0:
        return value
    if kind == "TIMESTAMP":
        return str(_parse_time(value) + copy * span)
    if kind == "DATE":
        return str(date.fromisoformat(value) + copy * span)
    if key and isinstance(value, int):
        return value + copy * offset
    if key and isinstance(value, str):
        return f"{value}~{copy}"
    return value


def scaled_task(spec: TaskSpec, scale: int, root: Path) -> Path:
    """A copy of the task folder under `root` whose log is the task's log repeated `scale`
    times (see the module's docstring)."""
    folder = root / f"x{scale}" / spec.id  # the folder is named by the task id
    shutil.copytree(spec.path, folder)
    span = _span(spec)
    for source, path in zip(spec.sources, spec.log_files, strict=True):
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        kinds = {c.name: c.type.upper() for c in source.columns}
        keys = _key_columns(spec, source.name)
        largest = max((abs(v) for r in rows for k, v in r.items()
                       if k in keys and isinstance(v, int)), default=1)
        offset = 10 ** (len(str(largest)) + 1)
        lines = [json.dumps({k: _shift(v, kinds.get(k, ""), copy, span, k in keys, offset)
                             for k, v in row.items()}, sort_keys=True)
                 for copy in range(scale) for row in rows]
        (folder / "log" / path.name).write_text("\n".join(lines) + "\n")
    return folder


def amplification(spec: TaskSpec, script: str, runs: int) -> tuple[str, float, int]:
    sched = make(load_log(spec).timeline, "trickle", 0,
                 Params(hazards=spec.hazards, trickle_batches=runs))
    verdict, outcome = judge(spec, script, sched, "trickle", 0, measure=True)
    assert outcome.cost is not None
    return verdict.status, outcome.cost.read_amplification, outcome.cost.records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", action="append", default=[])
    parser.add_argument("--scale", type=int, default=10)
    args = parser.parse_args()
    tasks = args.task or list(DEFAULT_TASKS)
    print(f"{'task':28s} {'pipeline':12s} {'log':>5s} {'runs':>5s} {'records':>8s} "
          f"{'verdict':>7s} {'read amp':>9s}")
    with tempfile.TemporaryDirectory() as tmp:
        for task in tasks:
            base = load_spec(task)
            big = load_spec(scaled_task(base, args.scale, Path(tmp)))
            for name in ("gold.sql", "incremental.sql"):
                script = (base.path / name).read_text()
                for spec, log, runs in ((base, "1x", TRICKLE_RUNS),
                                        (big, f"{args.scale}x", TRICKLE_RUNS * args.scale),
                                        (big, f"{args.scale}x", TRICKLE_RUNS)):
                    status, amp, records = amplification(spec, script, runs)
                    print(f"{task:28s} {name:12s} {log:>5s} {runs:5d} {records:8d} "
                          f"{status:>7s} {amp:9.2f}", flush=True)


if __name__ == "__main__":
    main()
