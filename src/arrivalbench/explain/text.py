"""An explain document as text for a terminal."""

from __future__ import annotations

from arrivalbench.core.values import JSON
from arrivalbench.explain.timeline import diff_line, lines
from arrivalbench.words import allowance_words, count, late_lines, printable


def describe(doc: dict[str, JSON]) -> list[str]:
    """The document in lines, every control character an artifact put in it escaped."""
    return [printable(line, lines=False) for line in _describe(doc)]


def _describe(doc: dict[str, JSON]) -> list[str]:
    out = [f"{doc['task']}: {doc['schedule']}, seed {doc['seed']}: {doc['verdict']}"]
    if doc["nondeterministic"]:
        out.append("the pipeline is nondeterministic: two replays of the same plan gave "
                   "different final tables (random(), now(), or LIMIT without a total order?); "
                   "nothing was shrunk")
        differing = doc.get("differing") or {}
        out.append("  second replay against the first: " + diff_line(differing))
        return out
    first = doc["first_divergence"]
    if first is not None:
        if "error" in first:
            out.append(f"first divergence: batch {first['batch']}: target unreadable: "
                       f"{first['error']}")
        else:
            out.append(f"first divergence: batch {first['batch']}: " + diff_line(first["diff"]))
        out.append("the table re-converges by the last batch" if first.get("reconverged")
                   else "the table does not re-converge")
    failure = doc["failure"]
    out.append(f"fails as: {failure['kind']} {', '.join(failure['as'])}")
    minimal = doc["minimal"]
    if minimal is not None:
        out.append(f"minimal plan: {count(minimal['records'], 'record')}, "
                   f"{count(minimal['deliveries'], 'delivery', 'deliveries')}, "
                   f"{count(minimal['batches'], 'batch', 'batches')}, "
                   f"{count(minimal['aborts'], 'abort')}; {count(minimal['replays'], 'replay')}; "
                   + ("1-minimal" if minimal["one_minimal"] else
                      "not shown 1-minimal (the budget ran out)"))
        late = minimal.get("late")
        if isinstance(late, dict):
            out.append(f"late in it: {count(late['late'], 'record')} beyond the model's "
                       f"{allowance_words(late['allowance'])}")
            out += late_lines(late["records"])
        out.append("timeline:")
        out += ["  " + line for line in lines(doc["timeline"])] or \
            ["  (no batch: the pipeline fails before any delivery matters)"]
    if doc["repro"]:
        out.append(f"repro: {doc['repro']}")
    return out
