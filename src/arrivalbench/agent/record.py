"""Storing what `generate` made: each sample of the Inspect logs becomes, in the results file,
its final script as an artifact (with its idiom signature), its cell, its turns and its
transcript; the run's tally is an `Outcome`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from arrivalbench.agent.plan import Plan
from arrivalbench.agent.request import Request
from arrivalbench.agent.samples import ERROR, FINAL, REASON, TURNS, first_pass_turn
from arrivalbench.core.artifacts import script_ref
from arrivalbench.core.engine import DEFAULT_ENGINE
from arrivalbench.core.task import TaskSpec, source_of
from arrivalbench.core.values import JSON
from arrivalbench.study.store import Cell, Store, Turn
from arrivalbench.words import count

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample


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
    from arrivalbench.sql.idioms import signature

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
        artifact = results.add_artifact(script_ref(final), signature(final, spec))
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
