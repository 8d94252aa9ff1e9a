"""Idiom signatures judged against the task: a labelled set (every gold and negative of the
corpus, and hand-written tricky cases) scored tag by tag, each tag on small scripts read without
a task (every batch column counts as a key), the one cached parser, and the CLI."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from arrivalbench.cli import main
from arrivalbench.core.task import BUILTIN_DIR, TaskSpec, builtin_ids, load_spec
from arrivalbench.sql import idioms
from arrivalbench.sql.idioms import TAGS, signature

LABELLED = Path(__file__).parent / "idioms"


@dataclass(frozen=True)
class Case:
    name: str
    task: str | None
    sql: str
    tags: tuple[str, ...]

    def spec(self) -> TaskSpec | None:
        return load_spec(self.task) if self.task is not None else None


def labelled() -> list[Case]:
    """tests/idioms/corpus.yaml (a path under the built-in tasks) and tricky.yaml (inline)."""
    cases = []
    for entry in yaml.safe_load((LABELLED / "corpus.yaml").read_text(encoding="utf-8")):
        sql = (BUILTIN_DIR / entry["path"]).read_text(encoding="utf-8")
        cases.append(Case(entry["path"], entry["task"], sql, tuple(entry["tags"])))
    for entry in yaml.safe_load((LABELLED / "tricky.yaml").read_text(encoding="utf-8")):
        cases.append(Case(entry["name"], entry["task"], entry["sql"], tuple(entry["tags"])))
    return cases


@dataclass(frozen=True)
class Score:
    per_tag: dict[str, float]  # share of scripts whose presence or absence of the tag is right
    exact: float  # share of scripts with exactly the expected tags
    mismatches: list[str]


def score(cases: list[Case]) -> Score:
    got = {case.name: signature(case.sql, case.spec()) for case in cases}
    per_tag = {tag: sum((tag in got[c.name]) == (tag in c.tags) for c in cases) / len(cases)
               for tag in TAGS}
    mismatches = [f"{c.name} ({c.task}): expected {sorted(c.tags)}, got {got[c.name]}"
                  for c in cases if got[c.name] != sorted(c.tags)]
    return Score(per_tag, 1 - len(mismatches) / len(cases), mismatches)


def test_the_labelled_set_is_large_and_uses_every_tag() -> None:
    cases = labelled()
    assert len(cases) >= 60 and len({c.name for c in cases}) == len(cases)
    assert {t for c in cases for t in c.tags} == set(TAGS)
    for case in cases:
        assert list(case.tags) == sorted(set(case.tags)) and set(case.tags) <= set(TAGS), case


def test_the_labelled_set_holds_every_gold_and_negative_of_the_corpus() -> None:
    """Every script of the core tier, the study whose idioms the report tags, is labelled."""
    core = builtin_ids("core")
    want = {f"{t}/gold.sql" for t in core} | {
        f"{t}/negatives/{n.name}.sql" for t in core for n in load_spec(t).negatives}
    assert {c.name for c in labelled() if c.name.endswith(".sql")} == want


def test_every_script_of_the_labelled_set_gets_its_tags() -> None:
    result = score(labelled())
    accuracy = ", ".join(f"{tag} {share:.1%}" for tag, share in result.per_tag.items())
    assert result.mismatches == [], (
        f"exact {result.exact:.1%}; per tag: {accuracy}\n" + "\n".join(result.mismatches))


def test_the_score_counts_each_wrong_tag() -> None:
    case = Case("x", "account_balances",
                "INSERT INTO log SELECT DISTINCT account_id FROM incoming.postings", ("upsert",))
    result = score([case])
    assert result.exact == 0 and result.per_tag["upsert"] == 0
    assert result.per_tag["batch_dedup"] == 1  # rightly absent
    assert result.mismatches == ["x (account_balances): expected ['upsert'], got []"]


def test_every_gold_and_negative_of_the_corpus_parses() -> None:
    unparsed = [c.name for c in labelled() if c.name.endswith(".sql") and
                "unparsed" in signature(c.sql, c.spec())]
    assert unparsed == []


def test_a_task_only_takes_tags_away() -> None:
    # the record-key conditions hold for any batch column without a task, so a task can only
    # withhold a tag, never add one
    for case in labelled():
        if case.task is not None:
            assert set(signature(case.sql, case.spec())) <= set(signature(case.sql)), case.name


def test_a_task_sharpens_what_a_loose_reading_accepts() -> None:
    spec = load_spec("account_balances")
    sql = "INSERT OR IGNORE INTO accounts SELECT DISTINCT account_id FROM incoming.postings"
    assert signature(sql) == ["batch_dedup", "history_table", "upsert"]
    assert signature(sql, spec) == ["upsert"]


# -- each tag, on small scripts read without a task ------------------------------------------

HAS: dict[str, list[str]] = {
    "history_table": [
        "INSERT INTO h SELECT id, x FROM incoming.o",
        "INSERT INTO h SELECT id FROM incoming.o ON CONFLICT DO NOTHING",
        "CREATE TEMP TABLE b AS SELECT * FROM incoming.o; INSERT INTO h SELECT id FROM b",
        "WITH b AS (SELECT id FROM incoming.o) INSERT INTO h SELECT id FROM b",
    ],
    "anti_join": [
        "INSERT INTO h SELECT * FROM incoming.o i WHERE NOT EXISTS "
        "(SELECT 1 FROM h WHERE h.id = i.id)",
        "INSERT INTO h SELECT * FROM incoming.o WHERE id NOT IN (SELECT id FROM h)",
        "INSERT INTO h SELECT i.* FROM incoming.o i ANTI JOIN h USING (id)",
        "INSERT INTO h SELECT i.* FROM incoming.o i LEFT JOIN h ON h.id = i.id "
        "WHERE h.id IS NULL",
        "INSERT INTO h SELECT * FROM incoming.o EXCEPT SELECT * FROM h",
    ],
    "batch_dedup": [
        "INSERT INTO h SELECT DISTINCT * FROM incoming.o",
        "INSERT INTO h SELECT DISTINCT ON (id) id, x FROM incoming.o",
        "INSERT INTO h SELECT id, any_value(x) FROM incoming.o GROUP BY id",
        "INSERT INTO h SELECT id, x FROM incoming.o "
        "QUALIFY row_number() OVER (PARTITION BY id ORDER BY ts) = 1",
        "INSERT INTO h SELECT id, x FROM (SELECT *, row_number() OVER (PARTITION BY id) AS rn "
        "FROM incoming.o) WHERE rn = 1",
        "CREATE TEMP TABLE b AS SELECT DISTINCT * FROM incoming.o; INSERT INTO h SELECT * FROM b",
        "WITH b AS (SELECT DISTINCT ON (id) * FROM incoming.o) INSERT INTO h SELECT * FROM b",
        "MERGE INTO t USING (SELECT * FROM incoming.o QUALIFY row_number() OVER "
        "(PARTITION BY id ORDER BY v DESC) = 1) s ON t.id = s.id "
        "WHEN NOT MATCHED THEN INSERT VALUES (s.id)",
    ],
    "upsert": [
        "INSERT INTO t SELECT * FROM incoming.o ON CONFLICT (id) DO UPDATE SET x = excluded.x",
        "INSERT OR REPLACE INTO t SELECT * FROM incoming.o",
        "INSERT OR IGNORE INTO t SELECT * FROM incoming.o",
        "MERGE INTO t USING incoming.o s ON t.id = s.id WHEN MATCHED THEN UPDATE SET x = s.x "
        "WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.x)",
        "DELETE FROM t WHERE id IN (SELECT id FROM incoming.o); "
        "INSERT INTO t SELECT id, x FROM incoming.o",
    ],
    "watermark_filter": [
        "INSERT INTO h SELECT * FROM incoming.o WHERE ts > (SELECT max(ts) FROM h)",
        "INSERT INTO h SELECT * FROM incoming.o "
        "WHERE ts >= (SELECT COALESCE(MAX(ts), TIMESTAMP '1970-01-01') FROM h)",
        "INSERT INTO h SELECT * FROM incoming.o WHERE ts > (SELECT ts FROM load_watermark)",
        "INSERT INTO h SELECT o.* FROM incoming.o o, hwm WHERE o.ts > hwm.ts",
    ],
    "select_star": [
        "CREATE TABLE IF NOT EXISTS h AS SELECT * FROM incoming.o LIMIT 0",
        "INSERT INTO h SELECT o.* FROM incoming.o o",
        "INSERT INTO h SELECT * EXCLUDE (x) FROM incoming.o",
        "INSERT INTO h SELECT COLUMNS(*) FROM incoming.o",
    ],
    "full_recompute": [
        "CREATE OR REPLACE TABLE t AS SELECT a, sum(b) AS b FROM h GROUP BY a",
        "DELETE FROM t; INSERT INTO t SELECT a, sum(b) FROM h GROUP BY a",
        "TRUNCATE t; INSERT INTO t SELECT a FROM h",
        "DROP TABLE IF EXISTS t; CREATE TABLE t AS SELECT a FROM h",
        "CREATE OR REPLACE VIEW t AS SELECT a, count(*) AS n FROM h GROUP BY a",
    ],
    "transaction": [
        "BEGIN; CREATE TABLE IF NOT EXISTS t (a INT); COMMIT;",
        "BEGIN TRANSACTION; INSERT INTO t SELECT 1; COMMIT;",
        "-- all or nothing\nSTART TRANSACTION; INSERT INTO t SELECT 1; COMMIT;",
    ],
}

HAS_NOT: dict[str, list[str]] = {
    "history_table": [
        "INSERT INTO t SELECT a, sum(b) FROM incoming.o GROUP BY a",  # an aggregate, appended
        "INSERT INTO t SELECT * FROM incoming.o ON CONFLICT (id) DO UPDATE SET x = excluded.x",
        "INSERT INTO t SELECT a FROM h WHERE a IN (SELECT a FROM incoming.o)",  # rows from h
        "CREATE TEMP TABLE b (id INT); INSERT INTO b SELECT id FROM incoming.o",  # temporary
    ],
    "anti_join": [
        "INSERT INTO h SELECT * FROM incoming.o WHERE id IN (SELECT id FROM h)",
        "INSERT INTO h SELECT i.* FROM incoming.o i LEFT JOIN h ON h.id = i.id",
        "INSERT INTO h SELECT * FROM incoming.o WHERE id NOT IN (1, 2)",
    ],
    "batch_dedup": [
        "INSERT INTO t SELECT a, sum(b) FROM incoming.o GROUP BY a",  # aggregation, no guard
        "CREATE OR REPLACE TABLE t AS SELECT DISTINCT a FROM h",  # dedup of history, not batch
        "INSERT INTO t SELECT id, row_number() OVER (PARTITION BY g ORDER BY ts) AS step "
        "FROM incoming.o",  # a numbering, not a guard
        # the batch's distinct keys only choose which stored rows to rebuild
        "CREATE TEMP TABLE touched AS SELECT DISTINCT day FROM incoming.o; "
        "INSERT INTO t SELECT day, count(*) FROM h WHERE day IN (SELECT day FROM touched) "
        "GROUP BY day",
        # the batch's distinct keys joined only to choose stored rows
        "CREATE TEMP TABLE touched AS SELECT DISTINCT day FROM incoming.o; "
        "INSERT INTO t SELECT h.day, count(*) FROM h JOIN touched AS k ON k.day = h.day "
        "GROUP BY h.day",
        # DISTINCT over stored rows that the batch merely selects
        "INSERT INTO t WITH e AS (SELECT * FROM h WHERE id IN (SELECT id FROM incoming.o)) "
        "SELECT DISTINCT id FROM e",
    ],
    "upsert": [
        "INSERT INTO t SELECT * FROM incoming.o",
        "DELETE FROM t WHERE ts < now() - INTERVAL 1 DAY; INSERT INTO t SELECT * FROM incoming.o",
    ],
    "watermark_filter": [
        "INSERT INTO h SELECT * FROM incoming.o WHERE ts > TIMESTAMP '2024-01-01'",
        "INSERT INTO h SELECT * FROM incoming.o WHERE ts > (SELECT max(ts) FROM incoming.o) - "
        "INTERVAL 1 DAY",  # the batch's own maximum
        "INSERT INTO t SELECT * FROM incoming.o WHERE amount > (SELECT avg(amount) FROM h)",
    ],
    "select_star": [
        "CREATE OR REPLACE TABLE t AS SELECT a, count(*) AS n FROM h GROUP BY a",
        "INSERT INTO h SELECT id, x FROM incoming.o",
    ],
    "full_recompute": [
        "CREATE TABLE IF NOT EXISTS t AS SELECT a FROM h",  # only the first run builds it
        "CREATE OR REPLACE TABLE t AS SELECT * FROM incoming.o",  # from the batch alone
        "DELETE FROM t WHERE a = 1; INSERT INTO t SELECT a FROM h",
        "CREATE OR REPLACE TEMP TABLE t AS SELECT a FROM h",
    ],
    "transaction": [
        "CREATE TABLE t (a INT); COMMIT;",
        "INSERT INTO t SELECT 1",
    ],
}


@pytest.mark.parametrize(("tag", "sql"), [(t, s) for t, ss in HAS.items() for s in ss])
def test_a_script_with_the_idiom_gets_its_tag(tag: str, sql: str) -> None:
    assert tag in signature(sql)


@pytest.mark.parametrize(("tag", "sql"), [(t, s) for t, ss in HAS_NOT.items() for s in ss])
def test_a_script_without_the_idiom_does_not(tag: str, sql: str) -> None:
    assert tag not in signature(sql)


def test_tags_are_sorted_and_known() -> None:
    spec = load_spec("store_daily_revenue")
    tags = signature(spec.gold_sql, spec)
    assert tags == sorted(tags) and set(tags) <= set(TAGS)
    assert tags == ["anti_join", "batch_dedup", "history_table", "transaction", "upsert"]


def test_what_sqlglot_cannot_read_is_tagged_unparsed_not_a_crash() -> None:
    assert signature("SELEC nothing FROM") == ["unparsed"]
    assert signature("CREATE TYPE mood AS ENUM ('a', 'b')") == ["unparsed"]
    # the statements that can be read still count
    assert signature("CREATE TYPE mood AS ENUM ('a'); INSERT INTO h SELECT DISTINCT * FROM "
                     "incoming.o") == ["batch_dedup", "history_table", "select_star", "unparsed"]
    assert signature("") == [] and signature("-- nothing but a comment") == []


def test_cte_names_do_not_leak_into_later_statements() -> None:
    # `b` is the batch inside the first statement only; in the second it is a stored table
    sql = ("WITH b AS (SELECT * FROM incoming.o) INSERT INTO h SELECT id FROM b; "
           "CREATE OR REPLACE TABLE t AS SELECT id FROM b")
    assert "full_recompute" in signature(sql)


def test_one_connection_splits_every_script(monkeypatch: pytest.MonkeyPatch) -> None:
    from arrivalbench.sql import syntax

    opened = []
    connect = syntax.duckdb.connect

    def counting(*args: object, **kwargs: object) -> object:
        opened.append(args)
        return connect(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(syntax, "_CONNECTIONS", {})
    monkeypatch.setattr(syntax.duckdb, "connect", counting)
    spec = load_spec("store_daily_revenue")
    for script in (spec.gold_sql, *(n.sql for n in spec.negatives), "SELECT 1; SELECT 2"):
        signature(script, spec)
    assert len(opened) == 1


def test_a_crash_of_the_reader_is_a_bug_not_unparsed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a statement that cannot be parsed is `unparsed`; text that is not UTF-8 is read
    as sqlglot reads it; an exception in the reader itself propagates."""
    assert signature("SELECT 1; SELECT (1 +") == ["unparsed"]
    assert signature("CREATE TABLE t AS SELECT '\ud800' AS x") == \
        signature("CREATE TABLE t AS SELECT 'x' AS x")  # DuckDB refuses it; sqlglot reads it

    def broken(self: object, statement: object) -> None:
        raise KeyError("a tree shape the reader mishandles")

    monkeypatch.setattr(idioms._Reader, "read", broken)
    with pytest.raises(KeyError):
        signature("CREATE TABLE t AS SELECT 1 AS x")


def test_idioms_command_prints_the_tags(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "p.sql"
    script.write_text(load_spec("web_page_views").gold_sql, encoding="utf-8")
    main(["idioms", str(script), "--task", "web_page_views", "--json"])
    assert json.loads(capsys.readouterr().out) == ["anti_join", "batch_dedup", "history_table"]
    main(["idioms", str(script), "--task", "web_page_views"])
    assert capsys.readouterr().out.splitlines() == ["anti_join", "batch_dedup", "history_table"]
    script.write_text("SELECT 1;\n", encoding="utf-8")
    main(["idioms", str(script)])
    assert capsys.readouterr().out == "(no idiom found)\n"
    with pytest.raises(SystemExit) as missing:
        main(["idioms", str(tmp_path / "absent.sql")])
    assert missing.value.code == 2
    assert "no such file" in capsys.readouterr().err


def test_idioms_command_judges_against_the_task(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "p.sql"
    script.write_text("INSERT INTO accounts SELECT DISTINCT account_id FROM incoming.postings;\n",
                      encoding="utf-8")
    main(["idioms", str(script), "--json"])  # without a task: any batch column is a key
    assert json.loads(capsys.readouterr().out) == ["batch_dedup", "history_table"]
    main(["idioms", str(script), "--task", "account_balances", "--json"])
    assert json.loads(capsys.readouterr().out) == []
    with pytest.raises(SystemExit) as unknown:
        main(["idioms", str(script), "--task", "no_such_task"])
    assert unknown.value.code == 2
    err = capsys.readouterr().err
    assert "unknown task 'no_such_task'" in err and len(err.strip().splitlines()) == 1
