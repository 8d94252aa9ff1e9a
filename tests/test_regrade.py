"""`arrivalbench regrade`: stored replays re-run byte for byte; every mismatch reported."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from arrivalbench.study import grid, regrade
from arrivalbench.study.keys import Key
from conftest import cli, write_task

POINTS = 6  # the tiny task with --seeds 1


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A results file of the default arms on the tiny task, seeds 1: (task folder, file)."""
    root = tmp_path_factory.mktemp("graded")
    task = write_task(root)
    results = root / "results.duckdb"
    grid.run(results, tasks=[str(task)], seeds=1, workers=2, progress=False)
    return task, results


@pytest.fixture
def results(graded: tuple[Path, Path], tmp_path: Path) -> Path:
    copy = tmp_path / "copy.duckdb"
    shutil.copy(graded[1], copy)
    return copy


def execute(path: Path, sql: str) -> None:
    con = duckdb.connect(str(path))
    con.execute(sql)
    con.close()


def test_regrade_of_an_honest_file_matches_every_byte(
        results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "regrade", "--results", str(results), "--workers", "2")
    assert code == 0, err
    assert out.strip().startswith(f"regraded {3 * POINTS} of {3 * POINTS} stored replays")
    assert out.strip().endswith(": 0 mismatches")
    assert err == ""


def test_regrade_reports_each_mismatch_with_key_and_both_verdicts(
        results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    con = duckdb.connect(str(results))
    [(artifact, record)] = con.execute(
        "SELECT artifact, record FROM verdicts v WHERE schedule = 'trickle' AND EXISTS "
        "(SELECT 1 FROM cells c WHERE c.arm = 'gold' AND c.artifact = v.artifact)").fetchall()
    con.execute("UPDATE verdicts SET record = replace(record, '\"PASS\"', '\"FAIL\"') "
                "WHERE schedule = 'trickle' AND artifact = ?", [artifact])
    con.close()
    code, out, _ = cli(capsys, "regrade", "--results", str(results), "--workers", "1")
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("mismatch: task tiny (sha256:")
    assert f"schedule trickle seed 0 artifact {artifact} duckdb " in lines[0]
    assert lines[1] == "  stored:  " + record.replace('"PASS"', '"FAIL"')
    assert lines[2] == "  regrade: " + record
    assert lines[-1].endswith(": 1 mismatch")


def test_sample_is_deterministic_and_of_the_size_asked(results: Path) -> None:
    first = regrade.regrade(results, sample=5, workers=1, progress=False)
    second = regrade.regrade(results, sample=5, workers=2, progress=False)
    assert first.checked == 5 and first.keys == second.keys
    assert len(set(first.keys)) == 5 and first.mismatches == []
    con = duckdb.connect(str(results), read_only=True)
    stored = {Key(*r) for r in con.execute(
        "SELECT task_digest, schedule, seed, artifact, engine_version, harness_version "
        "FROM verdicts").fetchall()}
    con.close()
    assert set(first.keys) < stored


def test_verdicts_this_installation_cannot_reproduce_are_skipped_with_a_warning(
        results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    execute(results, "UPDATE verdicts SET harness_version = '0.0.1' WHERE schedule = 'snapshot'")
    code, out, err = cli(capsys, "regrade", "--results", str(results))
    assert code == 0
    assert "3 verdicts were graded by duckdb" in err and "arrivalbench 0.0.1" in err
    assert f"regraded {3 * POINTS - 3} of {3 * POINTS}" in out
    assert "3 not reproducible here" in out


def test_a_task_changed_since_grading_is_skipped_with_a_warning(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    task = write_task(tmp_path)
    results = tmp_path / "r.duckdb"
    grid.run(results, arms=["gold"], tasks=[str(task)], seeds=1, workers=1, progress=False)
    (task / "reference.sql").write_text((task / "reference.sql").read_text() + "\n-- edited\n")
    code, out, err = cli(capsys, "regrade", "--results", str(results))
    assert code == 0
    assert "were made for another version of it" in err
    assert out.startswith(f"regraded 0 of {POINTS}")


def test_missing_results_file_is_exit_2_and_creates_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "none.duckdb"
    code, _, err = cli(capsys, "regrade", "--results", str(missing))
    assert code == 2
    assert err.startswith("arrivalbench: error: ") and "no such results file" in err
    assert not missing.exists()
    code, _, err = cli(capsys, "regrade", "--results", str(missing), "--sample", "0")
    assert code == 2 and "--sample" in err
