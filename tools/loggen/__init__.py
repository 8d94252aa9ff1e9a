"""Seeded generators of the built-in tasks' logs, one module per business domain.

Every generator is a pure function of its fixed seed that returns ``{source: [record, ...]}``;
`REGISTRY` maps each task id to its generator. Standard library only.
"""

from __future__ import annotations

from collections.abc import Callable

from loggen import ads, analytics, billing, commerce, finance, hr, iot, logistics, support
from loggen.gaps_islands import GENERATORS as GAPS_ISLANDS
from loggen.reversals import GENERATORS as REVERSALS
from loggen.running_state import GENERATORS as RUNNING_STATE

Generator = Callable[[], dict[str, list[dict]]]

REGISTRY: dict[str, Generator] = {
    **ads.GENERATORS,
    **analytics.GENERATORS,
    **billing.GENERATORS,
    **commerce.GENERATORS,
    **finance.GENERATORS,
    **hr.GENERATORS,
    **iot.GENERATORS,
    **logistics.GENERATORS,
    **support.GENERATORS,
    **GAPS_ISLANDS,
    **RUNNING_STATE,
    **REVERSALS,
}
