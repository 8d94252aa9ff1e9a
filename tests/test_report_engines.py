"""The engine comparison: a small results file with verdicts on both engines, built by hand,
every number derived by hand; and the absent case (a DuckDB-only file keeps its report).

Verdicts are one letter per seed (P = PASS, F = FAIL, E = ERROR), seeds 0 and 1; `snapshot`
has seed 0 only. Each artifact is graded on DuckDB (d) and PostgreSQL (p):

gold (one cell per task)
    g1 t1  d: snapshot P | in_order PP trickle PP | late_arrival PP, duplicates PP
           p: snapshot P | in_order PP trickle PP | late_arrival PP, duplicates PF
    g2 t2  d: snapshot P | PP PP | out_of_order PP, crash_retry PP
           p: the same (+ an older harness version's snapshot FAIL: ignored)
    g3 t3  d: snapshot P | PP PP | duplicates PP, backfill PP
           p: snapshot E | PP PP | duplicates EE, backfill PP
m (replicates 0 and 1)
    m1 t1 r0  d: snapshot P | PP PP | late_arrival PF, duplicates PP
              p: snapshot P | PP PP | late_arrival PP, duplicates PP
    m2 t1 r1  d: snapshot P | PP PP | late_arrival PP, duplicates PP;  no PostgreSQL verdict
    m3 t2 r0  d: snapshot P | PP PP | out_of_order FF, crash_retry PE
              p (seed 0 only, an unfinished run): snapshot P | in_order P trickle P |
                out_of_order F, crash_retry P
solo (PostgreSQL only)
    s1 t1  p: snapshot P | PP PP | late_arrival PP, duplicates FF

Intervals follow the reasoning of test_report_golden: with three tasks, a value that all three
draws of one task give has probability 1/27 > 2.5%, and "only X among the defined tasks" 7/27;
with two tasks (arm m), each task alone has probability 1/4.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arrivalbench import report
from arrivalbench.cli import main
from arrivalbench.cli import out as console
from arrivalbench.core.task import HAZARDS
from arrivalbench.core.values import canonical_json, digest
from arrivalbench.report.engines import (
    Matched,
    arm_comparison,
    by_engine,
    graded_engines,
    main_engines,
    matched_cells,
    on_main_engines,
    schedule_order,
)
from arrivalbench.report.load import CellRow, Results, VerdictRow
from test_report_golden import (
    CONTROLS_OK,
    HARNESS,
    LETTER,
    OLD_HARNESS,
    build_golden,
    expected_arm,
    m,
    r6,
    write_results,
)

VERSION = {"duckdb": "2.0.1", "postgres": "18.6"}  # as text, 18.6 sorts after 2.0.1


def engine_row(task: str, artifact: str, schedule: str, seed: int, letter: str, engine: str,
               harness: str = HARNESS, in_record: bool = True) -> tuple[Any, ...]:
    """A verdicts row; the engine in the record (as the harness writes it) or, with
    `in_record=False`, only in an `engine` column (a file whose store has one)."""
    doc = {"artifact": artifact, "engine_version": VERSION[engine], "harness_version": harness,
           "schedule": schedule, "seed": seed, "task": task, "verdict": LETTER[letter]}
    if in_record:
        doc["engine"] = engine
    record = canonical_json(doc)
    return (f"sha256:{task}", schedule, seed, artifact, VERSION[engine], harness, task,
            LETTER[letter], record, digest(record))


P_ONLY_SEED0 = {"snapshot": "P", "in_order": "P", "trickle": "P", "out_of_order": "F",
                "crash_retry": "P"}
PLANS: dict[str, tuple[str, dict[str, dict[str, str]]]] = {
    "g1": ("t1", {"duckdb": {"snapshot": "P", **CONTROLS_OK, "late_arrival": "PP",
                             "duplicates": "PP"},
                  "postgres": {"snapshot": "P", **CONTROLS_OK, "late_arrival": "PP",
                               "duplicates": "PF"}}),
    "g2": ("t2", {e: {"snapshot": "P", **CONTROLS_OK, "out_of_order": "PP", "crash_retry": "PP"}
                  for e in ("duckdb", "postgres")}),
    "g3": ("t3", {"duckdb": {"snapshot": "P", **CONTROLS_OK, "duplicates": "PP",
                             "backfill": "PP"},
                  "postgres": {"snapshot": "E", **CONTROLS_OK, "duplicates": "EE",
                               "backfill": "PP"}}),
    "m1": ("t1", {"duckdb": {"snapshot": "P", **CONTROLS_OK, "late_arrival": "PF",
                             "duplicates": "PP"},
                  "postgres": {"snapshot": "P", **CONTROLS_OK, "late_arrival": "PP",
                               "duplicates": "PP"}}),
    "m2": ("t1", {"duckdb": {"snapshot": "P", **CONTROLS_OK, "late_arrival": "PP",
                             "duplicates": "PP"}}),
    "m3": ("t2", {"duckdb": {"snapshot": "P", **CONTROLS_OK, "out_of_order": "FF",
                             "crash_retry": "PE"},
                  "postgres": P_ONLY_SEED0}),
    "s1": ("t1", {"postgres": {"snapshot": "P", **CONTROLS_OK, "late_arrival": "PP",
                               "duplicates": "FF"}}),
}
CELLS = [("gold", "t1", 0, "g1", None), ("gold", "t2", 0, "g2", None),
         ("gold", "t3", 0, "g3", None),
         ("m", "t1", 0, "m1", None), ("m", "t1", 1, "m2", None), ("m", "t2", 0, "m3", None),
         ("solo", "t1", 0, "s1", None)]


def rows(in_record: bool = True) -> list[tuple[Any, ...]]:
    return [engine_row(task, art, schedule, seed, letter, engine, in_record=in_record)
            for art, (task, plans) in PLANS.items() for engine, plan in plans.items()
            for schedule, letters in plan.items() for seed, letter in enumerate(letters)]


IGNORED = engine_row("t2", "g2", "snapshot", 0, "F", "postgres", harness=OLD_HARNESS)


def build(path: Path, in_record: bool = True) -> Path:
    """The file as the store writes it: each verdict's engine in a column of its own too
    (with `in_record=False`, there alone)."""
    write_results(path, CELLS, [*rows(in_record), IGNORED],
                  [(a, None) for a in PLANS])
    con = duckdb.connect(str(path))
    for art, (_, plans) in PLANS.items():
        for engine in plans:
            con.execute("UPDATE verdicts SET engine = ? WHERE artifact = ? AND "
                        "engine_version = ?", [engine, art, VERSION[engine]])
    con.close()
    return path


# -- the hand-derived comparison -----------------------------------------------------------------

NONE = (None, None, None, 0)
T = 2 / 3


def pr(d: tuple[Any, ...], p: tuple[Any, ...], diff: tuple[Any, ...]) -> dict[str, Any]:
    return {"duckdb": d, "postgres": p, "difference": diff}


EXPECTED: dict[str, dict[str, Any]] = {
    "gold": {
        "tasks": 3, "cells": {"compared": 3, "one_engine": 0},
        "replays": 27,  # 9 per cell: snapshot, 2 in_order, 2 trickle, 2 + 2 hazard seeds
        "agreement": {
            # per cell: g1 8/9 (duplicates seed 1), g2 9/9, g3 6/9 (snapshot, duplicates x2);
            # all three draws of t3 give 2/3, of t2 give 1 (1/27 each)
            "all": m(23 / 27, T, 1.0, n=3),
            "snapshot": m(T, 0.0, 1.0, n=3),       # t1 1, t2 1, t3 0 (P against E)
            "in_order": m(1.0, n=3), "trickle": m(1.0, n=3),
            "late_arrival": m(1.0, n=1),            # t1 only
            "out_of_order": m(1.0, n=1), "crash_retry": m(1.0, n=1),  # t2 only
            "duplicates": m(0.25, 0.0, 0.5, n=2),  # t1 1/2, t3 0; t2 has none
            "backfill": m(1.0, n=1),                # t3: PP on both
            "schema_evolution": NONE,
        },
        "pass_rates": {
            # every snapshot passes on DuckDB; PostgreSQL's t3 snapshot is an ERROR
            "snapshot_pass": pr(m(1.0, n=3), m(T, 0.0, 1.0, n=3),
                                m(-1 / 3, -1.0, 0.0, n=3)),  # per task 0, 0, -1
            "late_arrival": pr(m(1.0), m(1.0), m(0.0)),
            "out_of_order": pr(m(1.0), m(1.0), m(0.0)),
            # t3 is not snapshot-passing on PostgreSQL, so only t1 is defined on both
            "duplicates": pr(m(1.0), m(0.0), m(-1.0)),
            "crash_retry": pr(m(1.0), m(1.0), m(0.0)),
            "backfill": pr(NONE, NONE, NONE),      # t3 only, undefined on PostgreSQL
            "schema_evolution": pr(NONE, NONE, NONE),
        },
        "per_cell": [{"task": "t1", "replicate": 0, "replays": 9, "agree": 8},
                     {"task": "t2", "replicate": 0, "replays": 9, "agree": 9},
                     {"task": "t3", "replicate": 0, "replays": 9, "agree": 6}],
        "split": [
            {"task": "t1", "replicate": 0, "schedule": "duplicates", "duckdb": "PP",
             "postgres": "PF"},
            {"task": "t3", "replicate": 0, "schedule": "snapshot", "duckdb": "P",
             "postgres": "E"},
            {"task": "t3", "replicate": 0, "schedule": "duplicates", "duckdb": "PP",
             "postgres": "EE"}],
    },
    "m": {
        # m2 has DuckDB verdicts only; m3 is compared on seed 0 (5 replays), where DuckDB's
        # crash_retry seed 1 ERROR does not count
        "tasks": 2, "cells": {"compared": 2, "one_engine": 1}, "replays": 14,
        "agreement": {
            "all": m(17 / 18, 8 / 9, 1.0, n=2),      # t1 8/9 (late seed 1), t2 5/5
            "snapshot": m(1.0, n=2), "in_order": m(1.0, n=2), "trickle": m(1.0, n=2),
            "late_arrival": m(0.5, n=1),             # m1: P=P, F against P
            "out_of_order": m(1.0, n=1),             # m3 seed 0: F on both
            "duplicates": m(1.0, n=1), "crash_retry": m(1.0, n=1),
            "backfill": NONE, "schema_evolution": NONE,
        },
        "pass_rates": {
            "snapshot_pass": pr(m(1.0, n=2), m(1.0, n=2), m(0.0, n=2)),
            "late_arrival": pr(m(0.0), m(1.0), m(1.0)),  # m1 PF on DuckDB, PP on PostgreSQL
            "out_of_order": pr(m(0.0), m(0.0), m(0.0)),
            "duplicates": pr(m(1.0), m(1.0), m(0.0)),
            "crash_retry": pr(m(1.0), m(1.0), m(0.0)),   # seed 0: P on both
            "backfill": pr(NONE, NONE, NONE), "schema_evolution": pr(NONE, NONE, NONE),
        },
        "per_cell": [{"task": "t1", "replicate": 0, "replays": 9, "agree": 8},
                     {"task": "t2", "replicate": 0, "replays": 5, "agree": 5}],
        "split": [{"task": "t1", "replicate": 0, "schedule": "late_arrival", "duckdb": "PF",
                   "postgres": "PP"}],
    },
}


def as_metric(e: tuple[Any, ...]) -> dict[str, Any]:
    value, low, high, n = e
    return {"value": r6(value), "low": r6(low), "high": r6(high), "n": n}


def expected(arm: str) -> dict[str, Any]:
    e = dict(EXPECTED[arm])
    e["agreement"] = {k: as_metric(v) for k, v in e["agreement"].items()}
    e["pass_rates"] = {k: {side: as_metric(x) for side, x in v.items()}
                       for k, v in e["pass_rates"].items()}
    return e


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, report.Written]:
    root = tmp_path_factory.mktemp("engines")
    results = build(root / "results.duckdb")
    return results, report.write(results, root / "out")


@pytest.mark.parametrize("arm", sorted(EXPECTED))
def test_engine_comparison_derived_by_hand(both: tuple[Path, report.Written], arm: str) -> None:
    doc: Any = both[1].doc
    assert doc["engine_comparison"]["engines"] == ["duckdb", "postgres"]
    assert doc["engine_comparison"]["arms"][arm] == expected(arm)


def test_layout_and_the_engine_of_each_arm(both: tuple[Path, report.Written]) -> None:
    doc: Any = both[1].doc
    assert list(doc) == ["arms", "no_scripts", "engines", "engine_comparison", "seed",
                         "results_digest"]
    # solo has no DuckDB verdict: its metrics read PostgreSQL's, and it has nothing to compare
    assert doc["engines"] == {"gold": "duckdb", "m": "duckdb", "solo": "postgres"}
    assert list(doc["engine_comparison"]["arms"]) == ["gold", "m"]
    # the digest covers the newest verdict of every replay on each engine (not the older one)
    assert doc["results_digest"] == digest("\n".join(sorted(r[8] for r in rows())))
    assert json.loads((both[1].out / "metrics.json").read_text(encoding="utf-8")) == doc


def test_main_tables_read_one_engine_per_arm(both: tuple[Path, report.Written]) -> None:
    arms: Any = both[1].doc["arms"]
    # gold passes everything on DuckDB; PostgreSQL's failures (its version sorts after
    # DuckDB's as text and as numbers) must not leak into its columns
    assert arms["gold"]["gap"] == as_metric(m(0.0, n=3))
    assert arms["gold"]["snapshot_pass"] == as_metric(m(1.0, n=3))
    # m on DuckDB, every verdict: t1 m1 (late PF) 1, m2 0 -> 0.5; t2 m3 (ooo FF, cr PE) 1
    assert arms["m"]["gap"] == as_metric(m(0.75, 0.5, 1.0, n=2))
    assert arms["m"]["crash"] == as_metric(m(0.5, 0.0, 1.0, n=2))  # DuckDB's seed 1 E counts
    # solo on PostgreSQL: duplicates FF
    assert arms["solo"]["silent"] == as_metric(m(1.0))
    assert arms["solo"]["hazards"]["duplicates"] == as_metric(m(0.0))
    assert arms["solo"]["hazards"]["late_arrival"] == as_metric(m(1.0))


def test_engine_column_is_read_when_the_store_has_one(tmp_path: Path,
                                                      both: tuple[Path, report.Written]
                                                      ) -> None:
    written = report.write(build(tmp_path / "r.duckdb", in_record=False), tmp_path / "out")
    doc: Any = written.doc
    mine: Any = both[1].doc
    assert doc["engines"] == mine["engines"]
    assert doc["engine_comparison"] == mine["engine_comparison"]


def test_report_files_show_the_comparison(both: tuple[Path, report.Written]) -> None:
    out = both[1].out
    names = {p.name for p in out.glob("*.csv")}
    assert {"engine_agreement.csv", "engine_pass_rates.csv", "engine_cells.csv",
            "engine_split.csv"} <= names
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "## Engines: DuckDB against PostgreSQL" in md
    # the rule for the other tables is stated where they are
    assert "`solo`: postgres" in md
    assert "| gold | t3 | 0 | snapshot | P | E |" in md
    assert "| m | t1 | 0 | late_arrival | PF | PP |" in md
    # only cells with some disagreement are listed cell by cell; g2 and m3 agree everywhere
    assert (out / "engine_cells.csv").read_text(encoding="utf-8").splitlines() == [
        "arm,task,replicate,replays,agree", "gold,t1,0,9,8", "gold,t3,0,9,6", "m,t1,0,9,8"]
    assert "| gold | t1 | 0 | 9 | 8 |" in md
    assert "**Engine comparison**" in md
    html = (out / "report.html").read_text(encoding="utf-8")
    assert 'id="engine_agreement"' in html and 'id="engine_split"' in html
    split = (out / "engine_split.csv").read_text(encoding="utf-8").splitlines()
    assert split == ["arm,task,replicate,schedule,duckdb,postgres",
                     "gold,t1,0,duplicates,PP,PF", "gold,t3,0,snapshot,P,E",
                     "gold,t3,0,duplicates,PP,EE", "m,t1,0,late_arrival,PF,PP"]


def test_terminal_shows_the_comparison(both: tuple[Path, report.Written], tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    main(["report", "--results", str(both[0]), "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert "engines: DuckDB against PostgreSQL" in out
    assert "0.85 [0.67,1.00]\u2020" in out  # gold's agreement over all replays
    assert "gold t3 replicate 0 snapshot: duckdb P, postgres E" in out
    assert "m t1 replicate 0 late_arrival: duckdb PF, postgres PP" in out
    assert "solo (postgres)" in out  # its column reads PostgreSQL's verdicts
    assert max(len(line) for line in out.splitlines()) <= console.width  # 80 when captured


# -- the absent case -----------------------------------------------------------------------------


def test_duckdb_only_file_has_no_engine_section(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """No engine key, table, definition or terminal line: the golden report.md and
    metrics.json (test_report_golden) prove the bytes did not move."""
    results = build_golden(tmp_path / "r.duckdb")
    main(["report", "--results", str(results), "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    doc = json.loads((tmp_path / "out" / "metrics.json").read_text(encoding="utf-8"))
    assert "engines" not in doc and "engine_comparison" not in doc
    assert not list((tmp_path / "out").glob("engine_*.csv"))
    md = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "engine comparison" not in md.lower() and "postgres" not in md.lower()
    assert "postgres" not in out.lower()


def test_postgres_verdicts_leave_the_duckdb_numbers_alone(tmp_path: Path) -> None:
    """The golden file plus PostgreSQL verdicts of alpha's artifacts (all FAIL): every arm's
    metrics stay those derived by hand on DuckDB; alpha gets a comparison."""
    from test_report_golden import CELLS as GCELLS
    from test_report_golden import IDIOMS, IGNORED, TURNS, USED

    extra = [engine_row(r[6], r[3], r[1], r[2], "F", "postgres") for r in USED
             if r[3].startswith("a")]
    results = write_results(tmp_path / "r.duckdb", GCELLS, USED + IGNORED + extra, IDIOMS,
                            TURNS)
    con = duckdb.connect(str(results))  # as the store writes it: the engine in a column too
    con.execute("UPDATE verdicts SET engine = json_extract_string(record, '$.engine') "
                "WHERE json_extract_string(record, '$.engine') IS NOT NULL")
    con.close()
    doc: Any = report.write(results, tmp_path / "out").doc
    for arm in ("alpha", "m:unhinted", "negatives"):
        assert doc["arms"][arm] == expected_arm(arm), arm
    assert doc["engines"] == {"alpha": "duckdb", "m:unhinted": "duckdb",
                              "negatives": "duckdb"}
    assert list(doc["engine_comparison"]["arms"]) == ["alpha"]
    # every PostgreSQL verdict is FAIL, so the engines agree exactly on DuckDB's FAILs:
    # a1 1 of 9 replays (duplicates seed 1), a2 1 of 11 (trickle seed 1; its crash_retry E
    # is no FAIL), a3 3 of 9 (snapshot, duplicates FF)
    agreement = doc["engine_comparison"]["arms"]["alpha"]["agreement"]["all"]
    assert agreement["value"] == r6((1 / 9 + 1 / 11 + 3 / 9) / 3)


def test_every_engine_key_is_documented(both: tuple[Path, report.Written]) -> None:
    from test_report_docs import patterns, undocumented

    doc = json.loads((both[1].out / "metrics.json").read_text(encoding="utf-8"))
    assert list(undocumented(doc, patterns())) == []


# -- properties of the comparison ----------------------------------------------------------------

VERDICT = st.sampled_from(["PASS", "FAIL", "ERROR"])


@st.composite
def matched(draw: st.DrawFn) -> list[Matched]:
    """Cells on up to three tasks, each with a snapshot pair and some hazard seeds."""
    cells = []
    for i in range(draw(st.integers(1, 5))):
        pairs = {("snapshot", 0): (draw(VERDICT), draw(VERDICT))}
        for hazard in draw(st.sets(st.sampled_from(HAZARDS), max_size=3)):
            for seed in range(draw(st.integers(1, 3))):
                pairs[(hazard, seed)] = (draw(VERDICT), draw(VERDICT))
        cells.append(Matched(f"t{draw(st.integers(0, 2))}", i,
                             dict(sorted(pairs.items(), key=lambda kv: schedule_order(kv[0])))))
    return sorted(cells, key=lambda c: (c.task, c.replicate))


def swapped(cells: list[Matched]) -> list[Matched]:
    return [Matched(c.task, c.replicate, {k: (b, a) for k, (a, b) in c.pairs.items()})
            for c in cells]


@settings(max_examples=60, deadline=None)
@given(matched())
def test_swapping_the_engines_mirrors_the_comparison(cells: list[Matched]) -> None:
    one = arm_comparison(cells, 0, seed=3, resamples=50)
    two = arm_comparison(swapped(cells), 0, seed=3, resamples=50)
    assert one["agreement"] == two["agreement"] and one["per_cell"] == two["per_cell"]
    for name, sides in one["pass_rates"].items():  # type: ignore[union-attr]
        other = two["pass_rates"][name]  # type: ignore[index, call-overload]
        assert (sides["duckdb"], sides["postgres"]) == (other["postgres"], other["duckdb"])
        d, e = sides["difference"], other["difference"]
        assert d["n"] == e["n"]
        if d["value"] is not None:
            assert d["value"] == pytest.approx(-e["value"], abs=1e-6)
    assert one["split"] == [{**r, "duckdb": r["postgres"], "postgres": r["duckdb"]}
                            for r in two["split"]]  # type: ignore[union-attr]


@settings(max_examples=60, deadline=None)
@given(matched())
def test_agreement_and_split_follow_the_pairs(cells: list[Matched]) -> None:
    doc: Any = arm_comparison(cells, 0, seed=0, resamples=20)
    same = all(a == b for c in cells for a, b in c.pairs.values())
    assert (doc["agreement"]["all"]["value"] == 1.0) == same
    assert doc["replays"] == sum(r["replays"] for r in doc["per_cell"])
    if same:
        assert doc["split"] == []
    for row in doc["split"]:  # exactly one side passes every seed
        assert (set(row["duckdb"]) == {"P"}) != (set(row["postgres"]) == {"P"})


def test_an_arm_without_verdicts_reads_duckdb() -> None:
    cells = [CellRow("x", "t", "d", 0, "a"), CellRow("y", "t", "d", 0, None),
             CellRow("z", "t", "d", 0, "b")]
    verdicts = [VerdictRow("d", "b", "snapshot", 0, "PASS", engine="postgres"),
                VerdictRow("d", "b", "chaos", 0, "PASS")]  # chaos is not read
    graded = graded_engines(cells, verdicts)
    assert graded == {"x": (), "y": (), "z": ("postgres",)}
    assert main_engines(graded) == {"x": "duckdb", "y": "duckdb", "z": "postgres"}


def test_newest_verdict_is_chosen_within_each_engine() -> None:
    from arrivalbench.report.metrics import newest_verdicts

    rows = [VerdictRow("d", "a", "duplicates", 0, "PASS", "2.0.1", "0.10.0"),
            VerdictRow("d", "a", "duplicates", 0, "FAIL", "18.6", "0.10.0", engine="postgres"),
            VerdictRow("d", "a", "duplicates", 0, "ERROR", "18.5", "0.10.0", engine="postgres")]
    assert [(v.engine, v.verdict) for v in newest_verdicts(rows)] == [("duckdb", "PASS"),
                                                                      ("postgres", "FAIL")]


def test_a_cell_with_a_pipeline_per_engine_is_compared_across_its_two_artifacts() -> None:
    """A built-in arm records one cell per engine, each with that engine's own pipeline (gold.sql
    and gold.postgres.sql): the comparison pairs them by task and replicate, and the main
    tables read the arm's DuckDB cell alone."""
    cells = [CellRow("gold", "t1", "sha256:t1", 0, "gd", engine="duckdb"),
             CellRow("gold", "t1", "sha256:t1", 0, "gp", engine="postgres")]
    verdicts = [VerdictRow("sha256:t1", "gd", "snapshot", 0, "PASS", engine="duckdb"),
                VerdictRow("sha256:t1", "gd", "duplicates", 0, "PASS", engine="duckdb"),
                VerdictRow("sha256:t1", "gp", "snapshot", 0, "PASS", engine="postgres"),
                VerdictRow("sha256:t1", "gp", "duplicates", 0, "FAIL", engine="postgres")]
    on = by_engine(verdicts)
    found, one_engine = matched_cells(cells, on)
    assert one_engine == 0
    assert found == [Matched("t1", 0, {("snapshot", 0): ("PASS", "PASS"),
                                       ("duplicates", 0): ("PASS", "FAIL")})]
    engines = main_engines(graded_engines(cells, verdicts))
    assert engines == {"gold": "duckdb"}
    results = Results(("gold",), tuple(cells), tuple(verdicts), {}, ())
    assert [c.artifact for c in on_main_engines(results, engines).cells] == ["gd"]
