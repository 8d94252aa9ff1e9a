"""Every command of the README, as a newcomer copies it (see `docblocks` for how a block is run).
What cannot run here is skipped by the list below, each with its reason. The README is the front
page: short, with the reference in docs/ (tested by test_docs.py and test_docs_<group>.py). The
outputs it shows are checked in test_readme_outputs.py, a file of its own so that the two
longest checks of the suite run on two workers."""

from __future__ import annotations

from pathlib import Path

import pytest

from docblocks import ROOT, clone, commands, links, run_commands

README = ROOT / "README.md"
MAX_LINES = 335

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


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return clone(tmp_path_factory.mktemp("clone"))


def test_the_readme_has_commands_and_names_every_skip() -> None:
    found = commands(README.read_text(encoding="utf-8"))
    assert set(SKIP) <= set(found)  # a skip for a command the README no longer has is stale
    assert not [c for c in found if c.startswith(".venv/bin/")]  # one form everywhere


def test_the_readme_is_a_front_page() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_LINES
    # every page of the reference is reachable from it
    pages = {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md")}
    linked = {target.partition("#")[0] for target in links(text)}
    assert pages <= linked, pages - linked


def test_every_readme_command_runs(root: Path) -> None:
    run_commands(root, README.read_text(encoding="utf-8"), SKIP)
