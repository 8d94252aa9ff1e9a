"""The harness's semantic version changes when a module that decides verdicts changes, and only
then: checked on copies of the package, each imported in a fresh process. What decides a verdict
is the import closure of the grading entry points, and the digest covers all of it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import arrivalbench
from arrivalbench.core import version
from arrivalbench.core.verdict import Verdict
from test_layers import graph, modules

PACKAGE = Path(arrivalbench.__file__).parent
# What grading starts from: the one-artifact grade, the every-batch check, and the engines and
# artifact kinds that `backend()` and `artifacts.load()` import by name.
ENTRY_POINTS = ("arrivalbench.core.grading", "arrivalbench.core.checkpoints",
                "arrivalbench.core.engine.duckdb", "arrivalbench.core.engine.postgres",
                "arrivalbench.core.artifacts.dbt", "arrivalbench.core.artifacts.script")


def closure(starts: tuple[str, ...]) -> set[str]:
    edges, seen, todo = graph(), set(), list(starts)
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += edges[module]
    return seen


def version_of(root: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c",
         "from arrivalbench.core.version import harness_version; print(harness_version())"],
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}, capture_output=True,
        text=True, check=True, timeout=120)
    return done.stdout.strip()


def test_the_digest_covers_the_import_closure_of_grading() -> None:
    hashed = {p.resolve() for p in version.files()}
    deciding = closure(ENTRY_POINTS) - {"arrivalbench"}  # __version__ is in the string itself
    missing = sorted(m for m in deciding if modules()[m].resolve() not in hashed)
    assert len(deciding) > 20 and missing == []


DECIDING = sorted(str(p.relative_to(PACKAGE)) for p in version.files())


@pytest.fixture(scope="module")
def package_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("package")
    shutil.copytree(PACKAGE, root / "arrivalbench",
                    ignore=shutil.ignore_patterns("__pycache__", "tasks"))
    return root


def test_a_copy_of_the_package_has_the_same_version(package_copy: Path) -> None:
    assert version_of(package_copy) == version.harness_version()


def test_editing_any_deciding_module_changes_the_version(package_copy: Path) -> None:
    """Each module of the digest, edited in turn in a temporary copy (one process for all, so
    that the 40-odd edits stay quick), moves the version; restoring it restores the version."""
    script = """
import sys
from pathlib import Path
from arrivalbench.core import version
base = version.harness_version()
for rel in sys.argv[1:]:
    path = version.PACKAGE / rel
    text = path.read_bytes()
    path.write_bytes(text + b"\\n# an edit\\n")
    version.harness_version.cache_clear()
    moved = version.harness_version() != base
    path.write_bytes(text)
    version.harness_version.cache_clear()
    print(rel, moved, version.harness_version() == base)
"""
    done = subprocess.run([sys.executable, "-c", script, *DECIDING],
                          env={"PYTHONPATH": str(package_copy), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, check=True, timeout=300)
    rows = [line.split() for line in done.stdout.splitlines()]
    assert [r[0] for r in rows] == DECIDING
    assert [r for r in rows if r[1:] != ["True", "True"]] == []


@pytest.mark.parametrize("edit", ["render.py", "words.py", "cli/__init__.py",
                                  "report/metrics.py"])
def test_editing_the_wording_does_not(tmp_path: Path, package_copy: Path, edit: str) -> None:
    root = tmp_path / "copy"
    shutil.copytree(package_copy, root)
    with (root / "arrivalbench" / edit).open("a", encoding="utf-8") as f:
        f.write("\n# an edit\n")
    assert version_of(root) == version.harness_version()


def test_verdicts_and_keys_carry_it() -> None:
    stamp = version.harness_version()
    assert stamp.startswith(arrivalbench.__version__ + "+") and len(stamp.split("+")[1]) == 12
    verdict = Verdict("t", "d", "snapshot", 0, "s", "a", "PASS", {}, "duckdb", "2.0.1")
    assert verdict.document()["harness_version"] == stamp


def test_the_version_option_shows_the_harness_version_verdicts_store(
        capsys: pytest.CaptureFixture[str]) -> None:
    from conftest import cli

    code, out, err = cli(capsys, "--version")
    assert (code, err) == (0, "")
    assert out.startswith(f"arrivalbench {version.harness_version()} ")
