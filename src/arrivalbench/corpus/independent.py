"""The gate's `independent` check: a second reference, written from the ticket and the schemas
alone, must agree with `reference.sql` on the complete log and after every batch of `in_order`
seed 0. It is what keeps a ticket and its reference saying the same thing."""

from __future__ import annotations

import sqlglot

from arrivalbench import words
from arrivalbench.core.checkpoints import delivered, query_over, references_over
from arrivalbench.core.grading import schedule as make_schedule
from arrivalbench.core.oracle import compare
from arrivalbench.core.task import TaskSpec
from arrivalbench.core.textfile import read_text
from arrivalbench.corpus.findings import Finding
from arrivalbench.corpus.labels import is_builtin
from arrivalbench.errors import TaskError

INDEPENDENT = "independent.sql"


def independent_file(spec: TaskSpec, number: int) -> str:
    """`independent.sql` for a task's only target, `independent.<name>.sql` for each of
    several (as `reference.<name>.sql`)."""
    return INDEPENDENT if len(spec.targets) == 1 else \
        f"independent.{spec.targets[number].name}.sql"


def independent(spec: TaskSpec) -> list[Finding]:
    """Each target's `independent.sql` against its reference: on the complete log, then on
    the records delivered after each batch of `in_order` seed 0, the first disagreement
    named."""
    found: list[Finding] = []
    for number in range(len(spec.targets)):
        found += _independent(spec, number)
    return found


def _independent(spec: TaskSpec, number: int) -> list[Finding]:
    name = independent_file(spec, number)
    target = spec.targets[number]
    path = spec.path / name
    if not path.is_file():
        if not is_builtin(spec):
            return []
        return [Finding(spec.id, "independent", f"no {name}: a built-in task ships a "
                        "second reference written from the ticket and schemas alone")]

    def finding(reason: str, schedule: str | None = None, seed: int | None = None) -> Finding:
        return Finding(spec.id, "independent", f"{path}: {reason}", schedule, seed)

    try:
        sql = read_text(path, TaskError, what="independent reference")
    except TaskError as exc:
        return [Finding(spec.id, "independent", str(exc))]
    problem = _query_problem(spec, sql, number)
    if problem is not None:
        return [finding(problem)]
    sched = make_schedule(spec, "in_order", 0)
    sets = [*delivered(sched).values()]
    try:
        theirs = query_over(spec, sql, sets, name, target=number)
    except TaskError as exc:
        return [Finding(spec.id, "independent", str(exc))]
    ours = references_over(spec, sets, target=number)
    for batch, (want, got) in enumerate(zip(ours, theirs, strict=True)):
        diff = compare(want, got, target)
        if not diff.ok:
            where = ("on the complete log" if batch == len(sets) - 1 else
                     f"after batch {batch} of in_order seed 0")
            return [finding(f"disagrees with {target.reference_file} {where}, taking "
                            f"{target.reference_file} as expected: "
                            f"{words.diff_line(diff.document())}", "in_order", 0)]
    return []


def _query_problem(spec: TaskSpec, sql: str, number: int = 0) -> str | None:
    """Why `sql` is not one SELECT over the task's sources returning the target's columns."""
    try:
        parsed = sqlglot.parse(sql, read="duckdb")
    except sqlglot.errors.ParseError as exc:
        return f"does not parse: {' '.join(str(exc).split())[:200]}"
    statements = [s for s in parsed if s is not None]
    if len(statements) != 1 or not isinstance(statements[0], sqlglot.exp.Query):
        return f"must hold exactly one SELECT query, found {len(statements)} statements"
    query = statements[0]
    ctes = {c.alias_or_name.lower() for c in query.find_all(sqlglot.exp.CTE)}
    sources = {s.name.lower() for s in spec.sources}
    named = {t.name for t in query.find_all(sqlglot.exp.Table) if t.name}
    strangers = sorted(n for n in named if n.lower() not in ctes | sources)
    if strangers:
        which = "is not a source" if len(strangers) == 1 else "are not sources"
        return (f"reads {', '.join(strangers)}, which {which} (sources: "
                f"{', '.join(sorted(sources))})")
    got = [s.alias_or_name for s in query.selects]
    target = spec.targets[number]
    want = [c.name for c in target.columns]
    if "*" not in got and sorted(g.lower() for g in got) != sorted(w.lower() for w in want):
        return f"returns columns {got}; target {target.name} declares {want}"
    return None
