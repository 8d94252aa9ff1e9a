"""Running the commands of a Markdown page as a newcomer copies them, shared by the README's test
and the test of docs/: each ```sh block is run from a folder laid out like the repository's
root, offline (downloads go to a closed port), at 80 columns, with the virtualenv's bin first on
PATH as `. .venv/bin/activate` would put it. A plain block that opens with `$ command` shows
that command's output, and the command must print the lines shown."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import TINY_YAML, write_task

ROOT = Path(__file__).parents[1]

# Exit status 1 is a verdict, not a failure, for commands that grade or explain.
MAY_FAIL = ("arrivalbench grade ", "arrivalbench explain ")


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


def links(text: str) -> list[str]:
    """Relative targets of Markdown links and images (a `#fragment` kept; a link within the
    page is `#fragment` alone)."""
    return [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"[a-z]+:", t)]


def anchors(text: str) -> set[str]:
    """The fragments GitHub gives the page's headings: lower case, punctuation dropped but
    `-`, spaces as `-`."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^#+ (.+)$", text, re.M)}


def clone(folder: Path) -> Path:
    """The repository's root as a newcomer sees it, with the pages' stand-ins written:
    `my_pipeline.sql` (a gold) and `./my_task/` (a task folder named after its id)."""
    (folder / "src").symlink_to(ROOT / "src")
    (folder / "examples").symlink_to(ROOT / "examples")
    shutil.copy(ROOT / "src/arrivalbench/tasks/store_daily_revenue/gold.sql",
                folder / "my_pipeline.sql")
    write_task(folder, name="my_task", spec={**TINY_YAML, "id": "my_task"})
    return folder


def shell(root: Path, command: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("INSPECT_LOG_DIR", None)
    env.pop("ARRIVALBENCH_RESULTS", None)
    closed = "http://127.0.0.1:9"
    env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
               COLUMNS="80", HTTP_PROXY=closed, HTTPS_PROXY=closed, http_proxy=closed,
               https_proxy=closed, NO_PROXY="", no_proxy="",
               TIKTOKEN_CACHE_DIR=str(root / ".tiktoken"),
               XDG_CACHE_HOME=str(root / ".cache"))  # grade --data's derived tasks
    return subprocess.run(["bash", "-c", command], cwd=root, env=env, capture_output=True,
                          text=True, timeout=900, check=False)


def run_commands(root: Path, text: str, skip: dict[str, str]) -> None:
    """Every command of `text` but the skipped ones exits 0 (or 1 for a verdict), with no
    traceback."""
    for command in commands(text):
        if command in skip:
            continue
        done = shell(root, command)
        allowed = (0, 1) if command.startswith(MAY_FAIL) else (0,)
        assert done.returncode in allowed, (command, done.stderr[-2000:])
        assert "Traceback" not in done.stderr, (command, done.stderr[-2000:])


def check_shown_outputs(root: Path, text: str, skip: dict[str, str]) -> None:
    """Every `$ command` shown with its output prints the lines shown (a long line may wrap
    between words; a line starting with `…` stands for lines left out)."""
    for command, shown in shown_outputs(text):
        if command in skip:
            continue
        done = shell(root, command)
        printed = " ".join(done.stdout.split())
        for line in shown:
            if line.strip() and not line.strip().startswith("…"):
                assert " ".join(line.split()) in printed, (command, line)
