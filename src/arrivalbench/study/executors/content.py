"""What a unit's worker reads, carried as content: a cluster's nodes share no filesystem.

A unit names its task by a source (a built-in id or a folder) and a dbt project by a folder,
both on the driver's disk. The Ray executor reads each task's and each project's files once
into a `Bundle`, puts it in Ray's object store under the digest the results already use (the
task digest, the artifact digest), and a worker writes the bundle it needs into its own
scratch folder, once per process, before grading from there. A built-in task is taken from
the worker's installed package when it is the same task (same digest), and from its bundle
otherwise. The local executor keeps paths: its workers share the driver's disk.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arrivalbench.core import containment
from arrivalbench.core.task import load_spec
from arrivalbench.errors import ArrivalBenchError

SCRATCH_ROOT = "arrivalbench-content"  # under the temporary folder; swept when owners die


@dataclass(frozen=True)
class Bundle:
    """The files of a task folder or a dbt project: `name` is the folder's own name (a task's
    id must equal it), `files` each file's path relative to the folder and its bytes."""

    name: str
    files: tuple[tuple[str, bytes], ...]

    @property
    def size(self) -> int:
        return sum(len(data) for _rel, data in self.files)


def _skipped(rel: Path) -> bool:
    return any(part.startswith(".") or part == "__pycache__" for part in rel.parts)


def task_bundle(folder: Path) -> Bundle:
    """Every file the task digest covers (`core.task.digest.folder_digest`), and the
    per-engine pipelines the digest leaves out, which a worker on that engine reads."""
    files = []
    for file in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = file.relative_to(folder)
        if not _skipped(rel):
            files.append((rel.as_posix(), file.read_bytes()))
    return Bundle(folder.name, tuple(files))


def project_bundle(folder: Path) -> Bundle:
    """The files a dbt project is digested by (`core.artifacts.dbt.files.walk`), no more."""
    from arrivalbench.core.artifacts.dbt.files import walk

    return Bundle(folder.name, tuple((rel, (folder / rel).read_bytes()) for rel in walk(folder)))


def fields(unit: Any) -> tuple[str | None, str | None]:
    """The task source and the dbt project folder a unit names (None where it names none)."""
    return getattr(unit, "task", None), getattr(unit, "project", None)


def bundles(units: Any) -> dict[str, Bundle]:
    """Each distinct task and dbt project of `units`, read once, by the digest the results
    use: a task by its task digest, a project by its artifact digest. Every unit is a
    dataclass with `task` and `task_digest`, and optionally `project` and `artifact`."""
    from arrivalbench.core.task.resolution import resolve

    found: dict[str, Bundle] = {}
    for unit in units:
        task, project = fields(unit)
        if task is not None and unit.task_digest not in found:
            found[unit.task_digest] = task_bundle(resolve(task))
        if project is not None and unit.artifact not in found:
            found[unit.artifact] = project_bundle(Path(project).resolve())
    return found


# -- in a worker ---------------------------------------------------------------------------

_scratch: Path | None = None
_written: dict[str, Path] = {}  # digest -> the folder written from its bundle in this process


def scratch() -> Path:
    """This worker process's scratch folder (made once; the next process to make one removes
    it when this one is gone)."""
    global _scratch
    if _scratch is None:
        _scratch = containment.scratch(SCRATCH_ROOT)
    return _scratch


def materialize(digest: str, bundle: Bundle) -> Path:
    """The folder holding `bundle`, written once per process under `digest`."""
    path = _written.get(digest)
    if path is None:
        parent = scratch() / digest.replace(":", "-")[:40]
        path = parent / bundle.name
        for rel, data in bundle.files:
            target = path / rel
            if ".." in Path(rel).parts or Path(rel).is_absolute():  # never outside the folder
                raise ArrivalBenchError(f"{bundle.name}: file {rel!r} leaves its folder")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        _written[digest] = path
    return path


_builtin: dict[tuple[str, str], bool] = {}


def _builtin_matches(task: str, digest: str) -> bool:
    """Whether `task` is a built-in id this installation holds with `digest` (asked once)."""
    if "/" in task or "\\" in task:
        return False
    if (task, digest) not in _builtin:
        try:
            _builtin[(task, digest)] = load_spec(task).digest == digest
        except ArrivalBenchError:
            _builtin[(task, digest)] = False
    return _builtin[(task, digest)]


def localize(unit: Any, fetch: Any, refs: Mapping[str, Any]) -> Any:
    """`unit` with its task and dbt project read from this worker's scratch: each bundle
    fetched (`fetch(ref)`) and written once per process. A built-in task this installation
    holds as the driver does stays as it is."""
    task, project = fields(unit)
    changes: dict[str, str] = {}
    if task is not None and unit.task_digest in refs and not _builtin_matches(
            task, unit.task_digest):
        changes["task"] = str(_local(unit.task_digest, fetch, refs))
    if project is not None and unit.artifact in refs:
        changes["project"] = str(_local(unit.artifact, fetch, refs))
    return dataclasses.replace(unit, **changes) if changes else unit


def _local(digest: str, fetch: Any, refs: Mapping[str, Any]) -> Path:
    path = _written.get(digest)
    return path if path is not None else materialize(digest, fetch(refs[digest]))
