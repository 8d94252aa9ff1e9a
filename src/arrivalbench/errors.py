"""The two kinds of failure the harness tells apart.

`ArrivalBenchError` is bad input: its message is shown to the user as a single line, so it
names the offending value and says what to do, and the command exits with status 2. Anything
else that escapes is a bug in arrivalbench: the command shows its traceback, says it is a bug
and where to report it, and exits with status 3 (1 is kept for verdicts that found
something). Messages name values, never command-line flags: the same functions serve the CLI,
Inspect and Python callers.
"""

from collections.abc import Iterable

# The prefix of every warning on standard error, from any layer.
WARNING = "arrivalbench: warning: "

# Where a bug is reported; printed under the traceback of an internal error.
REPORT_BUGS = ("the ArrivalBench issue tracker, with the command line and the traceback above")


class ArrivalBenchError(Exception):
    """Bad input: a task folder, a script, an option. The CLI prints it and exits with status 2."""


class TaskError(ArrivalBenchError):
    """A task folder that does not follow the task format."""


class ScriptError(ArrivalBenchError):
    """A pipeline script that cannot be read."""


def did_you_mean(text: str, choices: Iterable[str]) -> str:
    """"did you mean a or b? " for the names close to a misspelt `text`, else "": the one
    suggestion every name a user types (a task id, a schedule) gets."""
    import difflib

    close = difflib.get_close_matches(text, list(choices), n=3, cutoff=0.5)
    return f"did you mean {' or '.join(close)}? " if close else ""


def missing_extra(feature: str, extra: str, module: str | None = None) -> ArrivalBenchError:
    """The error for an optional part of arrivalbench that is not installed."""
    what = f" ({module} is missing)" if module else ""
    return ArrivalBenchError(f"{feature} needs the optional extra '{extra}'{what}; "
                             f"pip install 'arrivalbench[{extra}]'")


def is_missing(exc: ImportError, *modules: str) -> bool:
    """Whether `exc` says one of `modules` (an extra's distribution) is not installed; any other
    ImportError, such as one of arrivalbench's own modules, is a bug and must not read as a
    missing extra."""
    name = exc.name or ""
    return any(name == m or name.startswith(m + ".") for m in modules)


class WorkerError(Exception):
    """A worker process raised while grading (a bug, not bad input). Carries the worker's own
    traceback, which the parent cannot re-raise across processes."""

    def __init__(self, message: str, worker_traceback: str = "") -> None:
        super().__init__(message)
        self.worker_traceback = worker_traceback

    def __str__(self) -> str:
        text = super().__str__()
        if self.worker_traceback:
            text += "\n\nThe worker's traceback:\n" + self.worker_traceback.rstrip()
        return text
