"""Idiom signatures: every gold and negative of the corpus against tags written here
by hand, each tag on small scripts that have it and scripts that do not, and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arrivalbench.agent.idioms import TAGS, signature
from arrivalbench.cli import main
from arrivalbench.task import BUILTIN_DIR, builtin_ids, load_spec

# The tags of each built-in gold and negative script, one letter a tag:
# A anti_join, D batch_dedup, H history_table, R full_recompute, S select_star, T transaction,
# U upsert, W watermark_filter. Tasks added to the corpus later are covered by the parse test
# below until their expectations are written here.
CODES = {"A": "anti_join", "D": "batch_dedup", "H": "history_table", "R": "full_recompute",
         "S": "select_star", "T": "transaction", "U": "upsert", "W": "watermark_filter"}

EXPECTED: dict[str, str] = {
    "account_balances/gold": "A D H T U",
    "account_balances/negatives/counters_without_transaction": "A D H U",
    "account_balances/negatives/high_water_mark": "A D H T U W",
    "account_balances/negatives/no_dedup": "U",
    "ad_click_attribution/gold": "D H U",
    "ad_click_attribution/negatives/attribute_on_arrival": "A D H U",
    "ad_click_attribution/negatives/clicks_no_dedup": "D H R S U",
    "ad_clicks_clean/gold": "D H U",
    "ad_clicks_clean/negatives/newer_clicks_only": "D H S U W",
    "ad_clicks_clean/negatives/plain_append": "H",
    "badge_swipes_enriched/gold": "H R",
    "badge_swipes_enriched/negatives/high_water_mark": "H R W",
    "badge_swipes_enriched/negatives/no_dedup": "H R",
    "campaign_daily_delivery/gold": "A D H R T U",
    "campaign_daily_delivery/negatives/counters_without_transaction": "A D H R U",
    "campaign_daily_delivery/negatives/high_water_mark": "D H R U W",
    "campaign_daily_delivery/negatives/no_dedup": "R U",
    "campaign_settings_current/gold": "D R T U",
    "campaign_settings_current/negatives/history_max_version": "H R",
    "campaign_settings_current/negatives/last_arrival_wins": "A D H S U",
    "campaign_settings_current/negatives/select_star_history": "A D H R S",
    "campaign_unique_reach/gold": "A D H R S",
    "campaign_unique_reach/negatives/high_water_mark": "A D H R S W",
    "campaign_unique_reach/negatives/impressions_no_dedup": "H R S",
    "carrier_weekly_on_time/gold": "D H U",
    "carrier_weekly_on_time/negatives/lookback_one_week": "A D H U W",
    "carrier_weekly_on_time/negatives/no_dedup": "H U",
    "checkout_funnel_daily/gold": "D H S U",
    "checkout_funnel_daily/negatives/events_no_dedup": "H S U",
    "checkout_funnel_daily/negatives/high_water_mark": "D H R S U W",
    "checkout_funnel_daily/negatives/select_star_history": "A D H R S",
    "contact_profile_patches/gold": "H R S",
    "contact_profile_patches/negatives/no_dedup": "H R",
    "contact_profile_patches/negatives/patch_in_arrival_order": "A D H T U",
    "customer_current_address/gold": "D R U",
    "customer_current_address/negatives/history_max_version": "H R",
    "customer_current_address/negatives/last_arrival_wins": "A D H U",
    "customer_current_address/negatives/select_star_history": "A D H R S",
    "daily_active_users/gold": "A D H R S",
    "daily_active_users/negatives/events_no_dedup": "H R S",
    "daily_active_users/negatives/new_users_on_arrival": "A D H R T U",
    "device_last_reading/gold": "D H U",
    "device_last_reading/negatives/history_no_dedup": "H U",
    "device_last_reading/negatives/newest_in_batch_wins": "A D H T U",
    "device_registry_current/gold": "D H U",
    "device_registry_current/negatives/history_max_version": "H R",
    "device_registry_current/negatives/last_arrival_wins": "A D H U",
    "device_registry_current/negatives/select_star_history": "A D H R S",
    "employee_department_scd2/gold": "H R S",
    "employee_department_scd2/negatives/close_on_arrival": "A D H",
    "employee_department_scd2/negatives/no_dedup": "H R",
    "employee_directory/gold": "A D H T U",
    "employee_directory/negatives/history_max_version": "H R",
    "employee_directory/negatives/last_arrival_wins": "A D H U",
    "employee_directory/negatives/no_transaction": "A D H U",
    "inventory_on_hand/gold": "H R S",
    "inventory_on_hand/negatives/no_dedup": "H R S",
    "inventory_on_hand/negatives/stockout_on_arrival": "A D H S T U",
    "invoice_lines_taxed/gold": "A D H T",
    "invoice_lines_taxed/negatives/high_water_mark": "A D H W",
    "invoice_lines_taxed/negatives/plain_append": "H",
    "invoice_lines_taxed/negatives/select_star_raw": "A D H R S",
    "ledger_running_balance/gold": "H R S",
    "ledger_running_balance/negatives/balance_from_last_row": "A D H",
    "ledger_running_balance/negatives/no_dedup": "H R",
    "mrr_by_plan/gold": "D R U",
    "mrr_by_plan/negatives/history_max_version": "H R",
    "mrr_by_plan/negatives/last_arrival_wins": "A D H R U",
    "mrr_by_plan/negatives/select_star_history": "A D H R S",
    "order_status_current/gold": "A D H R",
    "order_status_current/negatives/history_no_dedup": "H R",
    "order_status_current/negatives/status_on_arrival": "A D H T U",
    "parcel_latest_status/gold": "D U",
    "parcel_latest_status/negatives/history_max_version": "H R",
    "parcel_latest_status/negatives/last_arrival_wins": "A D H U",
    "parcel_latest_status/negatives/select_star_history": "A D H R S",
    "parcel_scan_intervals/gold": "D H U",
    "parcel_scan_intervals/negatives/affected_from_new": "A D H S U",
    "parcel_scan_intervals/negatives/history_no_dedup": "H U",
    "parcel_scan_intervals/negatives/new_scans_only": "A D H S U",
    "payment_captures/gold": "A D H",
    "payment_captures/negatives/high_water_mark": "A D H W",
    "payment_captures/negatives/plain_append": "H",
    "payments_in_eur/gold": "H R S",
    "payments_in_eur/negatives/convert_on_arrival": "A D H S U",
    "payments_in_eur/negatives/payments_no_dedup": "D H R S U",
    "product_catalog_price/gold": "D U",
    "product_catalog_price/negatives/history_max_version": "H R",
    "product_catalog_price/negatives/unguarded_upsert": "D U",
    "product_events_with_plan/gold": "D H U",
    "product_events_with_plan/negatives/events_no_dedup": "D H R S U",
    "product_events_with_plan/negatives/plan_on_arrival": "A D H U",
    "product_events_with_plan/negatives/select_star_events": "A D H R S",
    "queue_daily_ticket_counts/gold": "D H U",
    "queue_daily_ticket_counts/negatives/high_water_mark": "D H R U W",
    "queue_daily_ticket_counts/negatives/no_dedup": "H U",
    "queue_daily_ticket_counts/negatives/select_star_history": "A D H R S",
    "sensor_hourly_stats/gold": "H R S",
    "sensor_hourly_stats/negatives/high_water_mark": "H R S W",
    "sensor_hourly_stats/negatives/no_dedup": "H R",
    "sensor_readings_calibrated/gold": "H R S",
    "sensor_readings_calibrated/negatives/high_water_mark": "H R S W",
    "sensor_readings_calibrated/negatives/no_dedup": "H R",
    "sensor_readings_calibrated/negatives/select_star_landing": "H R S",
    "session_page_sequence/gold": "A D H R",
    "session_page_sequence/negatives/continue_from_last": "A D H",
    "session_page_sequence/negatives/history_no_dedup": "H R",
    "store_daily_revenue/gold": "A D H T U",
    "store_daily_revenue/negatives/max_watermark": "A D H R W",
    "store_daily_revenue/negatives/no_dedup": "H R",
    "subscription_current_plan/gold": "D U",
    "subscription_current_plan/negatives/history_max_version": "H R",
    "subscription_current_plan/negatives/last_arrival_wins": "A D H U",
    "support_messages_clean/gold": "A D H",
    "support_messages_clean/negatives/high_water_mark": "A D H W",
    "support_messages_clean/negatives/plain_append": "H",
    "support_messages_clean/negatives/select_star_raw": "A D H R S",
    "ticket_current_state/gold": "D R U",
    "ticket_current_state/negatives/history_max_version": "H R",
    "ticket_current_state/negatives/last_arrival_wins": "A D H U",
    "ticket_current_state/negatives/select_star_history": "A D H R S",
    "ticket_sla_status/gold": "D H U",
    "ticket_sla_status/negatives/fold_on_arrival": "A D H R T U",
    "ticket_sla_status/negatives/history_no_dedup": "H U",
    "top_products_per_category/gold": "H R S",
    "top_products_per_category/negatives/high_water_mark": "H R S W",
    "top_products_per_category/negatives/no_dedup": "H R S",
    "web_page_views/gold": "A D H",
    "web_page_views/negatives/high_water_mark": "A D H W",
    "web_page_views/negatives/plain_append": "H",
    "web_page_views/negatives/raw_select_star": "A D H R S",
    "web_sessions/gold": "H R S",
    "web_sessions/negatives/high_water_mark": "H R S W",
    "web_sessions/negatives/no_dedup": "H R S",
    "weekly_hours_by_department/gold": "D R U",
    "weekly_hours_by_department/negatives/history_max_version": "H R",
    "weekly_hours_by_department/negatives/last_arrival_wins": "A D H R U",
    "weekly_hours_by_department/negatives/select_star_history": "A D H R S",
}


def _scripts() -> list[tuple[str, str]]:
    out = []
    for task_id in builtin_ids():
        spec = load_spec(task_id)
        out.append((f"{task_id}/gold", spec.gold_sql))
        out += [(f"{task_id}/negatives/{n.name}", n.sql) for n in spec.negatives]
    return out


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_script_has_the_expected_tags(name: str) -> None:
    path = BUILTIN_DIR / f"{name}.sql"
    if not path.is_file():
        pytest.skip(f"{name} is no longer in the corpus")
    want = sorted(CODES[code] for code in EXPECTED[name].split())
    assert signature(path.read_text(encoding="utf-8")) == want


def test_every_gold_and_negative_of_the_corpus_parses() -> None:
    scripts = _scripts()
    assert len(scripts) >= len(EXPECTED) - 5
    unparsed = [name for name, sql in scripts if "unparsed" in signature(sql)]
    assert unparsed == []


def test_the_expectations_cover_the_whole_known_vocabulary() -> None:
    seen = {CODES[c] for codes in EXPECTED.values() for c in codes.split()}
    assert seen == set(TAGS) - {"unparsed"}


# -- each tag, on small scripts -----------------------------------------------------------------

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
    tags = signature(load_spec("store_daily_revenue").gold_sql)
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


def test_idioms_command_prints_the_tags(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "p.sql"
    script.write_text(load_spec("web_page_views").gold_sql, encoding="utf-8")
    main(["idioms", str(script), "--json"])
    assert json.loads(capsys.readouterr().out) == ["anti_join", "batch_dedup", "history_table"]
    main(["idioms", str(script)])
    assert capsys.readouterr().out.splitlines() == ["anti_join", "batch_dedup", "history_table"]
    script.write_text("SELECT 1;\n", encoding="utf-8")
    main(["idioms", str(script)])
    assert capsys.readouterr().out == "(no idiom found)\n"
    with pytest.raises(SystemExit) as missing:
        main(["idioms", str(tmp_path / "absent.sql")])
    assert missing.value.code == 2
    assert "no such file" in capsys.readouterr().err
