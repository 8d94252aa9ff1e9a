"""The two kinds of failure the harness tells apart.

`ArrivalBenchError` is bad input: its message is shown to the user as a single line, so it
names the offending value and says what to do, and the command exits with status 2. Anything
else that escapes is a bug in arrivalbench: the command shows its traceback, says it is a bug
and where to report it, and exits with status 3 (1 is kept for verdicts that found
something). Messages name values, never command-line flags: the same functions serve the CLI,
Inspect and Python callers. A message about what a caller passed names each parameter as a
Python caller passes it ("seeds", "sources", "measure"): the subject of a `ParameterError`,
or `mention`ed in any message; the CLI words each as the flag of the command that is running
(`--seeds`, `--source`, `--cost`).
"""

import re
from collections.abc import Callable, Iterable
from typing import Any

# The prefix of every warning on standard error, from any layer.
WARNING = "arrivalbench: warning: "

# Where a bug is reported; printed under the traceback of an internal error.
REPORT_BUGS = ("the ArrivalBench issue tracker, with the command line and the traceback above")


# A parameter named inside a message, between two unit separators (a character no path,
# identifier or message holds): its own name in str(), its flag in the CLI's words.
_MENTION = re.compile("\x1f([A-Za-z_][A-Za-z0-9_]*)\x1f")


def mention(name: str) -> str:
    """A parameter named inside the message of an `ArrivalBenchError`, by the name a Python
    caller passes it as: f"grade it with {mention('engine')} duckdb" reads "grade it with engine
    duckdb" from Python and "grade it with --engine duckdb" from the CLI."""
    return f"\x1f{name}\x1f"


class ArrivalBenchError(Exception):
    """Bad input: a task folder, a script, an option. The CLI prints it and exits with status 2.
    Its message names the parameters it is about by `mention`, never by a flag."""

    def worded(self, name: Callable[[str], str] = str) -> str:
        """The message with every parameter it mentions named by `name` (a parameter's name to
        the words for it: the name itself for Python callers, its flag for the CLI)."""
        return _MENTION.sub(lambda m: name(m.group(1)), super().__str__())

    def __str__(self) -> str:
        return self.worded()


class TaskError(ArrivalBenchError):
    """A task folder that does not follow the task format."""


class ScriptError(ArrivalBenchError):
    """A pipeline script that cannot be read."""


class ParameterError(ArrivalBenchError):
    """Bad input in one parameter a caller passed: `what` is the parameter by the name a Python
    caller passes it as ("seeds", "sources", "measure", "engine"), `value` the offending value
    (None when there is none to show: the parameter is missing, or excluded by another), and
    `fix` what is allowed or what to do (naming other parameters by `mention`).

    str() is "what value: fix" with each parameter by its name ("seeds 0: give a whole number
    of at least 1"); the CLI words each as the flag of the command that is running
    ("--seeds 0: ..."), through `worded`."""

    def __init__(self, what: str, value: object, fix: str) -> None:
        super().__init__(what, value, fix)
        self.what = what
        self.value = value
        self.fix = fix

    def shown(self) -> str:
        """The value as the message shows it."""
        return str(self.value)

    def worded(self, name: Callable[[str], str] = str) -> str:
        head = name(self.what) if self.value is None else f"{name(self.what)} {self.shown()}"
        return f"{head}: {_MENTION.sub(lambda m: name(m.group(1)), self.fix)}"

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled whole (a bounded child raises it to its parent), keyword-only fields too.
        return _restore, (type(self), dict(vars(self)))


def _restore(cls: type[ParameterError], state: dict[str, Any]) -> ParameterError:
    error = cls.__new__(cls)
    Exception.__init__(error, state.get("what"), state.get("value"), state.get("fix"))
    vars(error).update(state)
    return error


class UnknownName(ParameterError):
    """A name outside a closed set (an engine, an executor, a built-in arm, the arms a results
    file holds): the message says what is wrong with it (`problem`, default "unknown"), the
    close names, and every allowed one."""

    def __init__(self, what: str, value: str, allowed: Iterable[str], *,
                 problem: str = "unknown") -> None:
        names = tuple(allowed)
        listed = ", ".join(names) if names else "none"
        super().__init__(what, value, f"{problem}; {did_you_mean(value, names)}give one of "
                                      f"{listed}")
        self.allowed = names
        self.problem = problem

    def shown(self) -> str:
        return repr(self.value)


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
