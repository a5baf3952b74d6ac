"""Panels of what a verdict rule judged, built from the rule's own estimates.

A rule's `panel` (in `learnability.claims.rules`) hands these builders the `Estimate`s its decision
computed — the same objects the claim card prints — plus its band, so the bar, whisker and band edge
a reader sees are the numbers and thresholds that decided the verdict. Nothing here computes an
interval; it only lays estimates out (named bars, band edges, a control plus the band a difference
must clear, fitted lines).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from learnability.report.panels import Panel, Ref, Series, Span
from learnability.stats import Estimate

Role = Literal["focus", "control", "context"]
COLORS: dict[str, str] = {"focus": "#4c72b0", "control": "#dd8452", "context": "#a0a0a0"}
# controls drawn as their own series (a Trend's control groups), never in the focus colour
CONTROL_COLORS = ("#dd8452", "#55a868", "#8172b3", "#937860", "#da8bc3", "#8c8c8c")
# a BestFit's rival families, apart from the focus and control colours
RIVAL_COLORS = ("#8172b3", "#937860", "#da8bc3", "#8c8c8c")
BARS_XLABEL = "mean, 95% interval over units"


@dataclass(frozen=True)
class Bar:
    label: str
    estimate: Estimate
    role: Role = "focus"


def _num(x: float) -> str:
    return f"{x:.3g}"


BAND_COLORS = ("#b3261e", "#6a3d9a", "#1b7837", "#8c510a")


def band_marks(
    direction: str,
    lo: float,
    hi: float,
    tolerance: float = 0.0,
    offset: float = 0.0,
    prefix: str = "",
    part: int = 0,
    over: str | None = None,
) -> tuple[list[Ref], list[Span]]:
    """A band as one shaded span with its edges drawn, labelled once with what it decides. With
    `offset` (a control's value) the band is on a difference and sits at control + edge; `part` (1, 2,
    ...) numbers the band as the rule text numbers an AllOf's parts, and picks its colour; `over`
    names the bar the band judges (the band is drawn across that bar only)."""
    color = BAND_COLORS[(part - 1) % len(BAND_COLORS)] if part else BAND_COLORS[0]
    tag = f"({part}) " if part else ""

    def name(v: float) -> str:
        if not prefix:
            return _num(v)
        if v == 0:
            return prefix
        return f"{prefix} + {_num(v)}" if v > 0 else f"{prefix} − {_num(-v)}"

    # the span's own edges are drawn with it; a `within` band adds its tolerance lines
    refs: list[Ref] = []
    if direction == "within":
        inner = f"{tag}reproduced inside {name(lo)} to {name(hi)}; not reproduced outside {name(lo - tolerance)} to {name(hi + tolerance)}"
        refs = [Ref(offset + e, "", "band", color, over) for e in (lo - tolerance, hi + tolerance)]
    elif direction == "above":
        inner = f"{tag}reproduced above {name(hi)}; not reproduced below {name(lo)}"
    else:
        inner = f"{tag}reproduced below {name(lo)}; not reproduced above {name(hi)}"
    return refs, [Span(offset + lo, offset + hi, inner, "band", color, over)]


def bars_panel(
    title: str,
    ylabel: str,
    bars: Sequence[Bar],
    refs: Sequence[Ref] = (),
    spans: Sequence[Span] = (),
    xlabel: str = BARS_XLABEL,
) -> Panel:
    """One named bar per estimate (its interval as the whisker), coloured by role; a quantity that
    can be negative (a log ratio, a difference) is drawn as a dot with whiskers, since a bar from 0
    would suggest a magnitude."""
    signed = ylabel.startswith("log") or any(
        math.isfinite(b.estimate.lo) and b.estimate.lo < 0 for b in bars
    )
    series = [
        Series(b.label, [b.label], [b.estimate.value], [b.estimate.lo], [b.estimate.hi],
               kind="points" if signed else "bar", color=COLORS[b.role])
        for b in bars
    ]  # fmt: skip
    return Panel(title, xlabel, ylabel, series=series, hlines=list(refs), spans=list(spans))


def fitted_line(
    label: str,
    xs: Sequence[float],
    x_mean: float,
    y_mean: float,
    slope: float,
    kind: str = "dashed",
) -> Series:
    """The line through (x̄, ȳ) with the given slope, over the x range: a fitted slope or a band edge."""
    grid = sorted({float(min(xs)), float(max(xs))})
    ys = [y_mean + slope * (x - x_mean) for x in grid]
    return Series(label, grid, ys, kind="dashed" if kind == "dashed" else "line")


def curve(label: str, xs: np.ndarray, ys: np.ndarray) -> Series:
    ok = np.isfinite(xs) & np.isfinite(ys)
    return Series(label, [float(v) for v in xs[ok]], [float(v) for v in ys[ok]], kind="dashed")


def finite(e: Estimate | None) -> bool:
    return e is not None and math.isfinite(e.value)


__all__ = [
    "BAND_COLORS",
    "BARS_XLABEL",
    "COLORS",
    "CONTROL_COLORS",
    "RIVAL_COLORS",
    "Bar",
    "band_marks",
    "bars_panel",
    "curve",
    "finite",
    "fitted_line",
]
