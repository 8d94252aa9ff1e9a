"""The admissibility gate: it passes a sound task, and it catches broken copies of real tasks
made here, one defect at a time. The whole corpus is gated by `make gate`, a step of CI of its
own."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from arrivalbench.core.grading import schedule
from arrivalbench.core.schedules import Batch, Schedule
from arrivalbench.core.task import BUILTIN_DIR, load_spec
from arrivalbench.corpus import gate
from arrivalbench.corpus.labels import tier
from arrivalbench.corpus.perturbation import visible
from arrivalbench.study.executors import LocalExecutor
from conftest import cli, write_task


def copy_task(tmp_path: Path, task_id: str) -> Path:
    folder = tmp_path / task_id
    shutil.copytree(BUILTIN_DIR / task_id, folder)
    return folder


def edit_yaml(folder: Path, change: Callable[[dict[str, Any]], None]) -> None:
    data = yaml.safe_load((folder / "task.yaml").read_text(encoding="utf-8"))
    change(data)
    (folder / "task.yaml").write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True),
                                      encoding="utf-8")


# Enough to show a defect that does not depend on where a hazard strikes: a third of the work.
ONE_SEED = (0,)


def run(folder: Path, seeds: tuple[int, ...] = gate.GATE_SEEDS) -> gate.Report:
    return gate.run(gate.load([folder]), workers=2, seeds=seeds)


def found(report: gate.Report, check: str, schedule_kind: str | None = None
          ) -> list[gate.Finding]:
    return [f for f in report.findings
            if f.check == check and (schedule_kind is None or f.schedule == schedule_kind)]


def test_a_sound_task_passes_and_each_artifact_is_replayed_at_most_once_per_point(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "gate", "store_daily_revenue")
    assert (code, err) == (0, "")  # the success line is the answer: on stdout
    assert out.count("\n") == 1 and out.rstrip().endswith(": every check passes")
    counted = re.search(r", (\d+) replays, ", out)
    assert counted is not None, out
    replays = int(counted.group(1))
    spec = load_spec("store_daily_revenue")
    per_artifact = len(gate.points(spec))
    assert per_artifact == 1 + 3 * (2 + len(spec.hazards))
    # every artifact once per point, plus one replay per seed without the withheld records;
    # a negative stops at the first seed that fails a hazard it declares
    # (and `incremental.sql`, which every built-in task ships, once per point too)
    artifacts = 1 + len(spec.negatives) + (spec.incremental_sql is not None)
    most = per_artifact * artifacts + len(gate.GATE_SEEDS)
    saved = sum(len(n.fails) * (len(gate.GATE_SEEDS) - 1) for n in spec.negatives)
    assert most - saved <= replays < most


def test_catches_a_hazard_that_does_not_perturb_delivery(tmp_path: Path) -> None:
    """Every customer's messages collapsed into one version each: no version can arrive before
    an earlier one, so out_of_order cannot invert anything."""
    folder = copy_task(tmp_path, "customer_current_address")
    log = folder / "log" / "customer_changes.jsonl"
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    for record in records:
        record["customer_id"] = record["change_id"] - 880_000_000
        record["version"] = 1
    log.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records),
                   encoding="utf-8")

    def only_two_hazards(data: dict[str, Any]) -> None:
        data["hazards"] = ["out_of_order", "duplicates"]
        del data["evolution"]
        data["negatives"] = {"last_arrival_wins": {"fails": ["out_of_order"]},
                             "history_max_version": {"fails": ["duplicates"]}}

    edit_yaml(folder, only_two_hazards)
    report = run(folder)
    missing = found(report, "perturbation", "out_of_order")
    assert sorted(f.seed for f in missing) == list(gate.GATE_SEEDS)
    assert all("no later version of an entity arrives in an earlier batch" in f.reason
               for f in missing)
    assert found(report, "perturbation", "duplicates") == []
    # and the hazard is vacuous: the negative that should show it cannot fail it
    assert found(report, "coverage", "out_of_order")


def test_catches_a_negative_that_declares_more_than_it_fails(tmp_path: Path) -> None:
    folder = copy_task(tmp_path, "store_daily_revenue")
    edit_yaml(folder, lambda d: d["negatives"]["max_watermark"]["fails"].append("duplicates"))
    report = run(folder, ONE_SEED)
    (finding,) = report.findings
    assert (finding.check, finding.schedule, finding.seed) == \
        ("negative max_watermark", "duplicates", gate.ANY_SEED)
    assert finding.reason.startswith("declared to fail duplicates, but passes it on every gate "
                                     "seed (0)")
    assert finding.line().startswith(
        "store_daily_revenue: negative max_watermark: schedule duplicates, seed *: ")


def test_catches_a_negative_that_fails_snapshot(tmp_path: Path) -> None:
    folder = copy_task(tmp_path, "store_daily_revenue")
    script = (folder / "negatives" / "no_dedup.sql").read_text(encoding="utf-8")
    broken = script.replace("CAST(COALESCE(SUM(amount), 0) AS DECIMAL(12,2))",
                            "CAST(SUM(amount) AS DECIMAL(12,2))")
    assert broken != script
    (folder / "negatives" / "sum_of_amounts.sql").write_text(broken, encoding="utf-8")
    edit_yaml(folder, lambda d: d["negatives"].update(
        {"sum_of_amounts": {"fails": ["duplicates", "crash_retry", "backfill"]}}))
    report = run(folder, ONE_SEED)
    (snapshot,) = found(report, "negative sum_of_amounts", "snapshot")
    assert snapshot.seed == 0
    assert snapshot.reason.startswith("must pass every control, got FAIL")
    assert {f.check for f in report.findings} == {"negative sum_of_amounts"}


def test_catches_a_ticket_that_leaks_a_hazard_word(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Through the command, in one process: a line per failed check on stdout, exit status 1."""
    folder = copy_task(tmp_path, "store_daily_revenue")
    edit_yaml(folder, lambda d: d.update(
        ticket=d["ticket"] + "\nSome tills reconnect hours later and send their orders late.\n"))
    code, out, err = cli(capsys, "gate", str(folder), "--workers", "1")
    assert code == 1
    lines = out.splitlines()
    assert sorted(line.split(": ")[:4] for line in lines) == [
        ["store_daily_revenue", "leakage", "schedule -, seed -",
         "the budget prompt names a hazard"],
        ["store_daily_revenue", "leakage", "schedule -, seed -", "the ticket names a hazard"],
        ["store_daily_revenue", "leakage", "schedule -, seed -",
         "the unhinted prompt names a hazard"]]
    assert all("'late' (lateness)" in line for line in lines)
    assert err.count("\n") == 1 and "3 failed checks in 1 of 1 tasks" in err


def test_catches_a_gold_that_fails_a_declared_hazard(tmp_path: Path) -> None:
    folder = copy_task(tmp_path, "store_daily_revenue")
    shutil.copy(folder / "negatives" / "no_dedup.sql", folder / "gold.sql")
    report = run(folder, ONE_SEED)
    failing = {(f.schedule, f.seed) for f in found(report, "gold")}
    assert {"duplicates", "crash_retry", "backfill"} <= {s for s, _seed in failing}
    assert not {s for s, _seed in failing} & {"snapshot", "in_order", "trickle",
                                              "late_arrival", "out_of_order"}


def test_catches_a_reference_that_is_not_unique_on_the_key(tmp_path: Path) -> None:
    folder = copy_task(tmp_path, "store_daily_revenue")
    reference = (folder / "reference.sql").read_text(encoding="utf-8")
    (folder / "reference.sql").write_text(
        f"SELECT * FROM ({reference}) UNION ALL SELECT 12, DATE '2024-03-01', 1.00, 1",
        encoding="utf-8")
    report = run(folder, ONE_SEED)
    (finding,) = found(report, "reference")
    assert "not unique on the target key (store_id, day)" in finding.reason


def test_catches_a_hazard_no_negative_fails(tmp_path: Path) -> None:
    folder = copy_task(tmp_path, "store_daily_revenue")
    (folder / "negatives" / "max_watermark.sql").unlink()
    edit_yaml(folder, lambda d: d["negatives"].pop("max_watermark"))
    report = run(folder, ONE_SEED)
    assert sorted(f.schedule or "" for f in report.findings) == ["late_arrival", "out_of_order"]
    assert all(f.check == "coverage" and "no negative control declares it" in f.reason
               for f in report.findings)


# -- the perturbation checks read the schedule itself -------------------------------------------


@pytest.fixture(scope="module")
def store() -> Any:
    return load_spec("store_daily_revenue")


def relabel(sched: Schedule, kind: str, **changes: Any) -> Schedule:
    return replace(sched, kind=kind, **changes)


def test_a_control_relabelled_as_a_hazard_is_not_a_perturbation(store: Any) -> None:
    plain = schedule(store, "in_order", 0)
    for kind in ("duplicates", "out_of_order", "late_arrival", "crash_retry", "backfill"):
        assert visible(store, relabel(plain, kind), 7) is not None, kind


def test_real_hazard_schedules_are_visible(store: Any) -> None:
    for kind in store.hazards:
        for seed in gate.GATE_SEEDS:
            assert visible(store, schedule(store, kind, seed), 7) is None, (kind, seed)


def test_duplicates_need_both_an_in_batch_and_a_cross_batch_repeat(store: Any) -> None:
    plain = schedule(store, "in_order", 0)
    first = plain.batches[0].records
    in_batch_only = relabel(plain, "duplicates", batches=(
        Batch((*first, first[0])), *plain.batches[1:]))
    assert visible(store, in_batch_only, 7) == "no record is delivered again in a later batch"
    across_only = relabel(plain, "duplicates", batches=(
        *plain.batches, Batch((first[0],))))
    assert visible(store, across_only, 7) == \
        "no record is delivered again inside one batch"


def test_crash_retry_needs_an_abort_mid_script_and_one_after_the_last_statement(
        store: Any) -> None:
    real = schedule(store, "crash_retry", 0)
    # A one-statement script cannot be aborted in its middle.
    assert "in the middle of the gold's 1 statements" in (visible(store, real, 1) or "")
    only_after = relabel(real, "crash_retry", batches=tuple(
        replace(b, abort=1.0) if b.abort is not None else b for b in real.batches))
    assert "in the middle" in (visible(store, only_after, 7) or "")
    no_retry = relabel(real, "crash_retry", batches=tuple(
        b for i, b in enumerate(real.batches)
        if not (i > 0 and real.batches[i - 1].abort is not None)))
    assert "is not followed by a run of the same batch" in (visible(store, no_retry, 7) or "")


def test_backfill_redelivers_and_holds_back_after_newer_data(store: Any) -> None:
    real = schedule(store, "backfill", 0)
    seen = {r for b in real.batches[:-1] for r in b.records}
    redelivered_only = relabel(real, "backfill", batches=(
        *real.batches[:-1], Batch(tuple(r for r in real.batches[-1].records if r in seen))))
    assert "holds no record held back" in (visible(store, redelivered_only, 7) or "")


def test_schema_evolution_must_start_after_the_first_batch() -> None:
    spec = load_spec("web_page_views")
    real = schedule(spec, "schema_evolution", 0)
    assert visible(spec, real, 2) is None
    assert "does not appear from a batch after the first" in (
        visible(spec, replace(real, evolution_from=0), 2) or "")


def test_withheld_records_must_change_the_target(store: Any) -> None:
    """A final batch that only repeats delivered orders leaves the gold's table unchanged."""
    plain = schedule(store, "in_order", 0)
    repeat = relabel(plain, "late_arrival", batches=(*plain.batches, plain.batches[0]))
    assert "repeats records delivered before" in (visible(store, repeat, 7) or "")
    assert gate._withheld_changes_target(store, repeat) == (
        "the withheld records do not change the target: the gold without the final batch "
        "already equals the reference")
    assert gate._withheld_changes_target(store, schedule(store, "late_arrival", 0)) is None


# -- the command ---------------------------------------------------------------------------------


def test_gate_command_refuses_an_unknown_task(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "gate", "no_such_task")
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith("arrivalbench: error: unknown task")


def test_the_gold_must_be_right_after_every_run_of_a_hazard(tmp_path: Path) -> None:
    from conftest import write_task
    from test_every_batch import LATE_BLOOMER

    folder = write_task(tmp_path, gold=LATE_BLOOMER)
    result = gate.run_job(str(folder), "gold", (0,))
    gold = [f for f in result.findings if f.check == "gold"]
    # Right at the end of every schedule, wrong before: only the hazards are checked per run.
    assert {f.schedule for f in gold} == {"late_arrival", "duplicates", "crash_retry"}
    assert all("diverges after batch" in f.reason and "final table is right" in f.reason
               for f in gold)


# -- the executor --------------------------------------------------------------------------------


def dies_under_the_negative(job: gate.Job) -> gate.JobResult:
    """The gate's work, except that the worker dies under the negative `no_dedup` (module
    level, so that spawned workers can import it)."""
    if job.artifact == "no_dedup":
        os._exit(3)
    return gate.work(job)


def test_a_worker_that_dies_under_a_job_fails_that_artifact_and_the_gate_goes_on(
        tmp_path: Path) -> None:
    from conftest import write_task

    specs = gate.load([write_task(tmp_path)])
    sound = gate.run(specs, workers=1, seeds=ONE_SEED)
    assert {f.check for f in sound.findings} == {"coverage"}  # the tiny task lacks a negative
    executor = LocalExecutor(1, work=dies_under_the_negative)
    report = gate.run(specs, seeds=ONE_SEED, executor=executor)
    assert executor.stats.causes == ["exit status 3"]
    lines = [f.line() for f in report.findings if f.check != "coverage"]
    assert lines == [f"tiny: negative no_dedup: schedule -, seed -: {gate.DIED}"]
    # With its only negative dead, no hazard is shown to be real.
    vacuous = {f.schedule for f in report.findings if f.check == "coverage"}
    assert vacuous == set(specs[0].hazards) > {f.schedule for f in sound.findings}


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore::ResourceWarning")
def test_the_gate_on_ray_reports_the_same_findings(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    from conftest import TINY_NO_DEDUP, write_task

    # Two negatives, one declaring a hazard it passes: findings of three kinds.
    folder = write_task(tmp_path, negatives={"no_dedup": TINY_NO_DEDUP, "same": TINY_NO_DEDUP})
    edit_yaml(folder, lambda d: d["negatives"].update(
        same={"fails": [*d["negatives"]["no_dedup"]["fails"], "late_arrival"]}))
    specs = gate.load([folder])
    local = gate.run(specs, workers=2, seeds=ONE_SEED)
    on_ray = gate.run(specs, workers=2, seeds=ONE_SEED, executor="ray")
    assert {f.check for f in local.findings} == {"negative same", "coverage"}
    assert [f.line() for f in on_ray.findings] == [f.line() for f in local.findings]
    assert on_ray.replays == local.replays  # the same early stops


def test_a_built_in_task_without_tier_or_with_an_unknown_family_is_a_finding() -> None:
    spec = load_spec("store_daily_revenue")
    assert tier(spec) == []
    found = tier(replace(spec, tier_declared=False, family="revenue"))
    assert [f.check for f in found] == ["tier", "tier"]
    assert "names no tier" in found[0].reason and "core, hard" in found[0].reason
    assert "family 'revenue' is unknown" in found[1].reason
    assert "names no family" in tier(replace(spec, family=None))[0].reason


def test_a_users_task_needs_no_tier_or_family(tmp_path: Path) -> None:
    spec = load_spec(write_task(tmp_path))
    assert spec.family is None and tier(spec) == []
