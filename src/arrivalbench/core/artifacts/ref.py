"""An artifact as data: the one value that carries an artifact across layers and processes.

Arms and the command line describe what they grade as an `ArtifactRef`; executor units, jobs
and the results file carry it; only `core.artifacts.load` turns it back into something that
runs. It holds content, never a path to read again: a worker on another machine, or a regrade
a month later, runs exactly what was described.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

from arrivalbench.core.lateness import Allowance
from arrivalbench.core.values import digest

ArtifactKind = Literal["script", "dbt"]
ARTIFACT_KINDS: tuple[ArtifactKind, ...] = get_args(ArtifactKind)


@dataclass(frozen=True)
class ArtifactRef:
    """What an artifact is.

    `text` is what is stored and read for idiom tags: a script's SQL, or the SQL a dbt project
    compiled under a line naming its files' digest; the artifact digest is the digest of it.
    A project also carries its `files` (each path relative to the project, and its bytes),
    their digest `project` (which covers the dbt versions and the models too), the `models`
    graded (one per target of the task) and the names of the variables of the grader's
    environment it may read (`passed_env`). `origin` says where it was read from, for
    messages only."""

    kind: ArtifactKind
    text: str
    files: tuple[tuple[str, bytes], ...] = field(default=(), repr=False)
    project: str | None = None
    models: tuple[str, ...] = ()
    passed_env: tuple[str, ...] = ()
    origin: str = field(default="", compare=False)
    # The records it declares it keeps (a microbatch model's lookback), as read: what the
    # artifact says of itself once loaded, here so that a caller can check before grading.
    allowance: Allowance | None = field(default=None, compare=False)

    @property
    def digest(self) -> str:
        return digest(self.text)

    @property
    def size(self) -> int:
        """Bytes of content it carries."""
        return len(self.text.encode()) + sum(len(data) for _rel, data in self.files)


def script_ref(sql: str, origin: str = "") -> ArtifactRef:
    """The description of a SQL script."""
    return ArtifactRef("script", sql, origin=origin)
