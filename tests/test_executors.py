"""Executors: the same verdict bytes whatever the executor, worker count or order of work; a
worker that dies is an ERROR for the one replay that killed it, and the run goes on."""

from __future__ import annotations

import ctypes
import dataclasses
import json
import os
import random
import shutil
import signal
from collections.abc import Sequence
from pathlib import Path

import pytest

from arrivalbench.core.artifacts import script_ref
from arrivalbench.core.grading import STOPPED, GradeOptions, plan
from arrivalbench.core.task import TaskSpec, load_spec, source_of
from arrivalbench.errors import ArrivalBenchError, TaskError, WorkerError
from arrivalbench.study.executors import (
    HarnessError,
    LocalExecutor,
    RayExecutor,
    Result,
    Unit,
    compute,
    make,
)
from arrivalbench.study.store import Key
from arrivalbench.study.template import template_sql


def units_for(spec: TaskSpec, scripts: Sequence[str], seeds: int = 1,
              kinds: Sequence[str] = ()) -> list[Unit]:
    return [Unit(source_of(spec), spec.digest, script_ref(sql), p.schedule, p.seed)
            for sql in scripts for p in plan(spec, seeds, kinds)]


DIED = STOPPED["died"][1]
TIMED_OUT = STOPPED["timed_out"][1]


def collect(executor: object, units: Sequence[Unit]) -> dict[Key, str]:
    got: dict[Key, str] = {}

    def on_results(batch: list[tuple[Unit, Result]]) -> None:
        for unit, result in batch:
            assert unit.key() not in got, "a unit was graded twice"
            got[unit.key()] = result.verdict.json()

    executor.run(units, on_results)  # type: ignore[attr-defined]
    return got


@pytest.fixture(scope="module")
def corpus() -> list[Unit]:
    """Two tasks, three artifacts each (gold, a negative, the template), on a few schedules."""
    out = []
    for task in ("store_daily_revenue", "web_page_views"):
        spec = load_spec(task)
        out += units_for(spec, [spec.gold_sql, spec.negatives[0].sql, template_sql(spec)],
                         2, ["snapshot", "duplicates", "late_arrival"])
    return out


@pytest.fixture(scope="module")
def reference(corpus: list[Unit]) -> dict[Key, str]:
    """Every unit graded in this process, one after the other."""
    return {u.key(): compute(u).verdict.json() for u in corpus}


def test_local_pool_bytes_match_in_process_grading_for_any_workers_and_order(
        corpus: list[Unit], reference: dict[Key, str]) -> None:
    kinds = {r.split('"verdict":"')[1][:4] for r in reference.values()}
    assert kinds >= {"PASS", "FAIL"}  # the corpus holds more than passes
    one = LocalExecutor(1)
    assert collect(one, corpus) == reference
    shuffled = list(corpus)
    random.Random(7).shuffle(shuffled)
    two = LocalExecutor(2)
    assert collect(two, shuffled) == reference
    assert len(two.stats.peak_rss) == 2 and all(v > 10_000_000 for v in
                                                two.stats.peak_rss.values())
    assert two.stats.deaths == 0


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore::ResourceWarning")
def test_ray_bytes_match_even_for_a_dying_worker_and_ray_is_shut_down(
        corpus: list[Unit], reference: dict[Key, str], tiny: TaskSpec,
        monkeypatch: pytest.MonkeyPatch) -> None:
    ray = pytest.importorskip("ray")
    # Ray's workers import `dying` from this file: put the tests folder on their path.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")]))
    doomed = units_for(tiny, [f"{tiny.gold_sql}\n{EXIT}\n"], 1, ["snapshot", "in_order"])
    local = collect(LocalExecutor(1, work=dying), doomed)
    executor = make("ray", 2)
    assert isinstance(executor, RayExecutor)
    executor.work = dying
    got = collect(executor, list(reversed(corpus)) + doomed)
    assert {k: got[k] for k in reference} == reference
    assert {k: got[k] for k in local} == local  # the death verdict too
    assert sum(DIED in record for record in got.values()) == 1
    assert executor.stats.deaths == 1
    assert not ray.is_initialized()


# -- dying workers ---------------------------------------------------------------------------

EXIT, KILL, SEGV = "-- die: exit", "-- die: kill", "-- die: segv"


def dying(unit: Unit) -> Result:
    """Grades like `compute`, except that it kills its own process on a marked script's
    in_order replay (module level, so that spawned workers can import it)."""
    if unit.schedule == "in_order" and unit.seed == 0:
        if EXIT in unit.artifact.text:
            os._exit(3)
        if KILL in unit.artifact.text:
            os.kill(os.getpid(), signal.SIGKILL)
        if SEGV in unit.artifact.text:
            ctypes.string_at(0)  # reads address 0: a segmentation fault
    return compute(unit)


def failing(unit: Unit) -> Result:
    if unit.schedule == "trickle":
        raise RuntimeError("the oracle broke")
    return compute(unit)


def test_a_dying_worker_is_an_error_for_its_replay_and_the_run_goes_on(tiny: TaskSpec) -> None:
    scripts = [tiny.gold_sql] + [f"{tiny.gold_sql}\n{marker}\n" for marker in (EXIT, KILL, SEGV)]
    units = units_for(tiny, scripts, 2, ["snapshot", "in_order"])
    executor = LocalExecutor(2, work=dying)
    got = collect(executor, units)
    assert set(got) == {u.key() for u in units}  # every unit has exactly one verdict
    died = sorted(k for k, record in got.items() if DIED in record)
    assert [(k.schedule, k.seed) for k in died] == [("in_order", 0)] * 3
    for key in died:
        assert '"verdict":"ERROR"' in got[key]
        assert '"detail":{"batch":null,"message":"' + DIED + '","phase":"run","statement":null}' \
            in got[key]
        assert str(os.getpid()) not in got[key]
    # Every other replay, including in_order seed 1 of the marked scripts, graded normally.
    others = [u for u in units if u.key() not in died]
    assert all('"verdict":"PASS"' in got[u.key()] for u in others)
    assert executor.stats.deaths == 3
    assert sorted(executor.stats.causes) == ["SIGKILL", "SIGSEGV", "exit status 3"]


def test_the_death_verdict_is_the_same_bytes_on_every_run(tiny: TaskSpec) -> None:
    units = units_for(tiny, [f"{tiny.gold_sql}\n{EXIT}\n"], 1, ["snapshot", "in_order"])
    first = collect(LocalExecutor(1, work=dying), units)
    second = collect(LocalExecutor(2, work=dying), list(reversed(units)))
    assert first == second


def test_an_exception_in_a_worker_stops_the_run_keeping_what_finished(tiny: TaskSpec) -> None:
    units = units_for(tiny, [tiny.gold_sql], 1, ["snapshot", "in_order", "trickle"])
    seen: list[str] = []

    def on_results(batch: list[tuple[Unit, Result]]) -> None:
        seen.extend(u.schedule for u, _r in batch)

    with pytest.raises(WorkerError, match=r"grading .*tiny trickle seed 0: RuntimeError: the "
                                          "oracle broke") as raised:
        LocalExecutor(1, work=failing).run(units, on_results)
    assert "snapshot" in seen and "in_order" in seen and "trickle" not in seen
    # A bug, not bad input: it keeps the worker's own traceback, down to the raising line.
    assert not isinstance(raised.value, ArrivalBenchError)
    assert 'raise RuntimeError("the oracle broke")' in raised.value.worker_traceback
    assert "in failing" in str(raised.value)


def broken_task(unit: Unit) -> Result:
    raise TaskError("task.yaml: not valid YAML at line 3; fix the syntax")


def test_bad_input_met_in_a_worker_stays_one_line_of_bad_input(tiny: TaskSpec) -> None:
    units = units_for(tiny, [tiny.gold_sql], 1, ["snapshot"])
    with pytest.raises(HarnessError) as raised:
        LocalExecutor(1, work=broken_task).run(units, lambda batch: None)
    assert str(raised.value).endswith(": task.yaml: not valid YAML at line 3; fix the syntax")
    assert "\n" not in str(raised.value)


def test_a_task_changed_under_the_run_is_a_harness_error(tiny: TaskSpec) -> None:
    [unit] = units_for(tiny, [tiny.gold_sql])[:1]
    stale = dataclasses.replace(unit, task_digest="sha256:old")
    with pytest.raises(HarnessError, match="files changed since the run was planned"):
        compute(stale)


def test_make_rejects_an_unknown_executor() -> None:
    with pytest.raises(ArrivalBenchError, match="executor 'dask': unknown"):
        make("dask")
    assert make("local", 3).workers == 3


HANG = "-- hangs its worker"


def hang_on_marker(unit: Unit) -> Result:
    """A replay stuck where no bound inside the worker reaches it (a C loop, a lost lock)."""
    if unit.artifact.text.startswith(HANG):
        import time

        time.sleep(3600)
    return compute(unit)


def test_a_worker_past_its_units_wall_clock_is_killed_and_the_run_goes_on(
        tiny: TaskSpec, monkeypatch: pytest.MonkeyPatch) -> None:
    from arrivalbench.core.engine import Limits
    from arrivalbench.study.executors import unit

    monkeypatch.setattr(unit, "MARGIN", 0.5)
    limits = Limits(replay_seconds=1.0)
    units = [dataclasses.replace(u, options=GradeOptions(limits=limits))
             for u in units_for(tiny, [HANG + "\n" + tiny.gold_sql, tiny.gold_sql], 1,
                                ["duplicates"])]
    executor = LocalExecutor(1, work=hang_on_marker)
    got = collect(executor, units)
    details = sorted(json.loads(v)["detail"].get("phase", "-") for v in got.values())
    assert details == ["-", "timeout"]
    assert any(TIMED_OUT in v for v in got.values())
    assert executor.stats.causes == ["timeout"]


def test_a_result_for_another_unit_is_a_bug_not_bad_input(tiny: TaskSpec) -> None:
    from arrivalbench.study.executors import ProtocolError

    first, second = units_for(tiny, [tiny.gold_sql], 1, ["duplicates", "late_arrival"])
    with pytest.raises(ProtocolError) as raised:
        first.check(compute(second))
    assert isinstance(raised.value, WorkerError)
    assert not isinstance(raised.value, ArrivalBenchError)


def test_on_ray_an_error_is_blamed_on_the_unit_that_raised(tiny: TaskSpec) -> None:
    pytest.importorskip("ray")
    good, stale = units_for(tiny, [tiny.gold_sql], 1, ["duplicates", "late_arrival"])
    culprit = dataclasses.replace(stale, task_digest="sha256:old")
    with pytest.raises(HarnessError) as raised:
        RayExecutor(1, chunk=4).run([good, culprit], lambda batch: None)
    assert str(raised.value).startswith(f"{culprit.where()}: ")
    assert "late_arrival" in culprit.where() and "late_arrival" not in good.where()


# -- content, not paths ----------------------------------------------------------------------


def test_a_worker_grades_from_the_content_it_was_sent_once_the_folder_is_gone(
        tiny: TaskSpec) -> None:
    from arrivalbench.study.executors import content

    units = units_for(tiny, [tiny.gold_sql], 1, ["in_order", "duplicates"])
    here = [compute(u).verdict.json() for u in units]
    sent = content.bundles(units)
    assert set(sent) == {tiny.digest}
    shutil.rmtree(tiny.path)
    fetched: list[str] = []

    def fetch(bundle: content.Bundle) -> content.Bundle:
        fetched.append(bundle.name)
        return bundle

    there = [content.localize(u, fetch, sent) for u in units]
    assert fetched == [tiny.path.name]  # written once per process, then reused
    assert all(Path(u.task).is_dir() and u.task != str(tiny.path) for u in there)
    assert [compute(u).verdict.json() for u in there] == here


def test_a_builtin_task_the_worker_holds_is_read_from_its_package() -> None:
    from arrivalbench.study.executors import content

    spec = load_spec("store_daily_revenue")
    unit = units_for(spec, [spec.gold_sql], 1, ["in_order"])[0]
    assert content.localize(unit, lambda ref: pytest.fail("fetched"),
                            {spec.digest: object()}) is unit


def test_a_workers_peak_is_its_own_not_its_parents() -> None:
    """A worker's peak memory is the worker's: the 400 MB this test process holds when it
    starts one must not show in the worker's figure (ru_maxrss would carry it across exec)."""
    import subprocess
    import sys

    held = bytearray(400 * 1024 * 1024)
    held[::4096] = b"\x01" * len(held[::4096])  # touched, so resident
    done = subprocess.run([sys.executable, "-c", "from arrivalbench.study.executors import "
                           "peak_rss; print(peak_rss())"], capture_output=True, text=True,
                          check=True)
    assert 0 < int(done.stdout) < 300 * 1024 * 1024
    del held
