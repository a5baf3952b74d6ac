"""Power: how likely the current plan is to decide a claim, and how many units would decide it.

A rule decides when its interval clears a band edge: above `hi` (or below `lo`) for `above`, inside
[lo, hi] or wholly outside [lo − t, hi + t] for `within`. The power analysis takes the observed
estimate as the true value and the observed between-unit spread as the true spread (a declared
`Claim.prior_sd` where there are fewer than two units), and asks how often an experiment with `n`
units per cell would give an interval that clears the edge on the estimate's side:

- t statistics (Mean, paired Contrast, per-unit Trend slopes, Welch contrasts, pooled OLS slopes and
  their differences): the estimate is normal with standard error se(n) and its spread is estimated
  with df(n) degrees of freedom, so clearing an edge at distance δ is the non-central t event
  T > t_{df, 1−α/2} with non-centrality δ / se(n) (scipy's `nct`). `within` needs both edges at once:
  simulated from the exact sampling distributions of the estimate and its standard error.
- proportions (Rate: Wilson; Contrast of rates: Newcombe, paired or independent): exact binomial sums
  (Rate) or parametric simulation of the 2×2 / two-binomial outcome at the observed rates.
- CensoredTrend: the maximum-likelihood slope's standard error shrinks as 1/√n (normal approximation
  of the profile-likelihood interval).
- BestFit: parametric simulation from the better-fitting family (fitted line and residual spread)
  at the design replicated n times; power = P(AIC gap beyond the margin).
- AllOf (and a Trend with controls): parts judged on one frame; reproduced needs every part
  (product of the parts' powers), not reproduced needs any part (1 − Π(1 − p)).

Where the estimate lies in a band's indifference zone (between lo and hi of `above`, or between the
`within` band and its tolerance) no number of units decides it: `units_needed` is None and the text
says so. Simulations use a fixed seed, so a report is the same every time it is built.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats as sps

from learnability import stats
from learnability.claims.evidence import Frame
from learnability.claims.rules import (
    AllOf,
    Band,
    BestFit,
    CensoredTrend,
    Contrast,
    Mean,
    Rate,
    Rule,
    Trend,
    control_slopes,
    unit_slope_map,
)

TARGET = 0.8  # the power `units_needed` asks for
MAX_FACTOR = 64  # search for units_needed up to this many times the units now (and at least 256)
SIMULATIONS = 4000  # draws per simulated power value
SEED = 20261201


class NoPower(Exception):
    """No power curve: the claim cannot be decided by units, or there is nothing to plan from."""


class Undecidable(NoPower):
    """No number of units decides the claim (the reason is the message)."""


@dataclass
class Curve:
    """Power as a function of the units per cell, `n0` of them now. `fn(n)` is the power at the
    confidence level in force; `side` is the verdict the estimate points to."""

    n0: int
    fn: Callable[[int], float]
    side: str  # "reproduced" | "not reproduced"
    note: str = ""  # how it was computed, for the text ("simulated", "normal approximation")

    def __call__(self, n: int) -> float:
        return float(min(1.0, max(0.0, self.fn(n))))


# -- the pieces every curve is built from ---------------------------------------------------------------
def _sides(band: Band, value: float) -> list[tuple[str, str, float]]:
    """The edges the interval must clear on the estimate's side: (side, 'lo'/'hi' bound, edge)."""
    lo, hi = band.lo, band.hi
    if band.direction == "above":
        if value > hi:
            return [("reproduced", "lo", hi)]
        if value < lo:
            return [("not reproduced", "hi", lo)]
    elif band.direction == "below":
        if value < lo:
            return [("reproduced", "hi", lo)]
        if value > hi:
            return [("not reproduced", "lo", hi)]
    else:
        t = band.tolerance
        if lo < value < hi:
            return [("reproduced", "lo", lo), ("reproduced", "hi", hi)]
        if value > hi + t:
            return [("not reproduced", "lo", hi + t)]
        if value < lo - t:
            return [("not reproduced", "hi", lo - t)]
    raise Undecidable(
        f"the estimate {value:.3g} lies inside the band's indifference zone ({_zone(band)})"
    )


def _zone(band: Band) -> str:
    if band.direction == "within":
        t = band.tolerance
        return (
            f"between [{band.lo:.3g}, {band.hi:.3g}] and [{band.lo - t:.3g}, {band.hi + t:.3g}], "
            "or on an edge"
        )
    return f"[{band.lo:.3g}, {band.hi:.3g}]"


def t_power(delta: float, se: float, dof: float) -> float:
    """P(the interval's bound clears an edge at distance `delta` on the estimate's side): the
    non-central t tail at the level in force. `se` is the estimate's standard error."""
    if not (dof > 0) or not math.isfinite(se):
        return 0.0
    if se <= 0:
        return 1.0 if delta > 0 else 0.0
    q = stats.t_quantile(dof)
    return float(sps.nct.sf(q, dof, delta / se))


def _t_curve(
    band: Band, value: float, se_of: Callable[[int], float], dof_of: Callable[[int], float],
    n0: int, min_n: int,
) -> Curve:  # fmt: skip
    """A t-type statistic: estimate ~ N(value, se(n)²), se estimated with dof(n) degrees of freedom."""
    edges = _sides(band, value)
    side = edges[0][0]
    if len(edges) == 1:
        edge = edges[0][2]
        delta = abs(value - edge)

        def fn(n: int) -> float:
            return 0.0 if n < min_n else t_power(delta, se_of(n), dof_of(n))

        return Curve(n0, fn, side)
    lo_edge, hi_edge = edges[0][2], edges[1][2]

    def both(n: int) -> float:  # within: the interval inside [lo, hi]: simulated
        if n < min_n:
            return 0.0
        se, dof = se_of(n), dof_of(n)
        if not (dof > 0 and math.isfinite(se)):
            return 0.0
        if se <= 0:
            return 1.0
        rng = np.random.default_rng(SEED + n)
        est = value + se * rng.standard_normal(SIMULATIONS)
        se_hat = se * np.sqrt(rng.chisquare(dof, SIMULATIONS) / dof)
        q = stats.t_quantile(dof)
        return float(np.mean((est - q * se_hat > lo_edge) & (est + q * se_hat < hi_edge)))

    return Curve(n0, both, side, "simulated")


def _welch_dof(va: float, vb: float, na: float, nb: float) -> float:
    """Welch–Satterthwaite degrees of freedom of var_a/na + var_b/nb."""
    a, b = va / na, vb / nb
    if a + b == 0:
        return max(na + nb - 2, 1.0)
    return (a + b) ** 2 / (
        (a * a / (na - 1) if na > 1 else math.inf) + (b * b / (nb - 1) if nb > 1 else math.inf)
    )


def _spread(values: np.ndarray, prior_sd: float | None) -> float:
    if values.size >= 2:
        return float(values.std(ddof=1))
    if prior_sd is None:
        raise _NoSpread()
    return float(prior_sd)


class _NoSpread(NoPower):
    pass


def _one_sample(band: Band, values: np.ndarray, min_n: int, prior_sd: float | None) -> Curve:
    values = values[np.isfinite(values)]
    if values.size == 0:
        raise _NoData()
    sd = _spread(values, prior_sd)
    return _t_curve(
        band, float(values.mean()), lambda n: sd / math.sqrt(n), lambda n: n - 1,
        int(values.size), max(min_n, 2),
    )  # fmt: skip


class _NoData(NoPower):
    pass


def _two_sample(
    band: Band, a: np.ndarray, b: np.ndarray, min_n: int, prior_sd: float | None
) -> Curve:
    """Welch: independent groups scaled together (their size ratio kept)."""
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    if a.size == 0 or b.size == 0:
        raise _NoData()
    va, vb = _spread(a, prior_sd) ** 2, _spread(b, prior_sd) ** 2
    n0 = int(min(a.size, b.size))
    ra, rb = a.size / n0, b.size / n0

    def se(n: int) -> float:
        return math.sqrt(va / (ra * n) + vb / (rb * n))

    def dof(n: int) -> float:
        return _welch_dof(va, vb, ra * n, rb * n)

    return _t_curve(band, float(a.mean() - b.mean()), se, dof, n0, max(min_n, 2))


# -- proportions ----------------------------------------------------------------------------------------
def _binary(values: np.ndarray) -> bool:
    return bool(values.size) and bool(np.all((values == 0) | (values == 1)))


def _rate_curve(band: Band, values: np.ndarray, min_n: int) -> Curve:
    p = float(values.mean())
    edges = _sides(band, p)

    def fn(n: int) -> float:
        if n < min_n:
            return 0.0
        k = np.arange(n + 1)
        lo, hi = stats.wilson_bounds(k, n)
        ok = np.ones(n + 1, dtype=bool)
        for _, bound, edge in edges:
            ok &= (lo > edge) if bound == "lo" else (hi < edge)
        return float(sps.binom.pmf(k, n, p)[ok].sum())

    return Curve(int(values.size), fn, edges[0][0], "exact binomial")


def _clears(edges: list[tuple[str, str, float]], lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    ok = np.ones(lo.shape, dtype=bool)
    for _, bound, edge in edges:
        ok &= (lo > edge) if bound == "lo" else (hi < edge)
    return ok


def _rate_diff_curve(band: Band, a: np.ndarray, b: np.ndarray, paired: bool, min_n: int) -> Curve:
    a, b = a > 0.5, b > 0.5
    if a.size == 0 or b.size == 0:
        raise _NoData()
    d = float(a.mean() - b.mean())
    edges = _sides(band, d)
    if paired:
        cells = np.array([(a & b).mean(), (a & ~b).mean(), (~a & b).mean(), (~a & ~b).mean()])

        def fn(n: int) -> float:
            if n < min_n:
                return 0.0
            draws = np.random.default_rng(SEED + n).multinomial(n, cells, SIMULATIONS)
            lo, hi = stats.paired_newcombe_bounds(draws[:, 0], draws[:, 1], draws[:, 2], n)
            return float(_clears(edges, lo, hi).mean())

        return Curve(int(a.size), fn, edges[0][0], "simulated")
    n0 = int(min(a.size, b.size))
    ra, rb = a.size / n0, b.size / n0
    pa, pb = float(a.mean()), float(b.mean())

    def fn2(n: int) -> float:
        if n < min_n:
            return 0.0
        na, nb = max(1, round(ra * n)), max(1, round(rb * n))
        rng = np.random.default_rng(SEED + n)
        k1, k2 = rng.binomial(na, pa, SIMULATIONS), rng.binomial(nb, pb, SIMULATIONS)
        lo, hi = stats.newcombe_bounds(k1, na, k2, nb)
        return float(_clears(edges, lo, hi).mean())

    return Curve(n0, fn2, edges[0][0], "simulated")


# -- per rule -------------------------------------------------------------------------------------------
def min_cell(frame: Frame, groups: list[str]) -> int:
    """The fewest units in any cell of `groups` (what a power statement counts as units now)."""
    counts = [n for g in groups for n in frame.cell_counts(g).values()]
    return min(counts) if counts else 0


def curve(rule: Rule, frame: Frame, min_n: int = 2, prior_sd: float | None = None) -> Curve:
    """The power curve of `rule` on the data in `frame` (raises Undecidable, _NoData, _NoSpread)."""
    if not isinstance(rule, AllOf) and (
        empty := [g for g in rule.groups() if not frame.cell_counts(g)]
    ):  # nothing to plan from: saying "0 distinct x, more units do not help" would be a guess
        raise _NoData(f"group {empty[0]!r} has no observations (the evidence says why)")
    if isinstance(rule, Rate):
        v = frame.values(rule.focus)
        v = v[np.isfinite(v)]
        if v.size == 0:
            raise _NoData()
        if _binary(v):
            return _rate_curve(rule.band, v, min_n)
        return _one_sample(rule.band, v, min_n, prior_sd)
    if isinstance(rule, Mean):
        return _one_sample(rule.band, frame.values(rule.focus), min_n, prior_sd)
    if isinstance(rule, Contrast):
        return _contrast(rule, frame, min_n, prior_sd)
    if isinstance(rule, Trend):
        return _trend(rule, frame, min_n, prior_sd)
    if isinstance(rule, CensoredTrend):
        return _censored(rule, frame, min_n)
    if isinstance(rule, BestFit):
        return _best_fit(rule, frame, min_n)
    if isinstance(rule, AllOf):
        return _combine([curve(p, frame, min_n, prior_sd) for p in rule.parts])
    raise Undecidable(f"no power model for a {type(rule).__name__} rule")


def _contrast(rule: Contrast, frame: Frame, min_n: int, prior_sd: float | None) -> Curve:
    a, b, paired = rule.samples(frame)
    if rule.kind_of == "rate":
        return _rate_diff_curve(rule.band, a, b, paired, min_n)
    if paired:
        keep = np.isfinite(a) & np.isfinite(b)
        return _one_sample(rule.band, a[keep] - b[keep], min_n, prior_sd)
    return _two_sample(rule.band, a, b, min_n, prior_sd)


def _by_unit(frame: Frame, group: str) -> dict[Any, list[tuple[float, float]]]:
    out: dict[Any, list[tuple[float, float]]] = {}
    for r in frame.rows(group):
        if r.x is not None:
            out.setdefault(r.unit, []).append((float(r.x), r.y))
    return out


def _unit_slopes(frame: Frame, group: str) -> np.ndarray:
    """Each unit's slope, as the rule computes it (`rules.unit_slope_map`)."""
    return np.asarray(list(unit_slope_map(frame, group).values()), dtype=float)


def _trend(rule: Trend, frame: Frame, min_n: int, prior_sd: float | None) -> Curve:
    if len(frame.xs(rule.focus)) < rule.min_x:
        raise Undecidable(
            f"only {len(frame.xs(rule.focus))} distinct {rule.x} (the rule needs {rule.min_x}): "
            "more units at the same points do not help"
        )
    repeated = any(len(v) > 1 for v in _by_unit(frame, rule.focus).values())
    per_unit = rule.per_unit if rule.per_unit is not None else repeated
    parts: list[Curve] = []
    if per_unit:
        focus = _unit_slopes(frame, rule.focus)
        parts.append(_one_sample(rule.band, focus, min_n, prior_sd))
        for c in rule.controls:
            assert rule.control_band is not None
            a, b, paired = control_slopes(frame, rule.focus, c, rule.pair_controls)
            parts.append(
                _one_sample(rule.control_band, a - b, min_n, prior_sd)
                if paired
                else _two_sample(rule.control_band, a, b, min_n, prior_sd)
            )
        for p in parts:  # per-unit slopes: one slope per unit, so n units = n slopes
            p.n0 = min_cell(frame, rule.groups())
        return _combine(parts) if len(parts) > 1 else parts[0]
    fit, m0 = _pooled(frame, rule.focus)
    parts.append(_pooled_curve(rule.band, fit, m0, min_n, prior_sd))
    for c in rule.controls:
        assert rule.control_band is not None
        c_fit, c_m0 = _pooled(frame, c)
        parts.append(_pooled_diff_curve(rule.control_band, fit, c_fit, m0, c_m0, min_n))
    n0 = min_cell(frame, rule.groups())
    for p in parts:
        p.n0 = n0
    return _combine(parts) if len(parts) > 1 else parts[0]


def _pooled(frame: Frame, group: str) -> tuple[stats.LineFit, int]:
    rows = [r for r in frame.rows(group) if r.x is not None]
    if not rows:
        raise _NoData()
    fit = stats.ols([float(r.x) for r in rows], [r.y for r in rows])  # type: ignore[arg-type]
    return fit, max(1, min(frame.cell_counts(group).values()))


def _pooled_curve(
    band: Band, fit: stats.LineFit, m0: int, min_n: int, prior_sd: float | None
) -> Curve:
    """OLS slope over every run: n units per x cell; se ∝ 1/√n, df = rows − 2."""
    if not math.isfinite(fit.slope):
        raise _NoData()
    se0 = fit.se
    if not math.isfinite(se0):  # two rows: no residual spread yet
        if prior_sd is None:
            raise _NoSpread()
        se0 = prior_sd  # a declared spread of the slope itself
    rows0 = fit.n
    return _t_curve(
        band, fit.slope, lambda n: se0 * math.sqrt(m0 / n), lambda n: rows0 * n / m0 - 2,
        m0, max(min_n, 1),
    )  # fmt: skip


def _pooled_diff_curve(
    band: Band, a: stats.LineFit, b: stats.LineFit, ma: int, mb: int, min_n: int
) -> Curve:
    if not (math.isfinite(a.se) and math.isfinite(b.se)):
        raise _NoSpread()
    m0 = min(ma, mb)

    def se(n: int) -> float:
        return math.sqrt(a.se**2 * ma / n + b.se**2 * mb / n)

    def dof(n: int) -> float:
        va, vb = a.se**2 * ma / n, b.se**2 * mb / n
        na, nb = a.n * n / ma, b.n * n / mb
        if va + vb == 0:
            return na + nb - 4
        return (va + vb) ** 2 / (va**2 / (na - 2) + vb**2 / (nb - 2))

    return _t_curve(band, a.slope - b.slope, se, dof, m0, max(min_n, 1))


def _censored(rule: CensoredTrend, frame: Frame, min_n: int) -> Curve:
    rows = [r for r in frame.rows(rule.focus) if r.x is not None]
    if len({r.x for r in rows}) < rule.min_x:
        raise Undecidable(
            f"only {len({r.x for r in rows})} distinct {rule.x}: more units do not help"
        )
    with stats.confidence(
        stats.LEVEL
    ):  # se from the 95% profile interval, whatever level is in force
        fit = stats.censored_line(
            [float(r.x or 0.0) for r in rows], [r.y for r in rows], [r.censored for r in rows]
        )
    if not (math.isfinite(fit.slope_lo) and math.isfinite(fit.slope_hi)):
        raise _NoSpread()
    se0 = (fit.slope_hi - fit.slope_lo) / (2 * float(sps.norm.ppf(0.5 + stats.LEVEL / 2)))
    m0 = min_cell(frame, [rule.focus])
    c = _t_curve(
        rule.band, fit.slope, lambda n: se0 * math.sqrt(m0 / n), lambda n: 10_000.0,
        m0, max(min_n, 1),
    )  # fmt: skip
    c.note = "normal approximation"
    return c


def _best_fit(rule: BestFit, frame: Frame, min_n: int) -> Curve:
    x, y = frame.xy(rule.focus)
    if len(set(x.tolist())) < rule.min_x:
        raise Undecidable(f"only {len(set(x.tolist()))} distinct {rule.x}: more units do not help")
    fits = stats.compare_fits(x, y, rule.transforms)
    by_name = {f.name: f for f in fits}
    rival = min((f for f in fits if f.name != rule.expected), key=lambda f: f.aic)
    gap = rival.aic - by_name[rule.expected].aic
    side = "reproduced" if gap >= 0 else "not reproduced"
    source = by_name[rule.expected] if gap >= 0 else rival
    t_x = np.asarray(rule.transforms[source.name](x), dtype=float)
    sigma = float(np.sqrt(np.mean((y - source.fit.predict(t_x)) ** 2)))
    design = np.unique(x)  # n units per cell: each distinct x measured n times
    mu = source.fit.predict(np.asarray(rule.transforms[source.name](design), dtype=float))
    m0 = max(1, min_cell(frame, [rule.focus]))

    def fn(n: int) -> float:
        if n < min_n:
            return 0.0
        xs, means = np.repeat(design, n), np.repeat(mu, n)
        ys = means + sigma * np.random.default_rng(SEED + n).standard_normal((SIMULATIONS, xs.size))
        aic = {
            name: _aics(np.asarray(t(xs), dtype=float), ys) for name, t in rule.transforms.items()
        }
        rivals = np.min([v for k, v in aic.items() if k != rule.expected], axis=0)
        g = rivals - aic[rule.expected]
        return float(np.mean(g > rule.margin if side == "reproduced" else g < -rule.margin))

    return Curve(m0, fn, side, "simulated")


def _aics(t: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """`stats.compare_fits`' Gaussian AIC of y = a + b·t for every row of `ys` at once."""
    n = t.size
    tc = t - t.mean()
    yc = ys - ys.mean(axis=1, keepdims=True)
    stt = float((tc**2).sum())
    rss = (yc**2).sum(axis=1) - ((yc @ tc) ** 2 / stt if stt > 0 else 0.0)
    return n * np.log(np.maximum(rss, 1e-300) / n) + 2 * 3


def _combine(parts: list[Curve]) -> Curve:
    """Parts of one verdict: reproduced needs them all, not reproduced any one."""
    against = [p for p in parts if p.side == "not reproduced"]
    n0 = min(p.n0 for p in parts)
    note = ", ".join(sorted({p.note for p in parts if p.note}))
    if against:
        return Curve(n0, lambda n: 1 - math.prod(1 - p(n) for p in against), "not reproduced", note)
    return Curve(n0, lambda n: math.prod(p(n) for p in parts), "reproduced", note)


# -- the result -----------------------------------------------------------------------------------------
@dataclass
class Power:
    current: float | None
    units_now: int
    units_needed: int | None
    cost_cpu_min: float | None
    text: str
    side: str | None = None  # the verdict the estimate points to

    def as_json(self) -> dict[str, Any]:
        return {
            "current": None if self.current is None else round(self.current, 4),
            "units_now": self.units_now,
            "units_needed": self.units_needed,
            "cost_cpu_min": None if self.cost_cpu_min is None else round(self.cost_cpu_min, 2),
            "text": self.text,
        }


def units_needed(c: Curve, target: float = TARGET) -> int | None:
    """The fewest units per cell with power ≥ target (None: not within MAX_FACTOR × now)."""
    cap = max(256, MAX_FACTOR * max(c.n0, 1))
    lo = 1
    hi = max(2, c.n0)
    while c(hi) < target:
        lo = hi
        hi *= 2
        if hi > cap:
            return None
    # smallest n in (lo, hi] with power ≥ target (power is increasing in n)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if c(mid) >= target:
            hi = mid
        else:
            lo = mid
    return hi if c(hi) >= target else None


def plural(kind: str, n: int) -> str:
    """'seed' → 'seeds', 'training run (seed)' → 'training runs (seed)', '(task, seed)' → '(task,
    seed) units'."""
    if kind.startswith("("):
        return f"{kind} unit{'s' if n != 1 else ''}"
    head, paren, tail = kind.partition(" (")
    if n == 1 or head.endswith("s"):
        return kind
    return f"{head}s{paren}{tail}"


def analyse(
    rule: Rule,
    frame: Frame | None,
    *,
    kind: str = "unit",
    min_n: int = 2,
    prior_sd: float | None = None,
    seconds_per_unit: float | None = None,
    cost_note: str = "",
    why_not: str = "",
    units_total: int | None = None,
) -> Power:
    """The `power` entry of one claim. `why_not` (a short-circuit: missing runs, a failed pipeline)
    means no power is computed; `seconds_per_unit` prices the added units (None: `cost_note` says
    why the cost is unknown)."""
    if why_not or frame is None:
        return Power(None, 0, None, None, f"no power estimate: {why_not or 'no data'}")

    def units(n0: int) -> str:  # the card counts every unit; power the scarcest cell
        if units_total is not None and units_total > n0:
            return f"{n0} {plural(kind, n0)} in the smallest cell (of {units_total} in all)"
        return f"{n0} {plural(kind, n0)}"

    try:
        c = curve(rule, frame, min_n, prior_sd)
    except Undecidable as exc:
        n0 = min_cell(frame, rule.groups())
        return Power(
            None, n0, None, None,
            f"{units(n0)}: {exc}; no number of {plural(kind, 2)} decides it",
        )  # fmt: skip
    except _NoSpread:
        n0 = min_cell(frame, rule.groups())
        return Power(
            None, n0, None, None,
            f"{units(n0)}: the spread between units is unknown (fewer than 2 units "
            "and no prior_sd declared)",
        )  # fmt: skip
    except _NoData as exc:
        return Power(None, 0, None, None, f"no power estimate: {str(exc) or 'no observations'}")
    n0 = c.n0
    now = c(n0)
    need = units_needed(c)
    head = f"{units(n0)} give {now:.0%} power"
    cost = None
    if need is None:
        text = f"{head}; more than {max(256, MAX_FACTOR * max(n0, 1))} would be needed for 80%"
    elif need <= n0:
        text = f"{head}; {need} would already give 80%"
    else:
        text = f"{head}; {need} would give 80%"
        if seconds_per_unit is not None:
            cost = max(0, need - n0) * seconds_per_unit / 60
            text += f" (≈ {_minutes(cost)} CPU-min)" if need > n0 else ""
        elif need > n0 and cost_note:
            text += f" ({cost_note})"
    if c.note:
        text += f" [{c.note}]"
    return Power(now, n0, need, cost, text, c.side)


def _minutes(m: float) -> str:
    return f"{m:.2g}" if m < 10 else f"{m:.0f}"


__all__ = [
    "TARGET",
    "Curve",
    "NoPower",
    "Power",
    "Undecidable",
    "analyse",
    "curve",
    "plural",
    "t_power",
    "units_needed",
]
