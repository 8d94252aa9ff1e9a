"""The harness's semantic version changes when a module that decides verdicts changes, and only
then: checked on copies of the package, each imported in a fresh process."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import arrivalbench
from arrivalbench import semantics
from arrivalbench.verdict import Verdict

PACKAGE = Path(arrivalbench.__file__).parent


def version_of(root: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c",
         "from arrivalbench.semantics import harness_version; print(harness_version())"],
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}, capture_output=True,
        text=True, check=True, timeout=120)
    return done.stdout.strip()


@pytest.fixture(scope="module")
def copies(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The package as it is, and copies with one module edited."""
    roots = {}
    for name, edit in (("same", None), ("oracle", "oracle.py"), ("engine", "engine/duckdb.py"),
                       ("schedules", "schedules.py"), ("render", "render.py")):
        root = tmp_path_factory.mktemp(name)
        shutil.copytree(PACKAGE, root / "arrivalbench",
                        ignore=shutil.ignore_patterns("__pycache__"))
        if edit is not None:
            with (root / "arrivalbench" / edit).open("a", encoding="utf-8") as f:
                f.write("\n# an edit\n")
        roots[name] = root
    return roots


def test_a_copy_of_the_package_has_the_same_version(copies: dict[str, Path]) -> None:
    assert version_of(copies["same"]) == semantics.harness_version()


@pytest.mark.parametrize("edited", ["oracle", "engine", "schedules"])
def test_editing_a_deciding_module_changes_the_version(copies: dict[str, Path],
                                                       edited: str) -> None:
    assert version_of(copies[edited]) != version_of(copies["same"])


def test_editing_the_wording_does_not(copies: dict[str, Path]) -> None:
    assert version_of(copies["render"]) == version_of(copies["same"])


def test_verdicts_and_keys_carry_it() -> None:
    version = semantics.harness_version()
    assert version.startswith(arrivalbench.__version__ + "+") and len(version.split("+")[1]) == 12
    verdict = Verdict("t", "d", "snapshot", 0, "s", "a", "PASS")
    assert verdict.document()["harness_version"] == version
    assert {p.name for p in semantics.files()} >= {"oracle.py", "replay.py", "schedules.py",
                                                    "duckdb.py", "verdict.py", "grading.py"}
