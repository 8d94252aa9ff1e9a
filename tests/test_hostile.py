"""The hostile corpus: artifacts written as an attacker would, each with the outcome the
harness promises (SECURITY.md).

DuckDB scripts are files in `hostile/duckdb/`, their first line `-- expect: STATUS PHASE`;
each is graded on the snapshot schedule of a built-in task. dbt projects are built here, since
several are made of what git cannot hold (links, devices): each is refused at load with one line,
or graded to the verdict it names. The probes that need the grader's process bounds (memory,
the whole replay's wall clock) run through the local executor, where those bounds hold.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from arrivalbench.core.engine import Limits
from arrivalbench.core.grading import Point
from arrivalbench.core.task import TaskSpec, load_spec
from conftest import grade1

HOSTILE = Path(__file__).resolve().parent / "hostile"
EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "dbt"
TASK = "ad_clicks_clean"
SCRIPTS = sorted((HOSTILE / "duckdb").glob("*.sql"))
# Bounded by the grader's process, not by DuckDB: graded through the contained executor.
CONTAINED = {"memory_big_string", "memory_wide_view_read_back", "time_many_statements"}


@pytest.fixture(scope="module")
def spec() -> TaskSpec:
    return load_spec(TASK)


def expectation(path: Path) -> tuple[str, str | None]:
    first = path.read_text().splitlines()[0]
    found = re.fullmatch(r"-- expect: (PASS|FAIL|ERROR)(?: (\S+))?", first)
    assert found, f"{path.name}: first line must be `-- expect: STATUS [PHASE]`"
    return found[1], found[2]


def test_the_corpus_is_large_enough() -> None:
    assert len(SCRIPTS) + len(DBT_PROBES) >= 40


@pytest.mark.parametrize("path", [p for p in SCRIPTS if p.stem not in CONTAINED],
                         ids=lambda p: p.stem)
def test_duckdb_script(spec: TaskSpec, path: Path) -> None:
    status, phase = expectation(path)
    verdict = grade1(spec, path.read_text(), Point("snapshot", 0), Limits(replay_seconds=20))[0]
    assert (verdict.status, verdict.detail.get("phase")) == (status, phase), verdict.detail


def test_many_quick_statements_stop_at_the_replays_wall_clock(spec: TaskSpec) -> None:
    path = HOSTILE / "duckdb" / "time_many_statements.sql"
    verdict = grade1(spec, path.read_text(), Point("snapshot", 0), Limits(replay_seconds=1))[0]
    assert verdict.status == "ERROR"
    assert verdict.detail["phase"] == "timeout"
    assert verdict.detail["message"] == "the replay ran past its wall-clock limit"


def test_a_target_too_large_to_read_back_is_a_memory_error(spec: TaskSpec) -> None:
    sql = "CREATE TABLE ad_clicks AS SELECT repeat('x', 1000000) AS click_id FROM range(100);"
    verdict = grade1(spec, sql, Point("snapshot", 0), Limits(max_read_bytes=10_000_000))[0]
    assert verdict.detail == {"phase": "memory", "batch": None, "statement": None,
                              "message": "the result is larger than 10000000 bytes, the limit"}


# -- dbt projects ------------------------------------------------------------------------------

Build = Callable[[Path], None]
PLAIN = (EXAMPLES / "passing" / "models" / "ad_clicks.sql")


def project(root: Path, model: str | None = None, sources: str | None = None,
            config: str = "", files: dict[str, str] | None = None) -> Path:
    shutil.copytree(EXAMPLES / "passing", root)
    if model is not None:
        (root / "models" / "ad_clicks.sql").write_text(model)
    if sources is not None:
        (root / "models" / "sources.yml").write_text(sources)
    if config:
        with (root / "dbt_project.yml").open("a") as handle:
            handle.write(config)
    for name, text in (files or {}).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def sources_yml(schema: str = "incoming", identifier: str = "clicks") -> str:
    return ("version: 2\nsources:\n  - name: incoming\n    schema: '" + schema + "'\n"
            "    tables:\n      - name: clicks\n        identifier: '" + identifier + "'\n")


def link(name: str, target: str) -> Build:
    def build(root: Path) -> None:
        project(root)
        os.symlink(target, root / name)
    return build


def fifo(root: Path) -> None:
    project(root)
    os.mkfifo(root / "models" / "pipe.sql")


CHEAT = 'clicks" AS SELECT * FROM "__deliveries_clicks'
# name -> (build, the one-line refusal it gets at load)
DBT_PROBES: dict[str, tuple[Build, str]] = {
    "link_to_passwd": (link("models/leak.sql", "/etc/passwd"), r"leak.sql: a symbolic link"),
    "link_to_dev_zero": (link("models/zero.sql", "/dev/zero"), r"zero.sql: a symbolic link"),
    "link_to_parent": (link("models/up", ".."), r"up: a symbolic link"),
    "link_to_etc": (link("macros", "/etc"), r"macros: a symbolic link"),
    "link_missing": (link("models/gone.sql", "/nonexistent/x"), r"gone.sql: a symbolic link"),
    "fifo": (fifo, r"pipe.sql: not a regular file"),
    "absolute_model_paths": (lambda r: project(r, config="model-paths: ['/etc']\n"),
                             r"model-paths entry '/etc' leaves the project"),
    "escaping_macro_paths": (lambda r: project(r, config="macro-paths: ['../x']\n"),
                             r"macro-paths entry '../x' leaves the project"),
    "escaping_nested_paths": (lambda r: project(r, config="test-paths: ['a/../../b']\n"),
                              r"test-paths entry 'a/../../b' leaves the project"),
    "home_seed_paths": (lambda r: project(r, config="seed-paths: ['~/x']\n"),
                        r"seed-paths entry '~/x' leaves the project"),
    "absolute_packages_path": (lambda r: project(r, config="packages-install-path: /tmp\n"),
                               r"packages-install-path entry '/tmp' leaves the project"),
    "python_model": (lambda r: project(r, files={"models/other.py": "def model(dbt, s):\n"
                                                 "    return None\n"}),
                     r"other.py: a Python file"),
    "python_model_elsewhere": (lambda r: project(r, files={"analyses/x.py": "import os\n"}),
                               r"x.py: a Python file"),
    "cheat_source_identifier": (lambda r: project(r, sources=sources_yml(identifier=CHEAT)),
                                r"source table 'clicks''s identifier is .* not a plain "
                                r"identifier"),
    "cheat_source_schema": (lambda r: project(r, sources=sources_yml(schema='x"; DROP --')),
                            r"source table 'clicks''s schema is .* not a plain identifier"),
    "cheat_model_alias": (lambda r: project(r, config="models:\n  passing:\n"
                                                   "    +alias: 'a\"b'\n"),
                          r"model ad_clicks's alias is .* not a plain identifier"),
    "seed_read_by_model": (
        lambda r: project(r, model="select * from {{ ref('lookup') }}",
                          files={"seeds/lookup.csv": "click_id\nx\n"}),
        r"model ad_clicks reads seed lookup; arrivalbench does not load seeds"),
}


@pytest.mark.parametrize("name", sorted(DBT_PROBES))
def test_dbt_project_refused_in_one_line(spec: TaskSpec, tmp_path: Path, name: str) -> None:
    pytest.importorskip("dbt.cli.main")
    from arrivalbench.core.artifacts import read
    from arrivalbench.core.artifacts.dbt import DbtError

    build, message = DBT_PROBES[name]
    root = tmp_path / "p"
    build(root)
    with pytest.raises(DbtError, match=message) as caught:
        read(root, spec)
    assert "\n" not in str(caught.value)


def test_a_cheating_project_cannot_pass_late_arrival(spec: TaskSpec, tmp_path: Path) -> None:
    """Reading ahead through harness SQL is refused at load; reading ahead from the model's
    own SQL finds nothing to read: the later batches are in no catalog at all."""
    pytest.importorskip("dbt.cli.main")
    from arrivalbench.core.artifacts import read

    model = ("{{ config(materialized='table') }}\n"
             "select * from __deliveries_clicks union all select * from __batch_0")
    artifact = read(project(tmp_path / "p", model=model), spec)
    verdict = grade1(spec, artifact, Point("late_arrival", 0))[0]
    assert verdict.status == "ERROR"
    assert "does not exist" in str(verdict.detail["message"])


# -- the dbt process ---------------------------------------------------------------------------

SECRET = "ARRIVALBENCH_PLANTED_SECRET"
ENV_MODEL = ("{{ config(materialized='table') }}\n"
             "select '{{ env_var('" + SECRET + "') }}' as click_id")
LOOP = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"


def test_env_var_sees_only_the_allowlist(spec: TaskSpec, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("dbt.cli.main")
    from arrivalbench.core.artifacts.dbt import DbtError, read_project

    monkeypatch.setenv(SECRET, "hunter2")
    root = project(tmp_path / "p", model=ENV_MODEL)
    with pytest.raises(DbtError) as caught:
        read_project(root, spec)
    assert "Env var required but not provided" in str(caught.value)
    assert "hunter2" not in str(caught.value)
    # The user's own variable, passed by name, is there.
    loaded = read_project(root, spec, passed_env=[SECRET])
    assert "'hunter2' as click_id" in loaded.text
    loaded.close()


def test_a_jinja_loop_while_parsing_is_stopped_at_the_load_limit(spec: TaskSpec,
                                                                 tmp_path: Path) -> None:
    pytest.importorskip("dbt.cli.main")
    from arrivalbench.core.artifacts.dbt import DbtError, read_project

    def mine() -> set[Path]:  # other processes of the machine may grade dbt meanwhile
        scratch = Path(tempfile.gettempdir()) / "arrivalbench-dbt"
        return set(scratch.glob(f"{os.getpid()}-*"))

    before = mine()
    root = project(tmp_path / "p", model=LOOP + "\nselect 1 as click_id")
    with pytest.raises(DbtError, match=r"did not parse the project within 3 s, the load limit"):
        read_project(root, spec, limits=Limits(load_seconds=3))
    assert mine() <= before  # the killed child's folder is gone


# Renders only once the model holds rows (from its second run on): loading passes, and every
# later run of every replay hangs.
HANGS_ONCE_FILLED = (PLAIN.read_text() + "\n{% if is_incremental() %}{% set n = run_query("
                     "'select count(*) from ' ~ this).columns[0].values()[0] %}"
                     "{% if n > 0 %}" + LOOP + "{% endif %}{% endif %}\n")


def test_a_jinja_loop_in_one_run_is_a_timeout_and_the_next_replay_runs(spec: TaskSpec,
                                                                      tmp_path: Path) -> None:
    """A later run hangs: the parent kills the child at the run's own limit, and the next
    replay starts a new child."""
    pytest.importorskip("dbt.cli.main")
    from arrivalbench.core.artifacts.dbt import read_project

    limits = Limits(run_seconds=2)
    loaded = read_project(project(tmp_path / "p", model=HANGS_ONCE_FILLED), spec, limits=limits)
    verdict = grade1(spec, loaded, Point("late_arrival", 0), limits)[0]
    assert (verdict.detail["phase"], verdict.detail["batch"]) == ("timeout", 1)
    assert verdict.detail["message"] == "dbt ran past its limit of 2 s for one run and was " \
                                        "stopped"
    again = grade1(spec, loaded, Point("snapshot", 0), limits)[0]
    assert again.status == "PASS", again.detail  # a new child parsed the project again
    loaded.close()


def test_a_hang_in_every_run_costs_each_replay_one_run_limit(spec: TaskSpec,
                                                              tmp_path: Path) -> None:
    """With the replay's own bound at its default (300 s), each replay that reaches the hang
    ends at the run's limit: the grade is bounded by replays x run_seconds, not by replays x
    replay_seconds. The replay's bound is the later one; the message says which fired."""
    pytest.importorskip("dbt.cli.main")
    import time

    from arrivalbench.core.artifacts.dbt import read_project
    from conftest import grade_each

    limits = Limits(run_seconds=2)
    assert limits.replay_seconds >= 300
    loaded = read_project(project(tmp_path / "p", model=HANGS_ONCE_FILLED), spec, limits=limits)
    points = [Point(kind, 0) for kind in ("duplicates", "out_of_order")]
    start = time.monotonic()
    verdicts = [v for v, _outcome in grade_each(spec, loaded, points, limits)]
    took = time.monotonic() - start
    loaded.close()
    assert [(v.status, v.detail["phase"], v.detail["batch"]) for v in verdicts] == \
        [("ERROR", "timeout", 1)] * len(points)
    assert {v.detail["message"] for v in verdicts} == {
        "dbt ran past its limit of 2 s for one run and was stopped"}
    # Each costs its limit and a new child's parse: far under one replay's bound, however
    # loaded the machine.
    assert took < limits.replay_seconds, took


def test_orphaned_scratch_folders_are_swept_at_the_next_start() -> None:
    from arrivalbench.core import containment

    root = containment.root("arrivalbench-dbt")
    orphan = root / "999999999-1-dead"
    orphan.mkdir()
    (orphan / "left.txt").write_text("by a grader killed with SIGKILL")
    mine = containment.scratch("arrivalbench-dbt")
    assert not orphan.exists()
    assert mine.exists() and containment.owner_alive(mine.name)
    shutil.rmtree(mine)


def test_the_child_environment_is_the_allowlist(tmp_path: Path) -> None:
    from arrivalbench.core import containment

    env = containment.environment(tmp_path, ["MINE"], {"PATH": "/bin", "AWS_SECRET": "x",
                                                       "MINE": "y", "HOME": "/root"})
    assert env == {"PATH": "/bin", "MINE": "y", "TMPDIR": str(tmp_path),
                   "TEMP": str(tmp_path), "TMP": str(tmp_path), "HOME": str(tmp_path)}


# -- bad limits and flags: one line, exit 2 ------------------------------------------------------

GOLD = Path(__file__).resolve().parent.parent / "src" / "arrivalbench" / "tasks" / TASK / \
    "gold.sql"


@pytest.mark.parametrize("args", [("--replay-timeout", "0"), ("--replay-timeout", "-3"),
                                  ("--load-timeout", "0"), ("--load-timeout", "nan?"),
                                  ("--run-timeout", "0"),
                                  ("--env", "HOME")])
def test_bad_limits_are_one_line(capsys: pytest.CaptureFixture[str],
                                 args: tuple[str, str]) -> None:
    from conftest import cli

    code, out, err = cli(capsys, "grade", str(GOLD), "--task", TASK, *args)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and args[0] in err


def test_a_link_in_a_project_is_one_line_from_the_cli(capsys: pytest.CaptureFixture[str],
                                                      tmp_path: Path) -> None:
    from conftest import cli

    link("models/leak.sql", "/etc/passwd")(tmp_path / "p")
    code, out, err = cli(capsys, "grade", str(tmp_path / "p"), "--task", TASK)
    assert code == 2 and out == ""
    assert err.strip().endswith("leak.sql: a symbolic link; a dbt project is read as plain "
                                "files inside its folder (replace it with the file itself, or "
                                "remove it)")
    assert len(err.strip().splitlines()) == 1


def test_what_only_the_worker_process_bounds(spec: TaskSpec) -> None:
    """A value DuckDB allocates outside its buffer manager, or a view computed on the way out,
    can reach past the engine's memory limit: in a worker, its data bound fails the allocation
    and the verdict is an ERROR with phase memory; the worker stays well under its bound."""
    from arrivalbench.core.artifacts import script_ref
    from arrivalbench.core.task import source_of
    from arrivalbench.study.executors import LocalExecutor, Result, Unit
    from arrivalbench.study.executors.local import WORKER_DATA

    units = []
    for name in sorted(CONTAINED - {"time_many_statements"}):
        sql = (HOSTILE / "duckdb" / f"{name}.sql").read_text()
        units.append(Unit(source_of(spec), spec.digest, script_ref(sql), "snapshot", 0))
    got: dict[str, Result] = {}
    executor = LocalExecutor(1)
    executor.run(units, lambda batch: got.update((u.artifact.text, r) for u, r in batch))
    for unit in units:
        verdict = got[unit.artifact.text].verdict
        assert (verdict.status, verdict.detail["phase"]) == ("ERROR", "memory"), verdict.detail
    assert max(executor.stats.peak_rss.values()) < WORKER_DATA


# The grader's own peak is VmHWM, the high-water mark of this process's memory: ru_maxrss
# would carry across exec the peak of the forked test process (1.1 GB inside the whole suite).
GRADER_PEAK = """
import sys
from arrivalbench.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
with open("/proc/self/status") as status:
    peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
print(code, peak, file=sys.stderr)
"""


def test_grade_replays_a_script_in_a_bounded_worker(tmp_path: Path) -> None:
    """`grade` of a script runs its replays in the local executor's workers: a value DuckDB
    allocates outside its buffer manager fails there as an ERROR with phase memory (in the
    grader's own process it took 4 GB), and the grader itself stays small."""
    import json
    import subprocess
    import sys

    from arrivalbench.study.executors.local import WORKER_DATA

    script = HOSTILE / "duckdb" / "memory_big_string.sql"
    done = subprocess.run([sys.executable, "-c", GRADER_PEAK, "grade", str(script), "--task",
                           TASK, "--schedule", "snapshot", "--seeds", "1", "--json"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    code, peak_kb = done.stderr.split()[-2:]
    entries = json.loads(done.stdout)["verdicts"]
    assert [(e["verdict"], e["detail"]["phase"]) for e in entries] == [("ERROR", "memory")]
    # In its own process the value took the grader to 4.2 GB; here the grader peaks at about
    # 150 MB, far under the workers' own bound.
    assert code == "1" and int(peak_kb) * 1024 < WORKER_DATA // 4
