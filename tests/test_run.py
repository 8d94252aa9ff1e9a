"""`arrivalbench run`: arms into one results file, resume (also after a real SIGKILL), more arms
added to the same file, bad options, and `grid.grade_arms` for model arms."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from arrivalbench.core.artifacts import script_ref
from arrivalbench.core.grading import plan
from arrivalbench.core.task import load_spec
from arrivalbench.study import grid
from arrivalbench.study.arms import BUILTIN_ARMS
from arrivalbench.study.store import Cell, Store
from conftest import TINY_NO_DEDUP, cli, write_task

POINTS = 6  # the tiny task with --seeds 1: snapshot, in_order, trickle and three hazards


def rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_run_grades_the_default_arms_and_a_second_run_grades_nothing(
        tmp_path: Path, tiny_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "r.duckdb"
    assert len(plan(load_spec(tiny_dir), 1)) == POINTS
    code, out, err = cli(capsys, "run", "--task", str(tiny_dir), "--seeds", "1",
                         "--workers", "2", "--results", str(results))
    assert code == 0, err
    assert err == ""
    lines = {line.split()[0]: line.split() for line in out.splitlines()
             if line.split() and line.split()[0] in BUILTIN_ARMS}
    # arm, cells, snapshot PASS (n/N p%), hazard FAIL|ERROR (n/N p%), silent, loud, control
    assert lines["gold"][1:6] == ["1", "1/1", "100%", "0/1", "0%"]
    assert lines["negatives"][1:8] == ["1", "1/1", "100%", "1/1", "100%", "1", "0"]
    assert lines["template"][1:6] == ["1", "1/1", "100%", "0/1", "0%"]
    assert f"{3 * POINTS} replays graded" in out and "0 already graded" in out

    assert rows(results, "SELECT arm, task, replicate, provenance->>'negative' FROM cells "
                         "ORDER BY arm") == [("gold", "tiny", 0, None),
                                            ("negatives", "tiny", 0, "no_dedup"),
                                            ("template", "tiny", 0, None)]
    assert rows(results, "SELECT count(*), count(DISTINCT artifact) FROM verdicts") == [
        (3 * POINTS, 3)]
    assert rows(results, "SELECT status, graded, skipped, executor, workers, seeds, arms, tasks, "
                         "command LIKE 'arrivalbench run --task%' FROM runs") == [
        ("finished", 3 * POINTS, 0, "local", 2, 1, ["gold", "negatives", "template"], ["tiny"],
         True)]
    assert rows(results, "SELECT source FROM tasks") == [(str(tiny_dir.resolve()),)]
    # Idiom tags are stored with each artifact (the extractor ships with the package).
    assert rows(results, "SELECT count(*) FROM artifacts WHERE idioms IS NOT NULL") == [(3,)]

    code, out, _ = cli(capsys, "run", "--task", str(tiny_dir), "--seeds", "1", "--results",
                       str(results))
    assert code == 0
    assert "0 replays graded" in out and f"{3 * POINTS} already graded" in out
    assert rows(results, "SELECT count(*) FROM timings") == [(3 * POINTS,)]
    assert rows(results, "SELECT run_id, graded, skipped FROM runs ORDER BY run_id")[1] == (
        2, 0, 3 * POINTS)


def test_more_arms_and_seeds_add_to_the_file_and_shared_artifacts_grade_once(
        tmp_path: Path, tiny_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "r.duckdb"
    assert cli(capsys, "run", "--arm", "gold", "--task", str(tiny_dir), "--seeds", "1",
               "--workers", "1", "--results", str(results))[0] == 0
    folder = tmp_path / "subs"
    folder.mkdir()
    (folder / "tiny.sql").write_text(load_spec(tiny_dir).gold_sql)  # the gold script again
    (folder / "tiny").mkdir()
    (folder / "tiny" / "1.sql").write_text(TINY_NO_DEDUP)
    (folder / "tiny" / "2.sql").write_text("")
    code, out, err = cli(capsys, "run", "--submissions", str(folder), "--arm-name", "humans",
                         "--task", str(tiny_dir), "--seeds", "1", "--workers", "1",
                         "--results", str(results))
    assert code == 0
    assert err.strip() == (
        f"arrivalbench: warning: {folder / 'tiny' / '2.sql'}: empty; a pipeline holds at least "
        "one SQL statement; skipped")
    # Only the new script is graded; the copy of gold shares gold's verdicts.
    assert f"{POINTS} replays graded" in out and f"{POINTS} already graded" in out
    assert "humans" in out and "gold" not in out.split("humans")[1]
    assert rows(results, "SELECT arm, replicate FROM cells ORDER BY arm, replicate") == [
        ("gold", 0), ("humans", 0), ("humans", 1)]
    assert rows(results, "SELECT count(*) FROM verdicts") == [(2 * POINTS,)]
    # More seeds: only the new seeds' replays are graded.
    code, out, _ = cli(capsys, "run", "--arm", "gold", "--task", str(tiny_dir), "--seeds", "2",
                       "--workers", "1", "--results", str(results))
    assert code == 0
    assert "5 replays graded" in out and f"{POINTS} already graded" in out


@pytest.mark.parametrize(("args", "message"), [
    (["--arm", "golden"], "Invalid value for '--arm'"),
    (["--arm-name", "x"], "names a folder of submissions"),
    (["--task", "no_such_task"], "unknown task 'no_such_task'"),
    (["--workers", "0"], "Invalid value for '--workers'"),
    (["--seeds", "0"], "Invalid value for '--seeds'"),
    (["--executor", "dask"], "Invalid value for '--executor'"),
    (["--submissions", "EMPTY"], "no usable submission"),
    (["--submissions", "MISSING"], "no such folder"),
    (["--results", "DIR"], "Invalid value for '--results'"),
])
def test_bad_options_are_one_line_and_exit_2(tmp_path: Path, tiny_dir: Path,
                                             capsys: pytest.CaptureFixture[str],
                                             args: list[str], message: str) -> None:
    (tmp_path / "empty").mkdir()
    names = {"EMPTY": str(tmp_path / "empty"), "MISSING": str(tmp_path / "missing"),
             "DIR": str(tmp_path)}
    args = [names.get(a, a) for a in args]
    results = ["--results", str(tmp_path / "r.duckdb")] if "--results" not in args else []
    code, out, err = cli(capsys, "run", "--task", str(tiny_dir), *results, *args)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("arrivalbench: error:"), err
    assert message in err


def test_the_cli_arm_choices_are_the_builtin_arms() -> None:
    from arrivalbench.cli import app

    command = app.commands["run"]  # type: ignore[attr-defined]
    option = next(p for p in command.params if p.name == "arms")
    assert tuple(option.type.choices) == BUILTIN_ARMS


def test_ray_executor_needs_its_extra(tmp_path: Path, tiny_dir: Path,
                                      monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    code, _, err = cli(capsys, "run", "--task", str(tiny_dir), "--seeds", "1", "--executor",
                       "ray", "--results", str(tmp_path / "r.duckdb"))
    assert code == 2
    assert "pip install 'arrivalbench[ray]'" in err
    assert not (tmp_path / "r.duckdb").exists()  # refused before anything was written


# -- resume after a real SIGKILL -------------------------------------------------------------


def test_sigkill_mid_run_then_resume_grades_no_key_twice(tmp_path: Path) -> None:
    task = write_task(tmp_path)
    exe = str(Path(sys.executable).parent / "arrivalbench")
    total = 3 * len(plan(load_spec(task), 4))

    def command(results: Path, workers: int) -> list[str]:
        return [exe, "run", "--task", str(task), "--seeds", "4", "--workers", str(workers),
                "--results", str(results)]

    killed = tmp_path / "killed.duckdb"
    wal = Path(f"{killed}.wal")
    process = subprocess.Popen(command(killed, 1), stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    # The parent commits each verdict as it arrives: its write-ahead log grows by ~1.4 kB per
    # verdict after ~10 kB of cells and artifacts. Kill it some verdicts in.
    while (not wal.exists() or wal.stat().st_size < 30_000) and process.poll() is None:
        assert time.monotonic() < deadline, "the run wrote nothing"
        time.sleep(0.01)
    workers = subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True,
                             text=True).stdout.split() if shutil.which("pgrep") else []
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL
    # The worker sees its pipe close and exits after the replay it is on.
    deadline = time.monotonic() + 30
    while workers and time.monotonic() < deadline:
        workers = [pid for pid in workers if _running(pid)]
        time.sleep(0.05)
    assert workers == [], "a worker outlived its killed run"

    stored = rows(killed, "SELECT count(*) FROM verdicts")[0][0]
    assert isinstance(stored, int) and 0 < stored < total
    assert rows(killed, "SELECT status, finished_at FROM runs") == [("running", None)]

    resumed = subprocess.run(command(killed, 2), capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{total - stored} replays graded" in resumed.stdout
    assert f"{stored} already graded" in resumed.stdout
    # One timing per key across both runs: no key was graded twice.
    assert rows(killed, "SELECT count(*), count(DISTINCT (task_digest, schedule, seed, "
                        "artifact)) FROM timings") == [(total, total)]
    assert rows(killed, "SELECT run_id, status, graded, skipped FROM runs ORDER BY run_id") == [
        (1, "running", None, None), (2, "finished", total - stored, stored)]

    straight = tmp_path / "straight.duckdb"
    done = subprocess.run(command(straight, 2), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    query = "SELECT task_digest, schedule, seed, artifact, record FROM verdicts ORDER BY ALL"
    assert rows(killed, query) == rows(straight, query)
    assert len(rows(straight, query)) == total


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a shell may start background jobs ignoring it


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_stops_between_writes(tmp_path: Path, stop: signal.Signals) -> None:
    task = write_task(tmp_path)
    results = tmp_path / "r.duckdb"
    process = subprocess.Popen([str(Path(sys.executable).parent / "arrivalbench"), "run",
                                "--task", str(task), "--seeds", "4", "--workers", "2",
                                "--results", str(results)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, preexec_fn=_default_sigint)
    wal = Path(f"{results}.wal")
    deadline = time.monotonic() + 120
    while (not wal.exists() or wal.stat().st_size < 20_000) and process.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    process.send_signal(stop)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err  # not a traceback from a write cut in the middle
    assert "interrupted:" in err and "run the same command again to resume" in err
    assert "Traceback" not in err
    [(status, graded)] = rows(results, "SELECT status, graded FROM runs")
    assert status == "interrupted"
    assert rows(results, "SELECT count(*) FROM verdicts") == [(graded,)]


def _running(pid: str) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "zombie" not in status.lower()


# -- grade_arms (model arms) -----------------------------------------------------------------


def test_grade_arms_grades_stored_cells_once(tmp_path: Path, tiny_dir: Path) -> None:
    spec = load_spec(tiny_dir)
    path = tmp_path / "r.duckdb"
    warnings: list[str] = []
    with Store(path) as store:
        store.add_task(spec, str(tiny_dir))
        artifact = store.add_artifact(script_ref(TINY_NO_DEDUP))
        store.add_cell(Cell("model", "tiny", spec.digest, 0, artifact, None, {"model": "m"}))
        store.add_cell(Cell("model", "tiny", spec.digest, 1, None, "no SQL in the reply"))
        store.add_cell(Cell("model", "tiny", "sha256:older", 2, artifact))
        other = store.add_artifact(script_ref("SELECT 1"))
        store.add_cell(Cell("other", "tiny", spec.digest, 0, other))
    summary = grid.grade_arms(path, ["model"], seeds=1, workers=1, progress=False,
                              warn=warnings.append)
    [arm] = summary.arms
    assert (arm.arm, arm.cells, arm.scripts, arm.snapshot_pass, arm.hazard_fail) == (
        "model", 2, 1, 1, 1)
    assert arm.verdicts == {"PASS": 4, "FAIL": 2, "ERROR": 0}
    assert summary.graded == POINTS
    assert any("made for another version" in w for w in warnings)
    again = grid.grade_arms(path, ["model"], seeds=1, workers=1, progress=False,
                            warn=warnings.append)
    assert (again.graded, again.skipped) == (0, POINTS)
    assert rows(path, "SELECT count(*) FROM verdicts") == [(POINTS,)]  # arm 'other' untouched


def test_grade_arms_finds_builtin_tasks_without_a_tasks_row(tmp_path: Path) -> None:
    spec = load_spec("store_daily_revenue")
    path = tmp_path / "r.duckdb"
    with Store(path) as store:
        gold = store.add_artifact(script_ref(spec.gold_sql))
        store.add_cell(Cell("model", spec.id, spec.digest, 0, gold))
    summary = grid.grade_arms(path, ["model"], tasks=["store_daily_revenue"], seeds=1,
                              workers=1, progress=False, warn=lambda m: None)
    assert summary.graded == len(plan(spec, 1))
    assert summary.arms[0].snapshot_pass == 1 and summary.arms[0].hazard_fail == 0
    assert rows(path, "SELECT task, source FROM tasks") == [(spec.id, spec.id)]


def test_progress_bar_renders_rate_and_counts() -> None:
    import io

    from rich.console import Console

    from arrivalbench.render import progress

    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=150)
    with progress(3, skipped=7, console=console) as advance:
        for verdict in ("PASS", "FAIL", "PASS"):
            advance(verdict)
            time.sleep(0.05)
    final = buffer.getvalue()  # the last refresh happens when the bar stops
    assert "grading: 7 replays already graded, 3 to go" in final
    assert "PASS 2" in final and "FAIL 1" in final and "/s" in final
    assert "ETA" in final


@pytest.mark.parametrize("ddl", ["CREATE TABLE mine (x INTEGER)",
                                 "CREATE SCHEMA raw; CREATE TABLE raw.mine (x INTEGER)",
                                 "CREATE VIEW mine AS SELECT 1 AS x"])
def test_run_never_writes_into_a_database_it_did_not_create(
        tmp_path: Path, tiny_dir: Path, capsys: pytest.CaptureFixture[str], ddl: str) -> None:
    other = tmp_path / "other.duckdb"
    duckdb.connect(str(other)).execute(ddl).close()
    before = other.read_bytes()
    code, out, err = cli(capsys, "run", "--arm", "gold", "--task", str(tiny_dir), "--seeds", "1",
                         "--results", str(other))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "not a results file written by arrivalbench" in err
    assert str(other) in err
    assert other.read_bytes() == before


def test_a_task_without_a_template_is_a_cell_without_a_script_and_says_why(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A reference the template cannot bind to history tables (here: it reads no source) does
    not stop the run: the template's cell is stored without a script, with the reason, which
    the run says once and the summary counts."""
    folder = write_task(tmp_path, reference="SELECT 'x' AS shop, "
                        "CAST(0 AS DECIMAL(12,2)) AS revenue, 0 AS orders\n")
    results = tmp_path / "r.duckdb"
    code, out, err = cli(capsys, "run", "--task", str(folder), "--arm", "template",
                         "--arm", "gold", "--seeds", "1", "--results", str(results))
    assert code == 0, err
    assert err.splitlines() == [
        f"arrivalbench: warning: template: tiny: no template: {folder / 'reference.sql'}: "
        "reads none of the sources (orders)"]
    assert "template: 1 cell without a script" in " ".join(out.split())
    assert rows(results, "SELECT arm, artifact IS NULL, reason FROM cells ORDER BY arm") == [
        ("gold", False, None),
        ("template", True, f"no template: {folder / 'reference.sql'}: reads none of the "
                           "sources (orders)")]
