"""How the grader's worker processes start: forked from a server process that has imported
the package once.

A `spawn`ed worker holds nothing of its grader (no open database, no thread, no delivery, no
state of a pipeline), which is what containment asks; but each one then imports arrivalbench,
DuckDB and Arrow again, about a second of CPU, which is most of what a default `grade` of a
gold spends beyond its replays. Python's forkserver keeps the first property and drops the
cost: a server process is spawned once per grader, imports `PRELOAD` once, and forks every
worker from itself, so a worker starts in milliseconds holding modules only. It is the
server's child, not the grader's; the server leaves when the grader goes, and a worker dies
with its parent (`containment.limit_self`), so nothing outlives the grader either way.

A forked worker inherits the server's environment, the grader's at the moment the server
started; `start` gives it the grader's environment as it is when the worker starts (what
a dbt child may be passed, the cache folder), as a spawned worker would have had.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Mapping
from multiprocessing.context import BaseContext

from arrivalbench.core.containment import limit_self

# The modules a worker runs, and the CLI a worker's `__main__` (the `arrivalbench` script)
# imports again on start.
PRELOAD = ("arrivalbench.cli", "arrivalbench.study.executors.local",
           "arrivalbench.study.isolated")


def context() -> BaseContext:
    found = multiprocessing.get_context("forkserver")
    found.set_forkserver_preload(list(PRELOAD))
    return found


def start(environment: Mapping[str, str], address_space: int | None) -> None:
    """The first thing a worker does: the grader's environment, then its own bounds."""
    os.environ.clear()
    os.environ.update(environment)
    limit_self(address_space, None)
