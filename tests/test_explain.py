"""`arrivalbench explain`: the document, the repro bundle (its command is run here), the
nondeterminism check and bad input.

Set ARRIVALBENCH_UPDATE_GOLDEN=1 to rewrite tests/golden/explain_tiny_no_dedup.json after an
intended change; review the diff before committing.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest

from conftest import TINY_GOLD, TINY_NO_DEDUP, cli

GOLDEN = Path(__file__).parent / "golden" / "explain_tiny_no_dedup.json"

# Fails loudly when a record comes twice in one batch: the primary key refuses it.
TINY_STRICT = TINY_GOLD.replace("SELECT DISTINCT * FROM incoming.orders ON CONFLICT DO NOTHING",
                                "SELECT * FROM incoming.orders")

TINY_RANDOM = TINY_GOLD.replace("COUNT(*) AS orders",
                                "CAST(COUNT(*) + floor(random() * 1000000) AS BIGINT) AS orders")


def _script(tmp_path: Path, text: str, name: str = "pipeline.sql") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_golden_document(capsys: pytest.CaptureFixture[str], tiny_dir: Path,
                         tmp_path: Path) -> None:
    script = _script(tmp_path, TINY_NO_DEDUP)
    code, out, err = cli(capsys, "explain", str(script), "--task", str(tiny_dir), "--schedule",
                         "duplicates", "--seed", "0", "--json")
    assert code == 1, err
    doc = json.loads(out)
    if os.environ.get("ARRIVALBENCH_UPDATE_GOLDEN"):
        GOLDEN.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    assert doc == json.loads(GOLDEN.read_text(encoding="utf-8"))
    minimal = doc["minimal"]
    assert (minimal["records"], minimal["batches"], minimal["one_minimal"]) == (1, 1, True)
    assert [r["repeat"] for r in doc["timeline"][0]["records"]] == [False, True]


def test_picks_the_first_failing_schedule_and_seed(capsys: pytest.CaptureFixture[str],
                                                   tiny_dir: Path, tmp_path: Path) -> None:
    code, out, _ = cli(capsys, "explain", str(_script(tmp_path, TINY_NO_DEDUP)), "--task",
                       str(tiny_dir), "--json")
    doc = json.loads(out)
    assert code == 1
    # snapshot, in_order and trickle pass; late_arrival passes; duplicates is next.
    assert (doc["schedule"], doc["seed"]) == ("duplicates", 0)


def test_the_repro_bundle_reproduces(capsys: pytest.CaptureFixture[str], tiny_dir: Path,
                                     tmp_path: Path) -> None:
    out_dir = tmp_path / "repro"
    code, out, err = cli(capsys, "explain", str(_script(tmp_path, TINY_NO_DEDUP)), "--task",
                         str(tiny_dir), "--schedule", "crash_retry", "--out", str(out_dir),
                         "--json")
    assert code == 1, err
    doc = json.loads(out)
    assert sorted(p.name for p in out_dir.iterdir()) == [
        "README.md", "gold.sql", "log", "pipeline.sql", "plan.json", "reference.sql",
        "task.yaml"]
    command = shlex.split(doc["repro"])
    assert command[:2] == ["arrivalbench", "grade"]
    assert doc["repro"] in (out_dir / "README.md").read_text(encoding="utf-8")
    code, out, err = cli(capsys, *command[1:], "--json")
    assert code == 1, err
    verdict = json.loads(out)["verdicts"][0]
    assert verdict["schedule"] == "crash_retry" and verdict["verdict"] == "FAIL"  # its origin
    assert (out_dir / "log" / "orders.jsonl").read_text().count("\n") == \
        doc["minimal"]["records"]


def test_an_error_shrinks_to_the_same_phase(capsys: pytest.CaptureFixture[str], tiny_dir: Path,
                                            tmp_path: Path) -> None:
    code, out, _ = cli(capsys, "explain", str(_script(tmp_path, TINY_STRICT)), "--task",
                       str(tiny_dir), "--schedule", "duplicates", "--seed", "1", "--json")
    doc = json.loads(out)
    assert code == 1 and doc["verdict"] == "ERROR"
    assert doc["failure"] == {"kind": "ERROR", "as": ["run"]}
    assert doc["minimal"]["records"] == 1 and doc["minimal"]["batches"] <= 2


def test_a_passing_pipeline_exits_0(capsys: pytest.CaptureFixture[str], tiny_dir: Path,
                                    tmp_path: Path) -> None:
    code, out, _ = cli(capsys, "explain", str(_script(tmp_path, TINY_GOLD)), "--task",
                       str(tiny_dir), "--schedule", "duplicates")
    assert code == 0 and "nothing to explain" in out


def test_nondeterminism_is_reported_not_shrunk(capsys: pytest.CaptureFixture[str],
                                               tiny_dir: Path, tmp_path: Path) -> None:
    code, out, _ = cli(capsys, "explain", str(_script(tmp_path, TINY_RANDOM)), "--task",
                       str(tiny_dir), "--schedule", "in_order", "--seed", "0", "--json",
                       "--out", str(tmp_path / "never"))
    doc = json.loads(out)
    assert code == 1 and doc["nondeterministic"] is True and doc["minimal"] is None
    assert doc["differing"]["counts"]["changed"] > 0
    assert not (tmp_path / "never").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--schedule", "sometimes"], "'sometimes' is not one of"),
    (["--schedule", "backfill"], "does not declare it"),
    (["--seed", "-1"], "-1 is not in the range"),
    (["--budget", "0"], "0 is not in the range"),
    (["--out", "{full}"], "is not an empty folder"),
])
def test_bad_input_is_one_line_and_writes_nothing(capsys: pytest.CaptureFixture[str],
                                                  tiny_dir: Path, tmp_path: Path,
                                                  args: list[str], message: str) -> None:
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("x", encoding="utf-8")
    script = _script(tmp_path, TINY_NO_DEDUP)
    before = sorted(p.name for p in tmp_path.rglob("*"))
    code, out, err = cli(capsys, "explain", str(script), "--task", str(tiny_dir),
                         *(a.format(full=full) for a in args))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


@pytest.mark.parametrize(("plan", "message"), [
    ("{", "not JSON"),
    ('{"batches": [{"batch": 1, "records": []}]}', "out of order"),
    ('{"batches": [{"batch": 0, "records": [{"source": "orders", "key": {"order_id": 404}}]}]}',
     "unknown record key"),
    ('{"batches": [{"batch": 0, "records": [], "abort": {"after_statement": 9}}]}',
     "aborts after statement 9, but the pipeline has 3 statements"),
])
def test_grade_plan_bad_plans(capsys: pytest.CaptureFixture[str], tiny_dir: Path,
                              tmp_path: Path, plan: str, message: str) -> None:
    path = tmp_path / "plan.json"
    path.write_text(plan, encoding="utf-8")
    code, out, err = cli(capsys, "grade", str(_script(tmp_path, TINY_GOLD)), "--task",
                         str(tiny_dir), "--plan", str(path))
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err


def test_show_json_is_a_plan_grade_replays(capsys: pytest.CaptureFixture[str], tiny_dir: Path,
                                           tmp_path: Path) -> None:
    code, out, _ = cli(capsys, "show", str(tiny_dir), "--schedule", "crash_retry", "--seed",
                       "2", "--json")
    assert code == 0
    plan = tmp_path / "plan.json"
    plan.write_text(out, encoding="utf-8")
    script = str(_script(tmp_path, TINY_NO_DEDUP))
    code, from_plan, _ = cli(capsys, "grade", script, "--task", str(tiny_dir), "--plan",
                             str(plan), "--json")
    code2, generated, _ = cli(capsys, "grade", script, "--task", str(tiny_dir), "--schedule",
                              "crash_retry", "--seeds", "3", "--json")
    by_plan = json.loads(from_plan)["verdicts"][0]
    by_seed = json.loads(generated)["verdicts"][2]
    assert (code, by_plan["verdict"], by_plan["detail"]) == (code2, by_seed["verdict"],
                                                             by_seed["detail"])


def test_grade_every_batch_flag(capsys: pytest.CaptureFixture[str], tiny_dir: Path,
                                tmp_path: Path) -> None:
    script = str(_script(tmp_path, TINY_NO_DEDUP))
    _, plain, _ = cli(capsys, "grade", script, "--task", str(tiny_dir), "--schedule",
                      "duplicates", "--seeds", "1", "--json")
    _, checked, _ = cli(capsys, "grade", script, "--task", str(tiny_dir), "--schedule",
                        "duplicates", "--seeds", "1", "--json", "--every-batch")
    assert "first_divergence" not in plain
    assert "first_divergence" in json.loads(checked)["verdicts"][0]["detail"]


def test_grade_marks_a_nondeterministic_pipeline(capsys: pytest.CaptureFixture[str],
                                                 tiny_dir: Path, tmp_path: Path) -> None:
    code, out, err = cli(capsys, "grade", str(_script(tmp_path, TINY_RANDOM)), "--task",
                         str(tiny_dir), "--schedule", "snapshot", "--json")
    assert code == 1 and err.startswith("arrivalbench: warning: nondeterministic")  # one prefix
    assert json.loads(out)["nondeterministic"]["counts"]["changed"] > 0
    code, out, err = cli(capsys, "grade", str(_script(tmp_path, TINY_GOLD)), "--task",
                         str(tiny_dir), "--schedule", "snapshot", "--json")
    assert code == 0 and "nondeterministic" not in out + err


def test_a_deterministic_pipeline_with_an_extra_column_is_not_nondeterministic(
        capsys: pytest.CaptureFixture[str], tiny_dir: Path, tmp_path: Path) -> None:
    """The two snapshot replays are compared as read: a column the task does not declare (a
    FAIL of its own) is the same in both, so it is no false alarm."""
    extra = TINY_GOLD.replace("COUNT(*) AS orders", "COUNT(*) AS orders, 'x' AS note")
    code, out, err = cli(capsys, "grade", str(_script(tmp_path, extra)), "--task",
                         str(tiny_dir), "--schedule", "snapshot", "--json")
    assert code == 1 and "nondeterministic" not in out + err
    assert json.loads(out)["verdicts"][0]["verdict"] == "FAIL"
    randomly_extra = TINY_RANDOM.replace("AS orders", "AS orders, 'x' AS note")
    code, out, err = cli(capsys, "grade", str(_script(tmp_path, randomly_extra)), "--task",
                         str(tiny_dir), "--schedule", "snapshot", "--json")
    assert json.loads(out)["nondeterministic"]["counts"]["changed"] > 0
