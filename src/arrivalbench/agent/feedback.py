"""What the repair loop tells the model after a turn (DESIGN §7).

The execution error or the typed diff of the snapshot test, in plain words, and never a hazard
word: the engine's own messages can hold one ("Duplicate key ... violates primary key
constraint"), so every text goes through the leakage scan and each word it finds is replaced by
a neutral one before the model sees it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from arrivalbench import leakage
from arrivalbench.agent.extract import Problem
from arrivalbench.prompts import REPLY
from arrivalbench.task import TaskSpec
from arrivalbench.values import JSON, canonical_json
from arrivalbench.verdict import Verdict

FIX = "Fix the script and reply with the complete corrected pipeline in a single ```sql block."

# The neutral word for each concept of the leakage vocabulary.
NEUTRAL: dict[str, str] = {
    "duplicates": "repeated",
    "idempotency": "repeatable",
    "exactly-once": "once",
    "lateness": "delayed",
    "out-of-order": "unsorted",
    "retries and crashes": "failure",
    "backfill": "bulk load",
    "replay and redelivery": "run",
    "watermarks": "marker",
    "schema evolution": "schema difference",
}


def neutral(text: str) -> str:
    """`text` with every word of hazard vocabulary replaced by a neutral one."""
    leaks = leakage.scan(text)
    if not leaks:
        return text
    out: list[str] = []
    position = 0
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    for leak in leaks:
        begin = text.find(leak.word, max(position, starts[leak.line - 1]))
        if begin < 0:
            continue
        word = NEUTRAL.get(leak.concept, "...")
        if leak.word[:1].isupper():
            word = word[:1].upper() + word[1:]
        out.append(text[position:begin])
        head, *rest = re.split(r"(?=[\s_-])", leak.word, maxsplit=1)
        if rest and leakage.scan(head):  # "late records": only the hazard word goes
            out.append(word + rest[0])
        else:
            out.append(word)
        position = begin + len(leak.word)
    out.append(text[position:])
    result = "".join(out)
    # Anything the replacement could not place is masked outright.
    for leak in leakage.scan(result):
        result = re.sub(re.escape(leak.word), "...", result)
    return result


def no_script(problem: Problem) -> str:
    if problem == "token_cap":
        return ("Your reply was cut off at the output token limit before the script was "
                f"complete. {REPLY} Keep the reply shorter: the script alone is enough.")
    return f"Your reply did not contain a SQL script. {REPLY}"


def _statement(statements: Sequence[str], index: JSON) -> str:
    if not isinstance(index, int):
        return "the script"
    text = ""
    if 0 <= index < len(statements):
        words = " ".join(statements[index].split())
        text = f" (`{words[:80]}{'...' if len(words) > 80 else ''}`)"
    return f"statement {index + 1}{text}"


def _error(spec: TaskSpec, detail: Mapping[str, JSON], statements: Sequence[str]) -> str:
    phase, message = detail.get("phase"), str(detail.get("message", ""))
    where = _statement(statements, detail.get("statement"))
    if phase == "timeout":
        return f"Your script failed on the test batch: {where} was stopped at the time limit."
    if phase == "memory":
        return (f"Your script failed on the test batch: {where} ran out of memory "
                f"({message}).")
    if phase == "sandbox":
        return (f"Your script was refused: {message}. The pipeline may not touch files, the "
                "network or extensions, and may not change settings.")
    if phase == "read-target":
        if "does not exist" in message:
            return (f"Your script ran, but afterwards `main.{spec.target.name}` does not "
                    "exist.")
        return f"Your script ran, but `main.{spec.target.name}` could not be read: {message}"
    if phase == "load":
        return f"The test batch could not be loaded before your script ran: {message}"
    return f"Your script failed on the test batch: {where} raised an error: {message}"


_NUMERIC = re.compile(r"^(?:TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|U\w*INT|FLOAT|REAL|DOUBLE|"
                      r"DECIMAL|NUMERIC)\b", re.IGNORECASE)


def _value(value: JSON, declared: str = "") -> str:
    """A value as SQL would spell it: numbers bare (decimals arrive as strings), text quoted."""
    if value is None:
        return "NULL"
    if isinstance(value, str) and not _NUMERIC.match(declared):
        return "'" + value.replace("'", "''") + "'"
    return value if isinstance(value, str) else canonical_json(value)


def _key(example: Mapping[str, JSON], types: Mapping[str, str]) -> str:
    key = example.get("key", {})
    if isinstance(key, dict):
        return "(" + ", ".join(f"{k}={_value(v, types.get(k, ''))}" for k, v in key.items()) \
            + ")"
    return canonical_json(key)


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _diff(spec: TaskSpec, detail: Mapping[str, JSON]) -> str:
    target = f"`main.{spec.target.name}`"
    rows = detail.get("rows") or {}
    sizes = f" (expected {rows['expected']} rows, got {rows['got']})" if rows else ""
    lines = [f"Your script ran, but {target} differs from the expected result{sizes}:"]
    for problem in detail.get("schema") or []:
        column, kind = problem.get("column"), problem.get("problem")
        if kind == "missing":
            lines.append(f"- column `{column}` is missing (expected {problem.get('expected')})")
        elif kind == "incompatible":
            lines.append(f"- column `{column}` has type {problem.get('got')}, expected "
                         f"{problem.get('expected')}")
        elif kind == "extra":
            lines.append(f"- column `{column}` is not part of the target")
        else:
            lines.append("- column names repeat when case is ignored")
    types = {c.name: c.type for c in spec.target.columns}
    counts: Mapping[str, int] = detail.get("counts") or {}
    examples: Mapping[str, list[dict[str, JSON]]] = detail.get("examples") or {}

    def first(kind: str) -> dict[str, JSON]:
        return (examples.get(kind) or [{}])[0]

    if counts.get("missing"):
        lines.append(f"- {_plural(counts['missing'], 'expected row is', 'expected rows are')} "
                     f"missing, for example {_key(first('missing'), types)}")
    if counts.get("extra"):
        lines.append(f"- {_plural(counts['extra'], 'row is', 'rows are')} not expected, for "
                     f"example {_key(first('extra'), types)}")
    if counts.get("duplicated"):
        example = first("duplicated")
        lines.append(f"- {_plural(counts['duplicated'], 'row repeats', 'rows repeat')} a key "
                     f"that should appear once, for example {_key(example, types)} appears "
                     f"{int(example.get('copies', 1)) + 1} times")
    if counts.get("changed"):
        shown = [f"{_key(e, types)}: {e.get('column')} is "
                 f"{_value(e.get('got'), types.get(str(e.get('column')), ''))}, expected "
                 f"{_value(e.get('expected'), types.get(str(e.get('column')), ''))}"
                 for e in (examples.get("changed") or [])[:3]]
        lines.append(f"- {_plural(counts['changed'], 'value differs', 'values differ')}, for "
                     "example " + "; ".join(shown))
    return "\n".join(lines)


def snapshot(spec: TaskSpec, verdict: Verdict, statements: Sequence[str] = ()) -> str | None:
    """What to tell the model after the snapshot test; None after a pass."""
    if verdict.verdict == "PASS":
        return None
    body = _error(spec, verdict.detail, statements) if verdict.verdict == "ERROR" \
        else _diff(spec, verdict.detail)
    return neutral(f"{body}\n\n{FIX}")
