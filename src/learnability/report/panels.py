"""Figures as data: a `Figure` is panels of series, histograms, heatmaps and reference lines.

Studies and claims describe what to draw with these dataclasses and never touch matplotlib; the
report renders them (`learnability.report.render`). Every panel names both axes (with units where
there are units). A series whose x are strings is drawn on a named categorical axis (categories in
the order they first appear across the panel's series), so bars and length buckets carry their names,
not 0/1/2. Reference lines (`Ref`) say what they are — a chance line, the control, a band edge, a
baseline — and are drawn in that role's style with their label in the legend. Builders at the bottom
turn observations into the usual shapes (mean and 95% interval per x, one series per group).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from learnability.stats import mean_ci, proportion

SeriesKind = Literal["line", "points", "dashed", "step", "bar"]


@dataclass
class Series:
    """A named curve: y against x, with an optional 95% band (lo, hi) drawn shaded or as error bars."""

    label: str | None
    x: list[Any]
    y: list[float]
    lo: list[float] | None = None
    hi: list[float] | None = None
    kind: SeriesKind = "line"
    color: str | None = None
    # False: drawn in its label's style (as in the figure's other panels) but left out of the
    # legend, e.g. the same run in every panel of a figure, named in the first only
    legend: bool = True


@dataclass
class Histogram:
    label: str | None
    values: list[float]
    bins: int | list[float] = 20
    density: bool = True


@dataclass
class Matrix:
    """A heatmap; rows are the y axis."""

    values: list[list[float]]
    colorbar: str = ""
    xticklabels: list[str] | None = None
    yticklabels: list[str] | None = None


RefRole = Literal["reference", "chance", "control", "band", "baseline"]


@dataclass(frozen=True)
class Ref:
    """A labelled reference line: what the data are compared against. `role` picks its style (a band
    edge is drawn red, a control orange, a chance line grey ...); the label goes to the legend."""

    at: float
    label: str
    role: RefRole = "reference"
    color: str | None = None  # None: the role's colour
    over: str | None = None  # a category: drawn across that bar's slot only (the bar it judges)


@dataclass(frozen=True)
class Span:
    """A shaded range of y, e.g. the zone between a rule's band edges where a verdict is inconclusive."""

    lo: float
    hi: float
    label: str
    role: RefRole = "band"
    color: str | None = None
    over: str | None = None  # a category: shaded across that bar's slot only


@dataclass
class Panel:
    title: str
    xlabel: str
    ylabel: str
    series: list[Series] = field(default_factory=list)
    histograms: list[Histogram] = field(default_factory=list)
    matrix: Matrix | None = None
    # (y, label) pairs or `Ref`s: chance, nulls, controls, band edges
    hlines: list[tuple[float, str] | Ref] = field(default_factory=list)
    vlines: list[tuple[float, str] | Ref] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    logx: bool = False
    logy: bool = False
    ylim: tuple[float, float] | None = None
    xticks: list[float] | None = None
    # the order of named x categories (string x values), e.g. length buckets "1-8", "9-16", "17-32";
    # default: the order they first appear in
    categories: list[str] | None = None
    note: str = ""  # drawn in the panel, e.g. "no converged runs"

    def __post_init__(self) -> None:
        if not self.xlabel or not self.ylabel:
            raise ValueError(f"panel {self.title!r}: every axis needs a label")


@dataclass
class Figure:
    """Panels drawn side by side, `ncols` a row (default: all in one row, up to 3). Every panel has
    the same size in every figure, and the report shows each figure at a width proportional to its
    columns, so panels look alike wherever they are. `claims` names the claims (their slugs) the figure
    shows evidence for, besides those that name the figure themselves; the report links both ways."""

    name: str
    caption: str
    panels: list[Panel]
    ncols: int | None = None
    claims: tuple[str, ...] = ()


@dataclass
class Table:
    """A small table for the report (a count table, greedy text samples). A cell may hold a
    `stats.Estimate`: it is printed as `value [lo, hi]` exactly as claim cards print theirs, so a
    table that takes its numbers from the estimates a rule judged shows the same interval."""

    title: str
    columns: list[str]
    rows: list[list[Any]]
    caption: str = ""


# -- builders ----------------------------------------------------------------------------------------------
def mean_series(
    points: Iterable[tuple[Any, float]],
    label: str | None = None,
    kind: SeriesKind = "line",
    color: str | None = None,
    rate: bool = False,
    bounds: tuple[float, float] | None = None,
) -> Series:
    """Mean and 95% interval of y at each x from (x, y) pairs. `rate`: y are 0/1 outcomes (converged,
    learned), summarised with Wilson intervals; `bounds`: the range y can take (an accuracy's is
    (0, 1)), which cuts its t interval. An accuracy is not a rate: two seeds at accuracy 1.0 are a
    mean of 1 with no spread, not 2 successes in 2 trials (a Wilson interval down to 0.34)."""
    by_x: dict[Any, list[float]] = defaultdict(list)
    for x, y in points:
        if y is not None:
            by_x[x].append(float(y))
    xs = sorted(by_x, key=_order)
    mean, lo, hi = [], [], []
    for x in xs:
        values = by_x[x]
        if rate and all(v in (0.0, 1.0) for v in values):
            e = proportion(sum(values), len(values))
        else:  # a rate's values lie in [0, 1], so does its interval
            e = mean_ci(values, (0.0, 1.0) if rate else bounds)
        mean.append(e.value)
        lo.append(e.lo)
        hi.append(e.hi)
    return Series(label, xs, mean, lo, hi, kind=kind, color=color)


def grouped_series(
    points: Iterable[tuple[str, Any, float]],
    order: Sequence[str] | None = None,
    labels: dict[str, str] | None = None,
    rate: bool = False,
    bounds: tuple[float, float] | None = None,
) -> list[Series]:
    """One `mean_series` per group from (group, x, y) triples, in `order` (else sorted)."""
    by_group: dict[str, list[tuple[Any, float]]] = defaultdict(list)
    for g, x, y in points:
        by_group[g].append((x, y))
    names = [g for g in (order or sorted(by_group)) if g in by_group]
    labels = labels or {}
    return [mean_series(by_group[g], labels.get(g, g), rate=rate, bounds=bounds) for g in names]


def _order(value: Any) -> tuple[int, float, str]:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, float(value), "")
    return (1, 0.0, str(value))


__all__ = [
    "Figure", "Histogram", "Matrix", "Panel", "Ref", "Series", "Span", "Table", "grouped_series",
    "mean_series",
]  # fmt: skip
