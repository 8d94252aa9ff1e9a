"""`explain` over a results file: the minimal failing plan of every failing cell, stored in the
results file's `minimal_plans` table, and the shape each plan has.

A cell's artifact is explained once per task digest, on its first failing verdict in plan order
(snapshot, the controls, then each declared hazard, seeds in order). Already explained artifacts
are skipped, so the pass resumes; nothing else in the file changes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from arrivalbench.core.engine import DEFAULT_ENGINE, EngineName, Limits
from arrivalbench.core.grading import plan_kinds
from arrivalbench.core.task import load_spec
from arrivalbench.core.values import JSON
from arrivalbench.errors import UnknownName
from arrivalbench.explain import DEFAULT_BUDGET, explain
from arrivalbench.study.keys import current_versions
from arrivalbench.study.store import MinimalPlan, Store
from arrivalbench.words import count


def shape(doc: dict[str, JSON]) -> str:
    """A minimal plan's shape in words: the failure taxonomy made concrete."""
    if doc.get("nondeterministic"):
        return "nondeterministic"
    minimal = doc.get("minimal")
    if not isinstance(minimal, dict):
        return "passes with the every-batch check"
    timeline = doc["timeline"]
    repeats = [(e["batch"], r["repeat"]) for e in timeline for r in e["records"]]
    again_same = any(r["repeat"] and not _first_in(timeline, e, r) for e in timeline
                     for r in e["records"])
    aborts = [e["abort"] for e in timeline if e["abort"] is not None]
    records, batches = minimal["records"], minimal["batches"]
    repeated = sum(1 for _, r in repeats if r)
    suffix = "" if doc["verdict"] != "ERROR" else f" ({doc['failure']['as'][0]} error)"
    if aborts:
        where = ["after the last statement" if a["after_statement"] >= a["of"] else
                 "mid-script" for a in aborts]
        kinds = sorted(set(where))
        said = "one abort" if len(aborts) == 1 else f"{len(aborts)} aborts"
        return f"{said} {' and '.join(kinds)}{suffix}"
    if any(e["evolution"] for e in timeline):
        return f"the new column{suffix}"
    if repeated:
        what = "one record" if records == 1 else f"{records} records"
        place = "in one batch" if again_same else "in a later batch"
        return f"{what} twice {place}{suffix}"
    if batches == 1:
        return f"{count(records, 'record')} in one batch{suffix}"
    return f"{records} records over {batches} batches, none repeated{suffix}"


def _first_in(timeline: Sequence[dict[str, JSON]], entry: dict[str, JSON],
              record: dict[str, JSON]) -> bool:
    """Whether `record` (a repeat in `entry`) was first delivered in an earlier batch."""
    return any(r["key"] == record["key"] and r["source"] == record["source"]
               for e in timeline if e["batch"] < entry["batch"] for r in e["records"])


@dataclass(frozen=True)
class StudySummary:
    explained: int
    skipped: int
    shapes: dict[str, int]


def explain_results(results: Path, budget: int = DEFAULT_BUDGET, arms: Sequence[str] = (),
                    limits: Limits = Limits(),
                    note: Callable[[str], None] | None = None,
                    engine: EngineName = DEFAULT_ENGINE) -> StudySummary:
    """Explain the failing cells graded on `engine`, replaying on it; their plans are stored
    under that engine's version (see `store.version_tag`), apart from another engine's."""
    say = note or (lambda _m: None)
    engine_version, harness_version = current_versions(engine)
    # A missing file is an error (a read-only store never creates one), not a new empty file.
    with Store(results, read_only=not results.is_file()) as store:
        known = store.arms()
        unknown = [arm for arm in arms if arm not in known]
        if unknown:
            raise UnknownName("arms", unknown[0], known, problem=f"not in {results}")
        tasks = store.tasks()
        cells = [c for c in store.cells(list(arms) or None, engine) if c.artifact is not None]
        done = store.explained(engine_version, harness_version)
        failing = store.failing_verdicts(engine_version, harness_version)
        explained = skipped = 0
        seen: set[tuple[str, str]] = set()
        for cell in sorted(cells, key=lambda c: (c.task, c.arm, c.replicate)):
            key = (cell.task_digest, str(cell.artifact))
            if key in seen or key not in failing:
                continue
            seen.add(key)
            if key in done:
                skipped += 1
                continue
            stored = tasks.get(cell.task_digest)
            if stored is None:
                continue
            spec = load_spec(stored.source)
            if spec.digest != cell.task_digest:
                say(f"{cell.task}: the task changed since it was graded; not explained")
                continue
            order = plan_kinds(spec.hazards)
            kind, seed, _v = min(failing[key], key=lambda f: (
                order.index(f[0]) if f[0] in order else len(order), f[1]))
            say(f"explaining {cell.arm} {cell.task} ({kind}, seed {seed})")
            found = explain(spec, store.artifact_sql(key[1]), kind, seed, budget=budget,
                            limits=limits, engine=engine)
            doc = found.document()
            minimal = doc["minimal"] if isinstance(doc["minimal"], dict) else {}
            store.add_minimal_plan(MinimalPlan(
                key[0], key[1], engine_version, harness_version, spec.id, kind, seed,
                str(doc["verdict"]), shape(doc), minimal.get("records"),
                minimal.get("batches"), minimal.get("aborts"), minimal.get("one_minimal"),
                minimal.get("replays"), bool(doc["nondeterministic"]), doc))
            explained += 1
        shapes = dict(Counter(shape_ for shape_, _ in store.minimal_plans()))
    return StudySummary(explained, skipped, dict(sorted(shapes.items(),
                                                         key=lambda kv: (-kv[1], kv[0]))))


def read(results: Path) -> list[dict[str, JSON]]:
    """Every stored explain document with its shape (read-only)."""
    with Store(results, read_only=True) as store:
        return [{**document, "shape": shape_} for shape_, document in store.minimal_plans()]
