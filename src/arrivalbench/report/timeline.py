"""The report's section on explained cells: failing cells counted by the shape of their minimal
plan, and each explained cell's timeline — in report.html one collapsed block per cell to open
by choice, in report.md one code block per cell.

Empty (and the report unchanged) when the results file holds no `minimal_plans` table, which
`arrivalbench explain --results` or `run --explain` writes. A report of some arms or of one tier
shows the explained cells of its own (task, artifact) pairs only."""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Collection
from pathlib import Path

from arrivalbench.core.values import JSON
from arrivalbench.explain.study import read
from arrivalbench.explain.timeline import lines

MAX_CELLS = 200  # timelines shown; the shape counts always cover every explained cell


def shape_counts(docs: list[dict[str, JSON]]) -> list[tuple[str, int]]:
    counts = Counter(str(d["shape"]) for d in docs)
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def _title(doc: dict[str, JSON]) -> str:
    return (f"{doc['task']} · {doc['schedule']} seed {doc['seed']} · {doc['verdict']} · "
            f"{doc['shape']} · {str(doc['artifact'])[:19]}")


def _body(doc: dict[str, JSON]) -> str:
    return "\n".join(lines(doc["timeline"])) if doc["timeline"] else \
        "(no timeline: " + str(doc["shape"]) + ")"


def _more(docs: list[dict[str, JSON]]) -> str:
    return "" if len(docs) <= MAX_CELLS else \
        f"{len(docs) - MAX_CELLS} more explained cells are not shown."


TITLE = "Minimal failing plans"
LEAD = ("Each failing artifact shrunk to the smallest delivery plan that fails the same way, "
        "counted by shape")


def explained(results: Path | str, cells: Collection[tuple[str, str]]
              ) -> list[dict[str, JSON]]:
    """The explained cells of `results` whose (task, artifact) is among `cells`."""
    return [d for d in read(Path(results)) if (d["task"], d["artifact"]) in cells]


def section(docs: list[dict[str, JSON]]) -> str:
    if not docs:
        return ""
    rows = "".join(f'<tr><td>{html.escape(name)}</td><td class="num">{count}</td></tr>'
                   for name, count in shape_counts(docs))
    blocks = [f"<details><summary>{html.escape(_title(doc))}</summary>"
              f"<pre>{html.escape(_body(doc))}</pre></details>" for doc in docs[:MAX_CELLS]]
    more = f'<p class="muted">{_more(docs)}</p>' if _more(docs) else ""
    return f"""<section id="minimal-plans">
<h2>{TITLE}</h2>
<p class="muted">{LEAD}; open a cell for its timeline.</p>
<div class="scroll"><table><thead><tr><th>shape</th><th class="num">cells</th></tr></thead>
<tbody>{rows}</tbody></table></div>
{"".join(blocks)}
{more}
</section>
"""


def markdown_section(docs: list[dict[str, JSON]]) -> str:
    """The same section for report.md: the shape counts, then each cell's timeline."""
    if not docs:
        return ""
    parts = [f"## {TITLE}", "", f"{LEAD}, then each cell's timeline.", "",
             "| shape | cells |", "| --- | ---: |"]
    parts += [f"| `{name}` | {count} |" for name, count in shape_counts(docs)]
    for doc in docs[:MAX_CELLS]:
        parts += ["", f"### {_title(doc)}", "", "```", _body(doc), "```"]
    if _more(docs):
        parts += ["", _more(docs)]
    return "\n".join(parts) + "\n"
