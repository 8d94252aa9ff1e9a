"""`arrivalbench generate`: a model arm through Inspect AI, stored and graded like any arm.

The arm is `<model>:<variant>`. Each sample (task, replicate) is one conversation of the snapshot
repair loop (`inspect_task`), run by `inspect_ai.eval` with Inspect's providers, retries and
concurrency. For each sample the results file gets:

- the final script as an artifact, with its idiom signature;
- the cell (arm, task, replicate) pointing at it, or with no artifact and a reason when the
  sample ended with no script: `no_sql`, `token_cap`, `provider_error` (or `limit`,
  `harness_error`);
- every turn (its script, snapshot verdict and the feedback sent), and the transcript with the
  token counts.

Then `grid.grade_arms` grades the new cells on every schedule. A cell already stored for the
current version of its task is not generated again (except after a provider or harness error),
so the same command resumes, and a larger `--replicates` adds replicates.

Inspect's logs go to a folder next to the results file, `<results stem>.inspect-logs/`, which
holds a `.gitignore` of its own so that it never lands in a repository.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arrivalbench.agent.extract import Problem
from arrivalbench.agent.samples import (
    ERROR,
    FINAL,
    REASON,
    TURNS,
    first_pass_turn,
    sample_id,
    task_refs,
)
from arrivalbench.engine import DEFAULT_ENGINE, EngineName, check_engine
from arrivalbench.errors import ArrivalBenchError, missing_extra
from arrivalbench.grading import DEFAULT_SEEDS, check_seeds
from arrivalbench.prompts import DEFAULT_VARIANT, MAX_TURNS, VARIANTS, build
from arrivalbench.store import Cell, Store, Turn
from arrivalbench.task import TaskSpec, load_specs, source_of
from arrivalbench.values import JSON
from arrivalbench.words import count

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample
    from inspect_ai.util import DisplayType

DEFAULT_MAX_TOKENS = 8000
CHARS_PER_TOKEN = 4  # the dry run's estimate; no tokenizer is downloaded
FEEDBACK_TOKENS = 400  # a generous size of one feedback message
DONE_REASONS: tuple[Problem, ...] = ("no_sql", "token_cap")  # final: not generated again


@dataclass(frozen=True)
class Request:
    model: str
    variant: str = DEFAULT_VARIANT
    replicates: int = 1
    tasks: tuple[str, ...] = ()  # built-in ids or task folders; empty: every built-in task
    results: Path = Path("results") / "arrivalbench.duckdb"
    max_tokens: int = DEFAULT_MAX_TOKENS
    base_url: str | None = None
    max_turns: int = MAX_TURNS
    seeds: int = DEFAULT_SEEDS
    workers: int | None = None
    max_connections: int | None = None
    max_retries: int | None = None  # Inspect's default: retry until its own timeout
    model_args: dict[str, Any] = field(default_factory=dict)  # Inspect's -M KEY=VALUE
    engine: EngineName = DEFAULT_ENGINE  # the prompt names it; scripts are tested and graded there

    @property
    def arm(self) -> str:
        """`<model>:<variant>`, and on another engine `<model>:<variant>@<engine>`: its prompt
        differs, and its turns and transcripts must not replace the DuckDB arm's."""
        suffix = "" if self.engine == DEFAULT_ENGINE else f"@{self.engine}"
        return f"{self.model}:{self.variant}{suffix}"

    @property
    def log_dir(self) -> Path:
        return self.results.parent / f"{self.results.stem}.inspect-logs"


@dataclass(frozen=True)
class Plan:
    request: Request
    specs: tuple[TaskSpec, ...]
    todo: tuple[tuple[TaskSpec, int], ...]  # (task, replicate) to generate
    stored: int  # samples already in the results file

    @property
    def calls(self) -> int:
        """The most model calls the run can make."""
        return len(self.todo) * self.request.max_turns

    def tokens(self) -> tuple[int, int, int]:
        """(input tokens of the first turns, input tokens at most, output tokens at most),
        estimated at ~4 characters a token."""
        first = most = 0
        cap, turns = self.request.max_tokens, self.request.max_turns
        for spec, _replicate in self.todo:
            prompt = math.ceil(len(build(spec, self.request.variant, turns,
                                         self.request.engine)) / CHARS_PER_TOKEN)
            first += prompt
            most += sum(prompt + k * (cap + FEEDBACK_TOKENS) for k in range(turns))
        return first, most, len(self.todo) * turns * cap

    def describe(self) -> str:
        r = self.request
        first, most, output = self.tokens()
        lines = [
            f"arm {r.arm}: {count(len(self.specs), 'task')} x "
            f"{count(r.replicates, 'replicate')}",
            f"samples to generate: {len(self.todo)}"
            + (f" ({self.stored} already in {r.results})" if self.stored else ""),
            f"model calls: at most {self.calls} ({r.max_turns} turns a sample)",
            f"input tokens: ~{first:,} for the first turns, at most ~{most:,} if every turn runs "
            f"with replies at the cap",
            f"output tokens: at most {output:,} ({r.max_tokens:,} a call)",
            f"results: {r.results}",
            f"inspect logs: {r.log_dir}",
        ]
        return "\n".join(lines)


@dataclass(frozen=True)
class Outcome:
    """What one run generated and stored."""

    plan: Plan
    stored: int  # samples stored by this run
    scripts: int
    first_turn_pass: int
    repaired_pass: int
    reasons: dict[str, int] = field(default_factory=dict)  # cells without a script, by reason
    input_tokens: int = 0
    output_tokens: int = 0
    logs: tuple[str, ...] = ()
    grading: Any = None  # grid.Summary, when graded

    def describe(self) -> str:
        lines = [f"generated {count(self.stored, 'sample')} of arm {self.plan.request.arm}: "
                 f"{self.scripts} with a script ({self.first_turn_pass} passed the snapshot "
                 f"test on the first turn, {self.repaired_pass} after feedback)"]
        if self.reasons:
            lines.append("no script: " + ", ".join(f"{n} {reason}" for reason, n in
                                                   sorted(self.reasons.items())))
        lines.append(f"tokens: {self.input_tokens:,} in, {self.output_tokens:,} out")
        lines += [f"inspect log: {log}" for log in self.logs]
        return "\n".join(lines)


# -- planning -----------------------------------------------------------------------------------


def check(request: Request) -> None:
    check_engine(request.engine)
    if "/" not in request.model:
        raise ArrivalBenchError(f"model {request.model}: give PROVIDER/MODEL as Inspect AI "
                                "names it, e.g. openai/gpt-4o, anthropic/claude-sonnet-4-0, "
                                "mockllm/model")
    if request.variant not in VARIANTS:
        raise ArrivalBenchError(f"prompt variant {request.variant!r}: unknown; allowed: "
                                f"{', '.join(VARIANTS)}")
    for name, value in (("replicates", request.replicates), ("max tokens",
                        request.max_tokens)):
        if value < 1:
            raise ArrivalBenchError(f"{name} {value}: give a whole number of at least 1")
    check_seeds(request.seeds)


def is_done(cell: Cell, spec: TaskSpec) -> bool:
    """A stored cell that need not be generated again."""
    return cell.task_digest == spec.digest and (cell.artifact is not None or
                                                cell.reason in DONE_REASONS)


def make_plan(request: Request) -> Plan:
    """What a run would generate. Reads the results file if it exists; writes nothing."""
    check(request)
    specs = load_specs(task_refs(list(request.tasks)))
    stored: dict[tuple[str, int], Cell] = {}
    if request.results.is_file():
        with Store(request.results, read_only=True) as store:
            stored = {(c.task, c.replicate): c for c in store.cells([request.arm],
                                                                     request.engine)}
    todo, done = [], 0
    for spec in specs:
        for replicate in range(request.replicates):
            cell = stored.get((spec.id, replicate))
            if cell is not None and is_done(cell, spec):
                done += 1
            else:
                todo.append((spec, replicate))
    return Plan(request, tuple(specs), tuple(todo), done)


# -- running ------------------------------------------------------------------------------------


def _log_dir(request: Request) -> Path:
    folder = request.log_dir
    folder.mkdir(parents=True, exist_ok=True)
    ignore = folder / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# Inspect AI logs of arrivalbench generate: not for version control\n"
                          "*\n", encoding="utf-8")
    return folder


def _first_line(exc: BaseException) -> str:
    """The first line of an Inspect error, without its console markup."""
    text = re.sub(r"\[/?[a-z ]+\]", "", str(exc)).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def run(request: Request, *, model_args: dict[str, Any] | None = None,
        display: DisplayType | None = None, grade: bool = True, progress: bool = True) -> Outcome:
    """Generate the missing samples of `request`, store them, then grade the arm's cells."""
    try:
        import inspect_ai
    except ImportError:
        raise missing_extra("generate", "agent", "inspect-ai") from None
    from inspect_ai._util.error import PrerequisiteError

    from arrivalbench.agent.inspect_task import arrivalbench, mock_outputs

    plan = make_plan(request)
    model_args = {**request.model_args, **(model_args or {})}
    if request.model.startswith("mockllm/") and "custom_outputs" not in model_args:
        model_args["custom_outputs"] = mock_outputs()
    if request.base_url and request.model.startswith("openai/"):
        # An OpenAI-compatible server (vLLM, llama.cpp, Ollama, a gateway) speaks the chat
        # completions API; Inspect would send an unknown model name to the Responses API.
        model_args.setdefault("responses_api", False)
    logs: list[EvalLog] = []
    if plan.todo:
        wanted = {spec.id for spec, _ in plan.todo}
        task = arrivalbench(tasks=[source_of(spec) for spec in plan.specs if spec.id in wanted],
                            variant=request.variant, seeds=request.seeds,
                            max_turns=request.max_turns, replicates=request.replicates,
                            engine=request.engine)
        options: dict[str, Any] = {}
        if request.max_connections is not None:
            options["max_connections"] = request.max_connections
        if request.max_retries is not None:
            options["max_retries"] = request.max_retries
        try:
            logs = inspect_ai.eval(
                task, model=request.model, model_base_url=request.base_url,
                model_args=model_args, log_dir=str(_log_dir(request)),
                sample_id=[sample_id(spec.id, r) for spec, r in plan.todo],
                max_tokens=request.max_tokens, score=False, fail_on_error=False,
                display=display, tags=["arrivalbench", request.variant],
                metadata={"arm": request.arm, "results": str(request.results)}, **options)
        except (PrerequisiteError, ValueError) as exc:
            # What Inspect raises for a model it cannot set up: a missing API key or provider
            # package (PrerequisiteError), a provider it does not know (ValueError). Anything
            # else is not a problem with the model's name and keeps its traceback.
            raise ArrivalBenchError(f"model {request.model}: {_first_line(exc)}") from None
    outcome = store(plan, logs)
    for log in logs:
        if log.status in ("error", "cancelled"):
            why = log.error.message.strip().splitlines()[0] if log.error else log.status
            raise ArrivalBenchError(f"the Inspect run ended {log.status} ({why}); samples it "
                                    f"finished and stored: {outcome.stored}; run the same "
                                    f"command again to resume (log: {log.location})")
    if grade and (outcome.stored or plan.stored):
        from arrivalbench import grid

        summary = grid.grade_arms(request.results, [request.arm],
                                  tasks=[source_of(spec) for spec in plan.specs],
                                  seeds=request.seeds, workers=request.workers,
                                  progress=progress, engine=request.engine)
        outcome = dataclasses.replace(outcome, grading=summary)
    return outcome


# -- storing ------------------------------------------------------------------------------------


def _tokens(sample: EvalSample) -> tuple[int | None, int | None]:
    usage = list((sample.model_usage or {}).values())
    if not usage:
        return None, None
    given = sum(u.input_tokens + (u.input_tokens_cache_read or 0) +
                (u.input_tokens_cache_write or 0) for u in usage)
    return given, sum(u.output_tokens for u in usage)


def _transcript(sample: EvalSample, turns: list[dict[str, JSON]]) -> dict[str, JSON]:
    return {
        "messages": [{"role": m.role, "content": m.text} for m in sample.messages],
        "turns": [{k: v for k, v in t.items() if k not in ("sql", "feedback")} for t in turns],
        "model": sample.output.model if sample.output else None,
        "error": sample.error.message if sample.error else None,
    }


def store(plan: Plan, logs: Sequence[EvalLog]) -> Outcome:
    """Write every sample of `logs` to the results file."""
    reasons: Counter[str] = Counter()
    specs = {spec.id: spec for spec in plan.specs}
    stored = scripts = first = repaired = tokens_in = tokens_out = 0
    with Store(plan.request.results) as results:
        for spec in plan.specs:
            results.add_task(spec, source_of(spec))
        for log in logs:
            for sample in log.samples or []:
                kept = _store_sample(results, plan.request, specs[sample.metadata["task"]],
                                     log, sample)
                stored += 1
                if kept.artifact is not None:
                    scripts += 1
                    first += kept.passed == 1
                    repaired += kept.passed is not None and kept.passed > 1
                else:
                    reasons[kept.reason or "no_sql"] += 1
                tokens_in += kept.tokens_in or 0
                tokens_out += kept.tokens_out or 0
    return Outcome(plan, stored, scripts, first, repaired, dict(reasons), tokens_in, tokens_out,
                   tuple(log.location for log in logs))


@dataclass(frozen=True)
class _Kept:
    """What `store` tallies of one stored sample."""

    artifact: str | None
    reason: str | None
    passed: int | None  # the turn that passed the snapshot test
    tokens_in: int | None
    tokens_out: int | None


def _store_sample(results: Store, request: Request, spec: TaskSpec, log: EvalLog,
                  sample: EvalSample) -> _Kept:
    """One sample's script (if any), turns, transcript and cell."""
    from arrivalbench.idioms import signature

    replicate = int(sample.metadata["replicate"])
    turns: list[dict[str, JSON]] = list(sample.store.get(TURNS) or [])
    final = sample.store.get(FINAL)
    reason = sample.store.get(REASON)
    error = sample.store.get(ERROR) or (sample.error.message.splitlines()[0][:500]
                                        if sample.error else None)
    if sample.error is not None:
        final, reason = None, reason if reason in ("provider_error", "limit") \
            else "harness_error"
    artifact = None
    if final is not None:
        artifact = results.add_artifact(final, signature(final, spec))
    else:
        reason = reason or "no_sql"
    given, produced = _tokens(sample)
    results.add_turns(request.arm, spec.id, replicate, [
        Turn(int(t["turn"]), t.get("sql"), t.get("snapshot_verdict"),
             t.get("feedback")) for t in turns])
    results.add_transcript(request.arm, spec.id, replicate, len(turns), given,
                           produced, _transcript(sample, turns))
    provenance = _provenance(request, log, sample, turns, error if artifact is None else None)
    results.add_cell(Cell(request.arm, spec.id, spec.digest, replicate, artifact,
                          None if artifact else reason, provenance, request.engine))
    return _Kept(artifact, reason, first_pass_turn(turns) if artifact else None, given,
                 produced)


def _provenance(request: Request, log: EvalLog, sample: EvalSample,
                turns: Sequence[dict[str, JSON]], error: str | None) -> dict[str, JSON]:
    """Where a model arm's cell came from: the request, the conversation, the Inspect log."""
    return {
        "model": request.model, "variant": request.variant,
        "base_url": request.base_url, "max_tokens": request.max_tokens,
        "max_turns": request.max_turns, "prompt_digest": sample.metadata.get("prompt_digest"),
        "turns": len(turns), "first_pass_turn": first_pass_turn(turns),
        "final_turn": max((int(t["turn"]) for t in turns if t.get("sql")),
                          default=None),
        "model_reported": sample.output.model if sample.output else None,
        "inspect_log": log.location, "inspect_sample": str(sample.id),
        "error": error, **({} if request.engine == DEFAULT_ENGINE else
                           {"engine": request.engine})}


def parse_model_args(pairs: Sequence[str]) -> dict[str, Any]:
    """`KEY=VALUE` pairs as Inspect's `-M` reads them: values as YAML scalars (true, 3, 0.5)."""
    import yaml

    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ArrivalBenchError(f"-M {pair}: give KEY=VALUE, e.g. -M responses_api=true")
        try:
            out[key.strip()] = yaml.safe_load(value) if value.strip() else ""
        except yaml.YAMLError:
            out[key.strip()] = value
    return out
