"""What a person sees: every command's output at 80 columns when not a terminal (nothing lost,
no word cut), plain progress lines in a log, a script that is not SQL, names that match no
task, counts in words."""

from __future__ import annotations

import io
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from rich.cells import cell_len
from rich.console import Console

from arrivalbench import render
from arrivalbench.core.task import builtin_ids, load_spec, resolve
from arrivalbench.words import count
from conftest import TINY_GOLD, cli

TASK = "store_daily_revenue"
ARRIVALBENCH = Path(sys.executable).parent / "arrivalbench"
WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def at_80(*argv: str | Path) -> tuple[int, str, str]:
    """`arrivalbench ARGV` in a process of its own, output to pipes, COLUMNS=80."""
    env = {**os.environ, "COLUMNS": "80"}
    done = subprocess.run([str(ARRIVALBENCH), *map(str, argv)], capture_output=True, text=True,
                          env=env, timeout=600, check=False)
    return done.returncode, done.stdout, done.stderr


def words(text: str) -> Iterator[str]:
    return (w for line in text.splitlines() for w in WORD.findall(line))


def assert_fits(out: str) -> None:
    """Every line within 80 columns, but for a word longer than that alone on its line (a path
    in a shell command continued with a backslash: cutting it would break the command)."""
    for line in out.splitlines():
        alone = " " not in line.strip().removesuffix(" \\")
        assert cell_len(line) <= 80 or alone, line


def test_show_at_80_columns_keeps_every_word_of_the_ticket_and_prompt() -> None:
    code, out, _ = at_80("show", TASK)
    assert code == 0
    assert_fits(out)
    from arrivalbench.corpus.prompts import build

    shown = set(words(out))
    spec = load_spec(TASK)
    missing = [w for w in words(spec.ticket + "\n" + build(spec, "unhinted")) if w not in shown]
    assert not missing  # a word cut at the box edge, or broken in two, would be missing


def test_show_prompt_is_the_exact_text_and_lists_its_variants() -> None:
    from arrivalbench.corpus.prompts import build

    code, out, _ = at_80("show", TASK, "--prompt", "hazard_hint")
    assert code == 0 and out == build(load_spec(TASK), "hazard_hint") + "\n"
    code, out, err = at_80("show", TASK, "--prompt", "nope")
    assert code == 2 and out == ""
    assert "'unhinted', 'hazard_hint', 'architecture'" in err


def test_tasks_at_80_columns_breaks_no_hazard_name() -> None:
    code, out, _ = at_80("tasks")
    assert code == 0
    assert_fits(out)
    names = set(words(out))
    for task in builtin_ids():
        spec = load_spec(task)
        assert spec.id in names and (spec.gold_idiom or "-") in out
        assert set(spec.hazards) <= names
    assert len(out.splitlines()) <= 4 * len(builtin_ids()) + 8


def test_grade_at_80_columns(tmp_path: Path) -> None:
    script = resolve(TASK) / "negatives" / "max_watermark.sql"
    code, out, err = at_80("grade", script, "--task", TASK, "--seeds", "1", "--schedule",
                           "snapshot", "--schedule", "late_arrival")
    assert code == 1 and err == ""
    assert_fits(out)
    assert f"{script} on {TASK}" in " ".join(out.split()) or TASK in out
    assert "late_arrival, seed 0: FAIL" in out
    command = out[out.index("next: ") + len("next: "):].replace(" \\\n", " ").split()
    assert command == ["arrivalbench", "explain", str(script), "--task", TASK, "--schedule",
                       "late_arrival", "--seed", "0"]


def test_a_file_that_is_not_sql_is_said_once_with_its_place(tmp_path: Path) -> None:
    script = tmp_path / "notes.sql"
    script.write_text("-- my notes\nhello world, this is not SQL\n", encoding="utf-8")
    code, out, _ = at_80("grade", script, "--task", TASK, "--seeds", "1")
    assert code == 1
    flat = " ".join(out.split())
    assert 'does not parse: line 2, column 1: syntax error at or near "hello"' in flat
    assert flat.count("syntax error") == 1
    assert out.count("ERROR") >= len(load_spec(TASK).hazards) + 3  # the table is shown


def test_the_same_failure_is_explained_once(tmp_path: Path) -> None:
    script = tmp_path / "missing.sql"
    script.write_text("CREATE TABLE daily_store_revenue AS SELECT * FROM nope;",
                      encoding="utf-8")
    code, out, _ = at_80("grade", script, "--task", TASK, "--seeds", "1", "--schedule",
                         "snapshot", "--schedule", "in_order", "--schedule", "trickle")
    assert code == 1
    assert out.count("Catalog Error") == 1
    assert "in_order, seed 0: ERROR, the same as snapshot, seed 0" in out


def test_run_summary_at_80_columns(tmp_path: Path, tiny_dir: Path) -> None:
    results = tmp_path / ("a-rather-long-folder-name" * 2) / "r.duckdb"
    code, out, err = at_80("run", "--task", tiny_dir, "--arm", "gold", "--seeds", "1",
                           "--workers", "1", "--results", results)
    assert code == 0, err
    assert_fits(out)
    assert "1 replays" not in out and "1 workers" not in out and "1 worker)" in out
    con = duckdb.connect(str(results), read_only=True)
    try:
        [(command,)] = con.execute("SELECT command FROM runs").fetchall()
    finally:
        con.close()
    assert command == shlex.join([str(ARRIVALBENCH), "run", "--task", str(tiny_dir), "--arm",
                                  "gold", "--seeds", "1", "--workers", "1", "--results",
                                  str(results)])


def test_summary_breaks_long_model_arms_only_between_words() -> None:
    from rich.console import Group

    from arrivalbench.cli.summary import summary_table
    from arrivalbench.study.grid import ArmSummary, Summary

    arms = [ArmSummary(a, 40, 40, 40, 20, 15, 5, 1, 0, {"PASS": 28350, "FAIL": 1081,
                                                        "ERROR": 70})
            for a in ("gold", "anthropic/claude-sonnet-4-0:hazard_hint")]
    summary = Summary(Path("results/arrivalbench.duckdb"), 1, "local", 2, 5, arms, 1, 1, 0,
                      0, 1.0)
    buffer = io.StringIO()
    Console(file=buffer, width=80).print(summary_table(summary, 80))
    out = buffer.getvalue()
    assert_fits(out)
    assert isinstance(summary_table(summary), Group)
    for part in ("anthropic/", "claude-sonnet-", "hazard_hint"):
        assert part in out


def test_progress_bar_fits_80_columns_with_five_digit_counts() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=80)
    with render.progress(28350, console=console, label="regrading", skipped=7) as advance:
        for i in range(28000):
            advance("PASS" if i % 3 else ("FAIL" if i % 2 else "ERROR"))
    lines = [re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", line)
             for line in buffer.getvalue().replace("\r", "\n").splitlines()]
    assert all(cell_len(line) <= 80 for line in lines)
    assert "regrading: 7 replays already graded, 28350 to go" in lines
    last = [line for line in lines if "28000/28350" in line][-1]
    assert "PASS 18666 FAIL 4667 ERROR 4667" in last and "/s" in last and "ETA" in last


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_plain_progress_lines_at_a_steady_pace() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=False, width=80)
    clock = FakeClock()
    with render.progress(100, console=console, clock=clock, every=30, skipped=5) as advance:
        for i in range(100):
            clock.now += 1.0  # one replay a second
            advance("FAIL" if i % 10 == 0 else "PASS")
    assert buffer.getvalue().splitlines() == [
        "grading: 5 replays already graded, 100 to go",
        "grading: 30/100 (30%), 1.0 replays/s, 1m10s left; PASS 27 FAIL 3",
        "grading: 60/100 (60%), 1.0 replays/s, 0m40s left; PASS 54 FAIL 6",
        "grading: 90/100 (90%), 1.0 replays/s, 0m10s left; PASS 81 FAIL 9",
        "grading: 100/100 (100%), 1.0 replays/s, 0m00s left; PASS 90 FAIL 10",
    ]


def test_plain_progress_is_silent_for_a_short_run() -> None:
    buffer = io.StringIO()
    clock = FakeClock()
    with render.progress(3, console=Console(file=buffer, force_terminal=False),
                         clock=clock) as advance:
        for verdict in ("PASS", "ERROR", "PASS"):
            clock.now += 1.0
            advance(verdict)
    assert buffer.getvalue() == ""


def test_submissions_that_name_no_task_are_listed_and_refused(
        tmp_path: Path, tiny_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "tiny.sql").write_text(TINY_GOLD, encoding="utf-8")
    (folder / "tinny.sql").write_text(TINY_GOLD, encoding="utf-8")
    (folder / "notes.txt").write_text("x", encoding="utf-8")
    results = tmp_path / "r.duckdb"
    code, out, err = cli(capsys, "run", "--task", str(tiny_dir), "--submissions", str(folder),
                         "--seeds", "1", "--workers", "1", "--results", str(results))
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "1 entry names no task: tinny.sql" in err  # notes.txt is no submission
    assert "tinny.sql -> tiny" in err and "allow unmatched files" in err
    assert not results.exists()
    code, out, err = cli(capsys, "run", "--task", str(tiny_dir), "--submissions", str(folder),
                         "--seeds", "1", "--workers", "1", "--results", str(results),
                         "--allow-unmatched")
    assert code == 0, err
    assert f"{folder / 'tinny.sql'}: names no task; left out" in err


def test_unknown_task_is_one_short_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "show", "store_daly_revenue")
    assert code == 2 and out == ""
    assert len(err) < 250 and err.count("\n") == 1
    assert "did you mean store_daily_revenue" in err and "'arrivalbench tasks'" in err


def test_a_folder_not_named_after_its_task_says_to_rename_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from conftest import write_task

    folder = write_task(tmp_path, name="my_task", spec={"id": "tiny", **_tiny_rest()})
    code, _out, err = cli(capsys, "show", str(folder))
    assert code == 2 and "rename the folder to 'tiny'" in err


def _tiny_rest() -> dict[str, object]:
    from conftest import TINY_YAML

    return {k: v for k, v in TINY_YAML.items() if k != "id"}


def test_a_read_only_command_does_not_ask_for_a_new_path(
        capsys: pytest.CaptureFixture[str]) -> None:
    readme = Path(__file__).parents[1] / "README.md"
    code, _out, err = cli(capsys, "regrade", "--results", str(readme))
    assert code == 2 and "give a new path" not in err and "cannot open as a results file" in err


def test_results_default_from_the_environment(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ARRIVALBENCH_RESULTS", str(tmp_path / "absent.duckdb"))
    code, _out, err = cli(capsys, "regrade")
    assert code == 2 and f"{tmp_path / 'absent.duckdb'}: no such results file" in err


def test_counts_in_words() -> None:
    assert [count(n, "cell") for n in (0, 1, 2)] == ["0 cells", "1 cell", "2 cells"]
    assert count(1, "entry", "entries") == "1 entry" and count(3, "entry", "entries") == \
        "3 entries"


def test_piped_grade_has_no_trailing_spaces_and_wrapped_rows_keep_their_indent() -> None:
    script = resolve(TASK) / "negatives" / "no_dedup.sql"
    code, out, err = at_80("grade", script, "--task", TASK, "--seeds", "1", "--schedule",
                           "duplicates", "--cost")
    assert code == 1 and err == ""
    assert_fits(out)
    assert [line for line in out.splitlines() if line != line.rstrip()] == []
    lines = out.splitlines()
    changed = [i for i, line in enumerate(lines) if line.startswith("  changed ")]
    # an example row longer than 80 columns goes on under its own indent, not at the margin
    wrapped = [lines[i + 1] for i in changed if len(lines[i]) > 70]
    assert wrapped and all(line.startswith("  ") for line in wrapped), out
    # values are quoted as SQL spells them, in grade as in explain and the gate
    assert re.search(r"revenue: got '[0-9.]+', expected\s+'[0-9.]+'", out), out


def test_explain_wraps_to_80_columns_when_piped(tmp_path: Path) -> None:
    script = resolve(TASK) / "negatives" / "max_watermark.sql"
    code, out, _err = at_80("explain", script, "--task", TASK, "--schedule", "late_arrival",
                            "--seed", "0", "--budget", "20")
    assert code == 1
    assert_fits(out)
    assert [line for line in out.splitlines() if line != line.rstrip()] == []
    assert "first divergence: batch" in out



def test_the_console_pads_lines_to_the_width_only_on_a_terminal(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """What rich pads a line to the width with is left out when standard output is not a
    terminal, and only the padding: a line's own inner spaces stay."""
    from arrivalbench.cli.console import out

    out.print("a  b\nlonger line", justify="left")
    assert capsys.readouterr().out == "a  b\nlonger line\n"
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # rich's own switch: a terminal after all
    out.print("a  b\nlonger line", justify="left")
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", capsys.readouterr().out)
    assert plain.splitlines() == ["a  b".ljust(out.width), "longer line".ljust(out.width)]


def test_the_console_writes_past_a_progress_bar_to_standard_output(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A live progress bar on standard error puts a proxy in `sys.stdout` that would print
    above the bar; a verdict printed meanwhile still goes to standard output."""
    from rich.file_proxy import FileProxy
    from rich.progress import Progress

    from arrivalbench.cli.console import out

    stderr = io.StringIO()
    with Progress(console=Console(file=stderr, force_terminal=True), transient=True):
        assert isinstance(sys.stdout, FileProxy)
        out.print("store_daily_revenue PASS")
    assert capsys.readouterr().out == "store_daily_revenue PASS\n"
    assert "store_daily_revenue" not in stderr.getvalue()
