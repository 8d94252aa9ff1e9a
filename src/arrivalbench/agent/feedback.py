"""What the repair loop tells the model after a turn.

The execution error or the typed diff of the snapshot test, in plain words, and never a hazard
word: the engine's own messages can hold one ("Duplicate key ... violates primary key
constraint"), so every text goes through the leakage scan and each word it finds is replaced by
a neutral one before the model sees it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from arrivalbench import words
from arrivalbench.agent.extract import Problem
from arrivalbench.core.task import TaskSpec
from arrivalbench.core.verdict import Verdict
from arrivalbench.corpus import leakage
from arrivalbench.corpus.prompts import REPLY

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


def snapshot(spec: TaskSpec, verdict: Verdict, statements: Sequence[str] = ()) -> str | None:
    """What to tell the model after the snapshot test; None after a pass."""
    body = words.for_model(spec, verdict, statements)
    return None if body is None else neutral(f"{body}\n\n{FIX}")
