"""`run --explain` / `explain --results`: minimal plans stored per failing artifact, counted by
shape, and shown in the HTML report."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from arrivalbench.explain.study import shape
from conftest import cli


def test_run_explain_stores_minimal_plans_and_the_report_shows_them(
        tmp_path: Path, tiny_dir: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    results = tmp_path / "r.duckdb"
    code, out, err = cli(capsys, "run", "--task", str(tiny_dir), "--seeds", "1", "--workers",
                         "1", "--results", str(results), "--explain")
    assert code == 0, err
    assert "explained 1 failing artifact (0 already explained)" in out
    con = duckdb.connect(str(results), read_only=True)
    try:
        stored = con.execute("SELECT task, schedule, verdict, shape, records, batches, "
                             "one_minimal FROM minimal_plans").fetchall()
    finally:
        con.close()
    # Only the negative fails; its first failing verdict is duplicates, seed 0.
    assert stored == [("tiny", "duplicates", "FAIL", "one record twice in one batch", 1, 1,
                       True)]
    code, out, _ = cli(capsys, "explain", "--results", str(results))
    assert code == 0 and "explained 0 failing artifacts (1 already explained)" in out
    code, out, err = cli(capsys, "explain", "--results", str(results), "--arm", "negativs")
    assert (code, out) == (2, "")  # a misspelt arm explains nothing, and says which it meant
    assert err == (f"arrivalbench: error: --arm 'negativs': not in {results}; did you mean "
                   "negatives? give one of gold, negatives, template\n")
    monkeypatch.setenv("ARRIVALBENCH_RESULTS", str(results))  # --results alone: as every command
    code, out, _ = cli(capsys, "explain", "--results")
    assert code == 0 and f"(1 already explained) into {results}" in out
    code, _, err = cli(capsys, "report", "--results", str(results), "--out",
                       str(tmp_path / "rep"))
    assert code == 0, err
    page = (tmp_path / "rep" / "report.html").read_text(encoding="utf-8")
    assert "Minimal failing plans" in page and "one record twice in one batch" in page
    assert "(again)" in page  # the timeline marks the repeat
    text = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")  # the same section
    assert "## Minimal failing plans" in text and "| `one record twice in one batch` | 1 |" in text
    assert "(again)" in text and text.index("## Minimal") < text.index("## Definitions")
    # A report of other arms (or of another tier) shows none of the negative's explained cells.
    code, _, err = cli(capsys, "report", "--results", str(results), "--arm", "gold", "--out",
                       str(tmp_path / "gold"))
    assert code == 0, err
    assert "Minimal failing plans" not in (tmp_path / "gold" / "report.md").read_text("utf-8")


def test_explain_results_refuses_a_missing_file(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "explain", "--results", str(tmp_path / "none.duckdb"))
    assert code == 2 and out == "" and "no such results file" in err
    assert not (tmp_path / "none.duckdb").exists()


def _doc(timeline: list[dict[str, object]], verdict: str = "FAIL") -> dict[str, object]:
    records = len({str(r["key"]) for e in timeline for r in e["records"]})  # type: ignore[attr-defined]
    return {"nondeterministic": False, "verdict": verdict, "failure": {"as": ["run"]},
            "timeline": timeline,
            "minimal": {"records": records, "batches": len(timeline)}}


def _entry(batch: int, keys: list[int], repeat: list[bool], abort: dict[str, int] | None = None
           ) -> dict[str, object]:
    return {"batch": batch, "abort": abort, "evolution": False, "after": None,
            "records": [{"source": "s", "key": {"id": k}, "repeat": r}
                        for k, r in zip(keys, repeat, strict=True)]}


@pytest.mark.parametrize(("timeline", "expected"), [
    ([_entry(0, [1, 1], [False, True])], "one record twice in one batch"),
    ([_entry(0, [1], [False]), _entry(1, [1], [True])], "one record twice in a later batch"),
    ([_entry(0, [1], [False], {"after_statement": 3, "of": 3}), _entry(1, [1], [True])],
     "one abort after the last statement"),
    ([_entry(0, [1], [False], {"after_statement": 1, "of": 3}), _entry(1, [1], [True])],
     "one abort mid-script"),
    ([_entry(0, [2], [False]), _entry(1, [1], [False])], "2 records over 2 batches, none "
                                                          "repeated"),
])
def test_shapes(timeline: list[dict[str, object]], expected: str) -> None:
    assert shape(_doc(timeline)) == expected  # type: ignore[arg-type]


def test_run_marks_a_nondeterministic_artifact_and_regrade_keeps_it_apart(
        tmp_path: Path, tiny_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from test_explain import TINY_RANDOM

    folder = tmp_path / "humans"
    folder.mkdir()
    (folder / "tiny.sql").write_text(TINY_RANDOM, encoding="utf-8")
    results = tmp_path / "r.duckdb"
    code, _, err = cli(capsys, "run", "--submissions", str(folder), "--task", str(tiny_dir),
                       "--seeds", "1", "--workers", "1", "--results", str(results))
    assert code == 0, err
    con = duckdb.connect(str(results), read_only=True)
    try:
        marked = con.execute("SELECT detail->'counts'->>'changed' FROM nondeterministic"
                             ).fetchall()
    finally:
        con.close()
    assert len(marked) == 1 and int(marked[0][0]) > 0
    code, out, _ = cli(capsys, "regrade", "--results", str(results), "--workers", "1")
    assert code == 0 and "0 mismatches" in out
    assert "differences in artifacts marked nondeterministic" in out
