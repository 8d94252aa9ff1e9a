"""The gate's checks on what a task says about itself in task.yaml: its tier, its family and
the idiom of its gold. Reports group by them, so a typo would split a group in two. A built-in
task is held to more than a user's own."""

from __future__ import annotations

from arrivalbench.core.task import BUILTIN_DIR, TIERS, TaskSpec
from arrivalbench.corpus.findings import Finding

IDIOMS: tuple[str, ...] = (
    "anti_join_history",  # anti-join staging into a history table
    "versioned_upsert",  # ON CONFLICT ... DO UPDATE ... WHERE, or MERGE, guarded by version
    "batch_transaction",  # one transaction per batch
    "recompute_from_history",  # keep every record, recompute from a deduplicated history
    "delete_reinsert",  # delete the affected keys of the target and insert them again
)

# The kinds of data problem a built-in task may belong to (`family:` in task.yaml). The last two
# lines are families only the hard tier has: problems whose correct maintenance needs state
# beyond a keyed upsert.
FAMILIES: tuple[str, ...] = (
    "aggregation", "attribution", "cleaning", "current_state", "distinct_count", "enrichment",
    "funnel", "milestones", "running_state", "sequencing", "sessionization", "top_k",
    "bitemporal_history", "chain_dedup", "gaps_and_islands", "identity_stitching",
    "retraction_aggregates", "reversals", "rolling_windows",
)


def is_builtin(spec: TaskSpec) -> bool:
    """Whether `spec` is a task of the built-in corpus: its folder is one of the package's
    own, not a copy or a user's folder elsewhere."""
    return spec.path.resolve().parent == BUILTIN_DIR.resolve()


def idiom(spec: TaskSpec) -> list[Finding]:
    if spec.gold_idiom is None or spec.gold_idiom in IDIOMS:
        return []
    return [Finding(spec.id, "idiom", f"gold_idiom {spec.gold_idiom!r} is not one of "
                                      f"{', '.join(IDIOMS)}")]


def tier(spec: TaskSpec) -> list[Finding]:
    """A built-in task must say which tier and family it belongs to: the reports split by
    them, and a task that silently defaulted would land in the paper's core figures."""
    if not is_builtin(spec):
        return []
    findings = []
    if not spec.tier_declared:
        findings.append(Finding(spec.id, "tier", f"task.yaml names no tier; add tier: one of "
                                f"{', '.join(TIERS)}"))
    if spec.family not in FAMILIES:
        given = "names no family" if spec.family is None else f"family {spec.family!r} is unknown"
        findings.append(Finding(spec.id, "tier", f"task.yaml {given}; add family: one of "
                                f"{', '.join(FAMILIES)}"))
    return findings
