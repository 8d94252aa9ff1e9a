"""Which tasks a model arm runs, and the names its samples and their stored turns go by.

Kept free of Inspect AI, so that planning (`generate --dry-run`) works without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arrivalbench.core.task import builtin_ids

# Keys of an Inspect sample's store, written by the repair loop (Inspect logs them).
TURNS = "arrivalbench:turns"  # list of turn records (dicts), see inspect_task.repair_loop
FINAL = "arrivalbench:final"  # the final script, or None
REASON = "arrivalbench:reason"  # why there is no final script: no_sql | token_cap | ...
ERROR = "arrivalbench:error"  # the provider's error message, when generation failed


def task_refs(tasks: str | Sequence[str] | None) -> list[str]:
    """Built-in ids or task folders: a list, or one string separated by commas (as `-T
    tasks=a,b` gives it); None or empty means the built-in tasks of the core tier."""
    if tasks is None:
        return builtin_ids("core")
    items = tasks.split(",") if isinstance(tasks, str) else list(tasks)
    refs = [str(item).strip() for item in items if str(item).strip()]
    return refs or builtin_ids("core")


def sample_id(task_id: str, replicate: int | None) -> str:
    return task_id if replicate is None else f"{task_id}/{replicate}"


def first_pass_turn(turns: Sequence[dict[str, Any]]) -> int | None:
    """The turn whose script passed the snapshot test, if one did."""
    return next((int(t["turn"]) for t in turns if t.get("snapshot_verdict") == "PASS"), None)
