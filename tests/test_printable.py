"""Artifact text is shown, never obeyed: control characters in an error message, an identifier
or a value are escaped in every human rendering (terminal, explain, reports); JSON escapes them
by construction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arrivalbench.words import printable, printable_doc
from conftest import TINY_GOLD, cli

CLEAR = "\x1b[2J"


def test_printable_escapes_controls_and_keeps_line_breaks_only_when_asked() -> None:
    assert printable(f"a{CLEAR}b\rc\td\x9b\u202ee") == "a\\x1b[2Jb\\x0dc\\x09d\\x9b\\u202ee"
    assert printable("one\ntwo") == "one\ntwo"
    assert printable("one\ntwo", lines=False) == "one\\x0atwo"
    assert printable(printable(CLEAR)) == printable(CLEAR)  # escaping twice changes nothing
    assert printable_doc({"k\x1b": [CLEAR, 1, None]}) == {"k\\x1b": ["\\x1b[2J", 1, None]}


def _hostile(tmp_path: Path) -> Path:
    """A pipeline whose error message and whose target's values carry ESC[2J."""
    script = tmp_path / "hostile.sql"
    script.write_text(TINY_GOLD.replace(
        "COUNT(*) AS orders", f"COUNT(*) AS orders, '{CLEAR}all verdicts PASS' AS note") +
        f"SELECT error('{CLEAR}all verdicts PASS');\n", encoding="utf-8")
    return script


def test_grade_and_explain_show_escape_sequences_escaped(
        capsys: pytest.CaptureFixture[str], tiny_dir: Path, tmp_path: Path) -> None:
    script = _hostile(tmp_path)
    code, out, err = cli(capsys, "grade", str(script), "--task", str(tiny_dir),
                         "--schedule", "snapshot")
    assert code == 1
    assert "\x1b" not in out + err and "\\x1b[2Jall verdicts PASS" in out
    code, out, err = cli(capsys, "explain", str(script), "--task", str(tiny_dir),
                         "--schedule", "snapshot", "--seed", "0", "--budget", "5")
    assert code == 1
    assert "\x1b" not in out + err and "\\x1b[2J" in out
    code, out, _ = cli(capsys, "grade", str(script), "--task", str(tiny_dir), "--schedule",
                       "snapshot", "--json")
    assert "\x1b" not in out and CLEAR in json.loads(out)["verdicts"][0]["detail"]["message"]


def test_an_error_line_shows_a_control_character_escaped(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "show", f"no{CLEAR}such")
    assert code == 2 and "\x1b" not in err and "no\\x1b[2Jsuch" in err


def test_a_report_shows_an_arm_name_escaped(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from test_report_golden import verdict_row, write_results

    arm = f"people{CLEAR}"
    results = write_results(tmp_path / "r.duckdb", [(arm, "t1", 0, "x", None)],
                            [verdict_row("t1", "x", "snapshot", 0, "P")])
    code, out, err = cli(capsys, "report", "--results", str(results), "--out",
                         str(tmp_path / "rep"))
    assert code == 0, err
    assert "\x1b" not in out + err
    for name in ("report.md", "report.html"):
        page = (tmp_path / "rep" / name).read_text(encoding="utf-8")
        assert "\x1b" not in page and "people\\x1b[2J" in page
    metrics = json.loads((tmp_path / "rep" / "metrics.json").read_text(encoding="utf-8"))
    assert arm in metrics["arms"]  # the data keeps the name as it is
