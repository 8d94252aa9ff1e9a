"""The harness's semantic version: what a verdict means, as a digest of the code that decides it.

A stored verdict is reused whenever its key is asked for again, so the key must change when the
meaning of a verdict does: a new schedule generator, a different comparison, another way of
casting the log. Rather than a number someone must remember to bump, the version is the
release number plus a digest of the source of every module that decides verdicts and of the
DuckDB version they run on.

What decides a verdict is, by construction, the `core` package: grading imports nothing outside
it but the root exception (`tests/test_version.py` walks the import closure of the grading entry
points and proves it). So the digest covers every module under `core/` and `errors.py`, and a
module added to the grading path cannot be forgotten. Editing any of them (even a comment) gives
a new version, and verdicts of the old one are no longer reused; editing anything else (the CLI,
the report, the agent, the wording of messages) does not.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from arrivalbench import __version__
from arrivalbench.core.engine import duckdb as duckdb_engine

PACKAGE = Path(__file__).resolve().parents[1]
# Relative to the package; `core/` whole, and the one module outside it that grading imports.
DECIDING: tuple[str, ...] = ("core/**/*.py", "errors.py")


def files(package: Path = PACKAGE) -> list[Path]:
    """The source files of `DECIDING`, in a fixed order."""
    found: list[Path] = []
    for pattern in DECIDING:
        found += sorted(package.glob(pattern))
    return found


@functools.lru_cache(maxsize=1)
def harness_version() -> str:
    """`<release>+<digest>`: the release of arrivalbench and the first 12 hex digits of a
    SHA-256 over the deciding modules' source (line endings normalized, so a checkout on
    another system gives the same version) and the DuckDB version."""
    h = hashlib.sha256()
    h.update(f"duckdb {duckdb_engine.VERSION}\n".encode())
    for path in files():
        h.update(f"{path.relative_to(PACKAGE).as_posix()}\n".encode())
        h.update(path.read_bytes().replace(b"\r\n", b"\n"))
        h.update(b"\0")
    return f"{__version__}+{h.hexdigest()[:12]}"
