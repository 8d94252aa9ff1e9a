"""`explain` on the corpus's negative controls, and the cost of the every-batch check.

For each negative control (or a sample of them): its first failing declared hazard and seed
(seeds 0..4, with the every-batch check), then `explain` there with the default budget: the
minimal plan's size (distinct records, batches), the replays used, whether it is 1-minimal, and
the time (wall, and CPU of this process: the machine may be shared). Targets: >= 90% of
negatives shrink to <= 10 records and <= 4 batches; median explain time <= 20 s on one core.

Then, on a few tasks, a default grade of the gold with and without `--every-batch` (CPU
seconds, the reference cache emptied first). Target: the check adds <= 30%.

    python benchmarks/bench_explain.py [--sample N] [--task ID]... [--overhead-tasks N]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from arrivalbench.core import checkpoints
from arrivalbench.core.grading import DEFAULT_SEEDS, grade_all, judge, plan, schedule
from arrivalbench.core.replay import expected
from arrivalbench.core.task import builtin_ids, load_spec
from arrivalbench.explain import DEFAULT_BUDGET, explain


def first_failure(spec, sql: str, hazards) -> tuple[str, int] | None:  # type: ignore[no-untyped-def]
    for kind in hazards:
        for seed in range(DEFAULT_SEEDS):
            verdict, _ = judge(spec, sql, schedule(spec, kind, seed), kind, seed,
                               every_batch=True)
            if verdict.status != "PASS":
                return kind, seed
    return None


def negatives(tasks: list[str], sample: int | None) -> list[tuple[str, str]]:
    pairs = [(t, n.name) for t in tasks for n in load_spec(t).negatives]
    if sample is not None and sample < len(pairs):
        pairs = sorted(random.Random(0).sample(pairs, sample))
    return pairs


def bench_explain(pairs: list[tuple[str, str]]) -> None:
    rows = []
    print(f"{'task':28} {'negative':24} {'hazard':16} seed  rec bat abo  replays  1-min "
          f"  wall s   cpu s")
    for task, name in pairs:
        spec = load_spec(task)
        negative = next(n for n in spec.negatives if n.name == name)
        found = first_failure(spec, negative.sql, negative.fails)
        if found is None:
            print(f"{task:28} {name:24} (no failing declared hazard in seeds 0..4)")
            continue
        kind, seed = found
        wall, cpu = time.perf_counter(), time.process_time()
        e = explain(spec, negative.sql, kind, seed, DEFAULT_BUDGET)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        doc = e.document()
        m = doc["minimal"]
        if m is None:
            print(f"{task:28} {name:24} {kind:16} {seed:4}  nondeterministic or passing")
            continue
        rows.append((m["records"], m["batches"], m["replays"], wall, cpu, m["one_minimal"]))
        print(f"{task:28} {name:24} {kind:16} {seed:4} {m['records']:4} {m['batches']:3} "
              f"{m['aborts']:3} {m['replays']:8} {'yes' if m['one_minimal'] else 'no':>6} "
              f"{wall:8.1f} {cpu:7.1f}", flush=True)
    if not rows:
        return
    small = sum(1 for r, b, *_ in rows if r <= 10 and b <= 4)
    print(f"\n{len(rows)} negatives explained: {small} ({small / len(rows):.0%}) shrink to <= 10 "
          f"records and <= 4 batches; 1-minimal: {sum(1 for *_, m in rows if m)}")
    print(f"replays: median {statistics.median(r[2] for r in rows):.0f}, max "
          f"{max(r[2] for r in rows)}")
    print(f"explain time: median wall {statistics.median(r[3] for r in rows):.1f} s, median CPU "
          f"{statistics.median(r[4] for r in rows):.1f} s, max CPU {max(r[4] for r in rows):.1f} s")


def bench_overhead(tasks: list[str]) -> None:
    plain_total = checked_total = 0.0
    for task in tasks:
        spec = load_spec(task)
        points = plan(spec)
        expected(spec)
        list(grade_all(spec, spec.gold_sql, points[:1]))  # warm: log, instance
        cpu = time.process_time()
        list(grade_all(spec, spec.gold_sql, points))
        plain = time.process_time() - cpu
        checkpoints._CACHE.clear()
        cpu = time.process_time()
        list(grade_all(spec, spec.gold_sql, points, every_batch=True))
        checked = time.process_time() - cpu
        plain_total += plain
        checked_total += checked
        print(f"{task:28} default grade {plain:6.2f} s CPU, with --every-batch {checked:6.2f} s "
              f"(+{checked / plain - 1:.0%})", flush=True)
    print(f"every-batch check adds {checked_total / plain_total - 1:.0%} to a default grade "
          f"over {len(tasks)} tasks")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, help="explain only N negatives, drawn with seed 0")
    parser.add_argument("--task", action="append", help="only these tasks")
    parser.add_argument("--overhead-tasks", type=int, default=5,
                        help="tasks for the every-batch overhead (0: skip)")
    args = parser.parse_args()
    tasks = args.task or builtin_ids()
    bench_explain(negatives(tasks, args.sample))
    if args.overhead_tasks:
        print()
        bench_overhead(sorted(random.Random(1).sample(tasks, min(args.overhead_tasks,
                                                                 len(tasks)))))


if __name__ == "__main__":
    main()
