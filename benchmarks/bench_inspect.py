"""What grading in worker processes costs the Inspect task, and what it bounds.

    python benchmarks/bench_inspect.py [--before SRC] [--tasks N] [--seeds N]

Each figure is one offline `inspect_ai.eval` of the arrivalbench task in a fresh process, with a
scripted mock model, so that the time is the harness's alone (a real model's turns take seconds
each on top):

- repair: the first N built-in core tasks; every sample answers a negative control on turns 1
  and 2 and the gold on turn 3, so each runs three snapshot tests, then the scorer grades the
  gold on the default plan (snapshot, both controls and every hazard, seeds 0..N-1). The wall
  time of the eval and the peak RSS (VmHWM) of the process running Inspect.
- hostile: one sample of `ad_clicks_clean` answering tests/hostile/duckdb/memory_big_string.sql
  (a 2 GB string DuckDB allocates outside its buffer manager), one turn, seed 0: the verdicts'
  phases, the wall time and the peak RSS of the process running Inspect.

With `--before SRC` (the `src` folder of another checkout) the same runs with that code too.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ROOT / "tests" / "hostile" / "duckdb" / "memory_big_string.sql"

EVAL = """
import json, sys, time
from pathlib import Path
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage
from arrivalbench.agent.inspect_task import arrivalbench, samples
from arrivalbench.core.task import load_specs

tasks, seeds, turns, replies = sys.argv[1].split(","), int(sys.argv[2]), int(sys.argv[3]), \\
    json.loads(sys.argv[4])
specs = load_specs(tasks)
by_prompt = {s.input: s.metadata["task"] for s in samples(specs, max_turns=turns)}

def reply(messages, *_args):
    answers = replies[by_prompt[messages[0].text]]
    turn = sum(1 for m in messages if m.role == "assistant")
    output = ModelOutput.from_content("mockllm/model", f"```sql\\n{answers[turn]}```\\n")
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return output

start = time.perf_counter()
[log] = inspect_eval(arrivalbench(tasks=tasks, seeds=seeds, max_turns=turns),
                     model="mockllm/model", model_args={"custom_outputs": reply},
                     log_dir=sys.argv[5], display="none")
wall = time.perf_counter() - start
phases = {}
for sample in log.samples:
    for line in (sample.scores["verdicts"].explanation or "").splitlines():
        if " error at batch " in line:
            phases[line.split()[0]] = phases.get(line.split()[0], 0) + 1
with open("/proc/self/status") as status:
    peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
print(json.dumps({"status": log.status, "samples": len(log.samples), "wall_s": round(wall, 1),
                  "inspect_peak_rss_mb": round(peak / 1024), "error_phases": phases}))
"""


def run(src: Path, tasks: list[str], seeds: int, turns: int,
        replies: dict[str, list[str]]) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    with tempfile.TemporaryDirectory() as folder:
        done = subprocess.run([sys.executable, "-c", EVAL, ",".join(tasks), str(seeds),
                               str(turns), json.dumps(replies), str(Path(folder) / "logs")],
                              env=env, capture_output=True, text=True, check=False, cwd=folder)
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    found: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def repair_replies(count: int) -> tuple[list[str], dict[str, list[str]]]:
    from arrivalbench.core.task import builtin_ids

    tasks = list(builtin_ids("core"))[:count]
    replies = {}
    for task in tasks:
        folder = ROOT / "src" / "arrivalbench" / "tasks" / task
        negative = sorted((folder / "negatives").glob("*.sql"))[0].read_text()
        replies[task] = [negative, negative, (folder / "gold.sql").read_text()]
    return tasks, replies


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", type=Path, help="the src folder of another checkout")
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    tasks, replies = repair_replies(args.tasks)
    sources = {"after": ROOT / "src", **({"before": args.before} if args.before else {})}
    figures = {}
    for name, src in sources.items():
        figures[name] = {
            "repair": run(src, tasks, args.seeds, 3, replies),
            "hostile": run(src, ["ad_clicks_clean"], 1, 1,
                           {"ad_clicks_clean": [HOSTILE.read_text()]}),
        }
    print(json.dumps({"tasks": tasks, "seeds": args.seeds, "cores": os.cpu_count(),
                      **figures}, indent=2))


if __name__ == "__main__":
    main()
