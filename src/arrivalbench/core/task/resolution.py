"""Finding a task: a built-in id or a folder on disk, loaded once per folder content."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from pathlib import Path

from arrivalbench.core.task.checks import parse
from arrivalbench.core.task.digest import folder_digest
from arrivalbench.core.task.spec import TIER_CHOICES, TaskSpec, TierChoice
from arrivalbench.errors import TaskError, did_you_mean

BUILTIN_DIR = Path(__file__).parents[2] / "tasks"


def builtin_ids(tier: TierChoice = "all") -> list[str]:
    """The built-in task ids of `tier` ("all": every one), sorted."""
    ids = sorted(p.name for p in BUILTIN_DIR.iterdir() if (p / "task.yaml").is_file())
    return ids if tier == "all" else [i for i in ids if load_spec(i).tier == tier]


def select(refs: Sequence[str], tier: TierChoice | None, default: TierChoice) -> list[str]:
    """The tasks a command works on: with no `refs`, the built-in tasks of `tier` (of
    `default` when no tier is given); with `refs`, those of them in `tier`, or all of them when
    no tier is given (naming a task is choosing it, whatever its tier). A TaskError when a
    given tier leaves nothing."""
    if not refs:
        chosen = builtin_ids(tier or default)
    elif tier is None or tier == "all":
        return list(refs)
    else:
        chosen = [r for r in refs if load_spec(r).tier == tier]
    if not chosen:
        raise TaskError(f"no task of tier {tier or default} among "
                        f"{', '.join(refs) if refs else 'the built-in tasks'}; tiers: "
                        f"{', '.join(TIER_CHOICES)}")
    return chosen


def resolve(ref: str | Path) -> Path:
    """A built-in task id or a folder on disk."""
    text = str(ref)
    if "/" not in text and "\\" not in text and (BUILTIN_DIR / text / "task.yaml").is_file():
        return (BUILTIN_DIR / text).resolve()
    path = Path(text).expanduser()
    if path.is_dir():
        if not (path / "task.yaml").is_file():
            raise TaskError(f"{path}: no task.yaml in this folder; a task folder holds task.yaml, "
                            "reference.sql, gold.sql and log/")
        return path.resolve()
    if path.exists():
        folder = f"its folder {path.parent}" if path.name == "task.yaml" else \
            "a folder holding task.yaml"
        raise TaskError(f"{text}: is a file, not a task; give a built-in id or {folder}")
    if text != path.name or text.startswith((".", "~")):  # written as a path: meant a folder
        raise TaskError(f"{text}: no such folder; give a task folder that exists (write one "
                        "with 'arrivalbench init') or a built-in id")
    raise TaskError(f"unknown task {text!r}: {did_you_mean(text, builtin_ids())}give a "
                    "built-in id (list them with 'arrivalbench tasks') or a task folder")


def load_specs(refs: Iterable[str | Path]) -> list[TaskSpec]:
    """Each task once, in the order given. Two references to one folder (an id and a path, a
    symlink and its target) are one task; two folders with the same id are an error."""
    specs: dict[str, TaskSpec] = {}
    for ref in refs:
        spec = load_spec(ref)
        other = specs.get(spec.id)
        if other is not None and other.path.resolve() != spec.path.resolve():
            raise TaskError(f"task {ref}: its id {spec.id!r} is also the id of {other.path}; "
                            "give one of them at a time")
        specs[spec.id] = spec
    return list(specs.values())


def source_of(spec: TaskSpec) -> str:
    """How to load `spec` again, in any process: its id if it is built in, else its folder's
    absolute path with symlinks resolved (so one task has one source, however it was
    reached)."""
    path = spec.path.resolve()
    return spec.id if path.parent == BUILTIN_DIR.resolve() else str(path)


@functools.lru_cache(maxsize=64)
def _load_spec_cached(path: Path, content: str) -> TaskSpec:
    return parse(path, folder_digest(path, verdict_files_only=True))


def load_spec(ref: str | Path) -> TaskSpec:
    """The task a built-in id or a folder path names, validated: `task.yaml`, its SQL files and
    the list of log files (the log itself is read by `load_log`). Cached on the folder's
    digest, so an edited folder is read again. A task that does not follow the format raises
    TaskError naming the file, the field and the offending value."""
    path = resolve(ref)
    return _load_spec_cached(path, folder_digest(path))
