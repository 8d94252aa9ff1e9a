"""The timeline of a plan: per batch, what was delivered, where the run stopped, and how the
target compared with the reference after the run."""

from __future__ import annotations

from collections.abc import Sequence

from arrivalbench import words
from arrivalbench.core.checkpoints import Checked
from arrivalbench.core.log import load_log
from arrivalbench.core.plans import record_key
from arrivalbench.core.schedules import Ref, Schedule
from arrivalbench.core.task import TaskSpec
from arrivalbench.core.values import JSON


def timeline(spec: TaskSpec, plan: Schedule, checked: Checked, statements: Sequence[str]
             ) -> list[dict[str, JSON]]:
    log = load_log(spec)
    checks = {c.batch: c for c in checked.checks}
    failure = checked.outcome.failure
    seen: set[Ref] = set()
    out: list[dict[str, JSON]] = []
    for number, batch in enumerate(plan.batches):
        records: list[JSON] = []
        for ref in batch.records:
            records.append({"source": ref[0], "key": record_key(spec, log, ref),
                            "repeat": ref in seen})
            seen.add(ref)
        abort: JSON = None
        k = batch.abort_after(len(statements)) if batch.aborted else None
        if k is not None:
            abort = {"after_statement": k, "of": len(statements),
                     "statement": _first_line(statements[k - 1]) if 0 < k <= len(statements)
                     else ""}
        check = checks.get(number)
        after: JSON
        if failure is not None and failure.batch == number:
            after = {"error": {"phase": failure.phase, "statement": failure.statement,
                               "message": failure.message}}
        elif check is None:
            after = None  # aborted (or never reached): the target is not judged
        else:
            after = check.document()
            after.pop("batch")
        out.append({"batch": number, "records": records, "abort": abort,
                    "evolution": plan.evolution_from == number and spec.evolution is not None,
                    "after": after})
    return out


def _first_line(statement: str) -> str:
    return next((line.strip() for line in statement.splitlines() if line.strip()), "")


def lines(entries: Sequence[dict[str, JSON]]) -> list[str]:
    """The timeline as text, one block per batch."""
    from arrivalbench.core.values import canonical_json

    text: list[str] = []
    for e in entries:
        keys = [canonical_json(r["key"]) + (" (again)" if r["repeat"] else "")
                for r in e["records"]]
        head = f"batch {e['batch']}: " + (", ".join(keys) if keys else "(no records)")
        if e["evolution"]:
            head += "  [the evolution column appears]"
        text.append(head)
        if e["abort"] is not None:
            a = e["abort"]
            text.append(f"  aborted after statement {a['after_statement']} of {a['of']}: "
                        f"{a['statement']}")
        after = e["after"]
        if after is None:
            text.append("  target not judged (the run did not complete)")
        elif "error" in after and isinstance(after["error"], dict):
            err = after["error"]
            text.append(f"  ERROR ({err['phase']}): {err['message']}")
        elif "error" in after:
            text.append(f"  target unreadable: {after['error']}")
        elif not after.get("diff"):
            text.append("  target equals the reference over the records delivered so far")
        else:
            text.append("  target differs: " + diff_line(after["diff"]))
    return text


def diff_line(diff: dict[str, JSON]) -> str:
    return words.diff_line(diff, rows=False)
