"""analytics."""

from __future__ import annotations

GENERATORS: dict = {}
