"""Shared figure and statistics helpers for study analyses.

Studies build their figures from these pieces so every plot in the report has the same look:
labelled axes, units in labels, 95% confidence bands. Matplotlib runs headless (Agg).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.figure
import matplotlib.pyplot as plt
import numpy as np

from learnability.errors import UserError

# Student-t 97.5% quantiles for small samples; the normal value beyond the table.
_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
         10: 2.228, 12: 2.179, 15: 2.131, 20: 2.086, 30: 2.042}  # fmt: skip


def t_quantile(dof: int) -> float:
    """Two-sided 95% Student-t quantile (table lookup rounding dof down; 1.96 for large dof)."""
    if dof <= 0:
        return math.inf
    keys = [k for k in _T975 if k <= dof]
    return _T975[max(keys)] if dof <= 30 else 1.96


@dataclass(frozen=True)
class Summary:
    """Mean of a sample with a 95% t-interval (ci = mean when n = 1)."""

    mean: float
    ci_low: float
    ci_high: float
    n: int
    std: float = 0.0

    def fmt(self, digits: int = 3) -> str:
        if self.n <= 1:
            return f"{self.mean:.{digits}g} (n={self.n})"
        return f"{self.mean:.{digits}g} [{self.ci_low:.{digits}g}, {self.ci_high:.{digits}g}] (n={self.n})"


def summarise(values: Iterable[float]) -> Summary:
    """Mean and 95% confidence interval of the finite values (NaN/inf are dropped)."""
    x = np.asarray([v for v in values if v is not None], dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return Summary(math.nan, math.nan, math.nan, 0)
    mean = float(x.mean())
    if x.size == 1:
        return Summary(mean, mean, mean, 1)
    std = float(x.std(ddof=1))
    half = t_quantile(x.size - 1) * std / math.sqrt(x.size)
    return Summary(mean, mean - half, mean + half, int(x.size), std)


def wilson_interval(successes: int, trials: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (sensible at 0 and 1)."""
    if trials <= 0:
        return (math.nan, math.nan)
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True)
class Fit:
    """Least-squares line y = slope·x + intercept, with a 95% interval on the slope."""

    slope: float
    intercept: float
    r2: float
    slope_ci: tuple[float, float]
    n: int

    def fmt(self, digits: int = 3) -> str:
        lo, hi = self.slope_ci
        return f"slope {self.slope:.{digits}g} [{lo:.{digits}g}, {hi:.{digits}g}], R²={self.r2:.2f}, n={self.n}"


def fit_line(xs: Sequence[float], ys: Sequence[float]) -> Fit:
    """Ordinary least squares with a t-interval on the slope; needs at least 2 distinct x."""
    x = np.asarray(xs, dtype=float)
    y = np.asarray(ys, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if x.size < 2 or np.ptp(x) == 0:
        return Fit(math.nan, math.nan, math.nan, (math.nan, math.nan), int(x.size))
    slope, intercept = np.polyfit(x, y, 1)
    resid = y - (slope * x + intercept)
    ss_tot = float(((y - y.mean()) ** 2).sum())
    r2 = 1 - float((resid**2).sum()) / ss_tot if ss_tot > 0 else 1.0
    if x.size > 2:
        se = math.sqrt(float((resid**2).sum()) / (x.size - 2) / float(((x - x.mean()) ** 2).sum()))
        half = t_quantile(x.size - 2) * se
    else:
        half = math.inf
    return Fit(float(slope), float(intercept), r2, (slope - half, slope + half), int(x.size))


def get(record: Any, path: str, default: Any = None) -> Any:
    """Dotted access into a RunRecord: 'config.task.n', 'metrics.sharpness.mean', or plain attributes."""
    head, _, rest = path.partition(".")
    value: Any = getattr(record, head, None) if not isinstance(record, dict) else record.get(head)
    for key in rest.split(".") if rest else []:
        if isinstance(value, dict):
            value = value.get(key, default)
        elif isinstance(value, (list, tuple)) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
        else:
            return default
    return default if value is None else value


def group_by(records: Iterable[Any], *paths: str) -> dict[tuple, list[Any]]:
    """Records grouped by the values at the given dotted paths (keys sorted)."""
    groups: dict[tuple, list[Any]] = defaultdict(list)
    for r in records:
        groups[tuple(get(r, p) for p in paths)].append(r)
    return dict(sorted(groups.items(), key=lambda kv: tuple(_sort_key(k) for k in kv[0])))


def _sort_key(value: Any) -> tuple[int, float, str]:
    """Numbers in numeric order (4 before 10), then everything else by its text."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, float(value), "")
    return (1, 0.0, str(value))


def series(
    records: Iterable[Any],
    x: str,
    y: str | Callable[[Any], float],
    by: str | None = None,
) -> dict[Any, tuple[list[float], list[Summary]]]:
    """For each group (value at `by`, or None), x values sorted and the Summary of y over records at each x."""
    out: dict[Any, tuple[list[float], list[Summary]]] = {}
    records = list(records)
    label_groups = group_by(records, by) if by else {(None,): records}
    for (label,), members in label_groups.items():
        xs, ys = [], []
        for (xv,), at_x in group_by(members, x).items():
            values = [y(r) if callable(y) else get(r, y) for r in at_x]
            xs.append(xv)
            ys.append(summarise(v for v in values if isinstance(v, (int, float))))
        order = np.argsort(np.asarray(xs, dtype=float))
        out[label] = ([xs[i] for i in order], [ys[i] for i in order])
    return out


def new_figure(ncols: int = 1, nrows: int = 1, width: float = 4.2, height: float = 3.3):
    """A figure with a grid of axes (always a flat list of axes)."""
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False)
    return fig, list(axes.ravel())


def line_with_band(
    ax: Any, xs: Sequence[float], summaries: Sequence[Summary], label: str | None = None, **kw: Any
) -> None:
    """A mean line with markers and a shaded 95% confidence band."""
    x = np.asarray(xs, dtype=float)
    mean = np.asarray([s.mean for s in summaries])
    lo = np.asarray([s.ci_low for s in summaries])
    hi = np.asarray([s.ci_high for s in summaries])
    (line,) = ax.plot(x, mean, marker="o", ms=3.5, label=label, **kw)
    ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.18, linewidth=0)


def plot_series(ax: Any, data: dict[Any, tuple[list[float], list[Summary]]], fmt_label=str) -> None:
    """Draw the output of `series` on one axes, a band per group."""
    for label, (xs, ys) in data.items():
        line_with_band(ax, xs, ys, label=None if label is None else fmt_label(label))


def finish(
    ax: Any,
    xlabel: str,
    ylabel: str,
    title: str | None = None,
    logx: bool = False,
    logy: bool = False,
    legend: bool = True,
) -> None:
    """Label an axes; every figure in the report goes through here so none is left unlabelled."""
    if not xlabel or not ylabel:
        raise UserError("every axis needs a label (with units where there are units)")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, fontsize=10)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.grid(alpha=0.3)
    handles, _ = ax.get_legend_handles_labels()
    if legend and handles:
        ax.legend(fontsize=7, frameon=False)


def histogram(
    ax: Any,
    values: Sequence[float],
    bins: int | Sequence[float] = 20,
    label: str | None = None,
    density: bool = True,
    **kw: Any,
) -> None:
    """A step histogram (several can share one axes)."""
    ax.hist(
        np.asarray(values, dtype=float),
        bins=bins,
        density=density,
        histtype="step",
        linewidth=1.4,
        label=label,
        **kw,
    )


def heatmap(
    ax: Any,
    matrix: np.ndarray,
    xlabel: str,
    ylabel: str,
    title: str | None = None,
    colorbar_label: str = "",
) -> None:
    """A matrix image with a colour bar (attention maps, accuracy grids)."""
    image = ax.imshow(np.asarray(matrix), aspect="auto", cmap="viridis", interpolation="nearest")
    bar = ax.figure.colorbar(image, ax=ax)
    if colorbar_label:
        bar.set_label(colorbar_label)
    finish(ax, xlabel, ylabel, title, legend=False)


__all__ = [
    "Fit", "Summary", "finish", "fit_line", "get", "group_by", "heatmap", "histogram",
    "line_with_band", "matplotlib", "new_figure", "plot_series", "series", "summarise",
    "t_quantile", "wilson_interval",
]  # fmt: skip
