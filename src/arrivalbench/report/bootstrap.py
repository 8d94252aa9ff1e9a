"""A seeded percentile bootstrap over tasks.

The unit of resampling is the task, because every metric is a task mean: tasks are
the sample, cells and seeds within a task are not independent draws. One resample draws T task
indices with replacement from an arm's T tasks (sorted by id) and recomputes every metric of the
arm from the per-task rates of the drawn tasks, so that derived metrics (group means, their
difference) are resampled jointly with their parts.

Randomness: a fresh `numpy.random.Generator(PCG64(seed))` per arm, drawing one (B, T) matrix of
indices. Arms over the same tasks therefore share their resamples (a paired bootstrap), and an
arm's intervals do not depend on which other arms are in the report.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

RESAMPLES = 2000
LEVEL = 0.95
METHOD = (f"percentile bootstrap over tasks: {RESAMPLES} resamples of each arm's tasks with "
          "replacement, numpy Generator(PCG64(seed)), a fresh generator per arm")


def resample_indices(tasks: int, seed: int, resamples: int = RESAMPLES) -> NDArray[np.intp]:
    """A (resamples, tasks) matrix of task indices drawn with replacement."""
    if tasks < 1:
        return np.zeros((resamples, 0), dtype=np.intp)
    rng = np.random.Generator(np.random.PCG64(seed))
    return rng.integers(0, tasks, size=(resamples, tasks)).astype(np.intp)


def interval(samples: NDArray[np.float64], level: float = LEVEL) -> tuple[float, float]:
    """The equal-tailed percentile interval of the finite samples (numpy's default linear
    interpolation). A resample in which the metric is undefined (no eligible task was drawn)
    is left out; when every resample is undefined the interval is (nan, nan)."""
    finite = samples[np.isfinite(samples)]
    if finite.size == 0:
        return float("nan"), float("nan")
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(finite, [tail, 100.0 - tail])
    return float(low), float(high)
