"""The task format as values: what a task folder declares, once read and validated.

Frozen dataclasses, so that a spec is hashable (caches key on it) and nothing changes it after
loading. Reading a folder into these values is `core.task.checks`'s; finding the folder is
`core.task.resolution`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from arrivalbench.core.engine import DEFAULT_ENGINE, EngineName
from arrivalbench.errors import TaskError, mention

Mode = Literal["append", "upsert", "aggregate"]
Difficulty = Literal["easy", "medium", "hard"]
Hazard = Literal[
    "late_arrival", "out_of_order", "duplicates", "crash_retry", "backfill", "schema_evolution"
]
HAZARDS: tuple[Hazard, ...] = get_args(Hazard)
DEFAULT_LANDED_AT = "_landed_at"
# How delivered records reach a pipeline's sources (docs/contract.md, Landing): `batch`, each
# source holding exactly the batch; `accumulate`, each batch appended to what landed before.
Landing = Literal["batch", "accumulate"]
LANDINGS: tuple[Landing, ...] = get_args(Landing)
LOG_SUFFIXES = (".jsonl", ".csv", ".parquet")  # the formats of log/<source>.*
MODES: tuple[Mode, ...] = get_args(Mode)
DIFFICULTIES: tuple[Difficulty, ...] = get_args(Difficulty)
# The core tier is the paper's study; the hard tier holds tasks whose correct maintenance needs
# state beyond a keyed upsert or an additive delta (docs/tasks.md, Tiers).
Tier = Literal["core", "hard"]
TIERS: tuple[Tier, ...] = get_args(Tier)
DEFAULT_TIER: Tier = "core"
# What `--tier` selects: one tier, or every task whatever its tier.
TierChoice = Literal["core", "hard", "all"]
TIER_CHOICES: tuple[TierChoice, ...] = get_args(TierChoice)


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # DuckDB's own spelling of the declared type, e.g. "DECIMAL(10,2)"


@dataclass(frozen=True)
class Source:
    name: str
    columns: tuple[Column, ...]
    record_key: tuple[str, ...]
    event_time: str | None
    entity_key: tuple[str, ...] = ()
    version: str | None = None
    landed_at: str | None = None  # the load-time column it declares (task.yaml `landed_at:`)

    @property
    def is_change_stream(self) -> bool:
        return bool(self.entity_key) and self.version is not None

    @property
    def load_time(self) -> str:
        """The column that carries each landed row's load time under accumulating landing:
        the one the source declares, else `_landed_at` (as loaders stamp theirs)."""
        return self.landed_at or DEFAULT_LANDED_AT


@dataclass(frozen=True)
class Target:
    """A table the pipeline keeps, with the batch query that defines it: `reference_sql`, read
    from `reference_file` (`reference.sql` for a task's only target, `reference.<name>.sql`
    for each of several)."""

    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    tolerance: float
    reference_sql: str = ""
    reference_file: str = "reference.sql"


@dataclass(frozen=True)
class Evolution:
    source: str
    column: str
    type: str


@dataclass(frozen=True)
class Negative:
    """A negative control. `fails` and `sql` are DuckDB's; `per_engine` holds, for every engine,
    the hazards it is declared to fail there (the same as `fails` unless task.yaml maps them
    per engine), and `other_sql` the pipelines written for other engines
    (`negatives/<name>.<engine>.sql`), as tuples so that the spec stays hashable."""

    name: str
    fails: tuple[Hazard, ...]
    sql: str
    per_engine: tuple[tuple[EngineName, tuple[Hazard, ...]], ...] = ()
    other_sql: tuple[tuple[EngineName, str], ...] = ()

    def fails_on(self, engine: EngineName) -> tuple[Hazard, ...]:
        """The hazards this negative is declared to fail on `engine`."""
        return dict(self.per_engine).get(engine, self.fails)

    def sql_for(self, engine: EngineName) -> str | None:
        """The pipeline for `engine`, None when the task has none for it."""
        return self.sql if engine == DEFAULT_ENGINE else dict(self.other_sql).get(engine)

    def file_for(self, engine: EngineName) -> str:
        return f"negatives/{pipeline_file(self.name, engine)}"


@dataclass(frozen=True)
class Budget:
    """The most a replay of the task may read: rows read from persistent tables over the whole
    replay per record delivered, on `trickle`."""

    read_amplification: float


# On `trickle` (~40 runs) a pipeline that rebuilds its target from the whole history reads
# ~20-45 rows per record delivered (measured on the built-in gold and template arms). One that
# reads only its batch and the stored rows it changes reads far less: an append keyed on the
# record key ~1.5 (web_page_views), an aggregate of deltas by key ~4.5 (account_balances), a
# per-key upsert with a keyed state table ~6 (device_last_reading). Part of that is DuckDB's: a
# join whose batch side is empty pushes no filter into the stored table's scan, so every empty
# run reads that table whole. The defaults leave that margin and stay well below any rebuild.
DEFAULT_BUDGETS: dict[Mode, Budget] = {
    "append": Budget(3.0), "upsert": Budget(8.0), "aggregate": Budget(10.0)}


@dataclass(frozen=True)
class TaskSpec:
    """Everything in a task folder except the log's records."""

    id: str
    title: str
    mode: Mode
    difficulty: Difficulty
    ticket: str
    sources: tuple[Source, ...]
    targets: tuple[Target, ...]  # one or more; every one is compared
    hazards: tuple[Hazard, ...]
    evolution: Evolution | None
    negatives: tuple[Negative, ...]
    gold_idiom: str | None
    gold_sql: str
    path: Path
    log_files: tuple[Path, ...]
    digest: str
    budget: Budget  # the declared one, else its mode's in DEFAULT_BUDGETS
    incremental_sql: str | None = None  # a gold within the budget, when the task ships one
    other_gold: tuple[tuple[EngineName, str], ...] = ()  # gold.<engine>.sql of other engines
    tier: Tier = DEFAULT_TIER
    tier_declared: bool = False  # whether task.yaml names its tier (built-in tasks must)
    family: str | None = None  # the kind of data problem, e.g. identity_stitching

    @property
    def target(self) -> Target:
        """The first target: the only one of a single-target task. What concerns every target
        (grading, cost, the reference) goes through `targets`."""
        return self.targets[0]

    @property
    def reference_sql(self) -> str:
        """The first target's reference query."""
        return self.targets[0].reference_sql

    def source(self, name: str) -> Source:
        return next(s for s in self.sources if s.name == name)

    def has_pipelines(self, engine: EngineName) -> bool:
        """Whether the task ships a gold for `engine` (every task has DuckDB's)."""
        return engine == DEFAULT_ENGINE or engine in dict(self.other_gold)

    def gold_for(self, engine: EngineName) -> str:
        """The gold pipeline for `engine`; a TaskError naming the task when it has none."""
        if engine == DEFAULT_ENGINE:
            return self.gold_sql
        found = dict(self.other_gold).get(engine)
        if found is None:
            raise self.missing(engine, pipeline_file("gold", engine))
        return found

    def negatives_for(self, engine: EngineName) -> tuple[tuple[Negative, str], ...]:
        """Each negative with its pipeline for `engine`, in task.yaml's order; a TaskError
        naming the task and the first missing file when one has none."""
        found = []
        for negative in self.negatives:
            sql = negative.sql_for(engine)
            if sql is None:
                raise self.missing(engine, negative.file_for(engine))
            found.append((negative, sql))
        return tuple(found)

    def missing(self, engine: EngineName, file: str) -> TaskError:
        return TaskError(f"task {self.id} has no {engine} pipelines ({self.path / file} is "
                         f"missing); add it, or grade this task with {mention('engine')} "
                         f"{DEFAULT_ENGINE}")


def pipeline_file(stem: str, engine: EngineName) -> str:
    """The file of a pipeline for `engine`: `<stem>.sql` for DuckDB (every task's own),
    `<stem>.<engine>.sql` beside it for another engine."""
    return f"{stem}.sql" if engine == DEFAULT_ENGINE else f"{stem}.{engine}.sql"
