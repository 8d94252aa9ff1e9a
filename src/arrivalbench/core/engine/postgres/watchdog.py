"""The time and disk limits of a statement, enforced from outside its session.

A pipeline can change its own `statement_timeout` (inside a `DO` block, or in a function's SET
clause), so the time limit is kept by a thread of the grading process instead: it cancels the
statement at its deadline and terminates its backend if the cancel does not take. The same
thread polls the replay database's size while a statement runs and stops one that writes past
`Limits.disk`. It talks to the server over a superuser connection of its own, to the database
`postgres` (which the replay role cannot reach), under a pinned search path.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg

from arrivalbench.core.engine import Limits, pgserver
from arrivalbench.core.engine.postgres.walls import HARNESS_OPTIONS, REPLAY, size_bytes


class Watchdog:
    """One thread per process. While a statement is armed it cancels it past its deadline,
    terminates its backend if the cancel does not take within a grace period, and every
    `SIZE_EVERY` seconds of armed time checks that the replay's database has not grown past
    its limit (stopping the statement if it has). Arming is one assignment, as on DuckDB."""

    TICK = 0.05
    GRACE = 1.0
    SIZE_EVERY = 0.25

    def __init__(self) -> None:
        self._armed: tuple[psycopg.Connection[Any], float, int, int, pgserver.Server] | None \
            = None
        self.fired = False
        self.grew = False
        self._admin: tuple[pgserver.Server, psycopg.Connection[Any]] | None = None
        threading.Thread(target=self._loop, name="arrivalbench-pg-watchdog",
                         daemon=True).start()

    def _loop(self) -> None:
        busy = 0.0
        # The statement cancelled last and when: the grace period, and the termination after
        # it, belong to that statement only, never to one armed since on the same connection.
        cancelled: tuple[object, float] | None = None
        while True:
            time.sleep(self.TICK)
            armed = self._armed
            if armed is None or (cancelled is not None and cancelled[0] is not armed):
                cancelled = None
            if armed is None:
                continue
            con, deadline, pid, disk, server = armed
            now = time.monotonic()
            busy += self.TICK
            try:
                if cancelled is not None:
                    if now > cancelled[1] + self.GRACE and self._armed is armed:
                        self._terminate(server, pid)
                        cancelled = None
                elif now > deadline:
                    self.fired = True
                    cancelled = (armed, now)
                    con.cancel_safe(timeout=self.GRACE)
                elif busy >= self.SIZE_EVERY:
                    busy = 0.0
                    if self._size(server) > disk and self._armed is armed:
                        self.grew = True
                        cancelled = (armed, now)
                        con.cancel_safe(timeout=self.GRACE)
            except psycopg.Error:
                self._drop_admin()

    def _connection(self, server: pgserver.Server) -> psycopg.Connection[Any]:
        """The watchdog's own superuser connection to `server` (the replay's may be busy)."""
        if self._admin is None or self._admin[0] is not server or self._admin[1].closed:
            self._drop_admin()
            self._admin = (server, server.connect(options=HARNESS_OPTIONS))
        return self._admin[1]

    def _drop_admin(self) -> None:
        if self._admin is not None:
            with contextlib.suppress(psycopg.Error):
                self._admin[1].close()
        self._admin = None

    def _size(self, server: pgserver.Server) -> int:
        found = self._connection(server).execute("SELECT pg_catalog.pg_database_size(%s)",
                                                 [REPLAY]).fetchone()
        return int(found[0]) if found else 0

    def _terminate(self, server: pgserver.Server, pid: int) -> None:
        self._connection(server).execute("SELECT pg_catalog.pg_terminate_backend(%s)", [pid])

    @contextmanager
    def armed(self, con: psycopg.Connection[Any], limits: Limits, server: pgserver.Server
              ) -> Iterator[None]:
        self.fired = self.grew = False
        self._armed = (con, time.monotonic() + limits.statement_seconds, con.info.backend_pid,
                       size_bytes(limits.disk), server)
        try:
            yield
        finally:
            self._armed = None


_watchdogs: dict[int, Watchdog] = {}
_watchdog_lock = threading.Lock()


def watchdog() -> Watchdog:
    """This process's watchdog (a forked child starts its own thread)."""
    with _watchdog_lock:
        pid = os.getpid()
        if pid not in _watchdogs:
            _watchdogs[pid] = Watchdog()
        return _watchdogs[pid]
