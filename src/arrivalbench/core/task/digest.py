"""The digest of a task folder: what verdicts are keyed by, and what the spec cache keys on."""

from __future__ import annotations

from pathlib import Path

from arrivalbench.core.engine import DEFAULT_ENGINE, ENGINES
from arrivalbench.core.values import digest

_OTHER_ENGINE_SUFFIXES = tuple(f".{e}.sql" for e in ENGINES if e != DEFAULT_ENGINE)


def folder_digest(path: Path, verdict_files_only: bool = False) -> str:
    """Covers every file of the task (names and bytes), so any edit changes it: the key of the
    loaded-spec cache.

    With `verdict_files_only` it is the task digest that verdicts are keyed by: the pipelines
    written for engines other than DuckDB (`gold.postgres.sql`, `negatives/<n>.postgres.sql`)
    are left out. A verdict depends on them only as its artifact, whose own digest is in its
    key, and leaving them out means that adding or fixing a translation leaves every stored
    DuckDB verdict of the task valid. task.yaml stays in, per-engine `fails:` included."""
    parts: list[bytes] = []
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        rel = file.relative_to(path)
        if any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
            continue
        if verdict_files_only and rel.name.endswith(_OTHER_ENGINE_SUFFIXES):
            continue
        data = file.read_bytes()
        parts.append(f"{rel.as_posix()}\0{len(data)}\0".encode() + data)
    return digest(b"".join(parts))
