"""What runs once per batch: the artifact under test.

An artifact is started once per replay, against the replay's database, and then run once per
batch with the batch's abort point. The replay loop sees only this interface, so that a new
kind of artifact is one module here. `script` is a SQL script; `dbt` is a dbt project.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from arrivalbench.core.artifacts.base import Artifact, Run
from arrivalbench.core.engine import Limits

if TYPE_CHECKING:
    from arrivalbench.core.task import TaskSpec

__all__ = ["Artifact", "Run", "load"]


def load(path: Path, spec: TaskSpec, select: str | None = None,
         passed_env: Sequence[str] = (), limits: Limits | None = None) -> Artifact:
    """The artifact at `path`: a dbt project folder (one with a dbt_project.yml) or a SQL
    script. `select` names the dbt model graded as the task's target; `passed_env` the
    variables of the user's environment a dbt project may read (none other is there);
    `limits` bound loading a dbt project."""
    from arrivalbench.core.artifacts.script import Script, read_script

    if path.is_dir():
        from arrivalbench.core.artifacts.dbt import load_project

        return load_project(path, spec, select, passed_env, limits or Limits())
    if select is not None or passed_env:
        from arrivalbench.errors import ArrivalBenchError

        flag = f"--select {select}" if select is not None else f"--env {passed_env[0]}"
        raise ArrivalBenchError(f"{flag}: only for a dbt project folder; {path} is a file")
    return Script(read_script(path))
