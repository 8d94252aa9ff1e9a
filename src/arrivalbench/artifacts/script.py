"""A SQL script: its statements run in order over a new connection, cut after k on an abort."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from arrivalbench.artifacts import Run
from arrivalbench.errors import ScriptError
from arrivalbench.values import digest

if TYPE_CHECKING:
    from arrivalbench.engine.duckdb import Database
    from arrivalbench.schedules import Batch


@dataclass(frozen=True)
class Script:
    sql: str

    @property
    def digest(self) -> str:
        return digest(self.sql)

    @property
    def text(self) -> str:
        return self.sql

    def start(self, db: Database) -> Run:
        statements = db.split(self.sql)  # a script that does not parse fails its first batch

        def run(batch: Batch) -> None:
            db.run(statements, batch.abort_after(len(statements)))

        return run


def read_script(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScriptError(f"{path}: no such file; give the path of a .sql script or of a "
                          "dbt project folder") from None
    except UnicodeDecodeError:
        raise ScriptError(f"{path}: not UTF-8 text; save the script as UTF-8") from None
    except OSError as exc:
        raise ScriptError(f"{path}: cannot be read ({exc.strerror})") from None
    if not text.strip():
        raise ScriptError(f"{path}: empty; a pipeline holds at least one SQL statement")
    return text
