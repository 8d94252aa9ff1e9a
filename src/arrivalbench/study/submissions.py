"""A folder of submissions as an arm (the human arm): `<folder>/<task_id>.sql` is replicate 0,
`<folder>/<task_id>/<n>.sql` replicate n, and a folder `<task_id>/` holding an artifact of
another kind (a dbt project) replicate 0."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arrivalbench.core.artifacts import kind_of, read
from arrivalbench.core.task import TaskSpec, builtin_ids
from arrivalbench.errors import ArrivalBenchError
from arrivalbench.study.arms import BUILTIN_ARMS, Artifact
from arrivalbench.words import count


@dataclass(frozen=True)
class Submissions:
    arm: str
    artifacts: list[Artifact]
    warnings: list[str]


def submissions(folder: Path, specs: Sequence[TaskSpec], *, arm_name: str | None = None,
                allow_unmatched: bool = False) -> Submissions:
    """The artifacts of a folder of submissions for the tasks `specs`.

    `<task_id>.sql` is replicate 0, `<task_id>/<n>.sql` replicate n; a folder `<task_id>/`
    that is an artifact itself (a dbt project) is replicate 0. A .sql file or a folder whose
    name is no task id (a typo) is an error listing every such entry, unless
    `allow_unmatched`: then each is a warning and left out. A file for a task outside `specs`
    but among the built-in ones is left out quietly (the run is restricted to other tasks);
    every other file that cannot be used gives a one-line warning naming it and is skipped.
    A folder with nothing usable is an error."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ArrivalBenchError(f"submissions {folder}: no such folder; give a folder of "
                                "<task_id>.sql files")
    arm = _arm_name(folder, arm_name)
    by_id = {spec.id: spec for spec in specs}
    known = set(builtin_ids()) | set(by_id)
    entries = sorted(e for e in folder.iterdir() if not e.name.startswith("."))
    # A .sql file or a folder is meant as a submission; other files (a README) are not.
    unmatched = [e for e in entries if (e.is_dir() and e.name not in known) or
                 (e.is_file() and e.suffix == ".sql" and e.stem not in known)]
    warnings: list[str] = []
    if unmatched:
        names = [f"{e.name}/" if e.is_dir() else e.name for e in unmatched]
        if not allow_unmatched:
            raise ArrivalBenchError(_unmatched_message(folder, names, known))
        warnings += [f"{folder / name}: names no task; left out (unmatched files allowed)"
                     for name in names]
    taken = _Taken(arm, by_id, warnings)
    entries = [e for e in entries if e not in unmatched]
    for entry in entries:  # <task_id>.sql first: it is replicate 0 when <task_id>/0.sql is too
        if entry.is_file() and entry.suffix == ".sql":
            taken.take(entry, entry.stem, 0)
    for entry in entries:
        if entry.is_dir() and kind_of(entry) is not None:
            taken.take(entry, entry.name, 0)  # an artifact of its own: <task_id>/dbt_project.yml
        elif entry.is_dir():
            taken.replicates(entry)
    if not taken.found:
        scope = ", ".join(sorted(by_id))
        raise ArrivalBenchError(f"submissions {folder}: no usable submission for the tasks "
                                f"graded ({scope}); lay it out as <task_id>.sql or "
                                "<task_id>/<n>.sql")
    artifacts = sorted(taken.found.values(), key=lambda a: (a.spec.id, a.replicate))
    return Submissions(arm, artifacts, warnings)


def _arm_name(folder: Path, given: str | None) -> str:
    arm = given if given is not None else folder.resolve().name
    if not arm.strip():
        raise ArrivalBenchError("arm name '': give the submissions a non-empty arm name")
    if arm in BUILTIN_ARMS:
        raise ArrivalBenchError(f"arm name {arm}: that is a built-in arm; give the "
                                "submissions another arm name")
    return arm


@dataclass
class _Taken:
    """The submissions read so far, and the warnings about the ones left out."""

    arm: str
    by_id: dict[str, TaskSpec]
    warnings: list[str]
    found: dict[tuple[str, int], Artifact] = field(default_factory=dict)

    def take(self, path: Path, task: str, replicate: int) -> None:
        if task not in self.by_id:
            return
        if (task, replicate) in self.found:
            other = self.found[(task, replicate)].provenance["file"]
            self.warnings.append(f"{path}: replicate {replicate} of {task} is already given "
                                 f"by {other}; skipped")
            return
        try:
            ref = read(path, self.by_id[task]).ref
        except ArrivalBenchError as exc:
            self.warnings.append(f"{exc}; skipped")
            return
        self.found[(task, replicate)] = Artifact(self.arm, self.by_id[task], replicate, ref,
                                                 {"file": str(path.resolve())})

    def replicates(self, folder: Path) -> None:
        """`<task_id>/<n>.sql`, in the order of n."""
        files = [f for f in folder.iterdir() if f.suffix == ".sql" and not f.name.startswith(".")]
        for file in sorted(files, key=lambda f: (not f.stem.isdigit(), len(f.stem), f.stem)):
            if not file.stem.isdigit():
                self.warnings.append(f"{file}: name a replicate <n>.sql with n a whole number; "
                                     "skipped")
                continue
            self.take(file, folder.name, int(file.stem))


def _unmatched_message(folder: Path, names: Sequence[str], known: set[str]) -> str:
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    hints = []
    for name in names[:3]:
        stem = name.rstrip("/").removesuffix(".sql")
        close = difflib.get_close_matches(stem, sorted(known), n=1)
        if close:
            hints.append(f"{name} -> {close[0]}")
    hint = f" (did you mean {'; '.join(hints)}?)" if hints else ""
    return (f"submissions {folder}: {count(len(names), 'entry', 'entries')} "
            f"{'names' if len(names) == 1 else 'name'} no task: {shown}{hint}; name each "
            "<task_id>.sql or <task_id>/<n>.sql (see 'arrivalbench tasks'), or allow "
            "unmatched files to grade the rest")
