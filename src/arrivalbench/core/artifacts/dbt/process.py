"""The parent's handle on a contained dbt process (`child.py`): start it, ask it to parse or
invoke, serve the statements it sends, and kill it when its wall-clock bound passes.

The bound is kept here, in a process that runs no artifact code: a Jinja loop in the child
cannot hold it up. Killing the child is the only way a hanging render stops; the parent then
removes its scratch folder, and a folder left by a parent that was itself killed is swept by
the next one that starts (`containment.scratch`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from arrivalbench.core import containment

ROOT = "arrivalbench-dbt"
ADDRESS_SPACE = 1024 * 1024 * 1024  # dbt and a project's manifest need ~300 MB
FILE_SIZE = 64 * 1024 * 1024  # the compiled SQL dbt writes under target/
Serve = Callable[[list[Any]], Any]
# What dbt's output may depend on beyond the project: the order of sets it renders, and the
# local time zone (the clock it is given is UTC).
PINNED_ENV = {"PYTHONHASHSEED": "0", "TZ": "UTC"}


class Expired(Exception):
    """The child did not answer before its deadline and was killed."""


class Died(Exception):
    """The child ended while it was asked something (a crash, or a kill from outside)."""


class Child:
    def __init__(self, passed_env: Sequence[str] = ()) -> None:
        self.scratch = containment.scratch(ROOT)
        home = self.scratch / "home"
        home.mkdir()
        ours, theirs = socket.socketpair()
        self._conn = Connection(ours.detach())
        fd = theirs.detach()
        try:
            with (self.scratch / "child.log").open("wb") as log:
                self._process = subprocess.Popen(
                    [sys.executable, "-m", "arrivalbench.core.artifacts.dbt.child", str(fd),
                     str(ADDRESS_SPACE), str(FILE_SIZE)],
                    env={**containment.environment(home, passed_env), **PINNED_ENV}, cwd=home,
                    pass_fds=(fd,), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                    start_new_session=False)
        finally:
            import os

            os.close(fd)

    @property
    def alive(self) -> bool:
        return self._process.poll() is None

    def call(self, kind: str, args: list[str], deadline: float, serve: Serve, *,
             now: dt.datetime | None = None) -> dict[str, Any]:
        """Ask the child `kind` with `args` and serve its statements until it is done; kill it
        at `deadline` (a `time.monotonic()` value) or on any interrupt. `now` is the wall
        clock dbt reads meanwhile (naive UTC)."""
        try:
            self._conn.send((kind, args, None if now is None else now.isoformat()))
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Expired
                if not self._conn.poll(min(left, 0.2)):
                    if not self.alive:
                        raise Died
                    continue
                message = json.loads(self._conn.recv_bytes())
                if message[0] == "done":
                    return dict(message[1])
                answer = serve(message)
                if answer is not None:
                    self._conn.send(answer)
        except (EOFError, OSError):
            self.kill()
            raise Died from None
        except BaseException:  # an expiry, Ctrl-C, SIGTERM's exception: the child goes
            self.kill()
            raise

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self._process.kill()
        self._process.wait()
        with contextlib.suppress(OSError):
            self._conn.close()
        shutil.rmtree(self.scratch, ignore_errors=True)

    @property
    def project(self) -> Path:
        return self.scratch / "project"
