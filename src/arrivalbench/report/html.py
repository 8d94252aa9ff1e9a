"""report.html: one self-contained page. Inline CSS and SVG, no script, no external resource of
any kind (not even a favicon request), a layout that reads on a phone: tables scroll sideways
inside their own box with the arm column pinned, figures scale to the width of the screen."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from typing import Any

from arrivalbench.report.definitions import FEW_TASKS, MARK, few, shown
from arrivalbench.report.figures import Chart, inline
from arrivalbench.report.markdown import engines_note, left_out
from arrivalbench.report.tables import DASH, Table, cell_text, fmt_number

CSS = """
:root { color-scheme: light; --fg: #1d2330; --muted: #5b6474; --line: #d9dee7;
        --pass: #007a5a; --fail: #b34700; --bg: #ffffff; --head: #f3f5f9; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
body { margin: 0 auto; max-width: 68rem; padding: 1rem; color: var(--fg); background: var(--bg);
       font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
h1 { font-size: 1.5rem; margin: 0.2rem 0 0.6rem; }
h2 { font-size: 1.15rem; margin: 2rem 0 0.4rem; border-bottom: 1px solid var(--line); }
h3 { font-size: 1rem; margin: 1.2rem 0 0.3rem; }
p, li { max-width: 48rem; }
.muted, figcaption, .caption { color: var(--muted); font-size: 0.88rem; }
code { font: 0.85em ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
       background: var(--head); padding: 0 0.2em; border-radius: 3px; overflow-wrap: anywhere; }
.scroll { overflow-x: auto; -webkit-overflow-scrolling: touch; border: 1px solid var(--line);
          border-radius: 6px; margin: 0.4rem 0; }
table { border-collapse: collapse; font-size: 0.85rem; min-width: 100%; }
th, td { padding: 0.35rem 0.55rem; border-bottom: 1px solid var(--line); vertical-align: top;
         white-space: nowrap; }
th { background: var(--head); text-align: left; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
th:first-child, td:first-child { position: sticky; left: 0; background: var(--bg);
                                 border-right: 1px solid var(--line); }
th:first-child { background: var(--head); }
.v { font-weight: 600; display: block; }
.ci { color: var(--muted); font-size: 0.78rem; display: block; }
.none { color: var(--muted); }
a { color: #0b5cad; }
figure { margin: 1rem 0 1.6rem; }
figure svg { display: block; width: 100%; max-width: 44rem; height: auto; }
nav ul { padding-left: 1.1rem; columns: 2 12rem; }
@media (max-width: 40rem) { body { padding: 0.6rem; font-size: 14px; }
                            th, td { padding: 0.3rem 0.4rem; } }
"""


def _text(text: str) -> str:
    """Escape, then the little Markdown the captions use: `code` and **bold**."""
    out = html.escape(text, quote=True)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", out)


def _cell(column_kind: str, text: str, value: Any) -> str:
    if column_kind == "metric":
        if value["value"] is None:
            return (f'<td class="num"><span class="none">{DASH}</span>'
                    f'<span class="ci">n={value["n"]}</span></td>')
        return (f'<td class="num"><span class="v">{fmt_number(value["value"])}</span>'
                f'<span class="ci">[{fmt_number(value["low"])}, {fmt_number(value["high"])}] '
                f'n={value["n"]}{few(value)}</span></td>')
    cls = ' class="num"' if column_kind in ("int", "number") else ""
    return f"<td{cls}>{html.escape(text)}</td>"


def table_html(table: Table) -> str:
    parts = [f'<section id="{table.name}">', f"<h2>{html.escape(table.title)}</h2>"]
    if table.caption:
        parts.append(f'<p class="caption">{_text(table.caption)}</p>')
    if not table.rows:
        parts.append(f'<p class="muted"><em>{html.escape(table.empty)}</em></p></section>')
        return "\n".join(parts)
    num = ' class="num"'
    head = "".join(f'<th{"" if c.kind == "text" else num} scope="col">'
                   f"{html.escape(c.label)}</th>" for c in table.columns)
    parts += ['<div class="scroll"><table>', f"<thead><tr>{head}</tr></thead>", "<tbody>"]
    for row in table.rows:
        cells = "".join(_cell(c.kind, cell_text(c, row[c.key]), row[c.key])
                        for c in table.columns)
        parts.append(f"<tr>{cells}</tr>")
    parts += ["</tbody></table></div>",
              f'<p class="muted">CSV: <a href="{table.name}.csv">{table.name}.csv</a></p>',
              "</section>"]
    return "\n".join(parts)


def render(doc: Mapping[str, Any], tables: Sequence[Table], charts: Sequence[Chart],
           method: str, verdicts: int, extra: str = "") -> str:
    arms = ", ".join(f"<code>{html.escape(a)}</code>" for a in doc["arms"])
    links = [(t.name, t.title) for t in tables]
    links[1:1] = [("figures", "Figures")]
    links.append(("definitions", "Definitions"))
    nav = "".join(f'<li><a href="#{name}">{html.escape(title)}</a></li>' for name, title in links)
    figures = "\n".join(
        f'<figure id="figure-{c.name}"><h3>{html.escape(c.title)}</h3>\n'
        f"{inline(c.svg, c.title, c.name)}\n<figcaption>{_text(c.caption)}</figcaption></figure>"
        for c in charts)
    definitions = "".join(f"<li><strong>{html.escape(term)}</strong>: {_text(text)}</li>"
                          for term, text in shown(doc))
    skipped = f'<p>{_text(left_out(doc))}</p>' if left_out(doc) else ""
    if engines_note(doc):
        skipped += f'\n<p>{_text(engines_note(doc))}</p>'
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ArrivalBench report</title>
<link rel="icon" href="data:,">
<style>{CSS}</style>
</head>
<body>
<header>
<h1>ArrivalBench report</h1>
<p>Arms: {arms}. Verdict records used: {verdicts}, digest
<code>{html.escape(doc["results_digest"])}</code>.</p>
<p class="muted">Intervals: 95% {html.escape(method)}; seed {doc["seed"]}. A resample in which a
metric is undefined (no eligible task drawn) is left out of that metric's percentiles.
{MARK} marks an interval that rests on fewer than {FEW_TASKS} tasks.</p>
{skipped}
<nav><ul>{nav}</ul></nav>
</header>
<main>
{chr(10).join(table_html(t) for t in tables[:1])}
<section id="figures">
<h2>Figures</h2>
{figures}
</section>
{chr(10).join(table_html(t) for t in tables[1:])}
{extra}<section id="definitions">
<h2>Definitions</h2>
<ul>{definitions}</ul>
</section>
</main>
</body>
</html>
"""
