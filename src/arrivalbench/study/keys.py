"""The key of a stored verdict: what determines a replay's verdict bytes.

A key is graded once; a new harness or engine version makes a new key, so an old verdict is
never reused by a grader that could decide differently.
"""

from __future__ import annotations

from dataclasses import astuple, dataclass
from typing import TYPE_CHECKING

from arrivalbench.core.engine import DEFAULT_ENGINE, ENGINES, EngineName, backend
from arrivalbench.core.version import harness_version

if TYPE_CHECKING:
    from arrivalbench.core.verdict import Verdict



@dataclass(frozen=True, order=True)
class Key:
    """What determines a verdict's bytes; ordered as the results file orders verdicts.
    `engine_version` is written by `version_tag`."""

    task_digest: str
    schedule: str
    seed: int
    artifact: str
    engine_version: str
    harness_version: str
    landing: str = "batch"  # how batches reached the sources
    allowance: str = ""  # the records the oracle held the artifact to ("" every one)

    @property
    def versions(self) -> tuple[str, str]:
        """(engine_version, harness_version): the part an installation decides."""
        return self.engine_version, self.harness_version

    @property
    def replay(self) -> tuple[str, str, int, str, str, str]:
        """(task_digest, schedule, seed, artifact, landing, allowance): the part a unit of work
        decides."""
        return (self.task_digest, self.schedule, self.seed, self.artifact, self.landing,
                self.allowance)

    def row(self) -> list[object]:
        """The key's columns, in the results file's order, for its statements."""
        return list(astuple(self))


def version_tag(engine: str, version: str) -> str:
    """The engine part of a verdict key: DuckDB's bare version, so that every key stored
    before a second engine existed stays valid, and `<engine> <version>` for any other engine,
    which no DuckDB version can equal."""
    return version if engine == DEFAULT_ENGINE else f"{engine} {version}"


def engine_of(tag: str) -> EngineName:
    """The engine of a key's engine_version (see `version_tag`)."""
    name = tag.split(" ", 1)[0] if " " in tag else DEFAULT_ENGINE
    return name if name in ENGINES else DEFAULT_ENGINE  # type: ignore[return-value]


def engine_label(tag: str) -> str:
    """A key's engine version as words: `duckdb 2.0.1`, `postgres 18.1`."""
    return f"{DEFAULT_ENGINE} {tag}" if engine_of(tag) == DEFAULT_ENGINE else tag


def key_of(verdict: Verdict) -> Key:
    return Key(verdict.task_digest, verdict.schedule, verdict.seed, verdict.artifact,
               version_tag(verdict.engine, verdict.engine_version), verdict.harness_version,
               verdict.landing, verdict.allowance)


def current_versions(engine: EngineName = DEFAULT_ENGINE) -> tuple[str, str]:
    """(engine_version as a key holds it, harness_version) of this installation on `engine`:
    the tail of every key it makes there. Asks the engine its version (PostgreSQL's needs its
    extra installed)."""
    return version_tag(engine, backend(engine).version()), harness_version()
