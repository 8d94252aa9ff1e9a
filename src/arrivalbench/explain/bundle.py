"""The repro bundle: a task folder cut down to the minimal plan's records, the pipeline, the
plan, and the one command that reproduces the failure."""

from __future__ import annotations

import shlex
from pathlib import Path

import yaml

from arrivalbench.core.engine import DEFAULT_ENGINE, EngineName
from arrivalbench.core.log import load_log
from arrivalbench.core.plans import document as plan_document
from arrivalbench.core.schedules import Schedule
from arrivalbench.core.task import Landing, TaskSpec
from arrivalbench.core.values import canonical_json, to_json
from arrivalbench.errors import ArrivalBenchError


def check_out(out: Path) -> None:
    """Refuse a folder that holds anything, before any work is done."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ArrivalBenchError(f"repro bundle folder {out}: exists and is not an empty "
                                "folder; give a new or empty folder for the repro bundle")


def command(out: Path, every_batch: bool, engine: EngineName = DEFAULT_ENGINE, *,
            landing: Landing = "batch", allowance: str = "") -> str:
    """The `grade --plan` command that reproduces, under the explained grade's options
    (`allowance` as a verdict's key holds it)."""
    words = ["arrivalbench", "grade", str(out / "pipeline.sql"), "--task", str(out),
             "--plan", str(out / "plan.json")]
    words += [] if engine == DEFAULT_ENGINE else ["--engine", engine]
    words += [] if landing == "batch" else ["--landing", landing]
    words += ["--allowed-lateness", allowance] if allowance else []
    return shlex.join(words + (["--every-batch"] if every_batch else []))


def write(out: Path, spec: TaskSpec, script: str, plan: Schedule, every_batch: bool,
          engine: EngineName = DEFAULT_ENGINE, *, landing: Landing = "batch",
          allowance: str = "") -> str:
    """Write the bundle into `out` (new or empty) and return the command that reproduces."""
    check_out(out)
    name = out.resolve().name
    log = load_log(spec)
    used: dict[str, list[int]] = {s.name: [] for s in spec.sources}
    for source_name, row in dict.fromkeys(r for b in plan.batches for r in b.records):
        used[source_name].append(row)
    document = yaml.safe_load((spec.path / "task.yaml").read_text(encoding="utf-8"))
    document["id"] = name  # a task's id is its folder's name
    document.pop("negatives", None)
    (out / "log").mkdir(parents=True, exist_ok=True)
    (out / "task.yaml").write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True),
                                   encoding="utf-8")
    for target in spec.targets:  # reference.sql, or reference.<name>.sql for each of several
        (out / target.reference_file).write_text(target.reference_sql, encoding="utf-8")
    (out / "gold.sql").write_text(spec.gold_sql, encoding="utf-8")
    (out / "pipeline.sql").write_text(script, encoding="utf-8")
    for source in spec.sources:
        table = log.tables[source.name]
        columns = [c.name for c in source.columns]
        lines = []
        for row in sorted(used[source.name]):
            record = {c: to_json(table.column(c)[row].as_py()) for c in columns}
            lines.append(canonical_json(record) + "\n")
        (out / "log" / f"{source.name}.jsonl").write_text("".join(lines), encoding="utf-8")
    plan_doc = plan_document(spec, plan)
    plan_doc["task"] = name
    (out / "plan.json").write_text(canonical_json(plan_doc) + "\n", encoding="utf-8")
    repro = command(out, every_batch, engine, landing=landing, allowance=allowance)
    (out / "README.md").write_text(
        f"# Repro: {spec.id}\n\nThe minimal delivery plan on which `pipeline.sql` fails "
        f"({plan.kind}, seed {plan.seed}, shrunk). Reproduce with:\n\n    {repro}\n",
        encoding="utf-8")
    return repro
