"""What the every-batch check costs: a default `grade` of each sampled task's gold, as a whole
`arrivalbench grade` process, with and without `--every-batch`, alternated and repeated. The
figure per gold is the median over repeats of (CPU with / CPU without) - 1, CPU being the user
and system seconds of the child process (stabler than wall time on shared cores). The verdict
bytes (`--json`, timings removed) of both runs are compared: a gold passes either way, so they
must be equal.

    python benchmarks/bench_every_batch.py [--task ID]... [--tasks N] [--repeat R] [--arms]

Without --task, N built-in tasks (default 8) spread over the corpus are the sample.

With --arms, each process grades what a study's worker grades of one task: the gold, the
template and every negative on the default plan, one after the other, as `run` hands a worker
the units of the task it holds. The references over the prefixes are computed once per process
and shared by all of them, which is what the every-batch check costs in a study.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

from arrivalbench.core.task import builtin_ids, load_spec

ARRIVALBENCH = str(Path(sys.executable).with_name("arrivalbench"))


def arms(task: str, every_batch: bool) -> None:
    """In a child: every artifact of the built-in arms of `task`, its verdicts on stdout."""
    from arrivalbench.core.artifacts import load
    from arrivalbench.core.grading import GradeOptions, grade, plan
    from arrivalbench.study import arms as armlib

    spec = load_spec(task)
    refs = [a.ref for arm in ("gold", "template", "negatives")
            for a in armlib.builtin(arm, [spec]) if a.ref is not None]
    options = GradeOptions(every_batch=every_batch)
    verdicts = [graded.verdict.document() for ref in refs
                for graded in grade(spec, load(ref, spec), plan(spec, 5), options=options)]
    print(json.dumps({"verdicts": verdicts}))


def run(task: str, every_batch: bool, all_arms: bool = False) -> tuple[float, str]:
    """CPU seconds of one `grade` process (or, with `all_arms`, one process grading every
    artifact of the task's arms), and its verdicts as canonical text."""
    spec = load_spec(task)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    command = [sys.executable, __file__, "--child", task] if all_arms else [
        ARRIVALBENCH, "grade", str(spec.path / "gold.sql"), "--task", task, "--json"]
    done = subprocess.run([*command, *(["--every-batch"] if every_batch else [])],
                          capture_output=True, text=True, env=os.environ)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{task}: grade failed: {done.stderr.strip()}")
    document = json.loads(done.stdout)
    verdicts = [{k: v for k, v in row.items() if "seconds" not in k and k != "timings"}
                for row in document.get("verdicts", document)] \
        if isinstance(document, dict) else document
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, json.dumps(verdicts, sort_keys=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", action="append", default=[])
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--arms", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--every-batch", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        arms(args.child, args.every_batch)
        return
    ids = builtin_ids()
    tasks = args.task or ids[::max(1, len(ids) // args.tasks)][:args.tasks]
    overheads = []
    for task in tasks:
        ratios = []
        for _ in range(args.repeat):
            plain, plain_verdicts = run(task, False, args.arms)
            checked, checked_verdicts = run(task, True, args.arms)
            if plain_verdicts != checked_verdicts and not args.arms:
                raise SystemExit(f"{task}: the verdict bytes differ with --every-batch")
            ratios.append(checked / plain - 1)
        overhead = statistics.median(ratios)
        overheads.append(overhead)
        print(f"{task:34} {plain:6.2f} s CPU plain, {checked:6.2f} s every-batch: "
              f"{overhead:+.0%} (repeats {', '.join(f'{r:+.0%}' for r in ratios)})", flush=True)
    what = "tasks' arms" if args.arms else "golds"
    print(f"every-batch overhead over {len(tasks)} {what}: median "
          f"{statistics.median(overheads):+.0%}, max {max(overheads):+.0%}")


if __name__ == "__main__":
    main()
