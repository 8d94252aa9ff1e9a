"""The interface every kind of artifact implements: started once per replay, then run once per
batch."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from arrivalbench.core.artifacts.ref import ArtifactRef
    from arrivalbench.core.engine import Database
    from arrivalbench.core.lateness import Allowance
    from arrivalbench.core.schedules import Batch


class Run(Protocol):
    """One replay's handle on an artifact."""

    def __call__(self, batch: Batch) -> None:
        """Run once for `batch`, just loaded, cut short where the batch says
        (`Batch.abort_after` of the run's statement count). Raises `engine.Failure` where the
        run breaks the contract."""


class Artifact(Protocol):
    @property
    def digest(self) -> str:
        """Covers everything that decides what the artifact does."""

    @property
    def text(self) -> str:
        """The SQL stored for it and read for idiom tags."""

    @property
    def ref(self) -> ArtifactRef:
        """The artifact as data: what crosses layers and processes."""

    @property
    def allowance(self) -> Allowance | None:
        """The records it declares it keeps, when it declares any (a microbatch model keeps
        what its lookback re-reads); None: every record."""

    def start(self, db: Database) -> Run:
        """Prepare one replay in `db`; raises `engine.Failure` if it cannot run at all."""
