"""A verdict put into words: the one place that says what a verdict means, in three variants.

- `terminal`: every detail a person at a terminal needs (`arrivalbench grade`, the Inspect
  scorer's explanation).
- `line`: one line, for a gate finding.
- `for_model`: what the repair loop tells a model after the snapshot test, in plain words
  about its own script and the target; the agent passes it through the leakage scan before the
  model sees it.

And `count`, a number with its noun: "1 cell", "2 cells"; and `printable`, artifact text made
safe to show a person.

Only wording lives here; the verdicts themselves are decided by the oracle and the replay.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from arrivalbench.core.task import TaskSpec
from arrivalbench.core.values import JSON, canonical_json
from arrivalbench.core.verdict import Verdict

# C0 and C1 control characters and the bidirectional overrides: an artifact controls the text of
# its errors, identifiers and values, and a terminal obeys ESC[2J or a carriage return in them.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_KEEP_LINES = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str, lines: bool = True) -> str:
    """`text` with every control character written as an escape (`\\x1b`), so that what an
    artifact wrote is shown, never obeyed. Line breaks stay with `lines`; tabs never do."""
    return (_KEEP_LINES if lines else _CONTROL).sub(lambda m: _escape(m.group()), text)


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable_doc(doc: JSON) -> JSON:
    """Every string of a JSON document (keys too) through `printable`."""
    if isinstance(doc, str):
        return printable(doc)
    if isinstance(doc, list | tuple):
        return [printable_doc(d) for d in doc]
    if isinstance(doc, dict):
        return {printable(str(k)): printable_doc(v) for k, v in doc.items()}
    return doc


def _where(detail: Mapping[str, JSON]) -> str:
    """Where an ERROR stopped: "batch 2, statement 3", or "" when it names neither. A verdict
    stores the statement's index; a person counts statements from 1, as aborts and plans do."""
    index = detail.get("statement")
    parts = [f"batch {detail['batch']}" if detail.get("batch") is not None else "",
             f"statement {index + 1}" if isinstance(index, int) else ""]
    return ", ".join(p for p in parts if p)


# What a nondeterministic artifact's verdicts are worth, wherever it is reported.
NONDETERMINISTIC = ("nondeterministic: a second snapshot replay gave a different final table; "
                    "these verdicts may not reproduce (random(), now(), LIMIT without a total "
                    "order?)")


# -- terminal ------------------------------------------------------------------------------------


def terminal(v: Verdict) -> str:
    """Why `v` is not PASS, over as many lines as it takes: the error and where it stopped, or
    the schema problems, row counts and every example row of the difference."""
    return printable(_terminal(v))


def _terminal(v: Verdict) -> str:
    d = v.detail
    if v.status == "ERROR":
        return f"{d['phase']} error at {_where(d) or 'start'}: {d['message']}"
    first = d.get("first_divergence")
    if isinstance(first, dict) and d.get("reconverged"):
        head = f"first divergence after batch {first['batch']} (the final table is right)"
        inner = first.get("diff")
        if isinstance(inner, dict) and inner:
            return head + ":\n" + _terminal(replace(v, status="FAIL", detail=inner))
        return head + f": {first.get('error')}"
    lines = [f"schema: {p['problem']} column {p['column']}" +
             (f" (got {p['got']}, expected {p['expected']})" if "got" in p and "expected" in p
              else "") for p in d.get("schema", [])]
    rows = d.get("rows", {})
    if rows:
        lines.append(f"rows: expected {rows['expected']}, got {rows['got']}")
    counts = d.get("counts", {})
    lines.append(", ".join(f"{n} {k}" for k, n in counts.items() if n))
    for kind, examples in d.get("examples", {}).items():
        for ex in examples:
            key = canonical_json(ex["key"])
            if kind == "changed":
                lines.append(f"  changed {key} {ex['column']}: got {_value(ex['got'])}, "
                             f"expected {_value(ex['expected'])}")
            elif kind == "duplicated":
                lines.append(f"  duplicated {key}: +{ex['copies']} copies")
            else:
                lines.append(f"  {kind} {key}")
    if isinstance(first, dict):
        lines.append(f"first divergence after batch {first['batch']}")
    beyond = d.get("beyond_allowance")
    if isinstance(beyond, dict):
        lines.extend(_beyond(beyond))
    return "\n".join(line for line in lines if line)


def beyond_allowance(v: Verdict) -> bool:
    """Whether every difference of a FAIL is data later than the artifact's own allowance."""
    return v.status == "FAIL" and isinstance(v.detail.get("beyond_allowance"), dict)


def allowance_words(allowance: object) -> str:
    """`lookback 1 day` for a microbatch model's own allowance, else the duration."""
    if isinstance(allowance, dict) and "lookback" in allowance:
        n, size = allowance["lookback"], allowance.get("batch_size", "")
        return f"lookback {n} {size}{'' if n == 1 else 's'}"
    return str(allowance)


def _beyond(beyond: dict[str, JSON]) -> list[str]:
    records = beyond.get("records")
    shown = records if isinstance(records, list) else []
    lines = [f"late, by design: every difference is data later than the model's "
             f"{allowance_words(beyond.get('allowance'))} ({beyond.get('late')} record(s) "
             "first landed too late for it)"]
    return lines + late_lines(shown)


def late_lines(records: list[JSON]) -> list[str]:
    """One indented line per late record of a `beyond_allowance` or an explained plan."""
    return [f"  {r.get('source')} {canonical_json(r.get('key'))}: event {r.get('event_time')}, "
            f"landed {r.get('landed_at')} in batch {r.get('batch')} ({r.get('lateness')} late)"
            for r in records if isinstance(r, dict)]


# -- one line ------------------------------------------------------------------------------------


def line(verdict: Verdict) -> str:
    """One line on why a verdict is not PASS (the gate's findings)."""
    return printable(_line(verdict), lines=False)


def _line(verdict: Verdict) -> str:
    d = verdict.detail
    if verdict.status == "ERROR":
        where = _where(d)
        return f"ERROR ({d.get('phase')}{', ' + where if where else ''}): {d.get('message')}"
    if verdict.status == "PASS":
        return "PASS"
    first = d.get("first_divergence")
    if d.get("reconverged") and isinstance(first, dict):
        # Right at the end, wrong after an earlier run: describe that run's diff.
        inner = replace(verdict, detail=first.get("diff") or {})
        return (f"diverges after batch {first['batch']} (the final table is right): "
                + (_line(inner) if first.get("diff") else f"{first.get('error')}"))
    return "FAIL: " + _diff_line(d)


def diff_line(diff: Mapping[str, JSON], rows: bool = True) -> str:
    """A typed difference in one line: schema problems and counts, the row counts (unless
    `rows` is false), and the first example."""
    return printable(_diff_line(diff, rows), lines=False)


def _diff_line(diff: Mapping[str, JSON], rows: bool = True) -> str:
    parts = [f"{p['problem']} column {p['column']}" for p in diff.get("schema", [])]
    parts += [f"{n} {kind}" for kind, n in diff.get("counts", {}).items() if n]
    text = ", ".join(parts)
    if diff.get("table"):  # a task of several targets names the one that differs
        text = f"table {diff['table']}: {text}"
    counted = diff.get("rows", {})
    if rows and counted:
        text += f" (expected {counted['expected']} rows, got {counted['got']})"
    for kind, examples in diff.get("examples", {}).items():
        example = examples[0]
        text += f"; e.g. {kind} {canonical_json(example.get('key'))}"
        if kind == "changed":
            text += (f" {example['column']}: got {_value(example['got'])}, expected "
                     f"{_value(example['expected'])}")
        break
    return text


# -- for a model ---------------------------------------------------------------------------------


def for_model(spec: TaskSpec, verdict: Verdict, statements: Sequence[str] = ()) -> str | None:
    """What to tell a model about its script after the snapshot test (None after a pass):
    the error in terms of its own statements, or the difference from the expected target.
    Not yet free of hazard words: engine messages can hold some (see `agent.feedback`)."""
    if verdict.status == "PASS":
        return None
    if verdict.status == "ERROR":
        return _error(spec, verdict.detail, statements)
    return _diff(spec, verdict.detail)


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
    """A value as SQL would spell it: numbers bare (decimals arrive as strings: bare when
    `declared` numeric), text quoted, NULL. Every diff a person or a model reads quotes its
    values so: `grade`, `explain`, the gate."""
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
        lines.append(f"- {count(counts['missing'], 'expected row is', 'expected rows are')} "
                     f"missing, for example {_key(first('missing'), types)}")
    if counts.get("extra"):
        lines.append(f"- {count(counts['extra'], 'row is', 'rows are')} not expected, for "
                     f"example {_key(first('extra'), types)}")
    if counts.get("duplicated"):
        example = first("duplicated")
        lines.append(f"- {count(counts['duplicated'], 'row repeats', 'rows repeat')} a key "
                     f"that should appear once, for example {_key(example, types)} appears "
                     f"{int(example.get('copies', 1)) + 1} times")
    if counts.get("changed"):
        shown = [f"{_key(e, types)}: {e.get('column')} is "
                 f"{_value(e.get('got'), types.get(str(e.get('column')), ''))}, expected "
                 f"{_value(e.get('expected'), types.get(str(e.get('column')), ''))}"
                 for e in (examples.get("changed") or [])[:3]]
        lines.append(f"- {count(counts['changed'], 'value differs', 'values differ')}, for "
                     "example " + "; ".join(shown))
    return "\n".join(lines)


# -- counts --------------------------------------------------------------------------------------


def count(n: int, noun: str, plural: str | None = None) -> str:
    """`n noun` with the noun in the plural unless n is 1 (`plural` for irregular nouns)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
