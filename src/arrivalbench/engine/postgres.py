"""PostgreSQL as a sandbox for untrusted pipelines (not built yet)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from arrivalbench.engine import Limits
from arrivalbench.errors import ArrivalBenchError

NAME = "postgres"


def version() -> str:
    raise ArrivalBenchError("the postgres engine is not built yet")


@contextmanager
def database(limits: Limits) -> Iterator[Any]:
    raise ArrivalBenchError("the postgres engine is not built yet")
    yield
