"""Reading a results file for a report: through a read-only `Store`, into plain rows.

A wrong path must be an error, not a new empty results file: the store is opened read-only,
which neither creates a file nor changes one. What a file holds and how it is migrated is the
store's; this module only picks the rows a report reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from arrivalbench.core.engine import DEFAULT_ENGINE
from arrivalbench.core.engine.cost import Cost
from arrivalbench.core.task import DEFAULT_TIER, TIERS, Budget, TierChoice
from arrivalbench.corpus.budget import within
from arrivalbench.errors import ArrivalBenchError, ParameterError, UnknownName
from arrivalbench.study.store import Store


@dataclass(frozen=True)
class CellRow:
    """One (arm, task, replicate); `artifact` is None when the arm produced no script."""

    arm: str
    task: str
    task_digest: str
    replicate: int
    artifact: str | None
    reason: str | None = None
    engine: str = DEFAULT_ENGINE  # where its artifact is graded (a gold differs per engine)


@dataclass(frozen=True)
class VerdictRow:
    """One stored replay verdict, keyed like the `verdicts` table."""

    task_digest: str
    artifact: str
    schedule: str
    seed: int
    verdict: str
    engine_version: str = "duckdb"
    harness_version: str = "0"
    record: str = ""
    # Whether the replay stayed within its task's read budget; None: its cost was not measured.
    within_budget: bool | None = None
    engine: str = DEFAULT_ENGINE  # the engine the replay ran on
    run_id: int | None = None  # the run that stored it; None: unknown
    every_batch: str | None = None  # the every-batch check's record, when it ran


@dataclass(frozen=True)
class TurnRow:
    """One turn of a model arm's snapshot repair loop (1-based)."""

    arm: str
    task: str
    replicate: int
    turn: int
    snapshot_verdict: str | None


@dataclass(frozen=True)
class Results:
    """Everything a report reads, for the selected arms only."""

    arms: tuple[str, ...]
    cells: tuple[CellRow, ...]
    verdicts: tuple[VerdictRow, ...]
    idioms: dict[str, tuple[str, ...] | None]  # artifact -> sorted tags; None: not analysed
    turns: tuple[TurnRow, ...]


def load(path: Path | str, arms: Sequence[str] = (), compare: Sequence[str] = (),
         tier: TierChoice = "all") -> Results:
    """Read the cells of `arms` (all arms when empty) and of the `compare` arms, and everything
    attached to them, through a read-only `Store`: the report never creates or changes a
    results file.

    Raises ArrivalBenchError, with a one-line message, for a missing or unreadable file, a file
    that is not a results file of a schema version this arrivalbench reads, a results file
    without cells, or an arm that it does not hold. With a `tier`, only the cells of tasks of
    that tier (and their verdicts) are read."""
    path = _file(path)
    with Store(path, read_only=True) as store:
        return _read(store, path, list(arms), list(compare), tier)


def _file(path: Path | str) -> Path:
    path = Path(path)
    if path.is_dir():
        raise ArrivalBenchError(f"{path}: is a folder, not a results file; give a DuckDB "
                                "results file written by arrivalbench run")
    return path


def tiers(path: Path | str) -> list[str]:
    """The tiers of the tasks a results file holds cells of, core first."""
    with Store(_file(path), read_only=True) as store:
        of = store.tiers()
        found = {of.get(c.task_digest, DEFAULT_TIER) for c in store.cells()}
    return [t for t in TIERS if t in found]


def _read(store: Store, path: Path, wanted: list[str], compare: list[str],
          tier: TierChoice) -> Results:
    known = store.arms()
    if not known:
        raise ArrivalBenchError(f"{path}: holds no cells yet; grade some arms into it first "
                                "(arrivalbench run)")
    for parameter, names in (("arms", wanted), ("compare", compare)):
        unknown = [a for a in names if a not in known]
        if unknown:
            raise UnknownName(parameter, unknown[0], known, problem=f"not in {path}")
    if len(compare) == 2 and compare[0] == compare[1]:
        raise ParameterError("compare", " ".join(compare), "the same arm twice; give two "
                             "different arms")
    arms = tuple(sorted(dict.fromkeys([*wanted, *compare]))) if wanted else tuple(known)
    of = store.tiers()

    def chosen(task_digest: str) -> bool:
        return tier == "all" or of.get(task_digest, DEFAULT_TIER) == tier

    cells = tuple(CellRow(c.arm, c.task, c.task_digest, c.replicate, c.artifact, c.reason,
                          c.engine) for c in store.cells(list(arms)) if chosen(c.task_digest))
    if not cells:
        raise ArrivalBenchError(f"{path}: holds no cells of tier {tier} for these arms; tiers "
                                f"there: {', '.join(sorted(set(of.values())))}")
    costs = store.costs()
    budgets = store.budgets()
    verdicts = tuple(
        VerdictRow(v.key.task_digest, v.key.artifact, v.key.schedule, v.key.seed, v.verdict,
                   v.key.engine_version, v.key.harness_version, v.record,
                   _within(costs.get(v.key), budgets.get(v.key.task_digest)), v.engine,
                   v.run_id, v.every_batch)
        for v in store.verdicts(arms) if chosen(v.key.task_digest))
    return Results(arms, cells, verdicts, store.idioms(arms),
                   tuple(TurnRow(*t) for t in store.turns(arms)))


def _within(cost: Cost | None, budget: Budget | None) -> bool | None:
    """Whether a replay stayed within its task's read budget; None when its cost (or the
    task's budget) is unknown."""
    return None if cost is None or budget is None else within(cost, budget)
