"""What a unit's worker reads, carried as content: a cluster's nodes share no filesystem.

A unit names its task by a source (a built-in id or a folder) on the driver's disk; its
artifact travels as content already (`core.artifacts.ArtifactRef`). The Ray executor reads each
task's files once into a `Bundle`, puts it in Ray's object store under the task digest, and a
worker writes the bundle it needs into its own scratch folder, once per process, before
grading from there. A built-in task is taken from the worker's installed package when it is
the same task (same digest), and from its bundle otherwise. The local executor keeps paths:
its workers share the driver's disk.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arrivalbench.core import containment
from arrivalbench.core.task import load_spec
from arrivalbench.errors import ArrivalBenchError
from arrivalbench.study.executors.unit import J, Job

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


def bundles(units: Sequence[Job[Any]]) -> dict[str, Bundle]:
    """Each distinct task of `units`, read once, by its task digest."""
    from arrivalbench.core.task.resolution import resolve

    found: dict[str, Bundle] = {}
    for unit in units:
        if unit.task_digest not in found:
            found[unit.task_digest] = task_bundle(resolve(unit.task))
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


def localize(unit: J, fetch: Any, refs: Mapping[str, Any]) -> J:
    """`unit` with its task read from this worker's scratch: each bundle fetched (`fetch(ref)`)
    and written once per process. A built-in task this installation holds as the driver does
    stays as it is."""
    if unit.task_digest not in refs or _builtin_matches(unit.task, unit.task_digest):
        return unit
    return dataclasses.replace(unit, task=str(_local(unit.task_digest, fetch, refs)))  # type: ignore[type-var]


def _local(digest: str, fetch: Any, refs: Mapping[str, Any]) -> Path:
    path = _written.get(digest)
    return path if path is not None else materialize(digest, fetch(refs[digest]))
