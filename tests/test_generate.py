"""`arrivalbench generate`: plan, store, grade, resume; offline with mockllm, and once over real
HTTP against a small OpenAI-compatible server on loopback."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import duckdb
import pytest
from inspect_ai.log import list_eval_logs, read_eval_log
from inspect_ai.model import ChatMessage, ModelOutput, ModelUsage

from arrivalbench.agent import generate as generation
from arrivalbench.cli import main
from arrivalbench.core.grading import artifact_digest, plan
from arrivalbench.core.task import builtin_ids, load_spec
from arrivalbench.corpus import leakage
from arrivalbench.sql.idioms import signature
from conftest import TINY_GOLD, TINY_YAML, write_task

WRONG_COUNT = TINY_GOLD.replace("COUNT(*) AS orders", "COUNT(amount) AS orders")


def fenced(script: str) -> str:
    return f"The pipeline:\n\n```sql\n{script}```\n"


def reply(text: str, stop: str = "stop") -> ModelOutput:
    output = ModelOutput.from_content("mockllm/model", text, stop_reason=stop)  # type: ignore[arg-type]
    output.usage = ModelUsage(input_tokens=100, output_tokens=20, total_tokens=120)
    return output


def make_task(root: Path, name: str) -> Path:
    spec = json.loads(json.dumps(TINY_YAML))
    spec["id"] = name
    spec["ticket"] = f"Scenario {name}. " + spec["ticket"]
    return write_task(root, name, spec)


def rows(results: Path, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(results), read_only=True) as con:
        return con.execute(sql, params or []).fetchall()


pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:inspect_ai.*")

# -- dry run ------------------------------------------------------------------------------------


def test_dry_run_prints_the_plan_and_calls_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # nothing is called, so none is needed
    task = make_task(tmp_path, "alpha")
    results = tmp_path / "out" / "r.duckdb"
    main(["generate", "--model", "openai/gpt-4o", "--task", str(task), "--task",
          "store_daily_revenue", "--replicates", "2", "--max-tokens", "1000",
          "--results", str(results), "--dry-run"])
    printed = capsys.readouterr().out
    assert "arm openai/gpt-4o:unhinted: 2 tasks x 2 replicates" in printed
    assert "samples to generate: 4\n" in printed
    assert "model calls: at most 12 (3 turns a sample)" in printed
    assert "output tokens: at most 12,000 (1,000 a call)" in printed
    plan = generation.make_plan(generation.Request(
        "openai/gpt-4o", tasks=(str(task), "store_daily_revenue"), replicates=2,
        max_tokens=1000, results=results))
    first, most, _ = plan.tokens()
    assert f"~{first:,} for the first turns, at most ~{most:,}" in printed
    assert 0 < first < most
    assert not results.exists() and not results.parent.exists()  # nothing written


def test_bad_model_names_are_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                       ) -> None:
    for model, message in (("gpt-4o", "give PROVIDER/MODEL"),
                           ("nosuchprovider/x", "model nosuchprovider/x: ")):
        with pytest.raises(SystemExit) as done:
            main(["generate", "--model", model, "--task", "store_daily_revenue",
                  "--results", str(tmp_path / "r.duckdb")])
        assert done.value.code == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err


# -- mockllm, scripted --------------------------------------------------------------------------

SCRIPTS: dict[str, list[tuple[str, str]]] = {
    "passes": [(fenced(TINY_GOLD), "stop")],
    "repairs": [(fenced(WRONG_COUNT), "stop"), (fenced(TINY_GOLD), "stop")],
    "prose": [("A history table would do it.", "stop")] * 3,
    "capped": [("```sql\nCREATE TABLE shop_revenue AS SELECT", "max_tokens")] * 3,
    "breaks": [(fenced(WRONG_COUNT), "stop")],  # then the provider fails
}


def scripted(failing: bool = True) -> Any:
    def respond(messages: list[ChatMessage], *_args: Any) -> ModelOutput:
        name = next(n for n in SCRIPTS if f"Scenario {n}." in messages[0].text)
        turn = sum(1 for m in messages if m.role == "assistant")
        if name == "breaks" and turn == 1 and failing:
            raise RuntimeError("upstream 503: the provider is overloaded")
        if name == "breaks" and not failing:
            return reply(fenced(TINY_GOLD))
        text, stop = SCRIPTS[name][turn]
        return reply(text, stop)

    return respond


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("generate")
    tasks = tuple(str(make_task(root / "tasks", name)) for name in SCRIPTS)
    request = generation.Request("mockllm/model", tasks=tasks, results=root / "res" / "r.duckdb",
                                 seeds=1, workers=1)
    cwd = os.getcwd()
    os.chdir(root)  # Inspect's default log folder would be ./logs
    try:
        outcome = generation.run(request, model_args={"custom_outputs": scripted()},
                                 display="none", progress=False)
    finally:
        os.chdir(cwd)
    yield {"root": root, "request": request, "outcome": outcome, "results": request.results}


def cell(results: Path, task: str) -> tuple[Any, ...]:
    found = rows(results, "SELECT artifact, reason, provenance FROM cells WHERE task = ?", [task])
    assert len(found) == 1
    return found[0]


def test_a_script_is_stored_with_its_idioms_turns_and_tokens(generated: dict[str, Any]) -> None:
    results = generated["results"]
    artifact, reason, provenance = cell(results, "passes")
    assert artifact == artifact_digest(TINY_GOLD) and reason is None
    meta = json.loads(provenance)
    assert meta["model"] == "mockllm/model" and meta["variant"] == "unhinted"
    assert meta["first_pass_turn"] == 1 and meta["turns"] == 1
    assert Path(meta["inspect_log"]).parent == results.parent / "r.inspect-logs"
    [(sql, idioms)] = rows(results, "SELECT sql, idioms FROM artifacts WHERE artifact = ?",
                           [artifact])
    spec = load_spec(generated["root"] / "tasks" / "passes")
    assert sql == TINY_GOLD and idioms == signature(TINY_GOLD, spec)
    assert idioms == ["batch_dedup", "full_recompute", "history_table", "select_star", "upsert"]
    assert rows(results, "SELECT turn, snapshot_verdict, feedback FROM turns WHERE task = "
                         "'passes'") == [(1, "PASS", None)]
    [(turns, given, produced, transcript)] = rows(
        results, "SELECT turns, input_tokens, output_tokens, transcript FROM transcripts "
                 "WHERE task = 'passes' AND arm = 'mockllm/model:unhinted'")
    assert (turns, given, produced) == (1, 100, 20)
    roles = [m["role"] for m in json.loads(transcript)["messages"]]
    assert roles == ["user", "assistant"]


def test_a_repaired_script_keeps_both_turns(generated: dict[str, Any]) -> None:
    results = generated["results"]
    assert cell(results, "repairs")[0] == artifact_digest(TINY_GOLD)
    turns = rows(results, "SELECT turn, sql, snapshot_verdict, feedback FROM turns WHERE task = "
                          "'repairs' ORDER BY turn")
    assert [(t[0], t[1], t[2]) for t in turns] == [(1, WRONG_COUNT, "FAIL"),
                                                   (2, TINY_GOLD, "PASS")]
    assert "orders is 3, expected 4" in turns[0][3] and leakage.scan(turns[0][3]) == []
    assert rows(results, "SELECT input_tokens, output_tokens FROM transcripts WHERE task = "
                         "'repairs'") == [(200, 40)]


def test_samples_without_a_script_are_cells_with_a_reason(generated: dict[str, Any]) -> None:
    results = generated["results"]
    for task, reason in (("prose", "no_sql"), ("capped", "token_cap"),
                         ("breaks", "provider_error")):
        artifact, stored_reason, _provenance = cell(results, task)
        assert artifact is None and stored_reason == reason, task
    error = json.loads(cell(results, "breaks")[2])["error"]
    assert "upstream 503: the provider is overloaded" in error
    # the turn before the provider failed is kept
    assert rows(results, "SELECT turn, snapshot_verdict FROM turns WHERE task = 'breaks'") == \
        [(1, "FAIL")]
    assert rows(results, "SELECT count(*) FROM turns WHERE task = 'prose' AND sql IS NULL "
                         "AND feedback LIKE 'Your reply did not contain a SQL script.%'") == [(3,)]
    outcome = generated["outcome"]
    assert outcome.reasons == {"no_sql": 1, "token_cap": 1, "provider_error": 1}
    assert (outcome.stored, outcome.scripts, outcome.first_turn_pass, outcome.repaired_pass) \
        == (5, 2, 1, 1)
    assert "2 with a script (1 passed the snapshot test on the first turn, 1 after feedback)" \
        in outcome.describe()


def test_scripts_are_graded_and_missing_scripts_are_not(generated: dict[str, Any]) -> None:
    results = generated["results"]
    # snapshot, two controls and three hazards at one seed, all PASS, for each of the two
    # tasks whose final script is the gold one
    assert rows(results, "SELECT task, verdict, count(*) FROM verdicts WHERE artifact = ? "
                         "GROUP BY ALL ORDER BY task", [artifact_digest(TINY_GOLD)]) == \
        [("passes", "PASS", 6), ("repairs", "PASS", 6)]
    assert rows(results, "SELECT count(DISTINCT artifact) FROM verdicts") == [(1,)]
    summary = generated["outcome"].grading
    assert summary is not None and [a.arm for a in summary.arms] == ["mockllm/model:unhinted"]


def test_logs_go_beside_the_results_file_and_stay_out_of_git(generated: dict[str, Any]
                                                             ) -> None:
    folder = generated["results"].parent / "r.inspect-logs"
    assert list(folder.glob("*.eval"))
    assert (folder / ".gitignore").read_text().splitlines()[-1] == "*"
    assert not (generated["root"] / "logs").exists()


def test_a_second_run_generates_only_what_is_missing(generated: dict[str, Any]) -> None:
    request = generated["request"]
    plan = generation.make_plan(request)
    assert [spec.id for spec, _ in plan.todo] == ["breaks"]  # the provider error is retried
    assert plan.stored == 4
    before = rows(request.results, "SELECT task, transcript FROM transcripts WHERE task <> "
                                   "'breaks' ORDER BY task")
    outcome = generation.run(request, model_args={"custom_outputs": scripted(failing=False)},
                             display="none", progress=False)
    assert outcome.stored == 1
    artifact, reason, _ = cell(request.results, "breaks")
    assert artifact == artifact_digest(TINY_GOLD) and reason is None
    assert rows(request.results, "SELECT task, transcript FROM transcripts WHERE task <> "
                                 "'breaks' ORDER BY task") == before
    # more replicates add replicates
    larger = dataclasses.replace(request, replicates=2)
    assert len(generation.make_plan(larger).todo) == len(SCRIPTS)


def test_mockllm_runs_offline_from_the_command_line(tmp_path: Path) -> None:
    """`arrivalbench generate --model mockllm/model` as a user types it, in a fresh folder."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    done = subprocess.run([str(Path(sys.executable).parent / "arrivalbench"), "generate",
                           "--model", "mockllm/model", "--results", "out/r.duckdb"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    count = len(builtin_ids("core"))  # generate's default tier
    assert f"generated {count} samples of arm mockllm/model:unhinted" in done.stdout
    assert f"no script: {count} no_sql" in done.stdout
    assert (tmp_path / "out" / "r.inspect-logs" / ".gitignore").is_file()
    assert not (tmp_path / "logs").exists()
    assert rows(tmp_path / "out" / "r.duckdb", "SELECT count(*) FROM cells WHERE artifact IS "
                                                "NULL AND reason = 'no_sql'") == [(count,)]


# -- a real provider over HTTP ------------------------------------------------------------------


class _FakeOpenAI(BaseHTTPRequestHandler):
    """Chat completions: a wrong script to a first turn, the gold script after feedback."""

    requests: ClassVar[list[tuple[str, dict[str, Any]]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        self.requests.append((self.path, body))
        if not self.path.endswith("/chat/completions"):
            self.send_error(404)
            return
        text = self.text([m for m in body["messages"] if m["role"] == "user"])
        payload = json.dumps({
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 321, "completion_tokens": 45, "total_tokens": 366},
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def text(self, users: list[dict[str, Any]]) -> str:
        return fenced(WRONG_COUNT if len(users) == 1 else TINY_GOLD)

    def log_message(self, *_args: Any) -> None:
        pass


class _HostileOpenAI(_FakeOpenAI):
    """Chat completions: every reply the hostile probe that allocates a 2 GB string."""

    def text(self, users: list[dict[str, Any]]) -> str:
        return fenced(HUGE_VALUE.read_text())


HUGE_VALUE = Path(__file__).resolve().parent / "hostile" / "duckdb" / "memory_big_string.sql"


def serve(handler: type[_FakeOpenAI]) -> Iterator[str]:
    _FakeOpenAI.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture
def openai_server() -> Iterator[str]:
    yield from serve(_FakeOpenAI)


@pytest.fixture
def hostile_server() -> Iterator[str]:
    yield from serve(_HostileOpenAI)


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content)
    return str(content)


def test_generate_over_http_with_the_openai_provider(
        tmp_path: Path, openai_server: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "not-a-real-key")
    monkeypatch.setenv("INSPECT_DISPLAY", "none")
    monkeypatch.chdir(tmp_path)
    task = make_task(tmp_path / "tasks", "served")
    results = tmp_path / "r.duckdb"
    main(["generate", "--model", "openai/arrivalbench-test", "--base-url", openai_server,
          "--task", str(task), "--results", str(results), "--seeds", "1", "--workers", "1",
          "--max-tokens", "1234"])
    printed = " ".join(capsys.readouterr().out.split())  # wrapped to the terminal's width
    assert "1 with a script (0 passed the snapshot test on the first turn, 1 after feedback)" \
        in printed

    calls = [body for path, body in _FakeOpenAI.requests if path.endswith("/chat/completions")]
    assert len(calls) == 2
    assert all(body["model"] == "arrivalbench-test" for body in calls)
    assert all(1234 in (body.get("max_tokens"), body.get("max_completion_tokens"))
               for body in calls)
    first_prompt = _text(calls[0]["messages"][-1])
    assert "Scenario served." in first_prompt and leakage.scan(first_prompt) == []
    feedback_text = _text(calls[1]["messages"][-1])
    assert calls[1]["messages"][-1]["role"] == "user"
    assert "differs from the expected result" in feedback_text
    assert leakage.scan(feedback_text) == []

    arm = "openai/arrivalbench-test:unhinted"
    assert rows(results, "SELECT artifact, reason FROM cells WHERE arm = ?", [arm]) == \
        [(artifact_digest(TINY_GOLD), None)]
    assert rows(results, "SELECT turns, input_tokens, output_tokens FROM transcripts") == \
        [(2, 642, 90)]
    assert rows(results, "SELECT turn, snapshot_verdict FROM turns ORDER BY turn") == \
        [(1, "FAIL"), (2, "PASS")]
    assert rows(results, "SELECT count(*) FROM verdicts WHERE verdict = 'PASS'") == [(6,)]
    provenance = json.loads(rows(results, "SELECT provenance FROM cells")[0][0])
    assert provenance["base_url"] == openai_server
    assert load_spec(task).digest == rows(results, "SELECT task_digest FROM cells")[0][0]


# `arrivalbench generate` in a process of its own, whose peak memory is read at the end: VmHWM
# is that process's high-water mark (ru_maxrss would carry across exec the test's own peak).
GENERATE_PEAK = """
import sys
from arrivalbench.cli import main
try:
    main(sys.argv[1:])
    code = 0
except SystemExit as exc:
    code = exc.code
with open("/proc/self/status") as status:
    peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
print(code, int(peak) * 1024)
"""


def test_a_huge_value_from_a_served_model_is_a_memory_error_and_generate_stays_small(
        tmp_path: Path, hostile_server: str) -> None:
    """A model over HTTP answers every turn with a script that allocates a 2 GB string outside
    DuckDB's buffer manager: the snapshot test of each turn and the grading after it replay it
    in bounded workers, where it is an ERROR with phase memory, and the process running
    Inspect stays under 1 GB."""
    from arrivalbench.study.executors.local import WORKER_DATA

    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(OPENAI_API_KEY="not-a-real-key", INSPECT_DISPLAY="none")
    results = tmp_path / "r.duckdb"
    done = subprocess.run(
        [sys.executable, "-c", GENERATE_PEAK, "generate", "--model", "openai/arrivalbench-test",
         "--base-url", hostile_server, "--task", "ad_clicks_clean", "--results", str(results),
         "--seeds", "1", "--workers", "1"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False)
    code, peak = done.stdout.split()[-2:]
    assert code == "0", done.stderr[-3000:]
    assert int(peak) < 1024 * 1024 * 1024 < WORKER_DATA, peak
    assert rows(results, "SELECT turn, snapshot_verdict FROM turns ORDER BY turn") == \
        [(1, "ERROR"), (2, "ERROR"), (3, "ERROR")]
    records = [json.loads(r) for (r,) in rows(results, "SELECT record FROM verdicts")]
    kinds = {point.schedule for point in plan(load_spec("ad_clicks_clean"), 1)}
    assert {r["schedule"] for r in records} == kinds
    assert {(r["verdict"], r["detail"]["phase"]) for r in records} == {("ERROR", "memory")}
    # each turn's snapshot detail, in the Inspect log beside the results file
    [info] = list_eval_logs(str(tmp_path / "r.inspect-logs"))
    [sample] = read_eval_log(info).samples or []
    assert [t["snapshot_detail"]["phase"] for t in sample.store["arrivalbench:turns"]] == \
        ["memory"] * 3

