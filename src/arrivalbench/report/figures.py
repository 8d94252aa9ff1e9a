"""The report's figures: matplotlib on the Agg canvas, saved as SVG text with stable bytes.

Stable bytes: no pyplot (no global figure state), `svg.hashsalt` fixed per figure (ids differ
between figures, so several can be inlined in one HTML page), no date in the metadata, text kept
as text (`svg.fonttype = none`) so the page's own font draws it.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import matplotlib
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from arrivalbench.core.task import HAZARDS
from arrivalbench.report.definitions import few

COLOURS = {"PASS": "#009E73", "FAIL": "#D55E00", "ERROR": "#E69F00"}  # Okabe-Ito
POINT = "#0072B2"
WIDTH = 6.0  # inches; 432 pt, about a phone's width at scale 1


@dataclass(frozen=True)
class Chart:
    name: str  # file stem under figures/
    title: str
    caption: str
    svg: str


def render(name: str, fig: Figure) -> str:
    """The figure as SVG text, the same bytes for the same figure."""
    FigureCanvasAgg(fig)
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": f"arrivalbench-{name}", "svg.fonttype": "none",
                                "svg.image_inline": True}):
        fig.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight")
    return buffer.getvalue()


def _new(height: float, layout: Literal["constrained"] | None = "constrained") -> Figure:
    fig = Figure(figsize=(WIDTH, height), layout=layout)
    FigureCanvasAgg(fig)
    return fig


def _scatter(ylabel_lines: int = 1) -> tuple[Figure, Axes]:
    """A square-ish scatter with fixed margins, so label positions measured before saving
    hold when saving."""
    fig = _new(4.4, layout=None)
    fig.subplots_adjust(left=0.13 if ylabel_lines == 1 else 0.16, right=0.97, bottom=0.12,
                        top=0.97)
    return fig, fig.add_subplot()


def _err(m: Mapping[str, Any]) -> tuple[float, float]:
    v, lo, hi = m["value"], m["low"], m["high"]
    if v is None or lo is None or hi is None:
        return 0.0, 0.0
    return max(0.0, v - lo), max(0.0, hi - v)


OFFSETS = ((6, 6), (-6, 6), (6, -6), (-6, -6), (8, 0), (-8, 0), (0, 10), (0, -10),
           (6, 18), (-6, 18), (6, -18), (-6, -18))


def _labelled_points(ax: Axes, points: Sequence[tuple[str, Mapping[str, Any],
                                                      Mapping[str, Any]]]) -> None:
    """One point per arm with its interval in both directions. Arms at the same place share
    one label; each label takes the first of a fixed list of offsets at which it overlaps no
    label already placed and stays inside the axes (the last one otherwise)."""
    places: dict[tuple[float, float], list[str]] = {}
    for arm, mx, my in points:
        if mx["value"] is None or my["value"] is None:
            continue
        ex, ey = _err(mx), _err(my)
        ax.errorbar([mx["value"]], [my["value"]], xerr=[[ex[0]], [ex[1]]],
                    yerr=[[ey[0]], [ey[1]]], fmt="o", color=POINT, ecolor="#7f9fbf",
                    elinewidth=1, capsize=2, markersize=6)
        mark = few(mx) or few(my)  # either interval on fewer than FEW_TASKS tasks
        places.setdefault((round(mx["value"], 3), round(my["value"], 3)), []).append(arm + mark)
    ax.set_xlim(-0.04, 1.04)
    ax.set_ylim(-0.04, 1.04)
    ax.grid(True, color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    renderer = ax.figure.canvas.get_renderer()  # type: ignore[attr-defined]
    frame = ax.get_window_extent(renderer)
    placed: list[Any] = []
    for (x, y), arms in sorted(places.items()):
        for dx, dy in OFFSETS:
            label = ax.annotate(", ".join(arms), (x, y), xytext=(dx, dy),
                                textcoords="offset points", fontsize=9,
                                ha="left" if dx > 0 else "right" if dx < 0 else "center",
                                va="bottom" if dy > 0 else "top" if dy < 0 else "center")
            box = label.get_window_extent(renderer)
            inside = (box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y0 >= frame.y0
                      and box.y1 <= frame.y1)
            if inside and not any(box.overlaps(other) for other in placed):
                break
            if (dx, dy) != OFFSETS[-1]:
                label.remove()
        placed.append(box)



def _missing(ax: Axes, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="#666666")


def snapshot_vs_silent(doc: Mapping[str, Any]) -> Figure:
    fig, ax = _scatter()
    arms = doc["arms"]
    _labelled_points(ax, [(a, m["snapshot_pass"], m["silent"]) for a, m in arms.items()])
    if not any(m["snapshot_pass"]["value"] is not None and m["silent"]["value"] is not None
               for m in arms.values()):
        _missing(ax, "no arm has snapshot-passing cells with hazard verdicts")
    ax.set_xlabel("snapshot pass rate")
    ax.set_ylabel("silent failure among snapshot-passing cells")
    return fig


def ordering_vs_idempotency(doc: Mapping[str, Any]) -> Figure:
    fig, ax = _scatter(ylabel_lines=2)
    ax.plot([0, 1], [0, 1], color="#bbbbbb", linewidth=0.8, linestyle="--")
    arms = doc["arms"]
    _labelled_points(ax, [(a, m["idempotency"], m["ordering"]) for a, m in arms.items()])
    if not any(m["ordering"]["value"] is not None and m["idempotency"]["value"] is not None
               for m in arms.values()):
        _missing(ax, "no arm has both ordering and idempotency hazards")
    ax.set_xlabel("idempotency pass rate (duplicates, crash_retry)")
    ax.set_ylabel("ordering pass rate\n(late_arrival, out_of_order)")
    return fig


def composition(doc: Mapping[str, Any]) -> Figure:
    arms = doc["arms"]
    rows = {a: [h for h in HAZARDS if m["composition"][h]["PASS"]["n"] > 0]
            for a, m in arms.items()}
    shown = [a for a in arms if rows[a]] or list(arms)[:1]
    height = 0.9 + sum(0.28 * max(1, len(rows[a])) + 0.45 for a in shown)
    fig = _new(height)
    axes = fig.subplots(len(shown), 1, sharex=True, squeeze=False,
                        height_ratios=[max(1, len(rows[a])) for a in shown])[:, 0]
    for ax, arm in zip(axes, shown, strict=True):
        hazards = rows[arm]
        if not hazards:
            _missing(ax, "no snapshot-passing cell with hazard verdicts")
            ax.set_yticks([])
        left = [0.0] * len(hazards)
        for verdict, colour in COLOURS.items():
            widths = [arms[arm]["composition"][h][verdict]["value"] or 0.0 for h in hazards]
            ax.barh(range(len(hazards)), widths, left=left, color=colour, height=0.7,
                    label=verdict)
            left = [a + b for a, b in zip(left, widths, strict=True)]
        ax.set_yticks(range(len(hazards)), hazards, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        ax.set_title(arm, fontsize=9, loc="left")
        ax.tick_params(axis="x", labelsize=8)
    axes[-1].set_xlabel("share of replays among snapshot-passing cells (task mean)")
    handles, labels = axes[0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside upper center", ncols=3, fontsize=8,
                   frameon=False)
    return fig


def batch_dedup(doc: Mapping[str, Any]) -> Figure | None:
    arms = {a: m["batch_dedup"] for a, m in doc["arms"].items() if "batch_dedup" in m}
    if not arms:
        return None
    fig = _new(1.4 + 1.1 * len(arms))
    ax = fig.add_subplot()
    labels: list[str] = []
    for i, (arm, guard) in enumerate(arms.items()):
        for j, kind in enumerate(("silent", "crash")):
            y = i * 2 + j
            labels.append(f"{arm}: {kind}")
            for k, (side, colour) in enumerate((("with", "#0072B2"), ("without", "#CC79A7"))):
                m = guard[side][kind]
                value = m["value"] or 0.0
                ax.barh(y + (k - 0.5) * 0.38, value, height=0.36, color=colour,
                        xerr=[[_err(m)[0]], [_err(m)[1]]] if m["value"] is not None else None,
                        error_kw={"elinewidth": 1, "capsize": 2, "ecolor": "#555555"},
                        label=f"{side} batch_dedup" if y == 0 else None)
                # the label starts past the interval's upper end, so no whisker crosses it
                end = value + _err(m)[1] if m["value"] is not None else 0.0
                ax.annotate("no cell" if m["value"] is None
                            else f"{m['value']:.2f} (n={m['n']}{few(m)})",
                            (end, y + (k - 0.5) * 0.38), xytext=(5, 0),
                            textcoords="offset points", va="center", fontsize=7,
                            color="#444444")
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.3)
    ax.set_xticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax.set_xlabel("failure rate on duplicates among snapshot-passing cells (task mean)")
    fig.legend(loc="outside upper center", ncols=2, fontsize=8, frameon=False)
    return fig


FIGURES: tuple[tuple[str, str, str, Callable[[Mapping[str, Any]], Figure | None]], ...] = (
    ("snapshot_vs_silent", "Snapshot pass against silent failure",
     "One point per arm: the snapshot pass rate against the silent-failure rate among "
     "snapshot-passing cells, with 95% bootstrap intervals (\u2020: an interval on fewer than "
     "10 tasks).", snapshot_vs_silent),
    ("composition", "Verdict composition per hazard",
     "PASS, FAIL and ERROR shares of each hazard's replays among snapshot-passing cells, "
     "per arm.", composition),
    ("ordering_vs_idempotency", "Ordering against idempotency",
     "Pass rate of the ordering group against the idempotency group, per arm; below the "
     "diagonal an arm does worse on ordering (\u2020: an interval on fewer than 10 tasks).",
     ordering_vs_idempotency),
    ("batch_dedup", "Dedup guard against failure on duplicates",
     "Silent failure and crash on duplicates for snapshot-passing cells with and without the "
     "batch_dedup idiom, with 95% bootstrap intervals (\u2020: on fewer than 10 tasks).",
     batch_dedup),
)


def charts(doc: Mapping[str, Any]) -> list[Chart]:
    """Every figure that has something to show, as SVG text."""
    out = []
    for name, title, caption, make in FIGURES:
        fig = make(doc)
        if fig is not None:
            out.append(Chart(name, title, caption, render(name, fig)))
    return out


def inline(svg: str, title: str, prefix: str) -> str:
    """The SVG as an element of an HTML page: no XML prologue, no RDF metadata, ids prefixed
    (matplotlib numbers `figure_1`, `axes_1`, ... afresh in every figure, and a page holds
    several), scaled to its container."""
    body = svg[svg.index("<svg"):]
    body = re.sub(r"\s*<metadata>.*?</metadata>", "", body, flags=re.DOTALL)
    body = re.sub(r'\s*xmlns:(?!xlink)\w+="[^"]*"', "", body)
    body = re.sub(r'(\sid="|url\(#|href="#)([^")]+)', rf"\1{prefix}-\2", body)
    head_end = body.index(">")
    head = re.sub(r'\s(width|height)="[^"]*"', "", body[:head_end])
    return (f'{head} role="img" aria-label="{title}" preserveAspectRatio="xMidYMid meet"'
            f'{body[head_end:]}')
