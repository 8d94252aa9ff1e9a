"""Explicit delivery plans: a schedule written out as plain JSON data.

A plan names each delivered record by its source and record key, not by its row in a log file,
so that a plan still means the same deliveries once a log has been cut down to the records it
uses. A plan holds batches in delivery order, each with its records (a record may repeat) and
an optional abort point, and the batch from which the evolution column is present:

    {"plan": 1, "task": "tiny", "schedule": "duplicates", "seed": 3, "evolution_from": null,
     "batches": [{"batch": 0, "records": [{"source": "orders", "key": {"order_id": 1}}],
                  "abort": null, "clock": "2024-01-01 09:00:00"},
                 {"batch": 1, "records": [], "abort": {"after_statement": 2},
                  "clock": "2024-01-01 09:00:01"}]}

An abort is either `{"after_statement": k}` (the run stops after its k-th statement) or
`{"share": s}` (after that share of the statements, as generated schedules say it; 1.0 is after
the last). `clock` is the batch's processing time (`core.clock`): a plan written out carries
the one its schedule runs at; a plan given may set it, never decreasing, or leave it out (then
the plan's clock follows from its records, as a generated schedule's does; a plan that sets
some batches' clocks and not others is refused). `schedule` and `seed` only say where a plan
came from.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from pathlib import Path

from arrivalbench.core import clock
from arrivalbench.core.log import Log, load_log
from arrivalbench.core.schedules import Batch, Ref, Schedule
from arrivalbench.core.task import TaskSpec
from arrivalbench.core.textfile import read_text
from arrivalbench.core.values import JSON, canonical_json, to_json
from arrivalbench.errors import ArrivalBenchError

PLAN_VERSION = 1
_TOP = ("plan", "task", "schedule", "seed", "evolution_from", "batches")
_BATCH = ("batch", "records", "abort", "clock")


class PlanError(ArrivalBenchError):
    """A plan file that is malformed or does not fit its task or pipeline."""


def _got(value: object) -> str:
    """A JSON value with its type, as a plan error names what it got: "the string '0'"."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {'true' if value else 'false'}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, int | float):
        return f"the number {canonical_json(value)}"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    return "an object"


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _key_text(values: list[JSON]) -> str:
    # A hand-written plan may quote a number ("17") or not (17): both name the same record.
    return canonical_json([None if v is None else str(v) for v in values])


def key_index(spec: TaskSpec, log: Log) -> dict[str, dict[str, int]]:
    """Per source, the record key (as text) -> its row in the log."""
    index: dict[str, dict[str, int]] = {}
    for source in spec.sources:
        table = log.tables[source.name]
        columns = [table.column(c).to_pylist() for c in source.record_key]
        index[source.name] = {_key_text([to_json(c[row]) for c in columns]): row
                              for row in range(table.num_rows)}
    return index


def record_key(spec: TaskSpec, log: Log, ref: Ref) -> dict[str, JSON]:
    source, row = ref
    table = log.tables[source]
    return {c: to_json(table.column(c)[row].as_py()) for c in spec.source(source).record_key}


def _abort_document(batch: Batch) -> JSON:
    if batch.abort_at is not None:
        return {"after_statement": batch.abort_at}
    if batch.abort is not None:
        return {"share": batch.abort}
    return None


def document(spec: TaskSpec, schedule: Schedule, log: Log | None = None) -> dict[str, JSON]:
    """The plan of `schedule` as JSON data."""
    log = log or load_log(spec)
    at = clock.of(schedule, log)
    return {
        "plan": PLAN_VERSION,
        "task": spec.id,
        "schedule": schedule.kind,
        "seed": schedule.seed,
        "evolution_from": schedule.evolution_from,
        "batches": [{"batch": number,
                     "records": [{"source": r[0], "key": record_key(spec, log, r)}
                                 for r in batch.records],
                     "abort": _abort_document(batch), "clock": clock.text(at[number])}
                    for number, batch in enumerate(schedule.batches)],
    }


def load(spec: TaskSpec, path: Path) -> Schedule:
    text = read_text(path, PlanError, what="a plan (.json)",
                     missing="no such plan file; give the path of a plan (.json)")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlanError(f"{path}: not JSON ({exc.msg} at line {exc.lineno}); a plan is one "
                        "JSON object") from None
    return parse(spec, data, str(path))


def parse(spec: TaskSpec, data: object, where: str = "plan", log: Log | None = None
          ) -> Schedule:
    """Validate plan data against its task and build the schedule it describes."""
    if not isinstance(data, dict):
        raise PlanError(f"{where}: must be a JSON object with keys {', '.join(_TOP)}")
    unknown = sorted(set(data) - set(_TOP))
    if unknown:
        raise PlanError(f"{where}: unknown key {unknown[0]!r}; allowed: {', '.join(_TOP)}")
    if data.get("plan", PLAN_VERSION) != PLAN_VERSION:
        raise PlanError(f"{where}: plan version {data.get('plan')!r} is not supported; "
                        f"this harness reads version {PLAN_VERSION}")
    task = data.get("task", spec.id)
    if task != spec.id:
        raise PlanError(f"{where}: is a plan for task {task!r}, not {spec.id!r}; give the "
                        "plan's own task")
    kind = data.get("schedule", "plan")
    seed = data.get("seed", 0)
    if not isinstance(kind, str):
        raise PlanError(f"{where}: schedule must be a string, got {_got(kind)}")
    if not _whole(seed) or seed < 0:
        raise PlanError(f"{where}: seed must be a whole number of at least 0, got {_got(seed)}")
    batches_data = data.get("batches")
    if not isinstance(batches_data, list):
        raise PlanError(f"{where}: batches must be a list of batch objects, got "
                        f"{_got(batches_data)}")
    if not batches_data:
        raise PlanError(f"{where}: batches is empty; a plan delivers at least one batch (a "
                        "pipeline that never runs has no target to grade)")
    log = log or load_log(spec)
    index = key_index(spec, log)
    batches = tuple(_batch(spec, index, item, number, f"{where}: batches[{number}]")
                    for number, item in enumerate(batches_data))
    given = _clock(batches_data, where)
    evolution_from = data.get("evolution_from")
    if evolution_from is not None:
        if spec.evolution is None:
            raise PlanError(f"{where}: evolution_from {evolution_from!r}, but task {spec.id} "
                            "declares no evolution column; use null")
        if not _whole(evolution_from) or not 0 <= evolution_from < len(batches):
            raise PlanError(f"{where}: evolution_from must be a batch number "
                            f"0..{len(batches) - 1} or null, got {_got(evolution_from)}")
    sched = Schedule(kind, seed, batches, evolution_from)
    # A plan that states the clock its records give anyway (as every plan written out does)
    # keeps the identity of the schedule it was written from.
    return sched if given is None or given == clock.of(sched, log) else \
        Schedule(kind, seed, batches, evolution_from, clock=given)


def _clock(batches: list[object], where: str) -> tuple[dt.datetime, ...] | None:
    """The clock a plan sets: every batch's, never decreasing; None where it sets none."""
    values = [item.get("clock") if isinstance(item, dict) else None for item in batches]
    if all(v is None for v in values):
        return None
    out: list[dt.datetime] = []
    for number, value in enumerate(values):
        at = f"{where}: batches[{number}]"
        parsed = clock.parse_text(value) if isinstance(value, str) else None
        if parsed is None:
            raise PlanError(f"{at}: clock {canonical_json(value)}: give the batch's processing "
                            "time as \"YYYY-MM-DD HH:MM:SS\" on every batch, or on none")
        if out and parsed < out[-1]:
            raise PlanError(f"{at}: clock {value} is before the previous batch's "
                            f"({clock.text(out[-1])}); a clock never goes backwards")
        out.append(parsed)
    return tuple(out)


def _batch(spec: TaskSpec, index: Mapping[str, Mapping[str, int]], item: object, number: int,
           where: str) -> Batch:
    if not isinstance(item, dict):
        raise PlanError(f"{where}: must be an object with keys {', '.join(_BATCH)}")
    unknown = sorted(set(item) - set(_BATCH))
    if unknown:
        raise PlanError(f"{where}: unknown key {unknown[0]!r}; allowed: {', '.join(_BATCH)}")
    said = item.get("batch", number)
    if not _whole(said):
        raise PlanError(f"{where}: batch must be a whole number, got {_got(said)}")
    if said != number:
        raise PlanError(f"{where}: batch number {said!r} is out of order; number the batches "
                        f"0, 1, 2, ... in delivery order (this one is {number})")
    records = item.get("records", [])
    if not isinstance(records, list):
        raise PlanError(f"{where}: records must be a list, got {_got(records)}")
    refs = tuple(_ref(spec, index, r, f"{where}.records[{i}]") for i, r in enumerate(records))
    abort, abort_at = _abort(item.get("abort"), where)
    return Batch(refs, abort, abort_at)


def _ref(spec: TaskSpec, index: Mapping[str, Mapping[str, int]], item: object, where: str
         ) -> Ref:
    sources = [s.name for s in spec.sources]
    if not isinstance(item, dict) or set(item) != {"source", "key"}:
        raise PlanError(f"{where}: a record is {{\"source\": ..., \"key\": {{...}}}}, got "
                        f"{canonical_json(item)}")
    source = item["source"]
    if source not in index:
        raise PlanError(f"{where}: unknown source {source!r}; the task's sources: "
                        f"{', '.join(sources)}")
    columns = spec.source(source).record_key
    key = item["key"]
    if not isinstance(key, dict) or sorted(key) != sorted(columns):
        raise PlanError(f"{where}: key {canonical_json(key)} must give exactly the record key "
                        f"of {source}: {', '.join(columns)}")
    row = index[source].get(_key_text([key[c] for c in columns]))
    if row is None:
        raise PlanError(f"{where}: unknown record key {canonical_json(key)} in source "
                        f"{source}; name a record of the task's log")
    return (source, row)


def _abort(value: object, where: str) -> tuple[float | None, int | None]:
    if value is None:
        return None, None
    if isinstance(value, dict) and list(value) == ["after_statement"]:
        k = value["after_statement"]
        if _whole(k) and k >= 1:
            return None, k
        raise PlanError(f"{where}: abort after_statement must be a statement number of at "
                        f"least 1, got {_got(k)}")
    if isinstance(value, dict) and list(value) == ["share"]:
        share = value["share"]
        if isinstance(share, int | float) and not isinstance(share, bool) and 0 < share <= 1:
            return float(share), None
        raise PlanError(f"{where}: abort share must be a number in (0, 1], 1 being after "
                        f"the last statement, got {_got(share)}")
    raise PlanError(f"{where}: abort {canonical_json(value)}; give null, "
                    "{\"after_statement\": K} or {\"share\": S}")


def check_statements(schedule: Schedule, statements: int, where: str = "plan") -> None:
    """An abort after a statement the pipeline does not have is an error in the plan."""
    for number, batch in enumerate(schedule.batches):
        if batch.abort_at is not None and batch.abort_at > statements:
            raise PlanError(f"{where}: batches[{number}] aborts after statement "
                            f"{batch.abort_at}, but the pipeline has {statements} statement"
                            f"{'s' if statements != 1 else ''}; give 1..{statements}")
