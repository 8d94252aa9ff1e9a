"""A Ray cluster of two nodes on this machine (two `ray start`, each with its own temporary
folder) grading a user's own task folder and a dbt project that are removed right after the
run starts: the workers grade from what the object store carried, and the verdict bytes are
the local executor's. Select these tests with `-m cluster`."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arrivalbench.core.artifacts import script_ref
from arrivalbench.core.grading import GradeOptions

pytest.importorskip("ray")

import contextlib

from arrivalbench.core.engine import ENGINES
from arrivalbench.core.grading import plan
from arrivalbench.core.task import load_spec
from arrivalbench.core.values import digest
from arrivalbench.errors import ArrivalBenchError
from arrivalbench.study.executors import LocalExecutor, RayExecutor, Result, Unit
from arrivalbench.study.executors.ray_tasks import differs, versions
from arrivalbench.study.store import Key

pytestmark = [pytest.mark.cluster,
              pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::ResourceWarning")]

ROOT = Path(__file__).resolve().parents[1]
RAY = str(Path(sys.executable).with_name("ray"))
TASK = ROOT / "src" / "arrivalbench" / "tasks" / "ad_clicks_clean"
PROJECT = ROOT / "examples" / "dbt" / "passing"  # a project for ad_clicks_clean


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ray(*args: str, env: dict[str, str], temp_dir: str) -> None:
    """`ray start ... --temp-dir temp_dir`, again after a failure: Ray gives a node 30 s to
    come up, which a loaded machine can miss."""
    for _attempt in range(3):
        done = subprocess.run([RAY, *args, "--temp-dir", temp_dir], env=env, timeout=180,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode == 0:
            return
        _stop(temp_dir)
    pytest.fail(f"ray {args[0]} {args[1]} failed 3 times: "
                f"{done.stderr.strip().splitlines()[-1:]}")


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A head and a second node of one CPU each; both stopped however the tests end. Their
    workers import this tree's arrivalbench (PYTHONPATH), as a node's installation would."""
    # Ray turns token authentication on for a head wherever ~/.ray holds a token, and a joining
    # node or driver must then carry it: this cluster listens on 127.0.0.1 only, without.
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="disabled")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    env.pop("RAY_ADDRESS", None)
    # Short folders: a Ray socket's path must fit in 107 bytes.
    head_dir, node_dir = tempfile.mkdtemp(prefix="rh"), tempfile.mkdtemp(prefix="rn")
    address = f"127.0.0.1:{_free_port()}"
    try:
        _ray("start", "--head", "--node-ip-address", "127.0.0.1",
             "--port", address.rsplit(":")[1], "--num-cpus", "1",
             "--include-dashboard", "false", "--disable-usage-stats", env=env,
             temp_dir=head_dir)
        _ray("start", "--address", address, "--node-ip-address", "127.0.0.1",
             "--num-cpus", "1", "--disable-usage-stats", env=env, temp_dir=node_dir)
        yield address
    finally:
        for folder in (node_dir, head_dir):  # `ray stop` would stop every Ray of this user
            _stop(folder)
        shutil.rmtree(head_dir, ignore_errors=True)
        shutil.rmtree(node_dir, ignore_errors=True)


def _stop(temp_dir: str) -> None:
    """End the processes of the node whose temporary folder is `temp_dir`, and only them."""
    import psutil

    mine = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(proc.info["cmdline"] or ())
        if temp_dir in cmdline:
            mine.append(proc)
    for proc in mine:
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.terminate()
    _gone, alive = psutil.wait_procs(mine, timeout=10)
    for proc in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.kill()


def _users_task(root: Path) -> Path:
    """A task of the user's own: a built-in one copied and retitled, so that no node's
    installed package holds it."""
    folder = root / "ad_clicks_clean"
    shutil.copytree(TASK, folder, ignore=shutil.ignore_patterns("__pycache__"))
    yaml = folder / "task.yaml"
    yaml.write_text(yaml.read_text().replace("title: ", "title: (a user's copy) ", 1))
    return folder


def collect(executor: object, units: list[Unit], on_first: object = None) -> dict[Key, str]:
    got: dict[Key, str] = {}

    def on_results(batch: list[tuple[Unit, Result]]) -> None:
        nonlocal on_first
        if callable(on_first):
            on_first()
            on_first = None
        for unit, result in batch:
            got[unit.key()] = result.verdict.json()

    executor.run(units, on_results)  # type: ignore[attr-defined]
    return got


def test_two_nodes_grade_folders_removed_after_submission_as_the_local_pool_does(
        cluster: str, monkeypatch: pytest.MonkeyPatch) -> None:
    private = Path(tempfile.mkdtemp(prefix="arrivalbench-private-"))
    folder = _users_task(private)
    project = private / "project"
    shutil.copytree(PROJECT, project)
    spec = load_spec(folder)
    assert spec.digest != load_spec("ad_clicks_clean").digest
    from arrivalbench.core.artifacts.dbt import read_project

    dbt = read_project(project, spec).ref
    kinds = ["in_order", "snapshot", "duplicates", "late_arrival"]
    units = [Unit(str(folder), spec.digest, script_ref(sql), p.schedule, p.seed)
             for sql in (spec.gold_sql, spec.negatives[0].sql) for p in plan(spec, 1, kinds)]
    units += [Unit(str(folder), spec.digest, dbt, p.schedule, p.seed)
              for p in plan(spec, 1, ["in_order"])]
    if "postgres" in ENGINES and dict(spec.other_gold).get("postgres"):
        sql = spec.gold_for("postgres")
        units += [Unit(str(folder), spec.digest, script_ref(sql), "in_order", 0,
                       GradeOptions("postgres"))]
    local = collect(LocalExecutor(1), units)
    assert {v.split('"verdict":"')[1][:4] for v in local.values()} >= {"PASS", "FAIL"}

    monkeypatch.setenv("RAY_ADDRESS", cluster)
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    start = time.perf_counter()
    on_ray = collect(RayExecutor(2, chunk=2), units,
                     on_first=lambda: shutil.rmtree(private))
    wall = time.perf_counter() - start
    assert not private.exists()
    assert on_ray == local
    print(f"two nodes: {len(units)} replays in {wall:.1f} s; verdicts "
          f"{digest(''.join(sorted(on_ray.values())))[:19]} = local "
          f"{digest(''.join(sorted(local.values())))[:19]}")


def test_a_node_of_another_version_is_named_before_anything_runs() -> None:
    ours = versions()
    assert differs("10.0.0.2", ours, ours) is None
    other = (ours[0], ("DuckDB", "1.4.0"), ours[2])
    assert differs("10.0.0.2", other, ours) == (
        f"Ray node 10.0.0.2 runs DuckDB 1.4.0, this process {ours[1][1]}; install the same "
        "arrivalbench and DuckDB on every node")


def test_an_unreachable_ray_address_is_one_line_and_exit_2(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    port = _free_port()  # nothing listens there
    env = dict(os.environ, RAY_ADDRESS=f"127.0.0.1:{port}")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    done = subprocess.run([str(Path(sys.executable).with_name("arrivalbench")), "run",
                           "--arm", "gold", "--task", "ad_clicks_clean", "--seeds", "1",
                           "--executor", "ray", "--results", str(tmp_path / "r.duckdb")],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and f"127.0.0.1:{port}" in done.stderr
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{port}")
    with pytest.raises(ArrivalBenchError, match="no Ray cluster answers"):
        RayExecutor(1).run([Unit("x", "d", script_ref("SELECT 1"), "in_order", 0)],
                           lambda batch: None)
