"""A dbt project read as data: the files dbt may read, checked, digested and copied.

A project is untrusted input. Its folder may hold links (to `/etc/passwd`, to `/dev/zero`, to
`..`), devices and pipes, and its `dbt_project.yml` may point dbt at folders outside it. None of
that is followed: every file is a regular file inside the project, every `*-paths` entry is a
relative path that stays inside it, and what is digested is exactly what is copied, which is
exactly what dbt is given.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import yaml

from arrivalbench.errors import ArrivalBenchError

# What dbt writes, never reads; hidden files and folders are never read either.
SKIPPED = frozenset({"target", "logs", "dbt_packages_cache", "__pycache__"})
# A project is SQL, YAML and Jinja: far below this. Above it, something is being smuggled in.
MAX_BYTES = 256 * 1024 * 1024
# The dbt_project.yml keys that name folders dbt reads (a list each) or writes (one path).
PATH_LISTS = ("model-paths", "seed-paths", "test-paths", "analysis-paths", "macro-paths",
              "snapshot-paths", "docs-paths", "asset-paths", "function-paths")
PATH_ONE = ("packages-install-path", "target-path", "log-path")


class DbtError(ArrivalBenchError):
    """A dbt project that cannot be graded as it stands."""


@dataclass(frozen=True)
class Files:
    """The regular files of a project, by path relative to it, with their bytes and digest.

    Held in memory: what is digested is exactly what a contained child is given, wherever it
    runs (a worker on another machine gets the bytes, not a path)."""

    origin: str  # where the files were read, for messages
    content: tuple[tuple[str, bytes], ...]
    digest: str
    header: str = ""  # hashed first: what else decides what dbt does with the files

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(rel for rel, _data in self.content)

    def file(self, rel: str) -> bytes | None:
        return next((data for path, data in self.content if path == rel), None)


def _refuse(path: Path, what: str) -> DbtError:
    return DbtError(f"{path}: {what}; a dbt project is read as plain files inside its "
                            "folder (replace it with the file itself, or remove it)")


def walk(root: Path) -> list[str]:
    """The relative paths of the project's regular files, never following a link."""
    found: list[str] = []
    for folder, dirs, names in os.walk(root, followlinks=False):
        here = Path(folder)
        keep = []
        for name in sorted(dirs):
            if name.startswith(".") or name in SKIPPED:
                continue
            if os.path.islink(here / name):
                raise _refuse(here / name, "a symbolic link")
            keep.append(name)
        dirs[:] = keep
        for name in sorted(names):
            if name.startswith(".") or name in SKIPPED:
                continue
            path = here / name
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                raise _refuse(path, "a symbolic link")
            if not stat.S_ISREG(mode):
                raise _refuse(path, "not a regular file (a device, pipe or socket)")
            found.append(path.relative_to(root).as_posix())
    return sorted(found)


def check_paths(config_path: str, text: bytes | None) -> None:
    """Every folder `dbt_project.yml` (the bytes `text`) names is relative and stays inside
    the project."""
    try:
        config = yaml.safe_load((text or b"").decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise DbtError(f"{config_path}: cannot be read as YAML "
                       f"({' '.join(str(exc).split())[:120]}); fix the file") from None
    if not isinstance(config, dict):
        raise DbtError(f"{config_path}: is not a mapping of settings; fix the file")
    for key in (*PATH_LISTS, *PATH_ONE):
        value = config.get(key)
        if value is None:
            continue
        entries = [value] if key in PATH_ONE or isinstance(value, str) else value
        if not isinstance(entries, list):
            raise DbtError(f"{config_path}: {key} is {value!r}, not a list of folders; "
                           "fix the file")
        for entry in entries:
            inside(entry, f"{config_path}: {key} entry")


def inside(entry: object, what: str) -> None:
    """`entry`, a path a project names, is relative and never leaves the project."""
    if not isinstance(entry, str) or not entry.strip():
        raise DbtError(f"{what} {entry!r} is not a folder name; fix it")
    pure = PurePosixPath(entry.replace("\\", "/"))
    depth = 0
    for part in pure.parts:
        depth += -1 if part == ".." else 0 if part == "." else 1
        if depth < 0:
            break
    if pure.is_absolute() or entry.startswith("~") or depth < 0 or ":" in pure.parts[0]:
        raise DbtError(f"{what} {entry!r} leaves the project; every path a project "
                               "names is relative and inside its folder")


def read(root: Path, header: str = "") -> Files:
    """The project's files, checked, with the digest of `header`, their names and bytes. Each
    file is opened without following links and must still be a regular file when read."""
    content = []
    total = 0
    for rel in walk(root):
        source = root / rel
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise _refuse(source, "not a regular file")
            data = handle.read(MAX_BYTES + 1)
        total += len(data)
        if total > MAX_BYTES:
            raise DbtError(f"{root}: holds more than {MAX_BYTES // 2**20} MB of files; "
                           "a dbt project graded here is SQL, YAML and Jinja")
        content.append((rel, data))
    return of(str(root), tuple(content), header)


def of(origin: str, content: tuple[tuple[str, bytes], ...], header: str = "") -> Files:
    """Files from their bytes: every path relative and inside the project, and every folder
    its `dbt_project.yml` names inside it too."""
    h = hashlib.sha256()
    h.update(header.encode())
    for rel, data in content:
        inside(rel, f"{origin}: file")
        h.update(f"{rel} {len(data)}\n".encode())
        h.update(data)
    found = Files(origin, content, "sha256:" + h.hexdigest(), header)
    check_paths(f"{origin}/dbt_project.yml", found.file("dbt_project.yml"))
    return found


def copy(files: Files, into: Path) -> None:
    """Write exactly the digested files into `into`."""
    for rel, data in files.content:
        target = into / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
