"""`inspect eval arrivalbench/arrivalbench --model mockllm/model --limit 2`, exactly as the
README gives it, on a machine with no network: no tokenizer download, samples complete."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")


def test_inspect_eval_with_the_mock_model_runs_offline(tmp_path: Path) -> None:
    from inspect_ai.log import list_eval_logs, read_eval_log

    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    # No network: every download goes to a closed port, and no tokenizer is cached.
    env.update(HTTP_PROXY="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9",
               http_proxy="http://127.0.0.1:9", https_proxy="http://127.0.0.1:9",
               NO_PROXY="", no_proxy="", TIKTOKEN_CACHE_DIR=str(tmp_path / "tiktoken"),
               INSPECT_LOG_DIR=str(tmp_path / "logs"))
    inspect = Path(sys.executable).parent / "inspect"
    done = subprocess.run([str(inspect), "eval", "arrivalbench/arrivalbench", "--model",
                           "mockllm/model", "--limit", "2"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "o200k_base" not in done.stderr
    [info] = list_eval_logs(str(tmp_path / "logs"))
    log = read_eval_log(info)
    assert log.status == "success"
    assert log.samples is not None and len(log.samples) == 2
    for sample in log.samples:
        assert sample.error is None and sample.scores
        [score] = sample.scores.values()
        assert score.explanation == "no script: no_sql"  # the mock writes no SQL


def test_inspect_logs_in_the_repository_are_ignored_by_git() -> None:
    """Run from the repository's root, the command above leaves `logs/`; git must not see it."""
    root = Path(__file__).parents[1]
    done = subprocess.run(["git", "check-ignore", "-q", "logs/2026_arrivalbench.eval"], cwd=root,
                          capture_output=True, check=False)
    assert done.returncode == 0
