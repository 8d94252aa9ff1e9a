"""Every command of the README, as a newcomer copies it: each ```sh block is run from a folder
laid out like the repository's root, offline (downloads go to a closed port), at 80 columns,
with the virtualenv's bin first on PATH as `. .venv/bin/activate` would put it. What cannot run
here is skipped by the list below, each with its reason. A `$ ` command shown with its output
is run too, and its output must hold the lines shown."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import TINY_YAML, write_task

ROOT = Path(__file__).parents[1]
README = ROOT / "README.md"

SKIP = {
    "make run": "grades the whole corpus: minutes of work; the same `arrivalbench run` is run "
                "on one task below",
    "make test": "runs this very suite",
    ". .venv/bin/activate": "the test puts the virtualenv's bin first on PATH instead",
    "inspect eval arrivalbench/arrivalbench --model mockllm/model --limit 2":
        "run exactly so, offline, with its log read back, by test_inspect_offline.py",
    "pip install 'arrivalbench[dbt]'": "installs from the package index; `make` installs the "
                                       "extra into .venv",
    "arrivalbench grade my_project --task ad_clicks_clean --seeds 2":
        "minutes of dbt runs; test_dbt.py grades the same example project and checks its table",
}
# Exit status 1 is a verdict, not a failure, for commands that grade.
MAY_FAIL = ("arrivalbench grade ",)


def blocks(text: str) -> list[tuple[str, list[str]]]:
    """(language, lines) of every fenced block."""
    return [(lang, body.splitlines())
            for lang, body in re.findall(r"^```(\w*)\n(.*?)^```", text, re.S | re.M)]


def commands(text: str) -> list[str]:
    found = []
    for lang, lines in blocks(text):
        if lang == "sh":
            joined = "\n".join(lines).replace("\\\n", " ")
            found += [line.split("  #")[0].strip() for line in joined.splitlines()
                      if line.strip() and not line.startswith("#")]
    return found


def shown_outputs(text: str) -> list[tuple[str, list[str]]]:
    """`$ command` lines of plain blocks, with the lines shown after them."""
    return [(lines[0][2:], lines[1:]) for lang, lines in blocks(text)
            if lang == "" and lines and lines[0].startswith("$ ")]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's root as a newcomer sees it, with the README's stand-ins written."""
    folder = tmp_path_factory.mktemp("clone")
    (folder / "src").symlink_to(ROOT / "src")
    (folder / "examples").symlink_to(ROOT / "examples")
    shutil.copy(ROOT / "src/arrivalbench/tasks/store_daily_revenue/gold.sql",
                folder / "my_pipeline.sql")
    write_task(folder, name="my_task", spec={**TINY_YAML, "id": "my_task"})  # named after its id
    return folder


def shell(root: Path, command: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("INSPECT_LOG_DIR", None)
    env.pop("ARRIVALBENCH_RESULTS", None)
    closed = "http://127.0.0.1:9"
    env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
               COLUMNS="80", HTTP_PROXY=closed, HTTPS_PROXY=closed, http_proxy=closed,
               https_proxy=closed, NO_PROXY="", no_proxy="",
               TIKTOKEN_CACHE_DIR=str(root / ".tiktoken"))
    return subprocess.run(["bash", "-c", command], cwd=root, env=env, capture_output=True,
                          text=True, timeout=900, check=False)


def test_the_readme_has_commands_and_names_every_skip() -> None:
    found = commands(README.read_text(encoding="utf-8"))
    assert set(SKIP) <= set(found)  # a skip for a command the README no longer has is stale
    assert not [c for c in found if c.startswith(".venv/bin/")]  # one form everywhere


def test_every_readme_command_runs(root: Path) -> None:
    for command in commands(README.read_text(encoding="utf-8")):
        if command in SKIP:
            continue
        done = shell(root, command)
        allowed = (0, 1) if command.startswith(MAY_FAIL) else (0,)
        assert done.returncode in allowed, (command, done.stderr[-2000:])
        assert "Traceback" not in done.stderr, (command, done.stderr[-2000:])


def test_shown_outputs_are_what_the_command_prints(root: Path) -> None:
    examples = shown_outputs(README.read_text(encoding="utf-8"))
    assert examples
    for command, shown in examples:
        if command in SKIP:
            continue
        done = shell(root, command)
        printed = " ".join(done.stdout.split())  # a long line may wrap between words
        for line in shown:
            if line.strip() and not line.strip().startswith("…"):
                assert " ".join(line.split()) in printed, (command, line)
