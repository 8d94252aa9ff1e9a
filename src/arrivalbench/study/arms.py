"""Built-in arms: where the artifacts of a study come from, besides models and people.

- `gold`: each task's `gold.sql` (on another engine `gold.<engine>.sql`), replicate 0.
- `negatives`: one artifact per negative control, replicate = its position in `task.yaml`;
  provenance names the negative and the hazards it declares to fail on the engine graded.
- `template`: the pipeline generated from the task spec (`study.template`).

A folder of submissions is an arm too (`study.submissions`). An arm only produces artifacts;
`grid` stores and grades them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from arrivalbench.core.artifacts import ArtifactRef, script_ref
from arrivalbench.core.engine import DEFAULT_ENGINE, EngineName
from arrivalbench.core.task import TaskSpec, pipeline_file, source_of
from arrivalbench.core.values import JSON
from arrivalbench.errors import TaskError, UnknownName
from arrivalbench.sql.idioms import signature
from arrivalbench.study.template import TEMPLATE_VERSION, template_sql

BUILTIN_ARMS = ("gold", "negatives", "template")


@dataclass(frozen=True)
class Artifact:
    """One artifact of one arm for one task, with where it came from. `ref` None: the arm
    has none for the task, and `reason` says why (the cell is stored without one)."""

    arm: str
    spec: TaskSpec
    replicate: int
    ref: ArtifactRef | None
    provenance: dict[str, JSON] = field(default_factory=dict)
    reason: str | None = None


def _file(spec: TaskSpec, relative: str) -> str:
    return relative if source_of(spec) == spec.id else str(spec.path / relative)


def gold(spec: TaskSpec, engine: EngineName = DEFAULT_ENGINE) -> list[Artifact]:
    file = _file(spec, pipeline_file("gold", engine))
    return [Artifact("gold", spec, 0, script_ref(spec.gold_for(engine), file), {"file": file})]


def negatives(spec: TaskSpec, engine: EngineName = DEFAULT_ENGINE) -> list[Artifact]:
    """Provenance keeps the keys it always had on DuckDB, so DuckDB cells stay byte for byte
    what they were; on another engine it also names the engine."""
    extra: dict[str, JSON] = {} if engine == DEFAULT_ENGINE else {"engine": engine}
    out = []
    for index, (negative, sql) in enumerate(spec.negatives_for(engine)):
        file = _file(spec, negative.file_for(engine))
        out.append(Artifact("negatives", spec, index, script_ref(sql, file),
                            {"file": file, "negative": negative.name,
                             "fails": list(negative.fails_on(engine)), **extra}))
    return out


def template(spec: TaskSpec, engine: EngineName = DEFAULT_ENGINE) -> list[Artifact]:
    """The template of `spec`, or, when its reference cannot be bound to history tables (not
    one query, or one sqlglot cannot read or translate), a cell without a script that says
    why: one task without a template does not stop a run of many."""
    provenance: dict[str, JSON] = {"generator": "template", "version": TEMPLATE_VERSION}
    try:
        sql = template_sql(spec, engine)
    except TaskError as exc:
        return [Artifact("template", spec, 0, None, provenance, f"no template: {exc}")]
    return [Artifact("template", spec, 0, script_ref(sql), provenance)]


def builtin(arm: str, specs: Sequence[TaskSpec], engine: EngineName = DEFAULT_ENGINE
            ) -> list[Artifact]:
    """The artifacts of a built-in arm over `specs` for `engine`, in task order. Every task's
    pipelines for the engine are checked before any artifact is made, so a task without them
    stops the run before anything is written."""
    make = {"gold": gold, "negatives": negatives, "template": template}.get(arm)
    if make is None:
        raise UnknownName("arms", arm, BUILTIN_ARMS)
    return [a for spec in specs for a in make(spec, engine)]


def idioms(text: str, spec: TaskSpec) -> list[str]:
    """The idiom signature tags of an artifact written for `spec`, judged against its record
    keys. Tags describe an artifact and never stop one from being graded: a statement sqlglot
    cannot read is tagged `unparsed`."""
    return signature(text, spec)
