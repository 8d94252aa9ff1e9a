"""What containment costs a `grade`: a default grade of each sampled gold as a whole
`arrivalbench grade` process (replays in bounded worker processes) against the same replays
graded in one plain Python process (`core.grading.grade`, nothing contained), alternated and
repeated. The figures are the CPU of the whole process tree (user + system: this process is a
child subreaper, so workers and their servers are counted even when they outlive the grader by
a moment) and wall time, medians over repeats; the verdicts of both must be equal.

    python benchmarks/bench_containment_cost.py [--task ID]... [--repeat R] [--before SRC]

With --before SRC (the `src` folder of another checkout) the contained grade runs that code
instead, for a before/after comparison of the executor.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from arrivalbench.core.task import load_spec

ARRIVALBENCH = str(Path(sys.executable).with_name("arrivalbench"))
TASKS = ("store_daily_revenue", "ledger_running_balance", "account_balances")
_IN_PROCESS = """
import json, sys
from arrivalbench.core.artifacts import read
from arrivalbench.core.grading import grade, plan
from arrivalbench.core.task import load_spec
spec = load_spec(sys.argv[1])
artifact = read(spec.path / "gold.sql", spec)
print(json.dumps([g.verdict.document() for g in grade(spec, artifact, plan(spec, 5))]))
"""


def _reap() -> None:
    """Wait for every orphan this subreaper inherited (a worker or a server, leaving)."""
    with contextlib.suppress(ChildProcessError):
        while True:
            os.waitpid(-1, 0)


def measure(command: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """CPU seconds of the whole tree, wall seconds, and the verdicts as canonical text."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    _reap()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{command[:3]}: failed: {done.stderr.strip()[-400:]}")
    document = json.loads(done.stdout)
    rows = document["verdicts"] if isinstance(document, dict) else document
    verdicts = [{k: row[k] for k in ("schedule", "seed", "verdict", "detail")} for row in rows]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, json.dumps(verdicts, sort_keys=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", action="append", default=[])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--before", type=Path, help="the src folder of another checkout")
    args = parser.parse_args()
    ctypes.CDLL(None).prctl(36, 1)  # PR_SET_CHILD_SUBREAPER
    contained_env = dict(os.environ)
    if args.before:
        contained_env["PYTHONPATH"] = str(args.before.resolve())
    ratios = []
    for task in args.task or TASKS:
        gold = str(load_spec(task).path / "gold.sql")
        inside, contained = [], []
        for _ in range(args.repeat):
            inside.append(measure([sys.executable, "-c", _IN_PROCESS, task], dict(os.environ)))
            contained.append(measure([ARRIVALBENCH, "grade", gold, "--task", task, "--json"],
                                     contained_env))
            if inside[-1][2] != contained[-1][2]:
                raise SystemExit(f"{task}: the verdicts differ between the two ways")
        cpu_in = statistics.median(c for c, _w, _v in inside)
        cpu_out = statistics.median(c for c, _w, _v in contained)
        wall_in = statistics.median(w for _c, w, _v in inside)
        wall_out = statistics.median(w for _c, w, _v in contained)
        ratios.append(cpu_out / cpu_in)
        print(f"{task:28} CPU {cpu_in:5.2f} s in process, {cpu_out:5.2f} s contained "
              f"({cpu_out / cpu_in:.2f}x); wall {wall_in:5.2f} s, {wall_out:5.2f} s "
              f"({wall_out / wall_in:.2f}x)", flush=True)
    print(f"contained / in-process CPU: median {statistics.median(ratios):.2f}x, "
          f"max {max(ratios):.2f}x")


if __name__ == "__main__":
    main()
