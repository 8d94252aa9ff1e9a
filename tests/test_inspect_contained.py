"""The Inspect task never runs a model's SQL in its own process: the snapshot test and the scorer
replay it in bounded worker processes, under one budget of workers for all the samples that run
at once, and give the verdicts of in-process grading."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from arrivalbench.agent import inspect_task
from arrivalbench.core.grading import Point, grade, plan
from arrivalbench.core.task import TaskSpec, load_spec
from arrivalbench.study.executors.local import WORKER_DATA
from conftest import TINY_GOLD

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:inspect_ai.*")

HOSTILE = Path(__file__).resolve().parent / "hostile" / "duckdb"
GRADER_BOUND = 1024 * 1024 * 1024  # what Inspect's own process may reach

WRONG_COUNT = TINY_GOLD.replace("COUNT(*) AS orders", "COUNT(amount) AS orders")
PK_CLASH = """\
CREATE TABLE shop_revenue (shop VARCHAR PRIMARY KEY, revenue DECIMAL(12,2), orders BIGINT);
INSERT INTO shop_revenue SELECT shop, amount, 1 FROM incoming.orders;
"""


def test_the_workers_give_the_bytes_of_in_process_grading(tiny: TaskSpec) -> None:
    points = plan(tiny, 2)
    for script in (TINY_GOLD, WRONG_COUNT, PK_CLASH, "SELEC 1;\n"):
        here = [(g.verdict.json(), g.nondeterministic)
                for g in grade(tiny, script, points)]
        there = [(v.json(), found) for v, found in
                 inspect_task.graded_in_workers(tiny, script, points, "duckdb", 2)]
        assert there == here


# -- the budget of workers ---------------------------------------------------------------------


def test_concurrent_calls_share_one_budget_of_workers(
        monkeypatch: pytest.MonkeyPatch, tiny: TaskSpec) -> None:
    """Two snapshot tests run side by side (one worker each); a plan started meanwhile waits
    for a free worker; alone, a plan takes the whole budget; the workers alive never pass it."""
    monkeypatch.setattr(inspect_task, "WORKER_BUDGET", 2)
    lock = threading.Lock()
    alive = {"now": 0, "most": 0}
    both = threading.Event()  # both snapshot tests hold a worker at once
    calls: list[tuple[int, int]] = []  # (points, workers), in the order they got workers

    def fake(_spec: TaskSpec, _script: str, points: list[Point], _engine: str,
             workers: int) -> list[Any]:
        with lock:
            alive["now"] += workers
            alive["most"] = max(alive["most"], alive["now"])
            calls.append((len(points), workers))
            if alive["now"] == 2 and len(points) == 1:
                both.set()
        if len(points) == 1:
            assert both.wait(timeout=120), "the second snapshot test never got a worker"
        with lock:
            alive["now"] -= workers
        return [(None, None)] * len(points)

    monkeypatch.setattr(inspect_task, "graded_in_workers", fake)
    snapshot, full = [Point("snapshot", 0)], plan(tiny, 3)

    async def main() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(inspect_task.in_workers, tiny, "x", snapshot, "duckdb")
            group.start_soon(inspect_task.in_workers, tiny, "x", snapshot, "duckdb")
            await anyio.wait_all_tasks_blocked()  # both hold their worker now
            group.start_soon(inspect_task.in_workers, tiny, "x", full, "duckdb")
        await inspect_task.in_workers(tiny, "x", full, "duckdb")

    anyio.run(main)
    assert calls[:2] == [(1, 1), (1, 1)]
    assert calls[2][0] == len(full) and calls[2][1] in (1, 2)  # what was free when it woke
    assert calls[3] == (len(full), 2)
    assert alive["most"] == 2 and alive["now"] == 0


# -- a value the engine does not bound ---------------------------------------------------------

# Inspect's process, whose own peak is read at the end: VmHWM is this process's high-water
# mark (ru_maxrss would carry across exec the peak of the test process that started it).
EVAL = """
import json, sys
from pathlib import Path
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage
from arrivalbench.agent.inspect_task import arrivalbench

script = Path(sys.argv[1]).read_text()

def reply(*_args):
    output = ModelOutput.from_content("mockllm/model", f"```sql\\n{script}```\\n")
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return output

[log] = inspect_eval(arrivalbench(tasks=sys.argv[2], seeds=1, max_turns=1),
                     model="mockllm/model", model_args={"custom_outputs": reply},
                     log_dir=sys.argv[3], display="none")
[sample] = log.samples
score = sample.scores["verdicts"]
with open("/proc/self/status") as status:
    peak = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))
print(json.dumps({"status": log.status, "turns": sample.store["arrivalbench:turns"],
                  "verdicts": score.metadata["verdicts"], "explanation": score.explanation,
                  "peak": peak}))
"""


def test_a_huge_value_is_a_memory_error_in_a_worker_not_in_inspects_process(
        tmp_path: Path) -> None:
    """The hostile probe allocates a 2 GB string outside DuckDB's buffer manager. Replayed in
    Inspect's process it took that process to 4.2 GB (and every replay to its timeout); in the
    workers each replay is an ERROR with phase memory and Inspect's process stays small."""
    probe = HOSTILE / "memory_big_string.sql"
    assert probe.read_text().startswith("-- expect: ERROR memory")
    done = subprocess.run([sys.executable, "-c", EVAL, str(probe), "ad_clicks_clean",
                           str(tmp_path / "logs")], capture_output=True, text=True,
                          timeout=600, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["status"] == "success"
    [turn] = got["turns"]
    assert (turn["snapshot_verdict"], turn["snapshot_detail"]["phase"]) == ("ERROR", "memory")
    spec = load_spec("ad_clicks_clean")
    kinds = {p.schedule for p in plan(spec, 1)}
    assert got["verdicts"] == {kind: ["ERROR"] for kind in kinds}
    # the explanation gives each schedule's first failure: all of them memory errors
    assert got["explanation"].count("memory error at batch 0") == len(kinds)
    assert got["peak"] < GRADER_BOUND < WORKER_DATA, got["peak"]
