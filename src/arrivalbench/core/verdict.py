"""Verdict records: canonical JSON, the same bytes for the same inputs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

from arrivalbench.core.values import JSON, canonical_json
from arrivalbench.core.version import harness_version

Status = Literal["PASS", "FAIL", "ERROR"]
STATUSES: tuple[Status, ...] = get_args(Status)
SCHEMA_VERSION = 2  # 2: the landing and the allowance a verdict was graded under


@dataclass(frozen=True)
class Verdict:
    """The outcome of one replay: which task, schedule, seed and script (by digest), on which
    engine and harness versions, under which landing and allowance, and its `status` PASS, FAIL
    or ERROR with its `detail` (empty for PASS, the oracle's typed difference for FAIL, phase,
    batch, statement and message for ERROR). `json()` is the canonical record: the same replay
    gives the same bytes."""

    task: str
    task_digest: str
    schedule: str
    seed: int
    schedule_digest: str
    artifact: str
    status: Status
    detail: dict[str, JSON]
    engine: str  # no default: a verdict says which engine decided it, never by omission
    engine_version: str
    harness_version: str = field(default_factory=harness_version)
    landing: str = "batch"  # how batches reached the sources
    allowance: str = ""  # the records the oracle held it to: "" every one, else the allowance

    def document(self) -> dict[str, JSON]:
        return {
            "schema_version": SCHEMA_VERSION,
            "task": self.task,
            "task_digest": self.task_digest,
            "schedule": self.schedule,
            "seed": self.seed,
            "schedule_digest": self.schedule_digest,
            "artifact": self.artifact,
            "engine": self.engine,
            "engine_version": self.engine_version,
            "harness_version": self.harness_version,
            "landing": self.landing,
            "allowance": self.allowance or None,
            "verdict": self.status,
            "detail": self.detail,
        }

    def json(self) -> str:
        return canonical_json(self.document())
