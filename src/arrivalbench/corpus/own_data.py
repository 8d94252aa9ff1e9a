"""The task `grade PROJECT --data DATA` grades, derived from the project and its data once and
kept in the user's cache (`$XDG_CACHE_HOME/arrivalbench/own-data`), and what such a task
allows: a reference over every prefix of the data, or only over all of it. A whole project is
graded as one such task per incremental model (`derived_each`), the models chosen with dbt's
own selectors."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arrivalbench.core.artifacts.dbt.files import DbtError
from arrivalbench.core.engine import Limits
from arrivalbench.core.task import TaskSpec, load_spec
from arrivalbench.corpus.init import DATA_SUFFIXES, from_dbt
from arrivalbench.errors import ParameterError, mention

if TYPE_CHECKING:
    from arrivalbench.core.artifacts import ArtifactRef
    from arrivalbench.core.artifacts.dbt.process import Child


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

    root = _checked(project, data)
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


def _checked(project: Path, data: Path) -> Path:
    """The project's folder, resolved, once it is a dbt project and `data` a folder."""
    root = project.resolve()
    if not (root / "dbt_project.yml").is_file():
        raise ParameterError("data", data, f"goes with a dbt project folder; {project} has no "
                             f"dbt_project.yml (a script is graded on a task: "
                             f"{mention('task')} TASK)")
    if not data.is_dir():
        raise ParameterError("data", data, "not a folder; give the folder that holds one file "
                             "per source table (<table>.csv, .parquet or .jsonl)")
    return root


# A selector word that is more than a model's name: a method, a graph operator, a set
# operation or a wildcard. A word without any is a model named explicitly.
_SELECTOR_SIGNS = frozenset(":+@,*?[/")


def selector_words(select: Sequence[str]) -> list[str]:
    """`--select`'s values as dbt reads them: each value's space-separated words."""
    return [word for value in select for word in value.split()]


def derived_each(project: Path, data: Path, *, model: str | None = None,
                 select: Sequence[str] = (), limits: Limits = Limits(),
                 passed_env: Sequence[str] = ()) -> list[tuple[TaskSpec, ArtifactRef]]:
    """The task of each incremental model graded, in name order, with the project described as
    graded on it: `model` alone; else the incremental models of those dbt selects with
    `select` (dbt selector words: `tag:x`, `path:models/marts`, `+fct_orders`; several are
    their union, as in `dbt ls --select`); else every incremental model of the project.

    The project is parsed once: the dbt child that parsed it (and listed the selection)
    derives each model's task and compiles it in turn. A model named on its own that is not
    incremental, and a selection with no incremental model in it, are one-line errors."""
    from arrivalbench.core.artifacts import read
    from arrivalbench.core.artifacts.dbt import DbtProject, _read, keep_child

    root = _checked(project, data)
    words = selector_words(select)
    if model is not None:
        if words:
            raise ParameterError("model", model, f"names one model; {mention('select')} "
                                 "selects models: give one of them")
        names: tuple[str, ...] = (model,)
        child, parsed = None, None
    else:
        names, child, parsed = _selected(project, root, words, limits, passed_env)
    found: list[tuple[TaskSpec, ArtifactRef]] = []
    try:
        for name in names:
            if child is not None and parsed is not None and child.alive:
                # the next parse of the project (the derivation's, else the compile's) is this
                keep_child(_read(root, name), passed_env, limits, child, parsed)
            child = None
            spec = derived(project, data, name, limits, passed_env=passed_env)
            loaded = read(project, spec, models=[name], passed_env=passed_env, limits=limits)
            found.append((spec, loaded.ref))
            if isinstance(loaded, DbtProject) and parsed is not None:
                child, loaded.child = loaded.child, None
    finally:
        if child is not None:
            child.kill()
    return found


def incremental_models(project: Path, select: Sequence[str] = (), *,
                       limits: Limits = Limits(), passed_env: Sequence[str] = ()
                       ) -> tuple[str, ...]:
    """The incremental models `derived_each` grades for `select` (every one without it), in
    name order: the project parsed, and the selection listed by dbt, in a contained child."""
    root = project.resolve()
    if not (root / "dbt_project.yml").is_file():
        raise DbtError(f"{project}: no dbt_project.yml; give a dbt project folder")
    names, child, _parsed = _selected(project, root, selector_words(select), limits,
                                      passed_env)
    child.kill()
    return names


def _selected(project: Path, root: Path, words: Sequence[str], limits: Limits,
              passed_env: Sequence[str]) -> tuple[tuple[str, ...], Child, dict[str, Any]]:
    """The incremental models `words` select (all of them without any), and the child that
    parsed the project to find them, with what it parsed."""
    from arrivalbench.core.artifacts.dbt import (
        _check_extra,
        _read,
        _refuse_python_files,
        start_child,
    )

    _check_extra()
    files = _read(root, "")
    _refuse_python_files(files)
    child, parsed = start_child(files, passed_env, limits)
    try:
        nodes = [n for n in parsed["nodes"].values() if n["resource_type"] == "model"]
        kinds = {n["name"]: str(n["materialized"]) for n in nodes}
        incremental = sorted(name for name, kind in kinds.items() if kind == "incremental")
        if not words:
            if not incremental:
                raise DbtError(f"{project}: no incremental model (models: "
                               f"{', '.join(sorted(kinds)) or 'none'}); arrivalbench grades "
                               "models materialized as incremental")
            return tuple(incremental), child, parsed
        for word in words:
            if word in kinds and not _SELECTOR_SIGNS & set(word) and \
                    kinds[word] != "incremental":
                raise DbtError(f"{project}: model {word} is materialized as {kinds[word]}, not "
                               "incremental; select incremental models (incremental models: "
                               f"{', '.join(incremental) or 'none'})")
        listed = set(_listed(child, words, limits, project))
        chosen = tuple(name for name in incremental if name in listed)
        if not chosen:
            raise DbtError(f"{mention('select')} {' '.join(words)!r} matches no incremental "
                           f"model of {project} (incremental models: "
                           f"{', '.join(incremental) or 'none'})")
    except BaseException:
        child.kill()
        raise
    return chosen, child, parsed


def _listed(child: Child, words: Sequence[str], limits: Limits, project: Path) -> list[str]:
    """The names of the models `dbt ls --select WORDS` lists, asked of the child that parsed
    the project: dbt's own reading of its selectors, graph operators and set operations."""
    from arrivalbench.core.artifacts.dbt import _flags, _message
    from arrivalbench.core.artifacts.dbt.process import Died, Expired

    def refuse(request: list[Any]) -> Any:
        # listing runs no statement; a close or rollback needs no answer
        return ("error", "dbt ls runs no statement") if request[0] == "execute" else None

    try:
        result = child.call("invoke", ["ls", "--resource-type", "model", "--output", "name",
                                       "--select", *words, *_flags(child.scratch)],
                            time.monotonic() + limits.load_seconds, refuse)
    except Expired:
        raise DbtError(f"{project}: dbt did not list the models {mention('select')} selects "
                       f"within {limits.load_seconds:g} s, the load limit") from None
    except Died:
        raise DbtError(f"{project}: dbt's process ended while listing the models "
                       f"{mention('select')} selects") from None
    if not result["ok"]:
        raise DbtError(f"{mention('select')} {' '.join(words)!r}: dbt cannot read it "
                       f"({_message(result['message'])}); see dbt's node selection syntax")
    return [str(name) for name in result.get("listed", [])]
