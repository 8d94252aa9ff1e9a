"""What runs once per batch: the artifact under test, and the one place that knows its kinds.

An artifact crosses layers and processes as an `ArtifactRef` (`ref`): arms and the command
line read one from a path (`read`), executors carry it, the results file stores it, and
`load` turns it back into something that runs. An artifact is started once per replay,
against the replay's database, and then run once per batch with the batch's abort point; the
replay loop sees only that interface (`base`). A kind is a module here (`script`, `dbt`) and a
row of `TRAITS`: nothing outside this package asks which kind an artifact is, only what its
traits allow.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from arrivalbench.core.artifacts.base import Artifact, Run
from arrivalbench.core.artifacts.ref import ARTIFACT_KINDS, ArtifactKind, ArtifactRef, script_ref
from arrivalbench.core.engine import ENGINES, EngineName, Limits
from arrivalbench.errors import ArrivalBenchError

if TYPE_CHECKING:
    from arrivalbench.core.task import TaskSpec

__all__ = ["ARTIFACT_KINDS", "TRAITS", "Artifact", "ArtifactError", "ArtifactKind",
           "ArtifactRef", "Run", "Traits", "as_artifact", "check_path_engine", "kind_of", "load",
           "read", "script_ref", "startup_seconds", "traits"]


@dataclass(frozen=True)
class Traits:
    """What the rest of the harness may ask of a kind of artifact."""

    title: str  # how a message names one: "a SQL script"
    engines: tuple[EngineName, ...]  # the engines it runs on
    measured: bool  # its statements are profiled for cost (a script's are its own)
    loads: bool  # loading it runs code (dbt's parse and compile), bounded by load_seconds
    statements: bool  # its text is the statements it runs: counted by an explicit plan's
    # aborts, checked to hold one, located when they do not parse
    files: bool  # it is files (a project's), stored beside its text, not its text alone


TRAITS: dict[ArtifactKind, Traits] = {
    "script": Traits("a SQL script", ENGINES, measured=True, loads=False, statements=True,
                     files=False),
    "dbt": Traits("a dbt project", ("duckdb",), measured=False, loads=True, statements=False,
                  files=True),
}


class ArtifactError(ArrivalBenchError):
    """An artifact that cannot be graded the way it was asked for."""


def traits(ref: ArtifactRef) -> Traits:
    return TRAITS[ref.kind]


def kind_of(path: Path) -> ArtifactKind | None:
    """The kind of artifact at `path`: a folder with a `dbt_project.yml` is a dbt project, a
    file a script; None for a folder that is no project."""
    from arrivalbench.core.artifacts.dbt import is_project

    if path.is_dir():
        return "dbt" if is_project(path) else None
    return "script"


def read(path: Path, spec: TaskSpec, *, models: Sequence[str] = (),
         passed_env: Sequence[str] = (), limits: Limits = Limits()) -> Artifact:
    """The artifact at `path`, read for the task `spec`: a dbt project folder or a SQL script.
    `models` names what a project grades as the task's targets (default: the models named
    after them); `passed_env` the variables of the user's environment a project may read (no
    other is there); `limits` bound loading a project."""
    from arrivalbench.core.artifacts.script import Script, read_script

    if path.is_dir():  # a project, or a folder that says what a project lacks
        from arrivalbench.core.artifacts.dbt import read_project

        return read_project(path, spec, models=models, passed_env=passed_env, limits=limits)
    for given, what in ((models, "models"), (passed_env, "passed variables")):
        if given:
            raise ArtifactError(f"{path}: {what} {', '.join(given)} are for a dbt project "
                                "folder; a script has none")
    return Script(read_script(path), str(path))


def load(ref: ArtifactRef, spec: TaskSpec, *, limits: Limits = Limits()) -> Artifact:
    """What runs `ref` on the task `spec` (a project is parsed, once per process)."""
    if ref.kind == "dbt":
        from arrivalbench.core.artifacts.dbt import load_project

        return load_project(ref, spec, limits=limits)
    from arrivalbench.core.artifacts.script import Script

    return Script(ref.text, ref.origin)


def as_artifact(artifact: Artifact | ArtifactRef | str, spec: TaskSpec,
                limits: Limits = Limits()) -> Artifact:
    """An artifact, its description, or the text of a SQL script, as something that runs."""
    if isinstance(artifact, str):
        from arrivalbench.core.artifacts.script import Script

        return Script(artifact)
    if isinstance(artifact, ArtifactRef):
        return load(artifact, spec, limits=limits)
    return artifact


def startup_seconds(ref: ArtifactRef, limits: Limits) -> float:
    """How long loading `ref` may take in a worker before its first replay."""
    return limits.load_seconds if traits(ref).loads else 0.0


def check_path_engine(path: Path, engine: EngineName) -> None:
    """The artifact at `path` runs on `engine`, or a one-line error naming the engines it runs
    on (before it is read: reading a project costs a parse)."""
    kind = kind_of(path) or "dbt"  # a folder is meant as a project: `read` says what it lacks
    runs_on = TRAITS[kind].engines
    if engine not in runs_on:
        raise ArtifactError(f"{path}: {TRAITS[kind].title} runs on engine "
                            f"{', '.join(runs_on)} only, not {engine}")
