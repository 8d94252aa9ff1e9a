"""Model arms as an Inspect AI task.

    inspect eval arrivalbench/arrivalbench --model openai/gpt-4o -T tasks=store_daily_revenue
    inspect eval src/arrivalbench/agent/inspect_task.py@arrivalbench --model ... --epochs 5

Samples are the tasks (one per task, or one per task and replicate), the input is the prompt of
the chosen variant. The solver is the snapshot repair loop: extract the script from the reply,
run it on `snapshot`, feed back the execution error or the typed diff (never a hazard word), stop
on a pass or after `max_turns`. The scorer grades the final script on every schedule of the
task's plan, so the log shows the snapshot and the temporal verdicts side by side.

The turns live in the sample's store (`arrivalbench:turns`, `arrivalbench:final`,
`arrivalbench:reason`), which Inspect writes to the log; `arrivalbench generate` reads them
from there.

Model-written SQL never runs in this process. The snapshot test and the scorer replay the
script in worker processes whose data is bounded (`study.isolated`, over the local executor, as
`grade` does): a huge value the engine does not bound is an ERROR with phase `memory` there,
and Inspect's process stays small.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

import anyio
from anyio.lowlevel import RunVar
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageUser, Model, get_model

# Private (inspect-ai is pinned; tests/test_agent.py fails when its shape changes): the public
# get_model() falls back to INSPECT_EVAL_MODEL outside an eval, which would pin that model on a
# task built by hand.
from inspect_ai.model._model import active_model
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import LimitExceededError

from arrivalbench import words
from arrivalbench.agent import feedback
from arrivalbench.agent.extract import extract, statements
from arrivalbench.agent.samples import (
    ERROR,
    FINAL,
    REASON,
    TURNS,
    first_pass_turn,
    sample_id,
    task_refs,
)
from arrivalbench.core.artifacts import script_ref
from arrivalbench.core.engine import DEFAULT_ENGINE, EngineName, check_engine
from arrivalbench.core.grading import DEFAULT_SEEDS, GradeOptions, Point, artifact_digest, plan
from arrivalbench.core.task import TaskSpec, load_spec, load_specs, source_of
from arrivalbench.core.values import JSON, digest
from arrivalbench.core.verdict import STATUSES, Verdict
from arrivalbench.corpus.prompts import DEFAULT_VARIANT, MAX_TURNS, VARIANTS, build
from arrivalbench.errors import ArrivalBenchError
from arrivalbench.sql.idioms import signature
from arrivalbench.study.cells import classify
from arrivalbench.study.executors import Result
from arrivalbench.study.isolated import grade_points

# -- grading in worker processes ---------------------------------------------------------------

# A point's verdict and, on `snapshot`, what a second replay changed (None: nothing).
Graded: TypeAlias = tuple[Verdict, dict[str, JSON] | None]

# Each call grades in worker processes of its own, started and stopped by the thread that waits
# on them: a worker dies with the thread that started it (PR_SET_PDEATHSIG), so a pool must not
# outlive its thread, and starting one costs about a second against a model's turn. Samples run
# concurrently: every call draws its workers from this one budget per eval (per event loop), so
# that however many samples run at once, no more than one worker per core is alive.
WORKER_BUDGET = os.cpu_count() or 1
_budget: RunVar[anyio.Semaphore] = RunVar("arrivalbench_worker_budget")


def graded_in_workers(spec: TaskSpec, script: str, points: Sequence[Point],
                      engine: EngineName, workers: int) -> list[Graded]:
    """`script` graded at each point, in the order of `points`, by `workers` worker processes
    started for this call, whose data is bounded (`study.isolated`): the verdicts
    `core.grading.grade` gives in one process, byte for byte (so a snapshot test, too,
    replays `snapshot` a second time for the nondeterminism check)."""
    found: dict[int, Graded] = {}

    def on_graded(index: int, result: Result, nondeterministic: dict[str, JSON] | None) -> None:
        found[index] = (result.verdict, nondeterministic)

    grade_points(spec, script_ref(script), points, options=GradeOptions(engine),
                 on_graded=on_graded, workers=workers)
    return [found[i] for i in range(len(points))]


async def in_workers(spec: TaskSpec, script: str, points: Sequence[Point],
                     engine: EngineName) -> list[Graded]:
    """`graded_in_workers` on a thread that waits on the workers, so that the event loop keeps
    serving the other samples' model calls meanwhile, with as many workers as the budget has
    free (at least one: a call waits for one, then takes more while they are free)."""
    try:
        budget = _budget.get()
    except LookupError:
        budget = anyio.Semaphore(WORKER_BUDGET)
        _budget.set(budget)
    await budget.acquire()
    taken = 1
    try:
        while taken < min(len(points), WORKER_BUDGET):
            try:
                budget.acquire_nowait()
            except anyio.WouldBlock:
                break
            taken += 1
        return await anyio.to_thread.run_sync(graded_in_workers, spec, script, points, engine,
                                              taken)
    finally:
        for _ in range(taken):
            budget.release()


# -- samples -----------------------------------------------------------------------------------


def samples(specs: Sequence[TaskSpec], variant: str = DEFAULT_VARIANT,
            replicates: int | None = None, max_turns: int = MAX_TURNS,
            engine: EngineName = DEFAULT_ENGINE) -> list[Sample]:
    """One sample per task, or with `replicates`, one per (task, replicate 0..N-1), with the
    prompt for `engine` (whose scripts are tested and graded there). DuckDB's samples carry
    no `engine` key, so their metadata is what it always was."""
    out = []
    for spec in specs:
        prompt = build(spec, variant, max_turns, engine)
        metadata: dict[str, Any] = {
            "task": spec.id, "task_source": source_of(spec), "task_digest": spec.digest,
            "variant": variant, "prompt_digest": digest(prompt), "hazards": list(spec.hazards)}
        if engine != DEFAULT_ENGINE:
            metadata["engine"] = engine
        for replicate in [None] if replicates is None else range(replicates):
            out.append(Sample(id=sample_id(spec.id, replicate), input=prompt,
                              metadata={**metadata, "replicate": replicate}))
    return out


# -- the repair loop ----------------------------------------------------------------------------


def sample_engine(metadata: dict[str, Any]) -> EngineName:
    return check_engine(str(metadata.get("engine", DEFAULT_ENGINE)))


@solver
def repair_loop(max_turns: int = MAX_TURNS) -> Solver:
    """Ask, extract the script, run the snapshot test, feed back; stop on a pass or after
    `max_turns` replies. The final script is the last one the model sent."""
    if max_turns < 1:
        raise ArrivalBenchError(f"max_turns {max_turns}: give at least 1")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        spec = load_spec(state.metadata["task_source"])
        turns: list[dict[str, JSON]] = []
        state.store.set(TURNS, turns)
        state.store.set(FINAL, None)
        state.store.set(REASON, None)
        for number in range(1, max_turns + 1):
            try:
                state = await generate(state)
            except LimitExceededError:
                state.store.set(REASON, state.store.get(REASON) or "limit")
                raise
            except Exception as exc:  # the provider failed after Inspect's own retries
                state.store.set(REASON, "provider_error")
                state.store.set(ERROR, describe_error(exc))
                raise
            output = state.output
            truncated = output.stop_reason in ("max_tokens", "model_length")
            got = extract(output.completion, truncated)
            record: dict[str, JSON] = {
                "turn": number, "sql": got.script, "blocks": got.blocks,
                "stop_reason": output.stop_reason, "problem": got.problem,
                "snapshot_verdict": None, "snapshot_detail": None, "feedback": None}
            if got.script is None:
                assert got.problem is not None
                record["feedback"] = feedback.no_script(got.problem)
                if state.store.get(FINAL) is None:
                    state.store.set(REASON, got.problem)
            else:
                script = got.script
                [(verdict, _)] = await in_workers(spec, script, [Point("snapshot", 0)],
                                                  sample_engine(state.metadata))
                record["snapshot_verdict"] = verdict.status
                record["snapshot_detail"] = verdict.detail
                record["feedback"] = feedback.snapshot(spec, verdict, statements(script))
                state.store.set(FINAL, script)
                state.store.set(REASON, None)
            turns.append(record)
            state.store.set(TURNS, turns)
            if record["snapshot_verdict"] == "PASS":
                break
            if number < max_turns:
                state.messages.append(ChatMessageUser(content=str(record["feedback"])))
        return state

    return solve


def describe_error(exc: BaseException) -> str:
    """One line: the error the provider's last attempt raised (not the retry wrapper)."""
    last = getattr(exc, "last_attempt", None)  # tenacity.RetryError
    inner = last.exception() if last is not None and hasattr(last, "exception") else None
    if isinstance(inner, BaseException):
        exc = inner
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}"[:500] if text else type(exc).__name__


# -- the scorer ---------------------------------------------------------------------------------


def _flags(verdicts: Sequence[Verdict], hazards: Sequence[str]) -> dict[str, float]:
    by_kind: dict[str, list[str]] = {}
    for v in verdicts:
        by_kind.setdefault(v.schedule, []).append(v.status)
    kind = classify(by_kind, hazards)
    return {
        "snapshot": float(kind.snapshot_pass),
        "controls": float(kind.controls_pass),
        "all_pass": float(all(v.status == "PASS" for v in verdicts)),
        "silent": float(kind.silent),
        "crash": float(kind.crash),
    }


def explain(verdicts: Sequence[Verdict]) -> str:
    """One line per schedule, then the first failure of each schedule explained."""
    by_kind: dict[str, list[Verdict]] = {}
    for v in verdicts:
        by_kind.setdefault(v.schedule, []).append(v)
    lines = []
    for kind, group in by_kind.items():
        tally = Counter(v.status for v in group)
        text = ", ".join(f"{tally[k]} {k}" for k in STATUSES if tally[k])
        lines.append(f"{kind}: {text}")
    for kind, group in by_kind.items():
        bad = next((v for v in group if v.status != "PASS"), None)
        if bad is not None:
            lines.append(f"\n{kind}, seed {bad.seed}: {bad.status}\n{words.terminal(bad)}")
    return "\n".join(lines)


@scorer(metrics={key: [mean(), stderr()] for key in
                 ("snapshot", "controls", "all_pass", "silent", "crash")})
def verdicts(seeds: int = DEFAULT_SEEDS) -> Scorer:
    """Grades the final script on `snapshot`, both controls and every declared hazard, seeds
    0..seeds-1. Value: 1/0 flags (snapshot pass, controls pass, every verdict a pass, and for a
    snapshot-passing script some hazard FAIL = silent, some hazard ERROR = crash, as
    `arrivalbench.study.cells.classify` defines them); metadata: every verdict."""

    async def score(state: TaskState, target: Target) -> Score:
        spec = load_spec(state.metadata["task_source"])
        turns = state.store.get(TURNS) or []
        script = state.store.get(FINAL)
        common = {"turns": len(turns), "first_pass_turn": first_pass_turn(turns),
                  "variant": state.metadata.get("variant")}
        if script is None:
            reason = state.store.get(REASON) or "no_sql"
            return Score(value=dict.fromkeys(("snapshot", "controls", "all_pass", "silent",
                                              "crash"), 0.0),
                         answer=None, explanation=f"no script: {reason}",
                         metadata={**common, "reason": reason})
        points = plan(spec, seeds)
        full = await in_workers(spec, script, points, sample_engine(state.metadata))
        graded = [verdict for verdict, _ in full]
        differing = next((found for _, found in full if found), None)
        by_kind: dict[str, list[str]] = {}
        for v in graded:
            by_kind.setdefault(v.schedule, []).append(v.status)
        return Score(
            value=_flags(graded, spec.hazards),
            answer=script,
            explanation=explain(graded) + ("" if differing is None else
                                           "\n\n" + words.NONDETERMINISTIC),
            metadata={**common, "artifact": artifact_digest(script),
                      "idioms": signature(script, spec), "snapshot": by_kind["snapshot"][0],
                      "verdicts": by_kind, "nondeterministic": differing})

    return score


# -- the task -----------------------------------------------------------------------------------


@task
def arrivalbench(tasks: str | list[str] | None = None, variant: str = DEFAULT_VARIANT,
                 seeds: int = DEFAULT_SEEDS, max_turns: int = MAX_TURNS,
                 replicates: int | None = None, engine: str = DEFAULT_ENGINE) -> Task:
    """ArrivalBench model arm.

    Args:
      tasks: built-in task ids or task folders (a list, or one comma-separated string);
        default every built-in task.
      variant: prompt variant: unhinted (default), hazard_hint or architecture.
      seeds: seeds 0..seeds-1 of every schedule the scorer grades.
      max_turns: replies of the snapshot repair loop.
      replicates: one sample per task and replicate 0..N-1 (ids `<task>/<n>`) instead of one
        per task (then use --epochs for replicates).
      engine: duckdb (default) or postgres: the prompt names it, and the snapshot test and
        the scorer run the scripts on it.
    """
    chosen = check_engine(engine)
    if variant not in VARIANTS:
        raise ArrivalBenchError(f"unknown prompt variant {variant!r}; allowed: "
                                f"{', '.join(VARIANTS)}")
    specs = load_specs(task_refs(tasks))
    return Task(
        dataset=MemoryDataset(samples(specs, variant, replicates, max_turns, chosen),
                              name=f"arrivalbench-{variant}"),
        solver=repair_loop(max_turns),
        scorer=verdicts(seeds),
        metadata={"variant": variant, "max_turns": max_turns, "seeds": seeds,
                  **({} if chosen == DEFAULT_ENGINE else {"engine": chosen})},
        model=offline_mock(),
    )


# -- offline trials ------------------------------------------------------------------------------


def mock_outputs() -> Callable[..., Any]:
    """mockllm's default reply, with a usage record: without one Inspect counts tokens with the
    o200k_base tiktoken encoding, which it downloads, and an offline machine has none."""
    from inspect_ai.model import ModelOutput, ModelUsage

    def reply(*_args: Any) -> ModelOutput:
        output = ModelOutput.from_content("mockllm/model", "Default output from mockllm/model")
        output.usage = ModelUsage(input_tokens=0, output_tokens=0, total_tokens=0)
        return output

    return reply


def offline_mock() -> Model | None:
    """For `inspect eval arrivalbench/arrivalbench --model mockllm/model`: the same mock with
    replies that carry their usage, so that a trial needs no network. None (the eval's own
    model) for any other model, or a mock given its own outputs."""
    active = active_model()  # set by inspect eval before it calls the task function
    if active is None or not str(active).startswith("mockllm/") or \
            "custom_outputs" in active.model_args:
        return None
    return get_model(str(active), config=active.config, memoize=False,
                     custom_outputs=mock_outputs(), **active.model_args)
