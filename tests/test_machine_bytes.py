"""Verdict bytes do not depend on the machine: the hostile pipelines graded under two different
home directories (in fresh processes) give the same verdicts, byte for byte, and no message
names a host path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import TINY_GOLD
from test_sandbox import HOSTILE, PRELUDE

CASES = {
    **HOSTILE,
    # DuckDB answers with the secret directory under $HOME: the path masking must catch it.
    "named secret": "CREATE SECRET s (TYPE s3, KEY_ID 'a', SECRET 'b')",
    "persistent secret": "CREATE PERSISTENT SECRET p (TYPE s3, KEY_ID 'a', SECRET 'b')",
}

GRADE = """
import json, sys
from arrivalbench.core.grading import Point, grade
from arrivalbench.core.task import load_spec
spec = load_spec(sys.argv[1])
scripts = json.loads(sys.stdin.read())
for name in sorted(scripts):
    [graded] = grade(spec, scripts[name], [Point("in_order", 0)])
    print(graded.verdict.json())
"""


def verdicts_with_home(home: Path, task: Path) -> list[str]:
    home.mkdir()
    scripts = {name: PRELUDE + sql + ";\n" + TINY_GOLD for name, sql in CASES.items()}
    env = {**os.environ, "HOME": str(home), "USERPROFILE": str(home)}
    done = subprocess.run([sys.executable, "-c", GRADE, str(task)], input=json.dumps(scripts),
                          capture_output=True, text=True, env=env, check=True, timeout=300)
    return done.stdout.splitlines()


def test_hostile_verdicts_are_the_same_bytes_under_two_homes(tmp_path: Path,
                                                            tiny_dir: Path) -> None:
    first = verdicts_with_home(tmp_path / "home-one", tiny_dir)
    second = verdicts_with_home(tmp_path / "another-home-two", tiny_dir)
    assert len(first) == len(CASES)
    assert first == second
    for record in first:
        assert json.loads(record)["verdict"] == "ERROR"
        assert "home-" not in record and str(tmp_path) not in record, record
        assert "/etc/" not in record and "/root" not in record, record
