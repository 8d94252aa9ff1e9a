"""What runs once per batch: the artifact under test.

An artifact is started once per replay, against the replay's database, and then run once per
batch with the batch's abort point. The replay loop sees only this interface, so that a new
kind of artifact is one module here. `script` is a SQL script; `dbt` is a dbt project.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from arrivalbench.engine.duckdb import Database
    from arrivalbench.schedules import Batch
    from arrivalbench.task import TaskSpec


class Run(Protocol):
    """One replay's handle on an artifact."""

    def __call__(self, batch: Batch) -> None:
        """Run once for `batch`, just loaded, cut short where the batch says
        (`Batch.abort_after` of the run's statement count). Raises `engine.Failure` where the
        run breaks the contract."""


class Artifact(Protocol):
    @property
    def digest(self) -> str:
        """Covers everything that decides what the artifact does."""

    @property
    def text(self) -> str:
        """The SQL stored for it and read for idiom tags."""

    def start(self, db: Database) -> Run:
        """Prepare one replay in `db`; raises `engine.Failure` if it cannot run at all."""


def load(path: Path, spec: TaskSpec, select: str | None = None) -> Artifact:
    """The artifact at `path`: a dbt project folder (one with a dbt_project.yml) or a SQL
    script. `select` names the dbt model graded as the task's target."""
    from arrivalbench.artifacts.script import Script, read_script

    if path.is_dir():
        from arrivalbench.artifacts.dbt import load_project

        return load_project(path, spec, select)
    if select is not None:
        from arrivalbench.errors import ArrivalBenchError

        raise ArrivalBenchError(f"--select {select}: only for a dbt project folder; {path} is "
                                "a file")
    return Script(read_script(path))
