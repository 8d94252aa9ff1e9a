"""The SQL script in a model's reply.

The prompt asks for one ```sql block. What replies actually hold, and what is taken:
- one SQL block: its text;
- several SQL blocks: if one of them holds every statement of the others (a full script next to
  an excerpt of it), that one; otherwise all of them, in order, as one script (a script split
  into parts);
- no fence at all, but DuckDB's parser reads the whole reply as SQL: the whole reply;
- a fence opened and never closed: its text, unless the reply was cut at the token cap, in
  which case the unfinished block is dropped;
- nothing else: no script. Blocks in other languages (```python, ```bash) never count; an
  untagged block counts when it starts with a SQL statement.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from arrivalbench.sql.syntax import Unparsable, parse

Problem = Literal["no_sql", "token_cap"]

_FENCE = re.compile(r"^[ \t]*(```+|~~~+)[ \t]*([\w+.#-]*)[^\n]*\n", re.MULTILINE)
_SQL_TAGS = ("sql", "duckdb", "postgres", "psql", "pgsql", "plsql", "mysql", "sqlite", "tsql",
             "ddl", "dml")
_SQL_START = re.compile(
    r"^\s*(?:--[^\n]*\n\s*|/\*.*?\*/\s*)*"
    r"(?:create|insert|with|select|begin|start|delete|update|merge|drop|alter|truncate|"
    r"commit|from)\b", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class Extraction:
    """The script taken from one reply, or why there is none."""

    script: str | None
    blocks: int  # SQL blocks found
    problem: Problem | None = None


def _is_sql_tag(tag: str) -> bool:
    tag = tag.lower()
    return any(t in tag for t in _SQL_TAGS)


def _blocks(reply: str) -> tuple[list[str], str | None]:
    """The SQL blocks closed in `reply`, and the text of a final SQL block left open."""
    blocks: list[str] = []
    position = 0
    while True:
        opening = _FENCE.search(reply, position)
        if opening is None:
            return blocks, None
        fence, tag = opening.group(1), opening.group(2)
        closing = re.compile(r"^[ \t]*" + re.escape(fence[0]) + "{" + str(len(fence)) +
                             r",}[ \t]*$", re.MULTILINE).search(reply, opening.end())
        body = reply[opening.end():closing.start() if closing else len(reply)]
        is_sql = _is_sql_tag(tag) if tag else bool(_SQL_START.match(body))
        if closing is None:
            return blocks, (body if is_sql and body.strip() else None)
        if is_sql and body.strip():
            blocks.append(body)
        position = closing.end()


def _statements(script: str) -> list[str]:
    return [" ".join(s.split()).lower() for s in script.split(";") if s.strip()]


def _combine(blocks: list[str]) -> str:
    if len(blocks) == 1:
        return blocks[0]
    parts = [_statements(b) for b in blocks]
    for index, block in enumerate(blocks):
        own = set(parts[index])
        if all(set(p) <= own for p in parts):
            return block
    pieces = [b.strip() for b in blocks]
    return "\n\n".join(p if p.endswith(";") else p + ";" for p in pieces) + "\n"


def _parses(text: str) -> bool:
    """DuckDB's own parser (no execution) reads `text` as one or more statements."""
    try:
        return len(parse(text)) > 0
    except Unparsable:
        return False


def extract(reply: str, truncated: bool = False) -> Extraction:
    """The script in `reply`; `truncated` says the reply was cut at the output token cap."""
    blocks, open_block = _blocks(reply)
    if open_block is not None and not truncated:
        blocks.append(open_block)
    if blocks:
        return Extraction(_combine(blocks).strip() + "\n", len(blocks))
    if truncated:
        return Extraction(None, 0, "token_cap")
    if not _FENCE.search(reply) and _SQL_START.match(reply) and _parses(reply):
        return Extraction(reply.strip() + "\n", 0)
    return Extraction(None, 0, "no_sql")


def statements(script: str) -> list[str]:
    """The statements of `script` as DuckDB's parser splits them (the runner's numbering);
    empty when it cannot parse the script."""
    try:
        return [s.query for s in parse(script)]
    except Unparsable:
        return []
