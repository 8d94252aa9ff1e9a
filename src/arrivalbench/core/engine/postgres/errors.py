"""PostgreSQL's errors as a replay's `Failure`: the phase they belong to and a message that reads
the same on any machine and in any run."""

from __future__ import annotations

import re

import psycopg
import psycopg.errors

from arrivalbench.core.engine import Phase, normalize_message

_PG_VOLATILE = [
    (re.compile(r"\bOID \d+"), "OID ?"),
    (re.compile(r"\b(process|PID|pid) \d+"), r"\1 ?"),
    (re.compile(r"\b(transaction|xid) \d+"), r"\1 ?"),
    (re.compile(r"\bpg_temp_\d+"), "pg_temp"),
    (re.compile(r"\bpg_toast_\d+"), "pg_toast"),
    (re.compile(r"\b\d+ ?kB\b"), "<size>"),  # PostgreSQL's spelling of kilobytes
]

_MEMORY_CLASSES = ("53",)  # insufficient resources: out of memory, disk full, temp_file_limit
_SANDBOX_STATES = {"42501"}  # insufficient privilege (also "must be superuser/owner")
# Raised by the harness's own guard when what it reads back passes `Limits.max_read_bytes`
# (see `walls.READ_GUARD`). A pipeline raising it in its own view only stops itself.
READ_LIMIT_STATE = "AB001"


def message(exc: BaseException) -> str:
    diag = getattr(exc, "diag", None)
    text = (diag.message_primary if diag is not None else None) or str(exc)
    for pattern, replacement in _PG_VOLATILE:
        text = pattern.sub(replacement, text)
    return normalize_message(text)


def classify(exc: BaseException, timed_out: bool) -> Phase:
    state = getattr(exc, "sqlstate", None) or ""
    if timed_out or isinstance(exc, psycopg.errors.QueryCanceled):
        return "timeout"
    if state.startswith(_MEMORY_CLASSES) or state == READ_LIMIT_STATE:
        return "memory"
    if state in _SANDBOX_STATES:
        return "sandbox"
    return "run"
