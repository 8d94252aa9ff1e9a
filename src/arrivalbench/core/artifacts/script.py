"""A SQL script: its statements run in order over a new connection, cut after k on an abort."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from arrivalbench.core.artifacts.base import Run
from arrivalbench.core.artifacts.ref import ArtifactRef, script_ref
from arrivalbench.core.textfile import read_text
from arrivalbench.core.values import digest
from arrivalbench.errors import ScriptError

if TYPE_CHECKING:
    from arrivalbench.core.engine import Database
    from arrivalbench.core.schedules import Batch


@dataclass(frozen=True)
class Script:
    sql: str
    origin: str = field(default="", compare=False)  # where it was read, for messages

    @property
    def digest(self) -> str:
        return digest(self.sql)

    @property
    def text(self) -> str:
        return self.sql

    @property
    def ref(self) -> ArtifactRef:
        return script_ref(self.sql, self.origin)

    @property
    def allowance(self) -> None:
        return None  # a script declares nothing of lateness: it keeps every record

    def start(self, db: Database) -> Run:
        statements = db.split(self.sql)  # a script that does not parse fails its first batch

        def run(batch: Batch) -> None:
            db.run(statements, batch.abort_after(len(statements)))

        return run


def read_script(path: Path, what: str = "a .sql script or of a dbt project folder") -> str:
    """The text of the SQL script at `path`, or a one-line ScriptError naming what is wrong."""
    return read_text(path, ScriptError, what=what,
                     empty="a pipeline holds at least one SQL statement")
