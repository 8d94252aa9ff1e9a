"""The report's section on explained cells: failing cells counted by the shape of their minimal
plan, and each explained cell's timeline, one collapsed block per cell to open by choice.

Empty (and the report unchanged) when the results file holds no `minimal_plans` table, which
`arrivalbench explain --results` or `run --explain` writes."""

from __future__ import annotations

import html
from collections import Counter
from pathlib import Path

from arrivalbench.core.values import JSON
from arrivalbench.explain.study import read
from arrivalbench.explain.timeline import lines

MAX_CELLS = 200  # timelines shown; the shape counts always cover every explained cell


def shape_counts(docs: list[dict[str, JSON]]) -> list[tuple[str, int]]:
    counts = Counter(str(d["shape"]) for d in docs)
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def section(results: Path | str) -> str:
    docs = read(Path(results))
    if not docs:
        return ""
    rows = "".join(f'<tr><td>{html.escape(name)}</td><td class="num">{count}</td></tr>'
                   for name, count in shape_counts(docs))
    blocks = []
    for doc in docs[:MAX_CELLS]:
        title = (f"{doc['task']} · {doc['schedule']} seed {doc['seed']} · {doc['verdict']} · "
                 f"{doc['shape']} · {str(doc['artifact'])[:19]}")
        body = "\n".join(lines(doc["timeline"])) if doc["timeline"] else \
            "(no timeline: " + str(doc["shape"]) + ")"
        blocks.append(f"<details><summary>{html.escape(title)}</summary>"
                      f"<pre>{html.escape(body)}</pre></details>")
    more = "" if len(docs) <= MAX_CELLS else \
        f'<p class="muted">{len(docs) - MAX_CELLS} more explained cells are not shown.</p>'
    return f"""<section id="minimal-plans">
<h2>Minimal failing plans</h2>
<p class="muted">Each failing artifact shrunk to the smallest delivery plan that fails the same
way, counted by shape; open a cell for its timeline.</p>
<div class="scroll"><table><thead><tr><th>shape</th><th class="num">cells</th></tr></thead>
<tbody>{rows}</tbody></table></div>
{"".join(blocks)}
{more}
</section>
"""
