"""Reading a text file the user named, with one line that says what is wrong with it."""

from __future__ import annotations

from pathlib import Path

from arrivalbench.errors import ArrivalBenchError


def read_text(path: Path, error: type[ArrivalBenchError] = ArrivalBenchError, *,
              what: str | None = None, missing: str | None = None,
              empty: str | None = None, allow_empty: bool = False) -> str:
    """The UTF-8 text of `path`, or `error` with "<path>: <problem>[; <what to do>]".

    `what` names the file expected ("a .sql script") in the hints; `missing` replaces the
    "no such file" line; `empty` is the hint after "empty" (a file of whitespace only is
    empty), unless `allow_empty`."""
    give = f"; give the path of {what}" if what else ""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{path}: {missing or 'no such file' + give}") from None
    except IsADirectoryError:
        raise error(f"{path}: is a folder{give}") from None
    except UnicodeDecodeError:
        raise error(f"{path}: not UTF-8 text{'; save it as UTF-8' if what else ''}") from None
    except OSError as exc:
        raise error(f"{path}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    if not allow_empty and not text.strip():
        raise error(f"{path}: empty{'; ' + empty if empty else ''}")
    return text
