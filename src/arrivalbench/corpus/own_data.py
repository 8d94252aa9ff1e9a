"""The task `grade PROJECT --data DATA` grades, derived from the project and its data once and
kept in the user's cache (`$XDG_CACHE_HOME/arrivalbench/own-data`), and what such a task
allows: a reference over every prefix of the data, or only over all of it."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

from arrivalbench.core.engine import Limits
from arrivalbench.core.task import TaskSpec, load_spec
from arrivalbench.corpus.init import DATA_SUFFIXES, from_dbt
from arrivalbench.errors import ParameterError, mention


def over_prefixes(spec: TaskSpec) -> bool:
    """Whether the reference reads the sources, and so has a result over every prefix of the
    log (the compiled full refresh), rather than holding dbt's rows over all of it."""
    import sqlglot
    from sqlglot import exp

    tree = sqlglot.parse_one(spec.reference_sql, read="duckdb")
    names = {source.name for source in spec.sources}
    return any(t.name in names and not t.db for t in tree.find_all(exp.Table))


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "arrivalbench" / "own-data"


def derived(project: Path, data: Path, model: str | None = None,
            limits: Limits = Limits(), *, passed_env: Sequence[str] = ()) -> TaskSpec:
    """The task `grade PROJECT --data DATA` grades, built once per project, data, harness and
    passed variables: cached under the digest of them all, so that the full refresh costs one
    dbt run."""
    from arrivalbench.core.artifacts.dbt import files as project_files
    from arrivalbench.core.version import harness_version

    root = project.resolve()
    if not (root / "dbt_project.yml").is_file():
        raise ParameterError("data", data, f"goes with a dbt project folder; {project} has no "
                             f"dbt_project.yml (a script is graded on a task: "
                             f"{mention('task')} TASK)")
    if not data.is_dir():
        raise ParameterError("data", data, "not a folder; give the folder that holds one file "
                             "per source table (<table>.csv, .parquet or .jsonl)")
    h = hashlib.sha256(f"{harness_version()}\nmodel {model or ''}\n".encode())
    for name in sorted(passed_env):  # what the full refresh may read decides its rows
        h.update(f"env {name}={os.environ.get(name)}\n".encode())
    h.update(project_files.read(root).digest.encode())
    for path in sorted(data.iterdir()):
        if path.suffix.lower() in DATA_SUFFIXES and path.is_file():
            h.update(f"\n{path.name} {path.stat().st_size}\n".encode())
            h.update(path.read_bytes())
    home = cache_root() / h.hexdigest()[:24]
    found = [p for p in home.iterdir() if p.is_dir() and not p.name.startswith(".")] \
        if home.is_dir() else []
    if len(found) == 1:
        return load_spec(found[0])
    return from_dbt(None, project, data, model, limits, parent=home, passed_env=passed_env).spec
