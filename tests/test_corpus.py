"""The built-in corpus meets every count of its issue: modes, difficulties, hazards, domains,
idioms, negatives, and logs that hold what real data holds."""

from __future__ import annotations

import json
from collections import Counter
from functools import cache

import pytest

from arrivalbench.core.log import load_log
from arrivalbench.core.replay import expected
from arrivalbench.core.task import (
    DIFFICULTIES,
    MODES,
    TaskSpec,
    TierChoice,
    builtin_ids,
    load_spec,
)
from arrivalbench.corpus.labels import IDIOMS
from conftest import cli

ORDERING = {"late_arrival", "out_of_order"}
IDEMPOTENCY = {"duplicates", "crash_retry"}

DOMAINS = {
    "commerce": ["store_daily_revenue", "customer_current_address", "product_catalog_price",
                 "contact_profile_patches", "order_status_current", "top_products_per_category"],
    "finance ledgers": ["payment_captures", "ledger_running_balance", "payments_in_eur",
                        "account_balances"],
    "subscriptions and billing": ["invoice_lines_taxed", "subscription_current_plan",
                                  "mrr_by_plan"],
    "IoT telemetry": ["sensor_readings_calibrated", "device_last_reading",
                      "device_registry_current", "sensor_hourly_stats"],
    "web and product analytics": ["web_page_views", "session_page_sequence",
                                  "product_events_with_plan", "web_sessions",
                                  "checkout_funnel_daily", "daily_active_users"],
    "logistics": ["parcel_scan_intervals", "parcel_latest_status", "inventory_on_hand",
                  "carrier_weekly_on_time"],
    "ad delivery": ["ad_clicks_clean", "ad_click_attribution", "campaign_settings_current",
                    "campaign_daily_delivery", "campaign_unique_reach"],
    "support tickets": ["support_messages_clean", "ticket_current_state", "ticket_sla_status",
                        "queue_daily_ticket_counts"],
    "HR": ["badge_swipes_enriched", "employee_directory", "employee_department_scd2",
           "weekly_hours_by_department"],
}

HARD_THEMES = {
    "sessionization": ["web_sessions"],
    "slowly changing dimension (type 2)": ["employee_department_scd2"],
    "inventory from signed deltas": ["inventory_on_hand"],
    "running balances": ["ledger_running_balance"],
    "top-N per group": ["top_products_per_category"],
    "distinct counts": ["campaign_unique_reach", "daily_active_users"],
    "funnel steps": ["checkout_funnel_daily"],
}

# Change streams with deletes: the operation or status that removes the entity.
TOMBSTONES = {
    "customer_current_address": ("op", "delete"),
    "ticket_current_state": ("op", "delete"),
    "device_registry_current": ("op", "decommission"),
    "weekly_hours_by_department": ("status", "deleted"),
    "employee_directory": ("status", "terminated"),
}

# Targets grouped by a key that may be NULL, with a NULL group in the result.
NULL_GROUP_KEYS = {
    "queue_daily_ticket_counts": "queue",
    "carrier_weekly_on_time": "carrier",
    "top_products_per_category": "category",
    "weekly_hours_by_department": "department",
}


@cache
def specs(tier: TierChoice = "core") -> tuple[TaskSpec, ...]:
    """The tasks of `tier`. The shape of the corpus checked here (domains, small logs, idioms)
    is the core tier's, the paper's study; the hard tier's soundness is the gate's."""
    return tuple(load_spec(t) for t in builtin_ids(tier))


def test_forty_core_tasks_and_a_hard_tier() -> None:
    """The core tier is the paper's study: its 40 tasks stay; the hard tier is beside it, from
    many families, several of its tasks keeping more than one table."""
    tiers = [s.tier for s in specs("all")]
    assert tiers.count("core") == 40 and tiers.count("hard") >= 12
    assert len({s.family for s in specs("hard")}) >= 8
    assert sum(len(s.targets) > 1 for s in specs("hard")) >= 3


def test_hard_tasks_are_complete_on_both_engines() -> None:
    """Each hard task ships its incremental pipeline, a PostgreSQL twin of every pipeline, and
    at least three negatives; at least three ship a log ten times the core tier's median."""
    core_median = sorted(len(load_log(s).timeline) for s in specs())[len(specs()) // 2]
    big = 0
    for spec in specs("hard"):
        files = ["gold", "incremental", *(f"negatives/{n.name}" for n in spec.negatives)]
        missing = [f"{f}.postgres.sql" for f in files
                   if not (spec.path / f"{f}.postgres.sql").is_file()]
        assert (spec.path / "incremental.sql").is_file() and not missing, (spec.id, missing)
        assert len(spec.negatives) >= 3, spec.id
        big += len(load_log(spec).timeline) >= 10 * core_median
    assert big >= 3


def test_at_least_ten_tasks_per_mode_and_per_difficulty() -> None:
    modes = Counter(s.mode for s in specs())
    difficulties = Counter(s.difficulty for s in specs())
    assert all(modes[m] >= 10 for m in MODES), modes
    assert all(difficulties[d] >= 10 for d in DIFFICULTIES), difficulties


def test_hazard_declarations() -> None:
    both = [s.id for s in specs() if ORDERING & set(s.hazards) and IDEMPOTENCY & set(s.hazards)]
    assert len(both) >= 35
    assert sum("schema_evolution" in s.hazards for s in specs()) >= 6


def test_every_task_belongs_to_one_listed_domain() -> None:
    listed = [t for tasks in DOMAINS.values() for t in tasks]
    assert sorted(listed) == builtin_ids("core")
    assert all(len(tasks) >= 3 for tasks in DOMAINS.values())


def test_hard_tasks_cover_the_hard_themes() -> None:
    for theme, tasks in HARD_THEMES.items():
        for task_id in tasks:
            assert load_spec(task_id).difficulty == "hard", (theme, task_id)


def test_idioms_are_named_known_and_diverse() -> None:
    idioms = Counter(s.gold_idiom for s in specs())
    assert set(idioms) <= set(IDIOMS), idioms
    assert len(idioms) >= 4
    assert max(idioms.values()) <= 0.4 * len(specs()), idioms


def test_negatives_are_many_and_cover_every_declared_hazard() -> None:
    assert sum(len(s.negatives) for s in specs()) >= 42
    for spec in specs():
        assert all(n.fails for n in spec.negatives), spec.id
        covered = {h for n in spec.negatives for h in n.fails}
        assert covered == set(spec.hazards), spec.id


@pytest.mark.parametrize("task_id", builtin_ids("core"))
def test_logs_are_small_and_share_event_times(task_id: str) -> None:
    log = load_log(load_spec(task_id))
    assert 150 <= len(log.timeline) <= 500, len(log.timeline)
    times = Counter(e.time for e in log.timeline)
    assert max(times.values()) >= 2, "no two records share an event time"


def test_every_log_has_nulls_in_value_columns() -> None:
    without = []
    for spec in specs():
        log = load_log(spec)
        if not any(None in log.tables[s.name].column(c.name).to_pylist()
                   for s in spec.sources for c in s.columns if c.name not in s.record_key):
            without.append(spec.id)
    assert without == []


def test_identical_payloads_under_different_keys() -> None:
    """Records that repeat everything but their record key, and must both count."""
    found = []
    for spec in specs():
        log = load_log(spec)
        for source in spec.sources:
            if source.is_change_stream:
                continue
            table = log.tables[source.name]
            payload = [c.name for c in source.columns if c.name not in source.record_key]
            rows = Counter(zip(*(table.column(c).to_pylist() for c in payload), strict=True))
            if max(rows.values()) >= 2:
                found.append(spec.id)
    plain = [s for s in specs() if any(not src.is_change_stream for src in s.sources)]
    assert len(found) >= len(plain) - 2, sorted({s.id for s in plain} - set(found))


def test_change_streams_with_tombstones() -> None:
    for task_id, (column, value) in TOMBSTONES.items():
        spec = load_spec(task_id)
        (source,) = spec.sources
        assert source.is_change_stream
        assert value in load_log(spec).tables[source.name].column(column).to_pylist(), task_id


def test_null_able_group_keys_have_a_null_group() -> None:
    for task_id, key in NULL_GROUP_KEYS.items():
        spec = load_spec(task_id)
        assert key in spec.target.key
        table = expected(spec)
        at = [name for name, _type in table.columns].index(key)
        assert any(row[at] is None for row in table.rows), task_id


def test_tasks_json_lists_the_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = cli(capsys, "tasks", "--json")
    assert code == 0
    listed = json.loads(out)
    assert [t["id"] for t in listed] == builtin_ids()
    for entry in listed:
        assert {"id", "title", "mode", "difficulty", "hazards", "negatives",
                "gold_idiom", "tier", "family"} <= set(entry)
        spec = load_spec(entry["id"])
        assert (entry["tier"], entry["family"]) == (spec.tier, spec.family)
        assert entry["gold_idiom"] == spec.gold_idiom
        assert entry["negatives"] == {n.name: list(n.fails) for n in spec.negatives}
