"""Idiom signature cost over every gold and negative of the built-in corpus: the first pass
(statements parsed by sqlglot for the first time) and a second pass over the same scripts
(statement trees cached), in milliseconds per script, median of R repeats.

    python benchmarks/bench_idioms.py [--repeat R]
"""

from __future__ import annotations

import argparse
import statistics
import time

from arrivalbench.core.task import TaskSpec, builtin_ids, load_spec
from arrivalbench.sql import idioms


def scripts() -> list[tuple[str, TaskSpec]]:
    found = []
    for task_id in builtin_ids():
        spec = load_spec(task_id)
        found += [(spec.gold_sql, spec), *((n.sql, spec) for n in spec.negatives)]
    return found


def one_pass(corpus: list[tuple[str, TaskSpec]]) -> float:
    start = time.perf_counter()
    for sql, spec in corpus:
        idioms.signature(sql, spec)
    return (time.perf_counter() - start) * 1000 / len(corpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    corpus = scripts()
    first, second = [], []
    for _ in range(args.repeat):
        idioms._parse.cache_clear()
        first.append(one_pass(corpus))
        second.append(one_pass(corpus))
    print(f"{len(corpus)} scripts: first pass {statistics.median(first):.1f} ms/script, "
          f"second pass {statistics.median(second):.1f} ms/script")


if __name__ == "__main__":
    main()
