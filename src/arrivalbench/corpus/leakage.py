"""The leakage scan: no unhinted prompt, and no ticket, may name a hazard.

The vocabulary lives here and only here: one entry per concept, each a list of word-boundary
patterns that cover the inflections and the spellings people actually write (`dedup`,
`de-duplicated`, `deduping`; `out of order`, `out-of-order`, `reordered`; `re-delivery`...).
Matching ignores case. Word boundaries keep ordinary words out: `later`, `latest`, `template`,
`plate`, `relate` and `translate` never match `late`; `orders` never matches `reorder`.

There are no exceptions: the execution contract that every prompt quotes is worded so that it
passes the scan like any other text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A separator inside a compound: "out of order", "out-of-order", "out_of_order".
_SEP = r"[\s_-]*"
_SEP1 = r"[\s_-]+"

VOCABULARY: dict[str, tuple[str, ...]] = {
    "duplicates": (
        r"dup(?:e|es|ed|ing|s)?",
        r"duplicat(?:e|es|ed|ing|ion|ions)",
        r"de" + _SEP + r"dup(?:e|es|ed|ing|s)?",
        r"de" + _SEP + r"duplicat(?:e|es|ed|ing|ion|ions)",
        r"double" + _SEP + r"count(?:s|ed|ing)?",
    ),
    "idempotency": (
        r"(?:non" + _SEP + r")?idempot(?:ent|ently|ency|ence)",
    ),
    "exactly-once": (
        r"exactly" + _SEP + r"once",
        r"at" + _SEP + r"least" + _SEP + r"once",
        r"at" + _SEP + r"most" + _SEP + r"once",
    ),
    "lateness": (
        r"late(?:ness)?",
        r"late" + _SEP + r"(?:arriv\w*|comers?|data|records?|events?)",
        r"belated(?:ly)?",
        r"tardy|tardiness",
    ),
    "out-of-order": (
        r"out" + _SEP + r"of" + _SEP + r"(?:order|sequence)",
        r"re" + _SEP + r"order(?:s|ed|ing)?",
        r"(?:un|dis)ordered",
    ),
    "retries and crashes": (
        r"re" + _SEP + r"tr(?:y|ies|ied|ying)",
        r"crash(?:es|ed|ing)?",
        r"re" + _SEP + r"r(?:un|uns|an|unning)",
        r"re" + _SEP + r"execut(?:e|es|ed|ing|ion)",
    ),
    "backfill": (
        r"back" + _SEP + r"fill(?:s|ed|ing)?",
    ),
    "replay and redelivery": (
        r"re" + _SEP + r"play(?:s|ed|ing)?",
        r"re" + _SEP + r"deliver(?:s|ed|ing|y|ies)?",
        r"re" + _SEP + r"sen(?:d|ds|t|ding)",
        r"re" + _SEP + r"transmi(?:t|ts|tted|tting|ssion|ssions)",
    ),
    "watermarks": (
        r"water" + _SEP + r"marks?(?:ing|ed)?",
        r"(?:high|low)" + _SEP + r"water" + _SEP + r"marks?",
    ),
    "schema evolution": (
        r"schemas?" + _SEP1 + r"(?:evol\w*|chang\w*|drift\w*|migrat\w*|updat\w*)",
        r"(?:evolving|changing|drifting)" + _SEP1 + r"schemas?",
        r"new" + _SEP1 + r"(?:columns?|fields?)",
        r"(?:added|extra|additional)" + _SEP1 + r"columns?",
    ),
}

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (concept, re.compile(r"(?<![\w-])(?:" + pattern + r")(?![\w])", re.IGNORECASE))
    for concept, patterns in VOCABULARY.items() for pattern in patterns)


@dataclass(frozen=True)
class Leak:
    concept: str
    word: str  # as written in the text
    line: int  # 1-based
    context: str  # the line, trimmed

    def describe(self) -> str:
        return f"{self.word!r} ({self.concept}) on line {self.line}: {self.context!r}"


def scan(text: str) -> list[Leak]:
    """Every occurrence of hazard vocabulary in `text`, in order of position; where matches
    overlap, the longest one is reported."""
    lines = text.splitlines()
    matches = sorted(((m.start(), -(m.end() - m.start()), concept)
                      for concept, pattern in _PATTERNS for m in pattern.finditer(text)))
    leaks: list[Leak] = []
    end = -1
    for start, negative_length, concept in matches:
        if start < end:
            continue  # inside a longer match already reported
        end = start - negative_length
        line = text.count("\n", 0, start) + 1
        leaks.append(Leak(concept, text[start:end], line, lines[line - 1].strip()[:120]))
    return leaks
