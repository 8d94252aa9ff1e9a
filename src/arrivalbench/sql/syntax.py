"""Where a script stops parsing, in the words of DuckDB's own parser (the one the runner
splits statements with), with a line and a column a person can find."""

from __future__ import annotations

import re
from dataclasses import dataclass

import duckdb


@dataclass(frozen=True)
class ParseProblem:
    line: int
    column: int
    message: str  # the parser's first line, e.g. `syntax error at or near "hello"`

    def describe(self) -> str:
        return f"line {self.line}, column {self.column}: {self.message}"


_LINE = re.compile(r"^LINE (\d+): (.*)$")


def parse_problem(script: str) -> ParseProblem | None:
    """None when DuckDB parses `script`; otherwise the first place it cannot. Parsing runs no
    statement, so an in-memory connection of its own is safe."""
    con = duckdb.connect(":memory:")
    try:
        con.extract_statements(script)
    except Exception as exc:  # the parser raises more than duckdb.Error on odd input
        return _locate(str(exc))
    finally:
        con.close()
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
