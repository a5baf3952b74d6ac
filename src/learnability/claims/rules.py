"""Verdict rules: each one decides a verdict from a `Frame` and writes its own sentence.

A rule turns the frame into a statistic with a 95% interval and places the interval against a `Band`:

    above(lo, hi)      reproduced if the interval lies above hi, not reproduced if it lies below lo
    below(lo, hi)      the mirror image
    within(lo, hi, t)  reproduced if the interval lies inside [lo, hi], not reproduced if it misses
                       [lo − t, hi + t] entirely

Anything touching the band is `inconclusive`: a point estimate on the line (0.2499 against 0.25) can
never pass by rounding. Bands must have width, so the author has to name the smallest effect that
counts. The rule text is generated from the same parameters that decide, so the two cannot drift.

Rules: `Trend` (slope against x, optionally steeper than control groups), `Rate` (a proportion),
`Mean`, `Contrast` (focus minus control, paired when the units are), `BestFit` (which curve family
explains y(x) best, with an AIC margin), `CensoredTrend` (slope through right-censored data) and
`AllOf` (every part must hold).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from learnability import stats
from learnability.claims.evidence import Frame, shares_units
from learnability.report import rule_panels as rp
from learnability.report.panels import Panel, Ref, Series, Span, grouped_series
from learnability.stats import Estimate

Verdict = Literal["reproduced", "not reproduced", "inconclusive", "vacuous", "not run"]
VERDICTS: tuple[Verdict, ...] = (
    "reproduced",
    "not reproduced",
    "inconclusive",
    "vacuous",
    "not run",
)
DECIDED: tuple[Verdict, ...] = ("reproduced", "not reproduced")
Direction = Literal["above", "below", "within"]


def _num(x: float) -> str:
    return f"{x:.3g}"


@dataclass(frozen=True)
class Band:
    direction: Direction
    lo: float
    hi: float
    tolerance: float = 0.0  # `within` only: how far outside [lo, hi] the interval must be to fail

    def __post_init__(self) -> None:
        if not self.lo < self.hi:
            raise ValueError(f"a band needs width: lo={self.lo} must be < hi={self.hi}")
        if self.direction == "within" and not self.tolerance > 0:
            raise ValueError("a `within` band needs a tolerance > 0")
        if self.direction not in ("above", "below", "within"):
            raise ValueError(f"unknown band direction {self.direction!r}")

    def judge(self, e: Estimate) -> Verdict:
        if not (math.isfinite(e.value) and not math.isnan(e.lo) and not math.isnan(e.hi)):
            return "inconclusive"
        if self.direction == "above":
            if e.lo > self.hi:
                return "reproduced"
            return "not reproduced" if e.hi < self.lo else "inconclusive"
        if self.direction == "below":
            if e.hi < self.lo:
                return "reproduced"
            return "not reproduced" if e.lo > self.hi else "inconclusive"
        if self.lo <= e.lo and e.hi <= self.hi:
            return "reproduced"
        if e.hi < self.lo - self.tolerance or e.lo > self.hi + self.tolerance:
            return "not reproduced"
        return "inconclusive"

    def text(self, what: str) -> str:
        lo, hi = _num(self.lo), _num(self.hi)
        if self.direction == "above":
            return (
                f"reproduced if the 95% interval of {what} lies above {hi}, not reproduced if it lies "
                f"below {lo}, otherwise inconclusive"
            )
        if self.direction == "below":
            return (
                f"reproduced if the 95% interval of {what} lies below {lo}, not reproduced if it lies "
                f"above {hi}, otherwise inconclusive"
            )
        t = self.tolerance
        return (
            f"reproduced if the 95% interval of {what} lies inside [{lo}, {hi}], not reproduced if it "
            f"lies wholly outside [{_num(self.lo - t)}, {_num(self.hi + t)}], otherwise inconclusive"
        )


def above(lo: float, hi: float) -> Band:
    return Band("above", lo, hi)


def below(lo: float, hi: float) -> Band:
    return Band("below", lo, hi)


def within(lo: float, hi: float, tolerance: float) -> Band:
    return Band("within", lo, hi, tolerance)


@dataclass
class Decision:
    verdict: Verdict
    measured: str
    statistic: Estimate | None = None
    control_value: str = ""
    details: dict[str, Any] = field(default_factory=dict)


def combine(verdicts: list[Verdict]) -> Verdict:
    """All parts reproduced → reproduced; any part not reproduced → not reproduced; else inconclusive."""
    if any(v == "not reproduced" for v in verdicts):
        return "not reproduced"
    if verdicts and all(v == "reproduced" for v in verdicts):
        return "reproduced"
    return "inconclusive"


class Rule(ABC):
    """Decides a verdict from a frame and states itself. Subclasses are frozen dataclasses."""

    kind: str = "rule"
    version: int
    date: str

    @abstractmethod
    def groups(self) -> list[str]:
        """The frame groups the rule reads (their cells are checked against the minimum units)."""

    @abstractmethod
    def text(self) -> str: ...

    @abstractmethod
    def decide(self, frame: Frame) -> Decision: ...

    def panel(self, frame: Frame, title: str, decision: Decision | None = None) -> Panel | None:
        """A default figure panel showing what the rule judged, drawn from `decision` (the one the
        claim card prints; recomputed from the frame when not given, which gives the same numbers)
        with the band edges and the control groups the rule reads. None: the claim names its own."""
        return None


def _label(group: str, labels: dict[str, str]) -> str:
    return labels.get(group, group or "all")


# -- trend --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Trend(Rule):
    """Slope of y against x in the `focus` group, judged by `band`; each control group's slope must be
    smaller by `control_band` (the interval of focus − control slope). With `per_unit` (repeated
    measures: the same unit at several x) the statistic is the mean of per-unit slopes, so a unit
    counts once however many x it was measured at; by default it is used when units repeat across x."""

    focus: str
    band: Band
    x: str = "x"
    y: str = "y"
    controls: tuple[str, ...] = ()
    control_band: Band | None = None
    min_x: int = 3
    per_unit: bool | None = None
    labels: dict[str, str] = field(default_factory=dict, hash=False)
    version: int = 1
    date: str = "2026-11-30"
    # pair a control's per-unit slopes with the focus's on the units both share (False: Welch, the
    # engine's reading before pairing was inferred, kept for revisions)
    pair_controls: bool = True
    kind = "trend"

    def __post_init__(self) -> None:
        if self.controls and self.control_band is None:
            raise ValueError("a Trend with controls needs a control_band (the smallest difference)")

    def groups(self) -> list[str]:
        return [self.focus, *self.controls]

    def _what(self, group: str) -> str:
        return f"the slope of {self.y} against {self.x} for {_label(group, self.labels)}"

    def text(self) -> str:
        out = f"Trend: {self.band.text(self._what(self.focus))}"
        if self.controls:
            names = ", ".join(_label(c, self.labels) for c in self.controls)
            out += (
                f"; and for each control ({names}) the focus slope minus the control slope is judged "
                f"the same way: {self.control_band.text('the difference') if self.control_band else ''}"
            )
        return out + f"; needs ≥ {self.min_x} distinct {self.x}."

    def _slope(self, frame: Frame, group: str) -> tuple[Estimate, stats.LineFit | None, bool]:
        rows = [r for r in frame.rows(group) if r.x is not None]
        by_unit: dict[Any, list[tuple[float, float]]] = {}
        for r in rows:
            by_unit.setdefault(r.unit, []).append((float(r.x), r.y))  # type: ignore[arg-type]
        repeated = any(len(v) > 1 for v in by_unit.values())
        use_units = self.per_unit if self.per_unit is not None else repeated
        if use_units:
            slopes = [
                stats.ols([p[0] for p in pts], [p[1] for p in pts]).slope
                for pts in by_unit.values()
                if len({p[0] for p in pts}) >= 2
            ]
            return stats.mean_ci(slopes), None, True
        fit = stats.ols([float(r.x) for r in rows], [r.y for r in rows])  # type: ignore[arg-type]
        return fit.estimate, fit, False

    def decide(self, frame: Frame) -> Decision:
        xs = frame.xs(self.focus)
        name = _label(self.focus, self.labels)
        if len(xs) < self.min_x:
            return Decision(
                "inconclusive", f"{name}: only {len(xs)} distinct {self.x} (need {self.min_x})"
            )
        slope, fit, per_unit = self._slope(frame, self.focus)
        parts = [self.band.judge(slope)]
        how = "mean per-unit slope" if per_unit else "slope"
        measured = f"{name}: {how} {slope.fmt()}"
        control_texts: list[str] = []
        details: dict[str, Any] = {"slope": _est(slope), "controls": {}}
        for c in self.controls:
            c_slope, c_fit, c_per_unit = self._slope(frame, c)
            paired = False
            if per_unit or c_per_unit or fit is None or c_fit is None:
                a, b, paired = control_slopes(frame, self.focus, c, self.pair_controls)
                diff = stats.paired_mean_diff(a, b) if paired else stats.welch_diff(a, b)
            else:
                diff = stats.slope_difference(fit, c_fit)
            assert self.control_band is not None
            parts.append(self.control_band.judge(diff))
            cname = _label(c, self.labels)
            control_texts.append(f"{cname} slope {c_slope.fmt()}")
            how = f" (paired on {len(a)} shared units)" if paired else ""
            measured += f"; minus {cname}{how}: {diff.fmt()}"
            details["controls"][c] = {
                "slope": _est(c_slope), "difference": _est(diff), "paired": paired,
            }  # fmt: skip
        return Decision(combine(parts), measured, slope, "; ".join(control_texts), details)

    def panel(self, frame: Frame, title: str, decision: Decision | None = None) -> Panel:
        d = decision if decision is not None else self.decide(frame)
        points = [(g, r.x, r.y) for g in self.groups() for r in frame.rows(g) if r.x is not None]
        series = grouped_series(points, order=self.groups(), labels=self.labels)
        drawn = [g for g in self.groups() if any(r.x is not None for r in frame.rows(g))]
        for i, (s, g) in enumerate(zip(series, drawn)):
            s.color = (
                rp.COLORS["focus"]
                if g == self.focus
                else rp.CONTROL_COLORS[(i - 1) % len(rp.CONTROL_COLORS)]
            )
        slope = _estimate(d.details.get("slope"))
        x, y = frame.xy(self.focus)
        if rp.finite(slope) and x.size:
            assert slope is not None
            xm, ym = float(x.mean()), float(y.mean())
            name = _label(self.focus, self.labels)
            series.append(
                rp.fitted_line(f"{name}: slope {slope.fmt()}", x.tolist(), xm, ym, slope.value)
            )
            series[-1].color = rp.COLORS["focus"]
            edge = self.band.hi if self.band.direction != "below" else self.band.lo
            series.append(
                rp.fitted_line(
                    f"band edge: slope {_num(edge)} ({self.band.direction})",
                    x.tolist(),
                    xm,
                    ym,
                    edge,
                )
            )
            series[-1].color = "#b3261e"
        return Panel(title, self.x, self.y, series=series)


def unit_slope_map(frame: Frame, group: str) -> dict[Any, float]:
    """Each unit's OLS slope of y on x in `group` (units seen at ≥ 2 distinct x)."""
    by_unit: dict[Any, list[tuple[float, float]]] = {}
    for r in frame.rows(group):
        if r.x is not None:
            by_unit.setdefault(r.unit, []).append((float(r.x), r.y))
    return {
        u: stats.ols([p[0] for p in pts], [p[1] for p in pts]).slope
        for u, pts in by_unit.items()
        if len({p[0] for p in pts}) >= 2
    }


def control_slopes(
    frame: Frame, focus: str, control: str, pair: bool = True
) -> tuple[np.ndarray, np.ndarray, bool]:
    """Per-unit slopes of the focus and a control group: aligned on their shared units (paired)
    when the groups share units (the same seed trained on both tasks) and `pair`, else each group's
    own."""
    a, b = unit_slope_map(frame, focus), unit_slope_map(frame, control)
    if pair and shares_units(a, b):
        shared = [u for u in a if u in b]
        return np.array([a[u] for u in shared]), np.array([b[u] for u in shared]), True
    return np.array(list(a.values())), np.array(list(b.values())), False


def _est(e: Estimate) -> dict[str, float]:
    return {"value": e.value, "lo": e.lo, "hi": e.hi, "n": e.n}


# -- one group ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Mean(Rule):
    """The mean of y over the units of `focus` (t interval), judged by `band`. `bounds` clips the
    interval to the range y can take (an accuracy's interval stops at 1); the point stays the mean."""

    focus: str
    band: Band
    what: str = "the mean"
    labels: dict[str, str] = field(default_factory=dict, hash=False)
    bounds: tuple[float, float] | None = None
    version: int = 1
    date: str = "2026-11-30"
    kind = "mean"

    def estimate(self, values: np.ndarray) -> tuple[Estimate, str]:
        """The statistic and a prefix for the measured text."""
        return stats.mean_ci(values, self.bounds), ""

    def groups(self) -> list[str]:
        return [self.focus]

    def text(self) -> str:
        what = f"{self.what} of {_label(self.focus, self.labels)}"
        return f"{self.kind.capitalize()}: {self.band.text(what)}."

    def decide(self, frame: Frame) -> Decision:
        e, prefix = self.estimate(frame.values(self.focus))
        measured = f"{_label(self.focus, self.labels)}: {self.what} {prefix}{e.fmt()}"
        return Decision(self.band.judge(e), measured, e, details={self.kind: _est(e)})

    def marks(
        self, frame: Frame, decision: Decision | None = None, part: int = 0
    ) -> tuple[list[rp.Bar], list[Ref], list[Span]]:
        """The focus bar (the decision's own estimate), the band on it, and the frame's other groups
        as context bars estimated the same way; `part` numbers the band inside an AllOf."""
        d = decision if decision is not None else self.decide(frame)
        focus = d.statistic or self.estimate(frame.values(self.focus))[0]
        others = [(g, self.estimate(frame.values(g))[0]) for g in frame.groups() if g != self.focus]
        refs, spans = rp.band_marks(
            self.band.direction, self.band.lo, self.band.hi, self.band.tolerance, part=part,
            over=_label(self.focus, self.labels),
        )  # fmt: skip
        return _bars(frame, [(self.focus, focus, "focus"), *[(g, e, "context") for g, e in others]],
                     self.labels), refs, spans  # fmt: skip

    def panel(self, frame: Frame, title: str, decision: Decision | None = None) -> Panel:
        bars, refs, spans = self.marks(frame, decision)
        return rp.bars_panel(title, self.what, bars, refs, spans)


@dataclass(frozen=True)
class Rate(Mean):
    """The proportion of units with y = 1 in `focus` (Wilson interval), judged by `band`; y in [0, 1]
    that is not 0/1 (a unit merged from several cells) is averaged with a t interval instead."""

    what: str = "the success rate"
    kind = "rate"

    def estimate(self, values: np.ndarray) -> tuple[Estimate, str]:
        return _rate(values), _count(values)


def _rate(values: np.ndarray) -> Estimate:
    if values.size and np.all((values == 0) | (values == 1)):
        return stats.proportion(float(values.sum()), int(values.size))
    return stats.mean_ci(values, (0.0, 1.0))


def _count(values: np.ndarray) -> str:
    if values.size and np.all((values == 0) | (values == 1)):
        return f"{int(values.sum())}/{values.size} = "
    return ""


# -- two groups ---------------------------------------------------------------------------------------------
ContrastKind = Literal["mean", "rate", "log10_ratio"]


@dataclass(frozen=True)
class Contrast(Rule):
    """focus − control (or log10 focus/control), judged by `band`. When both groups hold the same
    units at the same x (the control was computed on matched data from the same unit) the difference
    is paired; otherwise the groups are independent samples (Welch / Newcombe). `bounds` (kind "mean")
    is the range y can take: each group's interval is cut to it and the difference's to ±its width,
    which changes what is printed and never a verdict (no band lies outside that range)."""

    focus: str
    control: str
    band: Band
    kind_of: ContrastKind = "mean"
    what: str = "y"
    labels: dict[str, str] = field(default_factory=dict, hash=False)
    bounds: tuple[float, float] | None = None
    version: int = 1
    date: str = "2026-11-30"
    kind = "contrast"

    def groups(self) -> list[str]:
        return [self.focus, self.control]

    def _stat(self) -> str:
        f, c = _label(self.focus, self.labels), _label(self.control, self.labels)
        if self.kind_of == "log10_ratio":
            return f"log10({self.what} of {f} / {self.what} of {c})"
        return f"{self.what} of {f} minus {self.what} of {c}"

    def text(self) -> str:
        return f"Contrast (paired when units match): {self.band.text(self._stat())}."

    def samples(self, frame: Frame) -> tuple[np.ndarray, np.ndarray, bool]:
        """Focus and control values (log10 for a ratio), unit-aligned when the units match."""
        paired = frame.is_paired(self.focus, self.control)
        if paired:
            a, b = frame.paired(self.focus, self.control)
        else:
            a, b = frame.values(self.focus), frame.values(self.control)
        if self.kind_of == "log10_ratio":
            with np.errstate(divide="ignore", invalid="ignore"):
                a, b = np.log10(a), np.log10(b)
        return a, b, paired

    def decide(self, frame: Frame) -> Decision:
        a, b, paired = self.samples(frame)
        if self.kind_of == "rate":
            if paired:
                diff = stats.paired_proportion_diff(a > 0.5, b > 0.5)
            else:
                diff = stats.newcombe_diff(
                    float((a > 0.5).sum()), a.size, float((b > 0.5).sum()), b.size
                )
            fa, fb = _rate(a), _rate(b)
        else:
            diff = stats.paired_mean_diff(a, b) if paired else stats.welch_diff(a, b)
            fa, fb = stats.mean_ci(a, self.bounds), stats.mean_ci(b, self.bounds)
            if self.bounds is not None:
                width = self.bounds[1] - self.bounds[0]
                diff = diff.within(-width, width)
        f, c = _label(self.focus, self.labels), _label(self.control, self.labels)
        scale = "log10 " if self.kind_of == "log10_ratio" else ""
        measured = (
            f"{f}: {scale}{self.what} {fa.fmt()}; {c}: {fb.fmt()}; "
            f"{'paired' if paired else 'independent'} difference {diff.fmt()}"
        )
        details = {
            "focus": _est(fa),
            "control": _est(fb),
            "difference": _est(diff),
            "paired": paired,
        }
        return Decision(self.band.judge(diff), measured, diff, f"{c}: {fb.fmt()}", details)

    def _ylabel(self) -> str:
        return f"log10 {self.what}" if self.kind_of == "log10_ratio" else self.what

    def marks(
        self, frame: Frame, decision: Decision | None = None, part: int = 0
    ) -> tuple[list[rp.Bar], list[Ref], list[Span]]:
        """Focus and control bars (the decision's own estimates) and the band the difference must
        clear, drawn from the control's value: control + edge."""
        d = decision if decision is not None else self.decide(frame)
        fa, fb = _estimate(d.details.get("focus")), _estimate(d.details.get("control"))
        groups: list[tuple[str, Estimate | None, rp.Role]] = [
            (self.focus, fa, "focus"), (self.control, fb, "control"),
        ]  # fmt: skip
        bars = _bars(frame, [(g, e, role) for g, e, role in groups if e is not None], self.labels)
        refs: list[Ref] = []
        spans: list[Span] = []
        if rp.finite(fb):
            assert fb is not None
            refs, spans = rp.band_marks(
                self.band.direction, self.band.lo, self.band.hi, self.band.tolerance,
                offset=fb.value, prefix=_label(self.control, self.labels), part=part,
                over=_label(self.focus, self.labels),
            )  # fmt: skip
        return bars, refs, spans

    def panel(self, frame: Frame, title: str, decision: Decision | None = None) -> Panel:
        bars, refs, spans = self.marks(frame, decision)
        return rp.bars_panel(title, self._ylabel(), bars, refs, spans)


def _bars(
    frame: Frame, groups: list[tuple[str, Estimate, rp.Role]], labels: dict[str, str]
) -> list[rp.Bar]:
    """Named bars from estimates the rule computed (never recomputed here: a bar's whisker is the
    interval the card prints); groups without observations are left out."""
    return [rp.Bar(_label(g, labels), e, role) for g, e, role in groups if frame.values(g).size]


def _estimate(d: Any) -> Estimate | None:
    """An `Estimate` back from its `_est` dict in a decision's details."""
    if isinstance(d, Estimate):
        return d
    if not isinstance(d, dict) or "value" not in d:
        return None
    return Estimate(float(d["value"]), float(d["lo"]), float(d["hi"]), int(d.get("n", 0)))


# -- curve families -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BestFit(Rule):
    """Which curve family fits y against x best: y = a + b·t(x) for each named transform t, compared
    by AIC on the same points. Reproduced when `expected` beats every rival by more than `margin` AIC
    units, not reproduced when some rival beats it by more than `margin`, otherwise inconclusive."""

    focus: str
    expected: str
    transforms: dict[str, Callable[[np.ndarray], np.ndarray]] = field(hash=False)
    margin: float = 2.0
    x: str = "x"
    y: str = "y"
    min_x: int = 4
    labels: dict[str, str] = field(default_factory=dict, hash=False)
    version: int = 1
    date: str = "2026-11-30"
    kind = "best_fit"

    def __post_init__(self) -> None:
        if self.expected not in self.transforms:
            raise ValueError(
                f"expected family {self.expected!r} is not among {list(self.transforms)}"
            )
        if not self.margin > 0:
            raise ValueError("BestFit needs an AIC margin > 0")

    def groups(self) -> list[str]:
        return [self.focus]

    def text(self) -> str:
        rivals = ", ".join(n for n in self.transforms if n != self.expected)
        return (
            f"BestFit: {self.y} = a + b·t({self.x}) fitted for each family ({', '.join(self.transforms)}); "
            f"reproduced if {self.expected} has an AIC lower than every rival ({rivals}) by more than "
            f"{_num(self.margin)}, not reproduced if a rival's AIC is lower than {self.expected}'s by more "
            f"than {_num(self.margin)}, otherwise inconclusive; needs ≥ {self.min_x} distinct {self.x}."
        )

    def decide(self, frame: Frame) -> Decision:
        x, y = frame.xy(self.focus)
        if len(set(x.tolist())) < self.min_x:
            return Decision(
                "inconclusive", f"only {len(set(x.tolist()))} distinct {self.x} (need {self.min_x})"
            )
        fits = stats.compare_fits(x, y, self.transforms)
        by_name = {f.name: f for f in fits}
        best_rival = min((f for f in fits if f.name != self.expected), key=lambda f: f.aic)
        gap = best_rival.aic - by_name[self.expected].aic  # > 0: expected is better
        if gap > self.margin:
            verdict: Verdict = "reproduced"
        elif gap < -self.margin:
            verdict = "not reproduced"
        else:
            verdict = "inconclusive"
        listing = "; ".join(f"{f.name}: AIC {f.aic:.1f}, {f.fit.fmt()}" for f in fits)
        measured = f"{listing}; AIC({best_rival.name}) − AIC({self.expected}) = {gap:.2f}"
        details = {f.name: {"aic": f.aic, "slope": f.fit.slope, "r2": f.fit.r2} for f in fits}
        rival = f"{best_rival.name}: AIC {best_rival.aic:.1f}, {best_rival.fit.fmt()}"
        return Decision(verdict, measured, Estimate(gap, gap, gap, len(x)), rival, details)

    def panel(self, frame: Frame, title: str, decision: Decision | None = None) -> Panel | None:
        """The points and every family's fitted curve, each labelled with its AIC (the numbers the
        rule compared; the expected family first)."""
        x, y = frame.xy(self.focus)
        if len(set(x.tolist())) < 2:
            return None
        fits = sorted(
            stats.compare_fits(x, y, self.transforms), key=lambda f: f.name != self.expected
        )
        grid = np.linspace(float(x.min()), float(x.max()), 60)
        series = [mean_series_points(x, y, _label(self.focus, self.labels))]
        for i, f in enumerate(fits):
            ys = f.fit.intercept + f.fit.slope * np.asarray(
                self.transforms[f.name](grid), dtype=float
            )
            tag = " (expected)" if f.name == self.expected else " (rival)"
            line = rp.curve(f"{f.name}{tag}: AIC {f.aic:.1f}", grid, ys)
            line.color = (
                rp.COLORS["focus"] if i == 0 else rp.RIVAL_COLORS[(i - 1) % len(rp.RIVAL_COLORS)]
            )
            series.append(line)
        return Panel(title, self.x, self.y, series=series)


def mean_series_points(x: np.ndarray, y: np.ndarray, label: str) -> Series:
    """Mean and 95% interval of y at each x, drawn as points (one unit each per x)."""
    from learnability.report.panels import mean_series

    s = mean_series(zip(x.tolist(), y.tolist()), label, kind="points")
    s.color = "#333333"
    return s


# -- censored -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CensoredTrend(Rule):
    """Slope of y against x where some y are right-censored (the budget ran out before success):
    maximum likelihood with censoring (`stats.censored_line`), judged by `band`. Dropping censored
    units would bias the slope down; here they count as 'more than the budget'."""

    focus: str
    band: Band
    x: str = "x"
    y: str = "y"
    min_x: int = 3
    labels: dict[str, str] = field(default_factory=dict, hash=False)
    version: int = 1
    date: str = "2026-11-30"
    kind = "censored_trend"

    def groups(self) -> list[str]:
        return [self.focus]

    def text(self) -> str:
        what = f"the slope of {self.y} against {self.x} (censored-normal maximum likelihood, censored units kept)"
        return f"CensoredTrend: {self.band.text(what)}; needs ≥ {self.min_x} distinct {self.x}."

    def decide(self, frame: Frame) -> Decision:
        rows = [r for r in frame.rows(self.focus) if r.x is not None]
        if len({r.x for r in rows}) < self.min_x:
            return Decision("inconclusive", f"only {len({r.x for r in rows})} distinct {self.x}")
        fit = stats.censored_line(
            [float(r.x or 0.0) for r in rows], [r.y for r in rows], [r.censored for r in rows]
        )
        e = fit.estimate
        measured = (
            f"slope {e.fmt()} ({fit.censored} of {fit.n} units censored), σ = {fit.sigma:.3g}"
        )
        return Decision(
            self.band.judge(e), measured, e, details={"slope": _est(e), "censored": fit.censored}
        )

    def panel(self, frame: Frame, title: str, decision: Decision | None = None) -> Panel | None:
        """Observed and censored points (open: the budget ran out, the true y is higher), the
        censored-likelihood line and the band edge's slope through the same centre."""
        rows = [r for r in frame.rows(self.focus) if r.x is not None]
        if len({r.x for r in rows}) < 2:
            return None
        xs = [float(r.x or 0.0) for r in rows]
        fit = stats.censored_line(xs, [r.y for r in rows], [r.censored for r in rows])
        seen = [(x, r.y) for x, r in zip(xs, rows) if not r.censored]
        cut = [(x, r.y) for x, r in zip(xs, rows) if r.censored]
        series = [Series(f"{_label(self.focus, self.labels)} (observed)", [p[0] for p in seen],
                         [p[1] for p in seen], kind="points", color="#333333")]  # fmt: skip
        if cut:
            series.append(Series("censored: more than this", [p[0] for p in cut],
                                 [p[1] for p in cut], kind="points", color="#b3261e"))  # fmt: skip
        if math.isfinite(fit.slope):
            xm = float(np.mean(xs))
            ym = fit.intercept + fit.slope * xm
            series.append(rp.fitted_line(f"fit: slope {fit.estimate.fmt()}", xs, xm, ym, fit.slope))
            series[-1].color = rp.COLORS["focus"]
            edge = self.band.hi if self.band.direction != "below" else self.band.lo
            series.append(rp.fitted_line(f"band edge: slope {_num(edge)}", xs, xm, ym, edge))
            series[-1].color = "#b3261e"
        return Panel(title, self.x, self.y, series=series)


# -- compound -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AllOf(Rule):
    """Every part must hold: any part not reproduced → not reproduced; all reproduced → reproduced."""

    parts: tuple[Rule, ...]
    version: int = 1
    date: str = "2026-11-30"
    kind = "all_of"

    def groups(self) -> list[str]:
        return sorted({g for p in self.parts for g in p.groups()})

    def text(self) -> str:
        return "All of: " + " AND ".join(f"({i + 1}) {p.text()}" for i, p in enumerate(self.parts))

    def decide(self, frame: Frame) -> Decision:
        decisions = [p.decide(frame) for p in self.parts]
        measured = " | ".join(
            f"({i + 1}) {d.measured} → {d.verdict}" for i, d in enumerate(decisions)
        )
        controls = "; ".join(d.control_value for d in decisions if d.control_value)
        details = {f"part{i + 1}": d.details for i, d in enumerate(decisions)}
        first = decisions[0].statistic if decisions else None
        return Decision(combine([d.verdict for d in decisions]), measured, first, controls, details)

    def panel(self, frame: Frame, title: str, decision: Decision | None = None) -> Panel | None:
        """Parts that judge groups (Mean, Rate, Contrast) share one bar panel: every group once (as
        focus, control or context, the strongest role wins), every part's band; otherwise the first
        part that draws anything."""
        marked = [(i + 1, p) for i, p in enumerate(self.parts) if isinstance(p, (Mean, Contrast))]
        if marked:
            priority = {"focus": 0, "control": 1, "context": 2}
            bars: dict[str, rp.Bar] = {}
            refs: list[Ref] = []
            spans: list[Span] = []
            for number, part in marked:
                part_bars, part_refs, part_spans = part.marks(frame, part=number)
                for b in part_bars:
                    if b.label not in bars or priority[b.role] < priority[bars[b.label].role]:
                        bars[b.label] = b
                refs += part_refs
                spans += part_spans
            head = marked[0][1]
            ylabel = head._ylabel() if isinstance(head, Contrast) else head.what
            order = sorted(bars.values(), key=lambda b: priority[b.role])
            return rp.bars_panel(title, ylabel, order, refs, spans)
        panels = [panel for p in self.parts if (panel := p.panel(frame, title)) is not None]
        if not panels:
            return None
        first = panels[0]
        if all((q.xlabel, q.ylabel) == (first.xlabel, first.ylabel) for q in panels):
            # parts on the same axes (a BestFit and a Trend of y on x) share one panel: every
            # part's series once (the first with a label wins), lines and bands
            seen = {s.label for s in first.series}
            for q in panels[1:]:
                first.series += [s for s in q.series if s.label not in seen]
                seen |= {s.label for s in q.series}
                first.hlines += q.hlines
                first.spans += q.spans
        return first


__all__ = [
    "DECIDED", "VERDICTS", "AllOf", "Band", "BestFit", "CensoredTrend", "Contrast", "Decision", "Mean", "Rate",
    "Rule", "Trend", "Verdict", "above", "below", "combine", "within",
]  # fmt: skip
