"""Statistics for verdicts and figures: estimates with 95% intervals, fits, comparisons.

Every function returns plain numbers (an `Estimate` or a `LineFit`), never a verdict: deciding is the
job of `learnability.claims`. Quantiles come from scipy's distributions. Non-finite inputs are dropped
(a diverged run has no sharpness); an estimate from no data is NaN with n = 0.

- means: `mean_ci` (Student t), `paired_mean_diff`, `welch_diff`
- proportions: `wilson`, `proportion`, `newcombe_diff` (independent), `paired_proportion_diff` (paired)
- lines: `ols` (slope with a t interval), `slope_difference` (Welch–Satterthwaite), `spearman`
- model choice: `compare_fits` (Gaussian AIC of one-predictor least-squares fits on the same response)
- censored data: `censored_line` (right-censored normal regression, maximum likelihood)
- resampling: `bootstrap_ci` (percentile, seeded, resamples independent units)

Every interval is at the confidence level in force, 95% unless a caller asks for another with
`with confidence(0.99): ...` (the adaptive design of `learnability.claims.sequential` judges its later
looks at stricter levels through the same functions, so no rule needs a second implementation).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

Values = Sequence[float] | np.ndarray  # any 1-d run of numbers
LEVEL = 0.95  # the default confidence level of every interval
_LEVEL: contextvars.ContextVar[float] = contextvars.ContextVar("confidence_level", default=LEVEL)


def level() -> float:
    """The confidence level in force (0.95 unless inside `confidence`)."""
    return _LEVEL.get()


@contextlib.contextmanager
def confidence(value: float) -> Iterator[None]:
    """Compute every interval inside the block at confidence `value` (e.g. 0.99) instead of 95%."""
    if not 0 < value < 1:
        raise ValueError(f"a confidence level must lie in (0, 1), got {value}")
    token = _LEVEL.set(float(value))
    try:
        yield
    finally:
        _LEVEL.reset(token)


def z_quantile() -> float:
    """Two-sided normal quantile of the level in force (1.96 at 95%)."""
    return _z(level())


@functools.lru_cache(maxsize=64)
def _z(at: float) -> float:
    return float(stats.norm.ppf(0.5 + at / 2))


@dataclass(frozen=True)
class Estimate:
    """A number with a 95% interval; `n` counts the independent units behind it."""

    value: float
    lo: float
    hi: float
    n: int

    @property
    def finite(self) -> bool:
        return math.isfinite(self.value)

    def within(self, lo: float, hi: float) -> Estimate:
        """The interval cut to [lo, hi], the range the quantity can take (the point is left alone)."""
        return Estimate(self.value, min(max(self.lo, lo), hi), max(min(self.hi, hi), lo), self.n)

    def fmt(self, digits: int = 3) -> str:
        if not self.finite:
            return f"n/a (n={self.n})"
        v = _g(self.value, digits)
        if self.lo == self.hi == self.value:
            return f"{v} (n={self.n})"
        return f"{v} [{_g(self.lo, digits)}, {_g(self.hi, digits)}] (n={self.n})"


NAN = Estimate(math.nan, math.nan, math.nan, 0)


def _g(x: float, digits: int) -> str:
    if not math.isfinite(x):
        return str(x)
    return f"{x:.{digits}g}"


def _finite(values: Values) -> np.ndarray:
    x = np.asarray([np.nan if v is None else v for v in values], dtype=float)
    return x[np.isfinite(x)]


def t_quantile(dof: float) -> float:
    """Two-sided Student-t quantile at the level in force (inf for dof ≤ 0)."""
    return float(stats.t.ppf(0.5 + level() / 2, dof)) if dof > 0 else math.inf


# -- means --------------------------------------------------------------------------------------------------
def mean_ci(values: Values, bounds: tuple[float, float] | None = None) -> Estimate:
    """Mean with a Student-t interval (the interval is the point when n = 1), cut to `bounds` when the
    values have a range (a probability's interval stops at 0 and 1)."""
    x = _finite(values)
    if x.size == 0:
        return NAN
    mean = float(x.mean())
    if x.size == 1:
        return Estimate(mean, mean, mean, 1)
    half = t_quantile(x.size - 1) * float(x.std(ddof=1)) / math.sqrt(x.size)
    e = Estimate(mean, mean - half, mean + half, int(x.size))
    return e if bounds is None else e.within(*bounds)


def paired_mean_diff(a: Values, b: Values) -> Estimate:
    """Mean of a − b over pairs (a pair with a non-finite side is dropped), t interval."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"paired samples need equal lengths, got {x.size} and {y.size}")
    keep = np.isfinite(x) & np.isfinite(y)
    return mean_ci(x[keep] - y[keep])


def welch_diff(a: Values, b: Values) -> Estimate:
    """Mean of a minus mean of b for independent samples, Welch interval; n = the smaller sample."""
    x, y = _finite(a), _finite(b)
    if x.size == 0 or y.size == 0:
        return NAN
    diff = float(x.mean() - y.mean())
    if x.size < 2 or y.size < 2:
        return Estimate(diff, -math.inf, math.inf, int(min(x.size, y.size)))
    vx, vy = x.var(ddof=1) / x.size, y.var(ddof=1) / y.size
    se = math.sqrt(vx + vy)
    if se == 0:
        return Estimate(diff, diff, diff, int(min(x.size, y.size)))
    dof = (vx + vy) ** 2 / (vx**2 / (x.size - 1) + vy**2 / (y.size - 1))
    half = t_quantile(dof) * se
    return Estimate(diff, diff - half, diff + half, int(min(x.size, y.size)))


# -- proportions --------------------------------------------------------------------------------------------
def wilson(successes: float, trials: int) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion, inside [0, 1] (sensible at 0 and at 1)."""
    if trials <= 0:
        return (math.nan, math.nan)
    lo, hi = wilson_bounds(np.asarray([successes], dtype=float), trials)
    return (float(lo[0]), float(hi[0]))


def wilson_bounds(successes: np.ndarray, trials: int | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`wilson` over arrays of success counts (the power analysis evaluates every outcome at once)."""
    k = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / n
        z = z_quantile()
        denom = 1 + z * z / n
        centre = (p + z * z / (2 * n)) / denom
        half = z * np.sqrt(np.maximum(p * (1 - p), 0.0) / n + z * z / (4 * n * n)) / denom
    # at 0 and at `trials` successes the bound is exactly 0 (or 1); rounding would leave 1e-17 behind
    lo = np.where(k <= 0, 0.0, np.maximum(0.0, centre - half))
    hi = np.where(k >= n, 1.0, np.minimum(1.0, centre + half))
    return lo, hi


def proportion(successes: float, trials: int) -> Estimate:
    if trials <= 0:
        return NAN
    lo, hi = wilson(successes, trials)
    return Estimate(successes / trials, lo, hi, trials)


def newcombe_diff(k1: float, n1: int, k2: float, n2: int) -> Estimate:
    """p1 − p2 for independent samples: Newcombe's hybrid score interval (method 10)."""
    if n1 <= 0 or n2 <= 0:
        return NAN
    lo, hi = newcombe_bounds(np.asarray([k1]), n1, np.asarray([k2]), n2)
    return Estimate(k1 / n1 - k2 / n2, float(lo[0]), float(hi[0]), min(n1, n2))


def newcombe_bounds(
    k1: np.ndarray, n1: int, k2: np.ndarray, n2: int
) -> tuple[np.ndarray, np.ndarray]:
    """`newcombe_diff`'s interval over arrays of success counts."""
    k1, k2 = np.asarray(k1, dtype=float), np.asarray(k2, dtype=float)
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson_bounds(k1, n1)
    l2, u2 = wilson_bounds(k2, n2)
    d = p1 - p2
    lo = d - np.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    hi = d + np.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return np.maximum(-1.0, lo), np.minimum(1.0, hi)


def paired_proportion_diff(
    a: Sequence[bool] | np.ndarray, b: Sequence[bool] | np.ndarray
) -> Estimate:
    """P(a) − P(b) over paired binary outcomes: Newcombe's score interval for paired data (method 10)."""
    x, y = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    if x.shape != y.shape:
        raise ValueError(f"paired samples need equal lengths, got {x.size} and {y.size}")
    n = int(x.size)
    if n == 0:
        return NAN
    both = int((x & y).sum())
    only_a = int((x & ~y).sum())
    only_b = int((~x & y).sum())
    lo, hi = paired_newcombe_bounds(
        np.asarray([both]), np.asarray([only_a]), np.asarray([only_b]), n
    )
    return Estimate((only_a - only_b) / n, float(lo[0]), float(hi[0]), n)


def paired_newcombe_bounds(
    both: np.ndarray, only_a: np.ndarray, only_b: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """`paired_proportion_diff`'s interval over arrays of 2×2 table counts (n pairs each)."""
    both, only_a, only_b = (np.asarray(v, dtype=float) for v in (both, only_a, only_b))
    neither = n - both - only_a - only_b
    p1, p2 = (both + only_a) / n, (both + only_b) / n
    l1, u1 = wilson_bounds(both + only_a, n)
    l2, u2 = wilson_bounds(both + only_b, n)
    # correlation of the two margins (phi), truncated at 0 as Newcombe recommends
    denom = (both + only_a) * (neither + only_b) * (both + only_b) * (neither + only_a)
    with np.errstate(divide="ignore", invalid="ignore"):
        phi = np.where(
            denom > 0,
            np.maximum(0.0, (both * neither - only_a * only_b) / np.sqrt(np.maximum(denom, 1.0))),
            0.0,
        )
    d = p1 - p2
    dl = np.sqrt(np.maximum(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    du = np.sqrt(np.maximum(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return np.maximum(-1.0, d - dl), np.minimum(1.0, d + du)


# -- lines --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LineFit:
    """Least-squares y = slope·x + intercept with a 95% t interval on the slope."""

    slope: float
    intercept: float
    slope_lo: float
    slope_hi: float
    se: float
    r2: float
    n: int

    @property
    def estimate(self) -> Estimate:
        return Estimate(self.slope, self.slope_lo, self.slope_hi, self.n)

    def predict(self, x: Values) -> np.ndarray:
        return self.slope * np.asarray(x, dtype=float) + self.intercept

    def fmt(self, digits: int = 3) -> str:
        return f"slope {self.estimate.fmt(digits)}, R²={self.r2:.2f}"


def ols(xs: Values, ys: Values) -> LineFit:
    """Ordinary least squares; needs two distinct x (three for a finite interval)."""
    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    n = int(x.size)
    if n < 2 or np.ptp(x) == 0:
        return LineFit(math.nan, math.nan, math.nan, math.nan, math.nan, math.nan, n)
    sxx = float(((x - x.mean()) ** 2).sum())
    slope = float(((x - x.mean()) * (y - y.mean())).sum() / sxx)
    intercept = float(y.mean() - slope * x.mean())
    resid = y - (slope * x + intercept)
    ss_res, ss_tot = float((resid**2).sum()), float(((y - y.mean()) ** 2).sum())
    r2 = 1 - ss_res / ss_tot if ss_tot > 0 else 1.0
    if n == 2:
        return LineFit(slope, intercept, -math.inf, math.inf, math.inf, r2, n)
    se = math.sqrt(ss_res / (n - 2) / sxx)
    half = t_quantile(n - 2) * se
    return LineFit(slope, intercept, slope - half, slope + half, se, r2, n)


def slope_difference(a: LineFit, b: LineFit) -> Estimate:
    """Slope of a minus slope of b for independent fits (Welch–Satterthwaite degrees of freedom)."""
    if not (math.isfinite(a.slope) and math.isfinite(b.slope)):
        return NAN
    diff = a.slope - b.slope
    n = min(a.n, b.n)
    if not (math.isfinite(a.se) and math.isfinite(b.se)):
        return Estimate(diff, -math.inf, math.inf, n)
    va, vb = a.se**2, b.se**2
    se = math.sqrt(va + vb)
    if se == 0:
        return Estimate(diff, diff, diff, n)
    dof = (va + vb) ** 2 / (va**2 / (a.n - 2) + vb**2 / (b.n - 2))
    half = t_quantile(dof) * se
    return Estimate(diff, diff - half, diff + half, n)


def spearman(xs: Values, ys: Values) -> Estimate:
    """Spearman's rank correlation with a Fisher-z interval (n ≥ 4 for a finite interval)."""
    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    n = int(x.size)
    if n < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return Estimate(math.nan, math.nan, math.nan, n)
    rho = float(stats.spearmanr(x, y).statistic)
    if n < 4 or abs(rho) >= 1:
        return Estimate(rho, -1.0 if abs(rho) < 1 else rho, 1.0 if abs(rho) < 1 else rho, n)
    z, half = math.atanh(rho), z_quantile() * math.sqrt(1.06 / (n - 3))
    return Estimate(rho, math.tanh(z - half), math.tanh(z + half), n)


# -- model choice -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CandidateFit:
    name: str
    fit: LineFit
    aic: float


def compare_fits(
    xs: Values, ys: Values, transforms: dict[str, Callable[[np.ndarray], np.ndarray]]
) -> list[CandidateFit]:
    """Fit y = a + b·t(x) for each named transform t; Gaussian AIC (3 parameters: a, b, σ), best first.

    Every candidate is fitted to the same response y at the same points, so AIC values are comparable.
    """
    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    out = []
    for name, transform in transforms.items():
        t = np.asarray(transform(x), dtype=float)
        fit = ols(t, y)
        rss = float(((y - fit.predict(t)) ** 2).sum()) if math.isfinite(fit.slope) else math.nan
        n = int(x.size)
        # a perfect fit has rss 0: floor it so AIC stays finite and comparable
        aic = n * math.log(max(rss, 1e-300) / n) + 2 * 3 if n and math.isfinite(rss) else math.nan
        out.append(CandidateFit(name, fit, aic))
    return sorted(out, key=lambda c: (math.isnan(c.aic), c.aic))


# -- censored regression ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CensoredFit:
    """y = slope·x + intercept + N(0, σ²), some y only known to exceed a bound (right-censored)."""

    slope: float
    intercept: float
    sigma: float
    slope_lo: float
    slope_hi: float
    n: int
    censored: int

    @property
    def estimate(self) -> Estimate:
        return Estimate(self.slope, self.slope_lo, self.slope_hi, self.n)


def censored_line(xs: Values, ys: Values, censored: Sequence[bool] | np.ndarray) -> CensoredFit:
    """Maximum-likelihood line through data where `censored[i]` means the true y_i is > ys[i].

    A Tobit-type model: observed points contribute the normal density, censored ones the normal tail
    P(Y > y_i). The slope's interval comes from the profile likelihood (χ²₁ cut-off), which stays honest
    when censoring makes the likelihood asymmetric. Needs ≥ 3 observed (uncensored) points.
    """
    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    c = np.asarray(censored, dtype=bool)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y, c = x[keep], y[keep], c[keep]
    n, k = int(x.size), int(c.sum())
    nan = CensoredFit(math.nan, math.nan, math.nan, math.nan, math.nan, n, k)
    if n - k < 3 or np.ptp(x) == 0:
        return nan

    def nll(params: np.ndarray, slope: float | None = None) -> float:
        if slope is None:
            b, a, log_s = params
        else:
            b, (a, log_s) = slope, params
        s = math.exp(log_s)
        z = (y - (a + b * x)) / s
        return -float(
            stats.norm.logpdf(z[~c]).sum() - (~c).sum() * log_s + stats.norm.logsf(z[c]).sum()
        )

    start = ols(x[~c], y[~c])
    resid = y[~c] - start.predict(x[~c])
    s0 = max(float(resid.std()), 1e-3 * max(float(np.ptp(y)), 1.0))
    x0 = np.array([start.slope, start.intercept, math.log(s0)])
    best = optimize.minimize(
        nll, x0, method="Nelder-Mead", options={"xatol": 1e-9, "fatol": 1e-10, "maxiter": 20_000}
    )
    b_hat, a_hat, log_s_hat = best.x
    nll_hat = float(best.fun)
    cut = float(stats.chi2.ppf(level(), 1)) / 2

    def excess(b: float) -> float:
        inner = optimize.minimize(
            nll, np.array([a_hat + (b_hat - b) * float(x.mean()), log_s_hat]), args=(b,),
            method="Nelder-Mead", options={"xatol": 1e-9, "fatol": 1e-10, "maxiter": 20_000},
        )  # fmt: skip
        return float(inner.fun) - nll_hat - cut

    scale = max(abs(start.se) if math.isfinite(start.se) else 0.0, 1e-3 * max(abs(b_hat), 1.0))

    def bound(direction: int) -> float:
        step = scale
        for _ in range(60):
            if excess(b_hat + direction * step) > 0:
                return float(optimize.brentq(lambda b: excess(b), b_hat, b_hat + direction * step))
            step *= 2
        return direction * math.inf

    lo, hi = sorted((bound(-1), bound(+1)))
    return CensoredFit(float(b_hat), float(a_hat), math.exp(log_s_hat), lo, hi, n, k)


# -- resampling ---------------------------------------------------------------------------------------------
def bootstrap_ci(
    units: Sequence[object],
    statistic: Callable[[list[object]], float],
    resamples: int = 2000,
    seed: int = 0,
) -> Estimate:
    """Percentile bootstrap over independent units (seeded: the same data give the same interval)."""
    items = list(units)
    if not items:
        return NAN
    value = float(statistic(items))
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(resamples):
        pick = rng.integers(0, len(items), len(items))
        v = float(statistic([items[i] for i in pick]))
        if math.isfinite(v):
            draws.append(v)
    if len(draws) < resamples // 2:
        return Estimate(value, math.nan, math.nan, len(items))
    lo, hi = np.quantile(draws, [(1 - level()) / 2, 1 - (1 - level()) / 2])
    return Estimate(value, float(lo), float(hi), len(items))


__all__ = [
    "LEVEL", "NAN", "CandidateFit", "CensoredFit", "Estimate", "LineFit", "bootstrap_ci",
    "censored_line", "compare_fits", "confidence", "level", "mean_ci", "newcombe_bounds",
    "newcombe_diff", "ols", "paired_mean_diff", "paired_newcombe_bounds", "paired_proportion_diff",
    "proportion", "slope_difference", "spearman", "t_quantile", "welch_diff", "wilson",
    "wilson_bounds", "z_quantile",
]  # fmt: skip
