"""Does a schedule perturb delivery as its kind intends? Read from the schedule itself (pure).

One check per hazard kind, each visible in the batches, on any seed:

- `duplicates` repeats a record inside one batch and another in a later batch;
- `out_of_order` delivers a record in an earlier batch than one that precedes it in event time
  (in a change stream: a later version of an entity in an earlier batch than an earlier version
  of it);
- `late_arrival` withholds records older than data already delivered, in one final batch;
- `crash_retry` aborts a run in the middle of the script and another after its last statement,
  each followed by a run of the same batch;
- `backfill` ends with a batch that redelivers records delivered before together with records
  held back, after data newer than any of them;
- `schema_evolution` adds the declared column from a batch after the first.

The admissibility gate runs these on every declared hazard and gate seed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from arrivalbench.core.log import Event, load_log
from arrivalbench.core.schedules import Schedule
from arrivalbench.core.task import TaskSpec
from arrivalbench.core.values import sort_key


def visible(spec: TaskSpec, sched: Schedule, statements: int) -> str | None:
    """None if `sched` perturbs delivery as its kind intends, else why not. `statements` is the
    gold's statement count (an abort is mid-script only relative to a script)."""
    events = {(e.source, e.row): e for e in load_log(spec).timeline}
    check = _VISIBLE.get(sched.kind)
    return None if check is None else check(spec, sched, events, statements)


Events = dict[tuple[str, int], Event]


def _first_batch(sched: Schedule) -> dict[tuple[str, int], int]:
    first: dict[tuple[str, int], int] = {}
    for number, batch in enumerate(sched.batches):
        for ref in batch.records:
            first.setdefault(ref, number)
    return first


def _duplicates(spec: TaskSpec, sched: Schedule, events: Events, n: int) -> str | None:
    in_batch = any(c > 1 for b in sched.batches for c in Counter(b.records).values())
    batches_of: dict[tuple[str, int], set[int]] = {}
    for number, batch in enumerate(sched.batches):
        for ref in batch.records:
            batches_of.setdefault(ref, set()).add(number)
    across = any(len(b) > 1 for b in batches_of.values())
    missing = [what for what, ok in (("inside one batch", in_batch),
                                     ("in a later batch", across)) if not ok]
    return f"no record is delivered again {' or '.join(missing)}" if missing else None


def _out_of_order(spec: TaskSpec, sched: Schedule, events: Events, n: int) -> str | None:
    first = _first_batch(sched)
    streams = [s for s in spec.sources if s.is_change_stream]
    if streams:
        names = {s.name for s in streams}
        versions: dict[tuple[str, tuple[object, ...]], list[Event]] = {}
        for event in events.values():
            if event.source in names:
                versions.setdefault((event.source, event.entity), []).append(event)
        for history in versions.values():
            history.sort(key=lambda e: sort_key(e.version))
            arrivals = [first[(e.source, e.row)] for e in history if (e.source, e.row) in first]
            if any(later < earlier for earlier, later in _pairs_any(arrivals)):
                return None
        return ("no later version of an entity arrives in an earlier batch than an earlier "
                "version of it")
    newest: list[object] = []  # the newest event time of the batches so far
    for batch in sched.batches:
        times = [events[r].time for r in batch.records if events[r].time is not None]
        if newest and any(sort_key(t) < sort_key(newest[0]) for t in times):
            return None
        if times:
            top = max(times, key=sort_key)
            if not newest or sort_key(top) > sort_key(newest[0]):
                newest = [top]
    return "no record arrives after a record that is newer in event time"


def _pairs_any(values: list[int]) -> Iterable[tuple[int, int]]:
    """(an earlier value, a later value) for the running maximum: enough to find a descent."""
    top = None
    for value in values:
        if top is not None:
            yield top, value
        top = value if top is None else max(top, value)


def _late_arrival(spec: TaskSpec, sched: Schedule, events: Events, n: int) -> str | None:
    if len(sched.batches) < 2 or not sched.batches[-1].records:
        return "no final batch of withheld records"
    last = sched.batches[-1].records
    before = [r for b in sched.batches[:-1] for r in b.records]
    seen = set(before)
    if any(r in seen for r in last):
        return "the final batch repeats records delivered before instead of withholding them"
    times = [events[r].time for r in before if events[r].time is not None]
    if not times:
        return "nothing is delivered before the withheld records"
    newest = max(times, key=sort_key)
    if not any(events[r].time is not None and sort_key(events[r].time) < sort_key(newest)
               for r in last):
        return "no withheld record is older than data delivered before it"
    return None


def _crash_retry(spec: TaskSpec, sched: Schedule, events: Events, n: int) -> str | None:
    mid = after = False
    batches = sched.batches
    for i, batch in enumerate(batches):
        if batch.abort is None:
            continue
        ran = batch.abort_after(n)
        mid = mid or (ran is not None and ran < n)
        after = after or ran == n
        retry = next((b for b in batches[i + 1:] if b.abort is None), None)
        if retry is None or retry.records != batch.records:
            return f"the run aborted at batch {i} is not followed by a run of the same batch"
    missing = [what for what, ok in ((f"in the middle of the gold's {n} statements", mid),
                                     ("after the last statement", after)) if not ok]
    return f"no run is aborted {' or '.join(missing)}" if missing else None


def _backfill(spec: TaskSpec, sched: Schedule, events: Events, n: int) -> str | None:
    if len(sched.batches) < 2:
        return "no final backfill batch"
    last = sched.batches[-1].records
    before = [r for b in sched.batches[:-1] for r in b.records]
    seen = set(before)
    again = [r for r in last if r in seen]
    held = [r for r in last if r not in seen]
    problems = []
    if not again:
        problems.append("redelivers no record delivered before")
    if not held:
        problems.append("holds no record held back")
    window = [events[r].time for r in last if events[r].time is not None]
    if window:
        edge = max(window, key=sort_key)
        if not any(events[r].time is not None and sort_key(events[r].time) > sort_key(edge)
                   for r in before):
            problems.append("does not come after newer data")
    return f"the final batch {' and '.join(problems)}" if problems else None


def _schema_evolution(spec: TaskSpec, sched: Schedule, events: Events, n: int) -> str | None:
    if spec.evolution is None:
        return "the task declares no evolution column"
    start = sched.evolution_from
    if start is None or not 0 < start < len(sched.batches):
        return (f"the column {spec.evolution.column} does not appear from a batch after the "
                f"first (evolution_from = {start})")
    return None


_VISIBLE: dict[str, Callable[[TaskSpec, Schedule, Events, int], str | None]] = {
    "duplicates": _duplicates,
    "out_of_order": _out_of_order,
    "late_arrival": _late_arrival,
    "crash_retry": _crash_retry,
    "backfill": _backfill,
    "schema_evolution": _schema_evolution,
}
