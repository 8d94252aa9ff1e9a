"""DuckDB's own parser (the one the runner splits statements with), for reading a script
without running it: its statements, or where it stops parsing, with a line and a column a
person can find."""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass

import duckdb


class Unparsable(Exception):
    """DuckDB's parser cannot read a script; the message is the parser's."""


_CONNECTIONS: dict[tuple[int, int], duckdb.DuckDBPyConnection] = {}
_LOCK = threading.Lock()


def _parser() -> duckdb.DuckDBPyConnection:
    """An in-memory connection per process and thread (a forked worker or a thread opens its
    own): it only parses, never runs a thing."""
    key = (os.getpid(), threading.get_ident())
    with _LOCK:
        if key not in _CONNECTIONS:
            _CONNECTIONS[key] = duckdb.connect(":memory:")
        return _CONNECTIONS[key]


def parse(script: str) -> list[duckdb.Statement]:
    """The statements of `script` as DuckDB's parser splits them; `Unparsable` when it cannot.
    Text that is not UTF-8 (a lone surrogate) is unparsable too: DuckDB's API refuses it with
    a TypeError, which would read like a bug."""
    try:
        script.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise Unparsable(f"not UTF-8 text at character {exc.start} ({exc.reason})") from None
    try:
        return _parser().extract_statements(script)
    except duckdb.Error as exc:
        raise Unparsable(str(exc)) from None


@dataclass(frozen=True)
class ParseProblem:
    line: int
    column: int
    message: str  # the parser's first line, e.g. `syntax error at or near "hello"`

    def describe(self) -> str:
        return f"line {self.line}, column {self.column}: {self.message}"


_LINE = re.compile(r"^LINE (\d+): (.*)$")


def parse_problem(script: str) -> ParseProblem | None:
    """None when DuckDB parses `script`; otherwise the first place it cannot."""
    try:
        parse(script)
    except Unparsable as exc:
        return _locate(str(exc))
    return None


def _locate(text: str) -> ParseProblem:
    lines = text.splitlines()
    message = lines[0].removeprefix("Parser Error: ") if lines else "does not parse"
    for index, line in enumerate(lines):
        found = _LINE.match(line)
        if found and index + 1 < len(lines) and "^" in lines[index + 1]:
            # The caret line is indented to sit under the quoted line after its `LINE n: `.
            caret = lines[index + 1].index("^") - (len(line) - len(found.group(2)))
            return ParseProblem(int(found.group(1)), caret + 1, message)
    return ParseProblem(1, 1, message)
