"""Counts in words: `count(1, "cell")` is "1 cell", `count(2, "cell")` "2 cells"."""

from __future__ import annotations


def count(n: int, noun: str, plural: str | None = None) -> str:
    """`n noun` with the noun in the plural unless n is 1 (`plural` for irregular nouns)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
