"""Prompts: what each variant says, and what the unhinted one never says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from arrivalbench.cli import main
from arrivalbench.core.task import HAZARDS, TaskSpec, builtin_ids, load_spec
from arrivalbench.corpus import leakage
from arrivalbench.corpus.prompts import CONTRACT, HAZARD_HINTS, VARIANTS, build
from arrivalbench.errors import ArrivalBenchError

CONTRACT_PAGE = Path(__file__).resolve().parents[1] / "docs" / "contract.md"


@pytest.mark.parametrize("task_id", builtin_ids())
def test_every_unhinted_prompt_of_the_corpus_passes_the_leakage_scan(task_id: str) -> None:
    spec = load_spec(task_id)
    prompt = build(spec, "unhinted")
    assert leakage.scan(prompt) == [], [leak.describe() for leak in leakage.scan(prompt)]
    # the whole prompt is scanned, contract included: one hazard word anywhere in it is found
    for part in (spec.ticket, CONTRACT):
        salted = prompt.replace(part, part + " Expect a replay.", 1)
        assert [leak.word for leak in leakage.scan(salted)] == ["replay"], part[:40]


@pytest.mark.parametrize("task_id", builtin_ids())
def test_the_accumulating_contract_changes_point_3_alone_and_leaks_nothing(task_id: str
                                                                          ) -> None:
    spec = load_spec(task_id)
    batch = build(spec, "unhinted").splitlines()
    accumulating = build(spec, "unhinted", landing="accumulate").splitlines()
    changed = [(a, b) for a, b in zip(batch, accumulating, strict=True) if a != b]
    assert len(changed) == 1 and changed[0][1].startswith("3. ")
    assert "every record landed so far" in changed[0][1]
    for source in spec.sources:
        assert f"`{source.load_time}`" in changed[0][1]
    assert leakage.scan("\n".join(accumulating)) == []


def test_show_prints_the_accumulating_prompt(capsys: pytest.CaptureFixture[str]) -> None:
    main(["show", "web_page_views", "--prompt", "unhinted", "--landing", "accumulate"])
    assert capsys.readouterr().out == build(load_spec("web_page_views"), "unhinted",
                                            landing="accumulate") + "\n"


def test_the_scan_is_not_vacuous_on_the_hinted_variant() -> None:
    leaks = leakage.scan(build(load_spec("store_daily_revenue"), "hazard_hint"))
    assert {leak.concept for leak in leaks} >= {"duplicates", "lateness", "backfill",
                                                "retries and crashes", "out-of-order"}


def test_the_contract_is_quoted_word_for_word() -> None:
    for variant in VARIANTS:
        assert CONTRACT in build(load_spec("web_page_views"), variant)
    # ...and as docs/contract.md states it (its numbered points, wrapped lines joined)
    section = CONTRACT_PAGE.read_text(encoding="utf-8").split("## The contract\n")[1]
    section = section.strip().split("\n\n")[0]
    points = re.sub(r"\n {3}", " ", section)
    assert points == CONTRACT


def _check_schemas(spec: TaskSpec, prompt: str) -> None:
    for source in spec.sources:
        assert f"## Source table `incoming.{source.name}`" in prompt
        for column in source.columns:
            assert f"  - {column.name} {column.type}\n" in prompt
        assert f"Each record is identified by ({', '.join(source.record_key)})." in prompt
    assert f"## Target table `main.{spec.target.name}`" in prompt
    for column in spec.target.columns:
        assert f"  - {column.name} {column.type}\n" in prompt
    assert f"One row per ({', '.join(spec.target.key)})." in prompt


@pytest.mark.parametrize("task_id", builtin_ids())
def test_the_prompt_holds_ticket_schemas_keys_grain_and_the_test(task_id: str) -> None:
    spec = load_spec(task_id)
    prompt = build(spec)
    assert spec.ticket in prompt
    _check_schemas(spec, prompt)
    assert "## Test" in prompt and "(3 attempts in all)" in prompt
    assert prompt.rstrip().endswith("in a single ```sql block.")


def test_a_change_stream_names_its_entity_and_version() -> None:
    prompt = build(load_spec("customer_current_address"))
    assert "one version of the entity (customer_id), numbered by version." in prompt


def test_hazard_hint_describes_exactly_the_declared_hazards() -> None:
    spec = load_spec("store_daily_revenue")  # no schema_evolution
    prompt = build(spec, "hazard_hint")
    for hazard in HAZARDS:
        hint = HAZARD_HINTS[hazard].split(":")[0]
        assert (f"- {hint}:" in prompt) == (hazard in spec.hazards), hazard
    evolving = build(load_spec("customer_current_address"), "hazard_hint")
    assert "`incoming.customer_changes` carries one more nullable column" in evolving
    assert "delivery_instructions" not in evolving  # the future column is not named


def test_architecture_asks_for_a_keyed_history_and_a_pure_target() -> None:
    prompt = build(load_spec("store_daily_revenue"), "architecture")
    assert "## Required design" in prompt
    assert "deduplicated on its record key (`orders` on (order_id))" in prompt
    assert "derive `main.daily_store_revenue` from the history alone" in prompt
    assert "## Delivery conditions" not in prompt
    unhinted = build(load_spec("store_daily_revenue"))
    assert "## Required design" not in unhinted and "## Delivery conditions" not in unhinted


def test_variants_differ_only_by_their_section() -> None:
    spec = load_spec("web_page_views")
    base = build(spec)
    for variant in ("hazard_hint", "architecture", "budget"):
        other = build(spec, variant)
        extra = other.replace(base.split("## Test")[0], "", 1)
        assert other.startswith(base.split("## Test")[0])
        assert extra.count("## ") == 2  # its own section, then the same test paragraph


def test_an_unknown_variant_is_bad_input() -> None:
    with pytest.raises(ArrivalBenchError, match="unknown prompt variant 'chatty'"):
        build(load_spec("store_daily_revenue"), "chatty")


def test_show_prints_the_prompt_of_a_variant(capsys: pytest.CaptureFixture[str]) -> None:
    main(["show", "store_daily_revenue", "--prompt", "architecture"])  # returns: exit 0
    printed = capsys.readouterr().out
    assert printed == build(load_spec("store_daily_revenue"), "architecture") + "\n"
    with pytest.raises(SystemExit) as bad:
        main(["show", "store_daily_revenue", "--prompt", "chatty"])
    assert bad.value.code == 2
    err = capsys.readouterr().err
    assert "'chatty' is not one of 'unhinted', 'hazard_hint', 'architecture', 'budget'" in err


@pytest.mark.parametrize("task_id", builtin_ids())
def test_every_budget_prompt_of_the_corpus_passes_the_leakage_scan(task_id: str) -> None:
    """The budget variant names a cost, never a delivery condition."""
    prompt = build(load_spec(task_id), "budget")
    assert leakage.scan(prompt) == [], [leak.describe() for leak in leakage.scan(prompt)]


def test_the_budget_prompt_states_the_requirement_and_the_task_budget() -> None:
    spec = load_spec("ledger_running_balance")
    section = build(spec, "budget").split("## Operating cost\n\n")[1].split("## Test")[0]
    assert "billions" in section
    assert "may read only the records delivered to it and the stored rows it has to change" \
        in section
    assert f"at or below {spec.budget.read_amplification:g}." in section
