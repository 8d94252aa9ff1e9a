"""The Inspect AI task: SQL extraction, feedback, and the snapshot repair loop with scripted
mockllm replies (each with a usage record, so that Inspect never reaches for a tokenizer)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalSample
from inspect_ai.model import ChatMessage, ModelOutput, ModelUsage

from arrivalbench.agent import feedback
from arrivalbench.agent.extract import extract, statements
from arrivalbench.agent.inspect_task import arrivalbench
from arrivalbench.agent.samples import FINAL, REASON, TURNS
from arrivalbench.core.grading import Point, artifact_digest, grade, plan
from arrivalbench.core.task import load_spec
from arrivalbench.corpus import leakage
from conftest import TINY_GOLD, TINY_NO_DEDUP, TINY_YAML, grade1, write_task

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:inspect_ai.*")

# -- extraction ---------------------------------------------------------------------------------


def test_one_fenced_block_is_the_script() -> None:
    got = extract("Here you go:\n\n```sql\nCREATE TABLE t AS SELECT 1;\n```\n\nIt works.")
    assert got.script == "CREATE TABLE t AS SELECT 1;\n"
    assert got.blocks == 1 and got.problem is None


def test_untagged_block_counts_when_it_starts_with_sql_other_languages_never() -> None:
    assert extract("```\n-- setup\nSELECT 1;\n```").script == "-- setup\nSELECT 1;\n"
    assert extract("```python\nprint('SELECT 1')\n```").problem == "no_sql"
    assert extract("```\nfirst make a table\n```").problem == "no_sql"


def test_several_blocks_are_joined_in_order() -> None:
    reply = ("First the table:\n```sql\nCREATE TABLE h (id INT)\n```\nthen each run:\n"
             "```sql\nINSERT INTO h SELECT id FROM incoming.o;\n```")
    got = extract(reply)
    assert got.blocks == 2
    assert got.script == "CREATE TABLE h (id INT);\n\nINSERT INTO h SELECT id FROM incoming.o;\n"


def test_a_full_script_next_to_an_excerpt_of_it_is_taken_alone() -> None:
    full = "CREATE TABLE h (id INT);\nINSERT INTO h SELECT id FROM incoming.o;\n"
    reply = f"```sql\n{full}```\nThe key line is:\n```sql\ninsert into h  select id from " \
            "incoming.o\n```"
    assert extract(reply).script == full


def test_raw_sql_reply_without_fence_is_taken_only_if_duckdb_parses_it() -> None:
    assert extract("CREATE TABLE t AS SELECT 1;").script == "CREATE TABLE t AS SELECT 1;\n"
    assert extract("Create a history table first, then insert.").problem == "no_sql"
    assert extract("I cannot help with that.").script is None


def test_a_reply_cut_at_the_token_cap_drops_its_unfinished_block() -> None:
    cut = "```sql\nCREATE TABLE t AS SELECT\n  a,\n  b"
    assert extract(cut, truncated=True).problem == "token_cap"
    assert extract("CREATE TABLE t AS SELECT 1", truncated=True).problem == "token_cap"
    # not cut: a fence left open is taken as it stands
    assert extract("```sql\nSELECT 1;\n").script == "SELECT 1;\n"
    # cut after a complete block: the complete block stands
    assert extract("```sql\nSELECT 1;\n```\nNow let me expl", truncated=True).script == \
        "SELECT 1;\n"


def test_statements_are_numbered_as_the_runner_numbers_them() -> None:
    parts = statements("CREATE TABLE a (i INT); -- note; not one\nINSERT INTO a VALUES (1);")
    assert len(parts) == 2 and "INSERT" in parts[1]
    assert statements("SELEC oops") == []


# -- feedback -----------------------------------------------------------------------------------


@pytest.fixture
def tiny_spec(tiny_dir: Path) -> Any:
    return load_spec(tiny_dir)


# Scripts that make the engine or the oracle speak of repeated keys and extra columns.
PK_CLASH = """\
CREATE TABLE shop_revenue (shop VARCHAR PRIMARY KEY, revenue DECIMAL(12,2), orders BIGINT);
INSERT INTO shop_revenue SELECT shop, amount, 1 FROM incoming.orders;
"""
REPEATED_KEYS = """\
CREATE OR REPLACE TABLE shop_revenue AS
SELECT shop, CAST(COALESCE(SUM(amount), 0) AS DECIMAL(12,2)) AS revenue, COUNT(*) AS orders,
       CAST(placed_at AS DATE) AS extra_day
FROM incoming.orders GROUP BY shop, CAST(placed_at AS DATE);
"""
WRONG_COUNT = TINY_GOLD.replace("COUNT(*) AS orders", "COUNT(amount) AS orders")
MISSING_TARGET = "CREATE TABLE somewhere_else AS SELECT * FROM incoming.orders;\n"


def test_feedback_on_an_engine_error_names_the_statement_without_hazard_words(
        tiny_spec: Any) -> None:
    verdict = grade1(tiny_spec, PK_CLASH, Point("snapshot", 0))[0]
    assert verdict.status == "ERROR"
    assert "uplicate" in verdict.detail["message"]  # the engine's own wording...
    text = feedback.snapshot(tiny_spec, verdict, statements(PK_CLASH))
    assert text is not None
    assert leakage.scan(text) == []  # ...never reaches the model
    assert "statement 2 (`INSERT INTO shop_revenue" in text
    assert "repeated key" in text.lower()


def test_feedback_on_a_diff_lists_repeats_extras_and_values_without_hazard_words(
        tiny_spec: Any) -> None:
    verdict = grade1(tiny_spec, REPEATED_KEYS, Point("snapshot", 0))[0]
    assert verdict.status == "FAIL" and verdict.detail["counts"]["duplicated"] > 0
    text = feedback.snapshot(tiny_spec, verdict)
    assert text is not None and leakage.scan(text) == []
    assert "column `extra_day` is not part of the target" in text
    assert "rows repeat a key that should appear once" in text
    assert "(shop='a') appears" in text

    wrong = grade1(tiny_spec, WRONG_COUNT, Point("snapshot", 0))[0]
    text = feedback.snapshot(tiny_spec, wrong)
    assert text is not None
    assert "(shop='a'): orders is 3, expected 4" in text  # numbers bare, text quoted


def test_feedback_on_a_missing_target_and_on_a_pass(tiny_spec: Any) -> None:
    verdict = grade1(tiny_spec, MISSING_TARGET, Point("snapshot", 0))[0]
    text = feedback.snapshot(tiny_spec, verdict)
    assert text is not None and "`main.shop_revenue` does not exist" in text
    passed = grade1(tiny_spec, TINY_GOLD, Point("snapshot", 0))[0]
    assert feedback.snapshot(tiny_spec, passed) is None


def test_neutral_replaces_every_hazard_word_and_keeps_the_rest() -> None:
    text = "Duplicate key \"id: 1\"; a late record was re-delivered out of order after a crash"
    clean = feedback.neutral(text)
    assert leakage.scan(clean) == []
    assert clean.startswith("Repeated key \"id: 1\"; a delayed record was")
    assert feedback.neutral("nothing to see here") == "nothing to see here"


# -- the repair loop with mockllm --------------------------------------------------------------


def reply(text: str, stop: str = "stop") -> ModelOutput:
    output = ModelOutput.from_content("mockllm/model", text, stop_reason=stop)  # type: ignore[arg-type]
    output.usage = ModelUsage(input_tokens=100, output_tokens=20, total_tokens=120)
    return output


def fenced(script: str) -> str:
    return f"Here is the pipeline.\n\n```sql\n{script}```\n"


SYNTAX_ERROR = "CREATE TABLE shop_revenue AS SELEC shop FROM incoming.orders;\n"
WRONG_REVENUE = TINY_GOLD.replace("COALESCE(SUM(amount), 0)", "COALESCE(SUM(amount), 1)")
RANDOM = TINY_GOLD.replace("COUNT(*) AS orders",
                           "CAST(COUNT(*) + floor(random() * 1000000) AS BIGINT) AS orders")

# scenario -> the replies of turns 1, 2, 3
SCENARIOS: dict[str, list[tuple[str, str]]] = {
    "pass_first": [(fenced(TINY_GOLD), "stop")],
    "repaired": [(fenced(WRONG_COUNT), "stop"), (fenced(TINY_GOLD), "stop")],
    "no_sql": [("I would build a history table first.", "stop")] * 3,
    "three_fail": [(fenced(SYNTAX_ERROR), "stop"), (fenced(PK_CLASH), "stop"),
                   (fenced(WRONG_REVENUE), "stop")],
    "token_cap": [("```sql\nCREATE TABLE shop_revenue AS SELECT shop,", "max_tokens")] * 3,
    "then_prose": [(fenced(REPEATED_KEYS), "stop"), (fenced(MISSING_TARGET), "stop"),
                   ("Sorry, I am not sure how to fix it.", "stop")],
    "random": [(fenced(RANDOM), "stop")] * 3,
}


def scripted(messages: list[ChatMessage], *_args: Any) -> ModelOutput:
    """Replies by scenario (named in the ticket) and turn (assistant messages so far)."""
    prompt = messages[0].text
    scenario = next(name for name in SCENARIOS if f"Scenario {name}." in prompt)
    turn = sum(1 for m in messages if m.role == "assistant")
    text, stop = SCENARIOS[scenario][turn]
    return reply(text, stop)


@pytest.fixture(scope="module")
def loop_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, EvalSample]:
    """One eval over one tiny task per scenario; the scorer grades with one seed."""
    root = tmp_path_factory.mktemp("scenarios")
    folders = []
    for name in SCENARIOS:
        spec = json.loads(json.dumps(TINY_YAML))
        spec["id"] = f"tiny_{name}"
        spec["ticket"] = f"Scenario {name}. " + spec["ticket"]
        folders.append(str(write_task(root, f"tiny_{name}", spec, negatives={
            "no_dedup": TINY_NO_DEDUP})))
    logs = inspect_eval(arrivalbench(tasks=folders, seeds=1), model="mockllm/model",
                        model_args={"custom_outputs": scripted},
                        log_dir=str(root / "logs"), display="none")
    assert logs[0].status == "success"
    return {str(s.metadata["task"]).removeprefix("tiny_"): s for s in logs[0].samples or []}


def turns_of(sample: EvalSample) -> list[dict[str, Any]]:
    return list(sample.store[TURNS])


def verdict_meta(sample: EvalSample) -> dict[str, Any]:
    assert sample.scores is not None
    return dict(sample.scores["verdicts"].metadata or {})


def test_a_pass_on_turn_one_stops_the_loop(loop_run: dict[str, EvalSample]) -> None:
    sample = loop_run["pass_first"]
    turns = turns_of(sample)
    assert [t["snapshot_verdict"] for t in turns] == ["PASS"]
    assert sum(1 for m in sample.messages if m.role == "assistant") == 1
    assert sample.store[FINAL] == TINY_GOLD
    score = sample.scores["verdicts"] if sample.scores else None
    assert score is not None
    assert score.value == {"snapshot": 1.0, "controls": 1.0, "all_pass": 1.0, "silent": 0.0,
                           "crash": 0.0}
    meta = verdict_meta(sample)
    assert meta["first_pass_turn"] == 1 and meta["artifact"] == artifact_digest(TINY_GOLD)
    assert set(meta["verdicts"]) == {"snapshot", "in_order", "trickle", "late_arrival",
                                     "duplicates", "crash_retry"}
    assert "batch_dedup" in meta["idioms"] and "history_table" in meta["idioms"]
    assert meta["nondeterministic"] is None


def test_the_scorer_checks_nondeterminism_as_grade_does(
        loop_run: dict[str, EvalSample]) -> None:
    sample = loop_run["random"]
    score = sample.scores["verdicts"] if sample.scores else None
    assert score is not None and score.explanation is not None
    assert verdict_meta(sample)["nondeterministic"]["counts"]["changed"] > 0
    assert "nondeterministic: a second snapshot replay" in score.explanation


def test_the_eval_reports_what_in_process_grading_gives(
        loop_run: dict[str, EvalSample]) -> None:
    """The snapshot test and the scorer grade in worker processes; what the log holds is what
    `core.grading` gives in this process, byte for byte: every turn's snapshot detail, the
    verdicts and the explanation built from them (`random` differs from replay to replay)."""
    from arrivalbench.agent.inspect_task import explain

    compared = 0
    for name, sample in loop_run.items():
        if name == "random":
            continue
        spec = load_spec(sample.metadata["task_source"])
        for turn in turns_of(sample):
            if turn["sql"] is not None:
                here = grade1(spec, turn["sql"], Point("snapshot", 0))[0]
                assert (turn["snapshot_verdict"], turn["snapshot_detail"]) == \
                    (here.status, here.detail), (name, turn["turn"])
                compared += 1
        final = sample.store[FINAL]
        if final is None:
            continue
        graded = [g.verdict for g in grade(spec, final, plan(spec, 1))]
        score = sample.scores["verdicts"] if sample.scores else None
        assert score is not None and score.explanation == explain(graded), name
        by_kind: dict[str, list[str]] = {}
        for v in graded:
            by_kind.setdefault(v.schedule, []).append(v.status)
        assert verdict_meta(sample)["verdicts"] == by_kind, name
        compared += 1
    assert compared >= 10


def test_a_failure_is_repaired_on_turn_two(loop_run: dict[str, EvalSample]) -> None:
    sample = loop_run["repaired"]
    turns = turns_of(sample)
    assert [t["snapshot_verdict"] for t in turns] == ["FAIL", "PASS"]
    # the typed diff went back to the model as the second user message
    users = [m.text for m in sample.messages if m.role == "user"]
    assert len(users) == 2 and users[1] == turns[0]["feedback"]
    assert "orders is 3, expected 4" in users[1]
    assert sample.store[FINAL] == TINY_GOLD
    assert verdict_meta(sample)["first_pass_turn"] == 2


def test_a_reply_with_no_sql_is_told_so_and_ends_with_no_script(
        loop_run: dict[str, EvalSample]) -> None:
    sample = loop_run["no_sql"]
    turns = turns_of(sample)
    assert len(turns) == 3 and all(t["sql"] is None for t in turns)
    assert all(t["problem"] == "no_sql" for t in turns)
    users = [m.text for m in sample.messages if m.role == "user"]
    assert users[1].startswith("Your reply did not contain a SQL script.")
    assert sample.store[FINAL] is None and sample.store[REASON] == "no_sql"
    score = sample.scores["verdicts"] if sample.scores else None
    assert score is not None and score.answer is None
    assert score.explanation == "no script: no_sql"
    assert verdict_meta(sample)["reason"] == "no_sql"


def test_three_failing_turns_end_with_the_last_script_graded(
        loop_run: dict[str, EvalSample]) -> None:
    sample = loop_run["three_fail"]
    turns = turns_of(sample)
    assert [t["snapshot_verdict"] for t in turns] == ["ERROR", "ERROR", "FAIL"]
    assert sum(1 for m in sample.messages if m.role == "assistant") == 3
    assert sum(1 for m in sample.messages if m.role == "user") == 3  # no feedback after the last
    assert turns[2]["feedback"]  # ...but what it would have said is kept
    assert sample.store[FINAL] == WRONG_REVENUE
    meta = verdict_meta(sample)
    assert meta["artifact"] == artifact_digest(WRONG_REVENUE)
    assert meta["snapshot"] == "FAIL" and meta["first_pass_turn"] is None
    assert meta["verdicts"]["duplicates"] == ["FAIL"]
    score = sample.scores["verdicts"] if sample.scores else None
    assert score is not None and score.value["snapshot"] == 0.0
    # A script that fails the snapshot test is wrong, not silently fragile: not `silent`,
    # although its duplicates verdict is FAIL (the same class as the run summary and report).
    assert score.value["silent"] == 0.0 and score.answer == WRONG_REVENUE


def test_replies_cut_at_the_token_cap_end_with_no_script(
        loop_run: dict[str, EvalSample]) -> None:
    sample = loop_run["token_cap"]
    turns = turns_of(sample)
    assert [t["problem"] for t in turns] == ["token_cap"] * 3
    assert [t["stop_reason"] for t in turns] == ["max_tokens"] * 3
    assert "cut off at the output token limit" in str(turns[0]["feedback"])
    assert sample.store[FINAL] is None and sample.store[REASON] == "token_cap"


def test_a_last_reply_without_sql_leaves_the_last_script_final(
        loop_run: dict[str, EvalSample]) -> None:
    sample = loop_run["then_prose"]
    assert [t["snapshot_verdict"] for t in turns_of(sample)] == ["FAIL", "ERROR", None]
    assert sample.store[FINAL] == MISSING_TARGET
    assert sample.store[REASON] is None


def test_no_feedback_ever_names_a_hazard(loop_run: dict[str, EvalSample]) -> None:
    seen = 0
    for sample in loop_run.values():
        users = [m.text for m in sample.messages if m.role == "user"]
        feedbacks = users[1:] + [str(t["feedback"]) for t in turns_of(sample) if t["feedback"]]
        for text in feedbacks:
            assert leakage.scan(text) == [], text
            seen += 1
    assert seen >= 15
    # the scenarios did make the engine and the oracle speak of repeats
    pk = turns_of(loop_run["three_fail"])[1]
    assert "uplicate" in json.dumps(pk["snapshot_detail"]) and "repeated key" in pk["feedback"]


def test_the_registered_task_runs_through_inspects_registry(tmp_path: Path) -> None:
    """`inspect eval arrivalbench/arrivalbench -T tasks=...` as an Inspect user runs it."""
    task_dir = write_task(tmp_path)
    logs = inspect_eval("arrivalbench/arrivalbench",
                        task_args={"tasks": str(task_dir), "seeds": 1, "replicates": 2},
                        model="mockllm/model",
                        model_args={"custom_outputs": [reply(fenced(TINY_GOLD))] * 2},
                        log_dir=str(tmp_path / "logs"), display="none")
    assert logs[0].status == "success" and logs[0].eval.task == "arrivalbench/arrivalbench"
    assert sorted(str(s.id) for s in logs[0].samples or []) == ["tiny/0", "tiny/1"]
    assert logs[0].results is not None
    means = {s.name: s.metrics["mean"].value for s in logs[0].results.scores}
    assert means["snapshot"] == 1.0 and means["all_pass"] == 1.0


def test_unknown_variant_is_refused() -> None:
    from arrivalbench.errors import ArrivalBenchError

    with pytest.raises(ArrivalBenchError, match="unknown prompt variant 'sneaky'"):
        arrivalbench(tasks="store_daily_revenue", variant="sneaky")


def test_a_provider_error_is_described_by_its_last_attempt() -> None:
    from tenacity import Future, RetryError

    from arrivalbench.agent.inspect_task import describe_error

    attempt = Future(attempt_number=3)
    attempt.set_exception(ConnectionError("Connection refused\nat 0x7f00"))
    assert describe_error(RetryError(attempt)) == "ConnectionError: Connection refused"
    assert describe_error(RuntimeError("")) == "RuntimeError"


def test_the_private_active_model_api_keeps_the_shape_offline_mock_reads(tmp_path: Path
                                                                           ) -> None:
    """Inspect has no public way to ask, while a task is built, which model the eval runs:
    `get_model()` falls back to INSPECT_EVAL_MODEL outside an eval (and would pin that model
    on a task built by hand). `offline_mock` reads the private `active_model()` (the pinned
    inspect-ai); this fails when its shape changes: no arguments, None outside an eval, and
    while `inspect eval` builds a task the eval's model, with `model_args` and `config`."""
    import inspect

    from inspect_ai import Task, task
    from inspect_ai.dataset import Sample
    from inspect_ai.model import GenerateConfig, Model
    from inspect_ai.model._model import active_model

    from arrivalbench.agent.inspect_task import mock_outputs, offline_mock

    assert list(inspect.signature(active_model).parameters) == []
    assert active_model() is None and offline_mock() is None
    seen: list[tuple[Model | None, Model | None]] = []

    @task
    def probe() -> Task:
        seen.append((active_model(), offline_mock()))
        return Task(dataset=[Sample(input="hello")], model=seen[-1][1])

    logs = inspect_eval(probe, model="mockllm/model", log_dir=str(tmp_path / "logs"),
                        display="none")
    [(active, mock)] = seen
    assert isinstance(active, Model) and str(active) == "mockllm/model"
    assert active.model_args == {} and isinstance(active.config, GenerateConfig)
    # ...so the task's model is the mock whose replies carry their usage, and the eval ran
    # without a tokenizer
    assert isinstance(mock, Model) and str(mock) == "mockllm/model" and mock is not active
    assert logs[0].status == "success", logs[0].error
    assert logs[0].stats.model_usage["mockllm/model"].input_tokens == 0
    given = inspect_eval(probe, model="mockllm/model", log_dir=str(tmp_path / "logs"),
                         model_args={"custom_outputs": mock_outputs()}, display="none")
    assert given[0].status == "success" and seen[1][1] is None  # its own outputs: kept
