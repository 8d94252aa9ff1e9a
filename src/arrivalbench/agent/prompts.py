"""The prompt an agent gets (DESIGN §7): the ticket, the schemas, the contract of §2 and a
paragraph on the snapshot test. The unhinted prompt names no hazard."""

from __future__ import annotations

from arrivalbench.errors import ArrivalBenchError
from arrivalbench.task import Column, TaskSpec

VARIANTS = ("unhinted", "hazard_hint", "architecture")

CONTRACT = """\
1. The database is DuckDB (the version pinned by the project). One database persists across all runs of one replay.
2. The pipeline is one text file of SQL statements separated by semicolons.
3. Before every run, schema `incoming` holds one table per source, named after the source (`incoming.orders`), holding exactly the records delivered in this batch — possibly none. The runner replaces these tables before each run; the pipeline must not rely on writing them.
4. The pipeline runs once per batch, statement by statement, each statement committing on its own unless the script opens its own transaction, over a **new connection**: temporary tables, views and macros do not survive from one run to the next; persistent objects in schema `main` do.
5. The first run starts with an empty `main` schema. After every run, `main.<target>` must exist and hold the result over all records delivered so far.
6. The pipeline may not touch files, the network or extensions, and may not change settings; each statement has a time limit and the database a memory limit. A breach is an `ERROR`, never a crash of the harness."""

SNAPSHOT_TEST = """\
Before your script is accepted it is run once on a test batch holding the complete sample \
data, and `main.{target}` is compared with the expected result. If that fails you will be \
shown the error or the rows that differ and may send a corrected script."""


def _columns(columns: tuple[Column, ...]) -> str:
    return "\n".join(f"  - {c.name} {c.type}" for c in columns)


def build(spec: TaskSpec, variant: str = "unhinted") -> str:
    if variant not in VARIANTS:
        raise ArrivalBenchError(f"unknown prompt variant {variant!r}; allowed: "
                                f"{', '.join(VARIANTS)}")
    parts = [
        "You are writing a data pipeline.",
        f"## Request\n\n{spec.ticket}",
    ]
    for source in spec.sources:
        parts.append(f"## Source table `incoming.{source.name}`\n\n{_columns(source.columns)}\n\n"
                     f"Each record is identified by ({', '.join(source.record_key)}).")
    target = spec.target
    parts.append(f"## Target table `main.{target.name}`\n\n{_columns(target.columns)}\n\n"
                 f"One row per ({', '.join(target.key)}).")
    parts.append(f"## How the pipeline is run\n\n{CONTRACT}")
    parts.append(f"## Test\n\n{SNAPSHOT_TEST.format(target=target.name)}")
    parts.append("Reply with the complete pipeline as one SQL script in a single ```sql block.")
    return "\n\n".join(parts) + "\n"
