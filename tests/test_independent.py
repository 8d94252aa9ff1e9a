"""The gate's `independent` check: a second reference written from the ticket alone must agree
with `reference.sql` on the complete log and after every batch of `in_order` seed 0."""

from __future__ import annotations

from pathlib import Path

import pytest

from arrivalbench.core.task import builtin_ids, load_spec, resolve
from arrivalbench.corpus import gate
from arrivalbench.corpus import independent as second_reference
from arrivalbench.corpus.independent import independent, independent_file
from conftest import TINY_REFERENCE, write_task

# The same meaning in other words: a sum of nothing is 0, every order counts.
AGREES = """\
WITH per_shop AS (SELECT shop, amount FROM orders)
SELECT shop, CAST(SUM(COALESCE(amount, 0)) AS DECIMAL(12,2)) AS revenue,
       CAST(COUNT(*) AS BIGINT) AS orders
FROM per_shop GROUP BY ALL
"""


def check(tmp_path: Path, sql: str | None) -> list[str]:
    folder = write_task(tmp_path)
    if sql is not None:
        (folder / "independent.sql").write_text(sql, encoding="utf-8")
    return [f.line() for f in independent(load_spec(folder))]


def test_a_second_reference_in_other_words_agrees(tmp_path: Path) -> None:
    assert check(tmp_path, AGREES) == []


def test_a_user_task_without_one_is_not_checked(tmp_path: Path) -> None:
    assert check(tmp_path, None) == []


def test_a_disagreement_names_the_first_batch_and_the_rows(tmp_path: Path) -> None:
    # Only orders above 6.00 count: the first batch (shop a, 10.00) agrees, the second not.
    lines = check(tmp_path, TINY_REFERENCE.replace("FROM orders", "FROM orders WHERE amount > 6"))
    assert len(lines) == 1
    line = lines[0]
    assert line.startswith("tiny: independent: schedule in_order, seed 0: ")
    assert "independent.sql: disagrees with reference.sql after batch 1 of in_order seed 0" \
        in line and 'missing {"shop":"b"}' in line


def test_a_disagreement_on_the_complete_log_only_says_so(tmp_path: Path) -> None:
    # Agrees on every prefix but the last: a shop that appears only in the last batch is lost.
    folder = write_task(tmp_path)
    spec = load_spec(folder)
    from arrivalbench.core.checkpoints import delivered
    from arrivalbench.core.grading import schedule

    sets = [*delivered(schedule(spec, "in_order", 0)).values()]
    assert len(sets) > 1
    (folder / "independent.sql").write_text(
        f"SELECT * FROM ({TINY_REFERENCE}) WHERE orders < (SELECT COUNT(*) FROM orders)",
        encoding="utf-8")
    lines = [f.line() for f in independent(load_spec(folder))]
    assert len(lines) == 1 and "disagrees with reference.sql" in lines[0]


@pytest.mark.parametrize(("sql", "reason"), [
    ("SELECT shop, FROM WHERE", "does not parse"),
    ("SELECT 1 AS shop; SELECT 2 AS shop", "must hold exactly one SELECT query, found 2"),
    ("SELECT shop, 0 AS revenue, 0 AS orders FROM payments", "reads payments, which is not a "
     "source (sources: orders)"),
    ("SELECT shop, COUNT(*) AS orders FROM orders GROUP BY shop",
     "returns columns ['shop', 'orders']; target shop_revenue declares ['shop', 'revenue', "
     "'orders']"),
    ("", "empty"),
])
def test_bad_input_is_a_finding_naming_the_task_the_file_and_the_problem(
        tmp_path: Path, sql: str, reason: str) -> None:
    lines = check(tmp_path, sql)
    assert len(lines) == 1
    assert lines[0].startswith("tiny: independent: ")
    assert "independent.sql" in lines[0] and reason in lines[0]


def test_a_builtin_task_must_ship_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = write_task(tmp_path)
    monkeypatch.setattr(second_reference, "is_builtin", lambda _spec: True)
    lines = [f.line() for f in independent(load_spec(folder))]
    assert lines == ["tiny: independent: schedule -, seed -: no independent.sql: a built-in "
                     "task ships a second reference written from the ticket and schemas alone"]


def test_the_gate_reports_the_check(tmp_path: Path) -> None:
    folder = write_task(tmp_path)
    (folder / "independent.sql").write_text(TINY_REFERENCE.replace("COUNT(*)", "COUNT(*) + 1"),
                                            encoding="utf-8")
    report = gate.run([load_spec(folder)], workers=1)
    mine = [f for f in report.findings if f.check == "independent"]
    assert [(f.schedule, f.seed) for f in mine] == [("in_order", 0)]


@pytest.mark.parametrize("task_id", ["web_sessions", "invoice_lines_taxed", "web_page_views",
                                     "ticket_current_state"])
def test_the_tasks_whose_references_once_disagreed_now_agree(task_id: str) -> None:
    assert independent(load_spec(resolve(task_id))) == []


def test_every_builtin_task_ships_one() -> None:
    """One per target: `independent.sql`, or `independent.<name>.sql` for each of several."""
    missing = [f"{spec.id}/{name}" for spec in map(load_spec, builtin_ids())
               for name in (independent_file(spec, n) for n in range(len(spec.targets)))
               if not (spec.path / name).is_file()]
    assert missing == []
