"""Throughput on Ray against the local pool, and a two-node cluster's scaling, on this machine.

    python benchmarks/bench_cluster.py [--seeds 2] [--tasks 6] [--cluster-only | --no-cluster]

The gold arm over the first N built-in tasks (copied to a temporary folder, so the workers
read them from the object store as a user's own tasks), graded:

1. by the local pool with 2 workers, and by Ray on one node with 2 CPUs (`ray.init`): the
   ratio of their replays per second (Ray start-up included);
2. on a cluster started with `ray start` (each node its own --temp-dir): a head of one CPU,
   then the same with a second node of one CPU: the scaling from one node to two;
3. the projection to a 32-core cluster for the study's 28,350 replays, from the two-node
   cluster's rate per CPU.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_run import STUDY, gold_units, load_average, measure, report, timed_compute

from arrivalbench.study.executors import LocalExecutor, RayExecutor

HERE = Path(__file__).resolve().parent
RAY = str(Path(sys.executable).with_name("ray"))


def start_node(temp_dir: str, env: dict[str, str], address: str | None = None) -> str:
    """`ray start` of one node with one CPU (the head when `address` is None); its address."""
    if address is None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            address = f"127.0.0.1:{s.getsockname()[1]}"
        where = ["--head", "--port", address.rsplit(":")[1], "--include-dashboard", "false"]
    else:
        where = ["--address", address]
    subprocess.run([RAY, "start", *where, "--node-ip-address", "127.0.0.1", "--temp-dir",
                    temp_dir, "--num-cpus", "1", "--disable-usage-stats"], check=True, env=env,
                   stdout=subprocess.DEVNULL, timeout=300)
    return address


def stop_nodes(temp_dirs: list[str]) -> None:
    """End the processes of the nodes this script started (found by their --temp-dir)."""
    import psutil

    mine = [p for p in psutil.process_iter(["cmdline"])
            if any(d in " ".join(p.info["cmdline"] or ()) for d in temp_dirs)]
    for proc in mine:
        proc.terminate()
    _gone, alive = psutil.wait_procs(mine, timeout=10)
    for proc in alive:
        proc.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--tasks", type=int, default=6)
    part = parser.add_mutually_exclusive_group()
    part.add_argument("--cluster-only", action="store_true",
                      help="skip the local pool and the one-node Ray (part 1)")
    part.add_argument("--no-cluster", action="store_true",
                      help="part 1 only: no two-node cluster, no projection")
    args = parser.parse_args()
    units = gold_units(args.seeds, args.tasks, Path(tempfile.mkdtemp(prefix="bench-tasks-")))
    print(f"gold arm: {args.tasks} tasks, seeds 0..{args.seeds - 1}: {len(units)} replays; "
          f"load average {load_average()}\n")
    # Ray's workers import `timed_compute` from bench_run: this folder on their path.
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(HERE), *filter(None, [os.environ.get("PYTHONPATH")])])
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    os.environ.pop("RAY_ADDRESS", None)

    if not args.cluster_only:
        local = measure(LocalExecutor(2, work=timed_compute), units)
        report(local)
        one_node = measure(RayExecutor(2, work=timed_compute), units)
        report(one_node)
        ratio = one_node["replays_per_second"] / local["replays_per_second"]
        print(f"Ray on one node / local pool, 2 CPUs each: {ratio:.2f} (target >= 0.9); "
              f"executor overhead {local['executor_overhead']:.3f} local, "
              f"{one_node['executor_overhead']:.3f} Ray\n")
    if args.no_cluster:
        return

    dirs = [tempfile.mkdtemp(prefix="bh"), tempfile.mkdtemp(prefix="bn")]
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
    try:
        start = time.perf_counter()
        address = start_node(dirs[0], env)
        os.environ["RAY_ADDRESS"] = address
        print(f"head started in {time.perf_counter() - start:.1f} s")
        head = measure(RayExecutor(1, work=timed_compute), units)
        report(head)
        start = time.perf_counter()
        start_node(dirs[1], env, address)
        print(f"second node joined in {time.perf_counter() - start:.1f} s")
        both = measure(RayExecutor(2, work=timed_compute), units)
        report(both)
    finally:
        os.environ.pop("RAY_ADDRESS", None)
        stop_nodes(dirs)
    scaling = both["replays_per_second"] / head["replays_per_second"]
    per_cpu = both["replays_per_second"] / 2
    print(f"two nodes / one node (one CPU each): {scaling:.2f}x")
    print(f"projected {STUDY:,} replays on 32 cores at {per_cpu:.2f} replays/s per CPU "
          f"(this machine's two-node rate): {STUDY / (per_cpu * 32) / 60:.1f} min, plus Ray's "
          f"start-up; load average at the end {load_average()}")


if __name__ == "__main__":
    main()
