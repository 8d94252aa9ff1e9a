"""Every output the README shows is what its command prints (see `docblocks`), in a clone of
its own: the commands themselves run in test_readme.py, on another worker."""

from __future__ import annotations

from pathlib import Path

import pytest

from docblocks import check_shown_outputs, clone
from test_readme import README, SKIP


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return clone(tmp_path_factory.mktemp("clone"))


def test_shown_outputs_are_what_the_command_prints(root: Path) -> None:
    check_shown_outputs(root, README.read_text(encoding="utf-8"), SKIP)
