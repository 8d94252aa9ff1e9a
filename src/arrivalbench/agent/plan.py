"""What a `generate` run would do: the (task, replicate) samples the results file lacks for the
arm, and the most model calls and tokens they can cost. Reads the results file; writes
nothing."""

from __future__ import annotations

import math
from dataclasses import dataclass

from arrivalbench.agent.extract import Problem
from arrivalbench.agent.request import Request, check
from arrivalbench.agent.samples import task_refs
from arrivalbench.core.task import TaskSpec, load_specs
from arrivalbench.corpus.prompts import build
from arrivalbench.study.store import Cell, Store
from arrivalbench.words import count

CHARS_PER_TOKEN = 4  # the dry run's estimate; no tokenizer is downloaded
FEEDBACK_TOKENS = 400  # a generous size of one feedback message
DONE_REASONS: tuple[Problem, ...] = ("no_sql", "token_cap")  # final: not generated again


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
