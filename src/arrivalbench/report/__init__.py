"""Reports: metrics.json, report.md, report.html, one CSV per table and the
figures, from a results file.

`write` is the whole pipeline: load (read-only) -> metrics (pure) -> tables and figures ->
files. The same results file gives byte-identical files.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from arrivalbench.core.task import TierChoice
from arrivalbench.core.values import JSON
from arrivalbench.errors import ArrivalBenchError
from arrivalbench.report import document, figures, html, markdown, tables
from arrivalbench.report.bootstrap import METHOD
from arrivalbench.report.load import load, tiers
from arrivalbench.report.metrics import used_verdicts
from arrivalbench.words import printable_doc

DEFAULT_SEED = 0


@dataclass(frozen=True)
class Written:
    """What a report wrote: the metrics document and the paths, in writing order."""

    doc: dict[str, JSON]
    out: Path
    files: tuple[Path, ...]


def metrics_json(doc: JSON) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_tiers(results: Path | str, out: Path | str, arms: Sequence[str] = (),
                seed: int = DEFAULT_SEED, compare: Sequence[str] = (),
                tier: TierChoice = "all") -> list[tuple[str, Written]]:
    """One report per tier, never pooled: a core task and a hard task measure different
    things, so a rate over both would move with the mix. A results file of one tier (or a
    chosen `tier`) gets its report in `out` itself, so the study's report stays where it was;
    several tiers get `out/<tier>/` each."""
    chosen = [tier] if tier != "all" else tiers(results) or ["all"]
    if len(chosen) == 1:
        return [(chosen[0], write(results, out, arms, seed, compare, chosen[0]))]
    return [(t, write(results, Path(out) / t, arms, seed, compare, t)) for t in chosen]


def write(results: Path | str, out: Path | str, arms: Sequence[str] = (),
          seed: int = DEFAULT_SEED, compare: Sequence[str] = (),
          tier: str = "all") -> Written:
    """Read `results` and write the report into the folder `out` (created if missing); with
    `compare` (two arms A, B), the report holds the shift of every metric from A to B too.
    With a `tier`, the report covers that tier's tasks alone."""
    data = load(results, arms, compare, cast(TierChoice, tier))
    doc = document.build(data, seed, compare)
    count = len(used_verdicts(data))
    shown = printable_doc(doc)  # arm names, reasons: text a submission or a model chose
    built = tables.build(shown)
    charts = figures.charts(shown)
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / "figures").mkdir(exist_ok=True)
    except OSError as exc:
        raise ArrivalBenchError(f"report folder {out}: cannot create it ({exc.strerror})") \
            from None
    files: dict[Path, str] = {out / "metrics.json": metrics_json(doc)}
    files |= {out / f"{t.name}.csv": tables.to_csv(t) for t in built}
    files |= {out / "figures" / f"{c.name}.svg": c.svg for c in charts}
    from arrivalbench.report.timeline import explained, markdown_section, section

    docs = explained(results, {(c.task, c.artifact) for c in data.cells if c.artifact})
    files[out / "report.md"] = markdown.render(shown, built, charts, METHOD, count,
                                               markdown_section(docs))
    files[out / "report.html"] = html.render(shown, built, charts, METHOD, count,
                                             section(docs))
    try:
        for name, *_ in figures.FIGURES:  # a figure this report does not have must not linger
            stale = out / "figures" / f"{name}.svg"
            if stale not in files and stale.exists():
                stale.unlink()
        for path, text in files.items():
            path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ArrivalBenchError(f"report folder {out}: cannot write the report ({exc.strerror})") \
            from None
    return Written(doc, out, tuple(files))
