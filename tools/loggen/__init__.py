"""Seeded generators of the built-in tasks' logs, one module per business domain.

Every generator is a pure function of its fixed seed that returns ``{source: [record, ...]}``;
`REGISTRY` maps each task id to its generator. Standard library only.
"""

from __future__ import annotations

from collections.abc import Callable

from loggen import (
    ads,
    analytics,
    attribution,
    baskets,
    billing,
    bitemporal,
    commerce,
    debounce,
    finance,
    gaps_islands,
    hr,
    identity,
    iot,
    logistics,
    reversals,
    rolling_window,
    running_state,
    shifts,
    support,
    top_sellers,
    wallets,
)

Generator = Callable[[], dict[str, list[dict]]]

REGISTRY: dict[str, Generator] = {
    **ads.GENERATORS,
    **analytics.GENERATORS,
    **billing.GENERATORS,
    **commerce.GENERATORS,
    **debounce.GENERATORS,
    **finance.GENERATORS,
    **hr.GENERATORS,
    **iot.GENERATORS,
    **logistics.GENERATORS,
    **rolling_window.GENERATORS,
    **support.GENERATORS,
    **gaps_islands.GENERATORS,
    **running_state.GENERATORS,
    **reversals.GENERATORS,
    **identity.GENERATORS,
    **attribution.GENERATORS,
    **top_sellers.GENERATORS,
    **wallets.GENERATORS,
    **bitemporal.GENERATORS,
    **baskets.GENERATORS,
    **shifts.GENERATORS,
}
