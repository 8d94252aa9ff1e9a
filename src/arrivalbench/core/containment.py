"""Process containment for what runs an artifact's own code outside an engine (dbt's Jinja):
an environment reduced to an allowlist, address-space and file-size limits, a scratch folder
named after its owner, and the sweep of scratch folders whose owner is gone.

A scratch folder is `<tmp>/<root>/<pid>-<start>-<random>`, the start time telling a live owner
from a recycled pid: a folder whose owner is no longer running was left by a grader killed
without notice (SIGKILL), and the next one to start removes it. The PostgreSQL engine's server
folders follow the same naming (engine/pgserver.py).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

# What a child needs to start Python and read text, and nothing that could hold a secret.
ALLOWED_ENV = ("PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ",
               "PYTHONPATH", "PYTHONHASHSEED", "VIRTUAL_ENV", "SYSTEMROOT")


def environment(scratch: Path, passed: Iterable[str] = (),
                source: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a contained child: the allowlist, the variables a user passed by
    name, and temporary and home folders inside `scratch`."""
    source = os.environ if source is None else source
    names = (*ALLOWED_ENV, *passed)
    env = {name: source[name] for name in names if name in source}
    for name in ("TMPDIR", "TEMP", "TMP", "HOME"):
        env[name] = str(scratch)
    return env


def limit_self(address_space: int | None, file_size: int | None) -> None:
    """Bound this process (a child, before it runs anything it was given): allocations past
    `address_space` bytes of data fail (a MemoryError, not a machine in swap), and no file it
    writes grows past `file_size` bytes. Also dies with its parent, however that one ends."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on a POSIX system
        return
    for kind, value in ((resource.RLIMIT_DATA, address_space),
                        (resource.RLIMIT_FSIZE, file_size)):
        if value is not None:
            _soft, hard = resource.getrlimit(kind)
            cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(kind, (cap, cap))
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            import ctypes
            import signal

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _start_time(pid: int) -> int | None:
    """When process `pid` started (clock ticks since boot on Linux), or None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return int(stat.rsplit(")", 1)[1].split()[19])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, IndexError):
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    return 0  # alive, start unknown (not Linux)


def owner_alive(name: str) -> bool:
    """Whether the process a scratch folder is named after (`<pid>-<start>-<random>`) runs."""
    try:
        pid, started, _ = name.split("-", 2)
        return _start_time(int(pid)) == int(started)
    except ValueError:
        return False


def root(name: str) -> Path:
    found = Path(tempfile.gettempdir()) / name
    found.mkdir(exist_ok=True)
    return found


def sweep(root_name: str, before: Callable[[Path], None] | None = None) -> list[Path]:
    """Remove every scratch folder under `root_name` whose owner is gone (`before` first)."""
    removed = []
    for path in sorted(root(root_name).iterdir()):
        if path.is_dir() and not owner_alive(path.name):
            if before is not None:
                before(path)
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def scratch(root_name: str) -> Path:
    """A new scratch folder owned by this process, after sweeping the orphans of dead ones."""
    sweep(root_name)
    pid = os.getpid()
    path = root(root_name) / f"{pid}-{_start_time(pid) or 0}-{secrets.token_hex(4)}"
    path.mkdir()
    return path
