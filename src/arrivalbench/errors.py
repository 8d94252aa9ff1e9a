"""The one root exception. Its message is shown to the user as a single line, so it names the
offending value and says what to do."""


class ArrivalBenchError(Exception):
    """Bad input: a task folder, a script, an option. The CLI prints it and exits with status 2."""


class TaskError(ArrivalBenchError):
    """A task folder that does not follow the task format."""


class ScriptError(ArrivalBenchError):
    """A pipeline script that cannot be read."""
