"""A PostgreSQL script split into statements, and the statement kinds refused by their words.

The refusals are not a wall: a `DO` block or `EXECUTE` reaches any statement without its words
appearing at the start of one. They only stop a plainly written statement before anything runs,
with a message that says why; what stops the same statement written around them is the replay
role's lack of privileges (see `walls`), and PostgreSQL's own error then says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot.dialects.postgres import Postgres
from sqlglot.errors import TokenError
from sqlglot.tokenizer_core import Token, TokenType

from arrivalbench.core.engine import Failure, normalize_message

_SETTINGS = "changes a setting"
_OUTSIDE = "reaches outside the replay's database"
_OUTLIVES = "outlives the session"
# Refused by their first words. SET also covers SET LOCAL, SET ROLE and SET SESSION.
_REFUSED_FIRST = {
    "COPY": "copies to or from a file or a program",
    "SET": _SETTINGS,
    "RESET": _SETTINGS,
    "LOAD": "loads a library",
    "LISTEN": "signals other sessions",
    "NOTIFY": "signals other sessions",
    "UNLISTEN": "signals other sessions",
    "VACUUM": "maintains the server's storage",
    "CHECKPOINT": "maintains the server's storage",
    "IMPORT": _OUTSIDE,
    "SECURITY": _OUTSIDE,
}
# Refused by their first two words (PREPARE alone is an ordinary prepared statement).
_REFUSED_PAIR = {
    ("PREPARE", "TRANSACTION"): _OUTLIVES,
    ("COMMIT", "PREPARED"): _OUTLIVES,
    ("ROLLBACK", "PREPARED"): _OUTLIVES,
}
# Refused after CREATE, ALTER or DROP (modifiers such as OR REPLACE skipped).
_REFUSED_OBJECT = {
    "SYSTEM": _SETTINGS,
    "EXTENSION": "manages extensions",
    "ROLE": "manages roles",
    "USER": "manages roles",
    "GROUP": "manages roles",
    "DATABASE": "manages databases",
    "TABLESPACE": _OUTSIDE,
    "SUBSCRIPTION": _OUTSIDE,
    "PUBLICATION": _OUTSIDE,
    "SERVER": _OUTSIDE,
    "FOREIGN": _OUTSIDE,
    "LANGUAGE": _OUTSIDE,
    "EVENT": _OUTSIDE,
}
_MODIFIERS = {"OR", "REPLACE", "TRUSTED", "PROCEDURAL", "IF", "EXISTS", "NOT"}


def _refusal(tokens: Sequence[Token]) -> str | None:
    # sqlglot gives some statements as a command and one string of the rest: split it too.
    words = " ".join(t.text for t in tokens[:6]).upper().split()
    if not words:
        return None
    if words[0] in _REFUSED_FIRST:
        return _REFUSED_FIRST[words[0]]
    if tuple(words[:2]) in _REFUSED_PAIR:
        return _REFUSED_PAIR[words[0], words[1]]
    if words[0] in ("CREATE", "ALTER", "DROP"):
        rest = [w for w in words[1:] if w not in _MODIFIERS]
        if rest and rest[0] in _REFUSED_OBJECT:
            return _REFUSED_OBJECT[rest[0]]
    return None


@dataclass(frozen=True)
class Statement:
    query: str  # the statement's own text, without the separating semicolon
    kind: str  # its first word, upper case


class Statements:
    """A script split on the semicolons PostgreSQL's lexer would see (sqlglot's tokenizer with
    the PostgreSQL dialect: quotes, dollar quoting and comments are respected)."""

    def __init__(self, parsed: Sequence[Statement]) -> None:
        self.parsed = list(parsed)

    def __len__(self) -> int:
        return len(self.parsed)


def split(script: str) -> Statements:
    """The statements of `script`, or a `Failure`: phase `run` when it does not tokenize,
    phase `sandbox` (deterministic, before anything runs) for a statement kind refused."""
    try:
        tokens = Postgres().tokenize(script)
    except TokenError as exc:
        raise Failure("run", normalize_message(str(exc)), statement=None) from None
    groups: list[list[Token]] = [[]]
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            groups.append([])
        else:
            groups[-1].append(token)
    parsed: list[Statement] = []
    for group in (g for g in groups if g):
        # A token's start and end are character offsets; its comments precede `start`.
        text = script[group[0].start:group[-1].end + 1]
        reason = _refusal(group)
        if reason is not None:
            words = " ".join(text.split())[:60]
            raise Failure("sandbox", normalize_message(f"statement refused: {words!r} "
                                                       f"{reason}"), statement=len(parsed))
        parsed.append(Statement(text, group[0].text.upper()))
    return Statements(parsed)
