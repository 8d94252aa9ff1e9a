"""The prompt an agent gets: the ticket, the schemas, the execution contract and a paragraph on
the snapshot test. The unhinted prompt names no hazard.

Variants:
- `unhinted` (default): nothing about delivery beyond the contract;
- `hazard_hint`: adds a description of each hazard the task declares;
- `architecture`: asks for a history of delivered records deduplicated on the record key, with
  the target derived from that history alone;
- `budget`: states the operational requirement that makes rebuilding from history unaffordable
  (the stored history reaches billions of rows) and the task's read budget. It names a cost,
  never a delivery condition, and passes the leakage scan like the unhinted prompt.
"""

from __future__ import annotations

from arrivalbench.core.engine import DEFAULT_ENGINE, FACTS, EngineName, backend, check_engine
from arrivalbench.core.task import Column, Hazard, Landing, Source, TaskSpec
from arrivalbench.errors import ArrivalBenchError
from arrivalbench.sql import dialects

VARIANTS = ("unhinted", "hazard_hint", "architecture", "budget")
DEFAULT_VARIANT = "unhinted"
MAX_TURNS = 3  # the snapshot repair loop: the first reply and at most two corrections

# The execution contract, word for word as docs/contract.md states it; no word of it names a
# hazard.
CONTRACT = """\
1. The database is DuckDB (the version pinned by the project). One database persists from the first run to the last.
2. The pipeline is one text file of SQL statements separated by semicolons.
3. Before every run, schema `incoming` holds one table per source, named after the source (`incoming.orders`), holding exactly the records delivered in this batch — possibly none. The runner replaces these tables before each run; the pipeline must not rely on writing them.
4. The pipeline runs once per batch, statement by statement, each statement committing on its own unless the script opens its own transaction, over a **new connection**: temporary tables, views and macros do not survive from one run to the next; persistent objects in schema `main` do.
5. The first run starts with an empty `main` schema. After every run, `main.<target>` must exist and hold the result over all records delivered so far.
6. The pipeline may not touch files, the network or extensions, and may not change settings; each statement has a time limit and the database a memory limit. A breach is an `ERROR`; the runner itself keeps going."""

# The same contract on PostgreSQL: point 1 names the engine, point 4 the session-scoped objects
# PostgreSQL has (it has no macros); everything else, point 6 included, holds as stated.
CONTRACTS: dict[EngineName, str] = {
    "duckdb": CONTRACT,
    "postgres": CONTRACT.replace(
        "The database is DuckDB (the version pinned by the project).",
        "The database is PostgreSQL (the version pinned by the project).").replace(
        "temporary tables, views and macros do not survive",
        "temporary tables, views and functions do not survive"),
}
ENGINE_TITLES: dict[EngineName, str] = {name: f.title for name, f in FACTS.items()}

# Point 3 under accumulating landing, as docs/contract.md states it ("Landing: batch or
# accumulate") with the sources' own load-time columns named, and, as every prompt, in words
# that name no hazard.
BATCH_LANDING = ("3. Before every run, schema `incoming` holds one table per source, named after "
                 "the source (`incoming.orders`), holding exactly the records delivered in this "
                 "batch — possibly none. The runner replaces these tables before each run; the "
                 "pipeline must not rely on writing them.")


def _accumulating(spec: TaskSpec) -> str:
    columns = sorted({s.load_time for s in spec.sources})
    named = f"the column `{columns[0]}`" if len(columns) == 1 else \
        "its source's load-time column (" + ", ".join(
            f"`{s.name}.{s.load_time}`" for s in spec.sources) + ")"
    return ("3. Before every run, schema `incoming` holds one table per source, named after the "
            "source, holding every record landed so far, in the order it landed and as often "
            "as it landed: the runner appends each batch and never takes a landed row back. "
            f"Each row carries the time its batch landed in {named}. The runner restores these "
            "tables before each run; the pipeline must not rely on writing them.")

SNAPSHOT_TEST = """\
Before your script is accepted it is run once on a test batch holding the complete sample \
data, and {target} compared with the expected result. If that fails you will be \
shown the error or the rows that differ and may send a corrected script{attempts}."""

REPLY = "Reply with the complete pipeline as one SQL script in a single ```sql block."

# hazard_hint: one description per declared hazard, in the task's order.
HAZARD_HINTS: dict[Hazard, str] = {
    "late_arrival": (
        "Late arrival: some records are delivered long after records with a later event time, "
        "in a later batch; they still count."),
    "out_of_order": (
        "Out-of-order delivery: records do not arrive in event-time order; a record may reach "
        "an earlier batch than a record that happened before it (for a stream of versions, a "
        "later version of an entity may arrive before an earlier one)."),
    "duplicates": (
        "Duplicates: a record may be delivered more than once, twice within one batch or again "
        "in a later batch; a redelivered record repeats the original exactly, record key "
        "included, and must count once."),
    "crash_retry": (
        "Crash and retry: a run may be aborted after any statement, or after the last statement "
        "before its success is recorded; whatever the aborted run left uncommitted is rolled "
        "back, and the same batch is then delivered again and the whole script runs again."),
    "backfill": (
        "Backfill: after newer data, an earlier time window may be delivered again as one "
        "large batch, holding records already delivered together with records never "
        "delivered before."),
    "schema_evolution": (
        "Schema evolution: from some batch on, {source} carries one more nullable column "
        "that is not declared above; the target does not change."),
}


def _columns(columns: tuple[Column, ...], engine: EngineName = DEFAULT_ENGINE) -> str:
    return "\n".join(f"  - {c.name} {dialects.type_name(c.type, engine)}" for c in columns)


def _keys(names: tuple[str, ...]) -> str:
    return f"({', '.join(names)})"


def _source(source: Source, engine: EngineName = DEFAULT_ENGINE) -> str:
    text = (f"## Source table `incoming.{source.name}`\n\n"
            f"{_columns(source.columns, engine)}\n\n"
            f"Each record is identified by {_keys(source.record_key)}.")
    if source.is_change_stream:
        text += (f" Each record is one version of the entity {_keys(source.entity_key)}, "
                 f"numbered by {source.version}.")
    return text


def _tables(spec: TaskSpec) -> str:
    """The target tables as the prose names them: `main.a`, or `main.a` and `main.b`."""
    names = [f"`main.{t.name}`" for t in spec.targets]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _hints(spec: TaskSpec) -> str:
    evolving = f"`incoming.{spec.evolution.source}`" if spec.evolution else "a source table"
    lines = [f"- {HAZARD_HINTS[h].format(source=evolving)}" for h in spec.hazards]
    return ("## Delivery conditions\n\nThe batches will not be clean. Your pipeline will be run "
            "under each of these conditions, and after the last batch "
            f"{_tables(spec)} must still equal the result over all records "
            "delivered:\n\n" + "\n".join(lines))


def _architecture(spec: TaskSpec) -> str:
    keys = "; ".join(f"`{s.name}` on {_keys(s.record_key)}" for s in spec.sources)
    return ("## Required design\n\nPersist the history of every record delivered, in a table "
            "in schema `main` per source, holding each record once: deduplicated on its record "
            f"key ({keys}). Add each batch's records to that history, then derive "
            f"{_tables(spec)} from the history alone, as a pure function of it "
            "(for example by rebuilding it from the history on every run), so that the target "
            "depends only on which records have been delivered, never on how or when.")


def _budget(spec: TaskSpec) -> str:
    return ("## Operating cost\n\nIn production this pipeline runs every few minutes for years, "
            "and the rows stored in schema `main` will reach billions. Each run may read only "
            "the records delivered to it and the stored rows it has to change: a run that "
            "rereads everything stored so far, or rebuilds "
            f"{_tables(spec)} from all of it, is not acceptable. The runner counts "
            "the rows every statement reads from tables in schema `main`; summed over all runs "
            "and divided by the number of records delivered, that figure must stay at or below "
            f"{spec.budget.read_amplification:g}.")


def engine_version(engine: EngineName) -> str:
    """The version the prompt names: DuckDB's pinned one, PostgreSQL's server's."""
    return str(backend(engine).version())


def build(spec: TaskSpec, variant: str = DEFAULT_VARIANT, max_turns: int = MAX_TURNS,
          engine: EngineName = DEFAULT_ENGINE, *, landing: Landing = "batch") -> str:
    """The prompt of `variant` for `spec`, for a pipeline run on `engine` with `landing`: its
    contract names the engine and its version, and the schemas its type names. DuckDB's prompt
    under batch landing is the same text, byte for byte, that it was before a second engine or
    landing existed."""
    engine = check_engine(engine)
    if variant not in VARIANTS:
        raise ArrivalBenchError(f"unknown prompt variant {variant!r}; allowed: "
                                f"{', '.join(VARIANTS)}")
    parts = [
        "You are writing a data pipeline.",
        f"## Request\n\n{spec.ticket}",
        *(_source(source, engine) for source in spec.sources),
    ]
    for target in spec.targets:
        parts.append(f"## Target table `main.{target.name}`\n\n"
                     f"{_columns(target.columns, engine)}\n\n"
                     f"One row per {_keys(target.key)}.")
    compared = f"{_tables(spec)} {'is' if len(spec.targets) == 1 else 'are each'}"
    contract = CONTRACTS[engine] if landing == "batch" else \
        CONTRACTS[engine].replace(BATCH_LANDING, _accumulating(spec))
    parts.append(f"## How the pipeline is run\n\n{contract}\n\n"
                 f"The {ENGINE_TITLES[engine]} version is {engine_version(engine)}.")
    if variant == "hazard_hint":
        parts.append(_hints(spec))
    elif variant == "architecture":
        parts.append(_architecture(spec))
    elif variant == "budget":
        parts.append(_budget(spec))
    attempts = f" ({max_turns} attempts in all)" if max_turns > 1 else ""
    if max_turns > 1:
        test = SNAPSHOT_TEST.format(target=compared, attempts=attempts)
    else:
        test = (f"Your script is run once on a test batch holding the complete sample data, and "
                f"{compared} compared with the expected result.")
    parts.append(f"## Test\n\n{test}")
    parts.append(REPLY)
    return "\n\n".join(parts) + "\n"
