"""The leakage scan: hazard vocabulary, word boundaries, inflections and spellings."""

from __future__ import annotations

import pytest

from arrivalbench.core.task import builtin_ids, load_spec
from arrivalbench.corpus import leakage
from arrivalbench.corpus.leakage import VOCABULARY, scan
from arrivalbench.corpus.prompts import CONTRACT

# One phrase per concept of the issue, in the spellings and inflections people write.
LEAKS = {
    "duplicates": ["duplicate", "Duplicates", "duplicated", "duplicating", "duplication",
                   "dedup", "dedupe", "deduped", "deduping", "de-dup", "de-duplicated",
                   "deduplication", "dupes", "double-counted", "double counting"],
    "idempotency": ["idempotent", "idempotency", "Idempotence", "idempotently",
                    "non-idempotent"],
    "exactly-once": ["exactly-once", "exactly once", "at-least-once", "at least once",
                     "at most once"],
    "lateness": ["late", "Late", "lateness", "late-arriving", "late arrivals", "belated",
                 "tardy"],
    "out-of-order": ["out of order", "out-of-order", "Out_Of_Order", "out of sequence",
                     "reorder", "reordered", "re-ordering", "unordered"],
    "retries and crashes": ["retry", "retries", "retried", "re-trying", "crash", "crashes",
                            "crashed", "rerun", "re-run", "reran", "re-execute"],
    "backfill": ["backfill", "Backfills", "backfilled", "back-filling", "back fill"],
    "replay and redelivery": ["replay", "replayed", "replaying", "redeliver", "redelivery",
                              "re-delivered", "redeliveries", "resend", "re-sent",
                              "retransmission"],
    "watermarks": ["watermark", "watermarks", "water-mark", "high-water mark",
                   "high water mark", "low-watermark"],
    "schema evolution": ["schema evolution", "schema changes", "schema drift",
                         "schema migration", "evolving schema", "new columns",
                         "new column", "extra column", "additional columns"],
}

# Ordinary words that share letters with the vocabulary: a word-boundary scan leaves them alone.
CLEAN = ("Later that day the latest plate of chocolate was related, translated and "
         "collated. Orders, preorders and pre-order items; represent the present entry; "
         "retrieve retrieved data; Dupont's duplex; a playlist on display; "
         "deliver, delivery, delivered; water, marks, high tide; "
         "schemas and columns; evolution of the order book; once or twice, exactly one row.")


@pytest.mark.parametrize(("concept", "phrase"),
                         [(c, p) for c, phrases in LEAKS.items() for p in phrases])
def test_every_spelling_is_caught(concept: str, phrase: str) -> None:
    leaks = scan(f"Please note: {phrase} happens sometimes.")
    assert [leak.concept for leak in leaks] == [concept], phrase
    assert leaks[0].word.lower() == phrase.lower()


def test_the_vocabulary_covers_every_concept_of_the_issue() -> None:
    assert set(VOCABULARY) == set(LEAKS)


def test_ordinary_words_are_not_hazard_words() -> None:
    assert scan(CLEAN) == [], [leak.describe() for leak in scan(CLEAN)]


def test_a_leak_names_the_line_and_the_word_as_written() -> None:
    text = "First line.\nSecond line: data may come LATE.\n"
    (leak,) = scan(text)
    assert (leak.line, leak.word, leak.concept) == (2, "LATE", "lateness")
    assert leak.context == "Second line: data may come LATE."
    assert "'LATE' (lateness) on line 2" in leak.describe()


def test_overlapping_matches_report_the_longest_once() -> None:
    leaks = scan("late-arriving records")
    assert len(leaks) == 1


def test_the_scan_has_no_exceptions() -> None:
    assert scan(CONTRACT) == []
    assert not hasattr(leakage, "ALLOWED")
    # the contract's former wording is caught like any other text
    old = "One database persists across all runs of one replay. Never a crash of the harness."
    assert [leak.word for leak in scan(old)] == ["replay", "crash"]


@pytest.mark.parametrize("task_id", builtin_ids())
def test_builtin_titles_and_tickets_are_clean(task_id: str) -> None:
    spec = load_spec(task_id)
    for text in (spec.title, spec.ticket):
        assert scan(text) == [], [leak.describe() for leak in scan(text)]
