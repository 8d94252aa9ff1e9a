"""The commands of the study's pages of docs/ (run, regrade, report, generate) run, and those
shown with their output print what is shown (docpages.py groups the pages, docblocks.py runs
the blocks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from docblocks import clone
from docpages import commands_run, outputs_shown, pages

PAGES = pages("study")


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return clone(tmp_path_factory.mktemp("clone"))  # one folder for the pages of this file


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_command_of_the_page_runs(root: Path, page: Path) -> None:
    commands_run(root, page)


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_shown_outputs_are_what_the_command_prints(root: Path, page: Path) -> None:
    outputs_shown(root, page)
