"""The task format (docs/tasks.md): a task folder read into a `TaskSpec`.

`spec` holds the values, `checks` reads task.yaml and a folder into them, `digest` keys a
folder's content, `resolution` finds a task by built-in id or path. Every layer imports the
task format from here.
"""

from arrivalbench.core.task.resolution import (
    BUILTIN_DIR,
    builtin_ids,
    load_spec,
    load_specs,
    resolve,
    select,
    source_of,
)
from arrivalbench.core.task.spec import (
    DEFAULT_BUDGETS,
    DEFAULT_TIER,
    DIFFICULTIES,
    HAZARDS,
    LANDINGS,
    LOG_SUFFIXES,
    MODES,
    TIER_CHOICES,
    TIERS,
    Budget,
    Column,
    Difficulty,
    Evolution,
    Hazard,
    Landing,
    Mode,
    Negative,
    Source,
    Target,
    TaskSpec,
    Tier,
    TierChoice,
    pipeline_file,
)

__all__ = [
    "BUILTIN_DIR",
    "DEFAULT_BUDGETS",
    "DEFAULT_TIER",
    "DIFFICULTIES",
    "HAZARDS",
    "LANDINGS",
    "LOG_SUFFIXES",
    "MODES",
    "TIERS",
    "TIER_CHOICES",
    "Budget",
    "Column",
    "Difficulty",
    "Evolution",
    "Hazard",
    "Landing",
    "Mode",
    "Negative",
    "Source",
    "Target",
    "TaskSpec",
    "Tier",
    "TierChoice",
    "builtin_ids",
    "load_spec",
    "load_specs",
    "pipeline_file",
    "resolve",
    "select",
    "source_of",
]
