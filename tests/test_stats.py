"""Statistics: intervals against published values and scipy, laws as properties, coverage by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from learnability import stats


def test_mean_ci_matches_the_t_interval_by_hand():
    e = stats.mean_ci([1.0, 2.0, 3.0])
    # sd 1, t(0.975, 2) = 4.30265273
    assert e.value == 2.0 and e.n == 3
    assert e.hi - e.value == pytest.approx(4.30265273 / math.sqrt(3), rel=1e-8)


def test_non_finite_values_are_dropped_and_empty_is_nan():
    assert stats.mean_ci([1.0, float("nan"), float("inf"), 3.0, None]).n == 2  # type: ignore[list-item]
    e = stats.mean_ci([])
    assert e.n == 0 and math.isnan(e.value)


def test_wilson_known_values():
    lo, hi = stats.wilson(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = stats.wilson(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-4) and hi == pytest.approx(0.5962, abs=1e-4)


def test_newcombe_difference_matches_newcombes_worked_example():
    # Newcombe (1998), Stat Med 17:873, example (a): 56/70 − 48/80 = 0.2, method 10 gives [0.0524, 0.3339]
    e = stats.newcombe_diff(56, 70, 48, 80)
    assert e.value == pytest.approx(0.2)
    assert e.lo == pytest.approx(0.0524, abs=1e-4) and e.hi == pytest.approx(0.3339, abs=1e-4)


def test_paired_proportion_interval_covers_at_the_nominal_rate():
    rng = np.random.default_rng(0)
    hits, trials = 0, 400
    for _ in range(trials):
        a = rng.random(60) < 0.6
        b = np.where(rng.random(60) < 0.7, a, rng.random(60) < 0.4)  # correlated with a
        true = 0.6 - (0.7 * 0.6 + 0.3 * 0.4)
        e = stats.paired_proportion_diff(a, b)
        hits += e.lo <= true <= e.hi
    assert 0.91 <= hits / trials <= 0.99


@settings(max_examples=60, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=40), st.data())
def test_paired_proportion_interval_contains_its_estimate(a, data):
    b = data.draw(st.lists(st.booleans(), min_size=len(a), max_size=len(a)))
    e = stats.paired_proportion_diff(a, b)
    assert -1 <= e.lo <= e.value <= e.hi <= 1


def test_welch_matches_scipy():
    a, b = [1.0, 2.5, 3.1, 4.7], [0.2, 0.9, 1.1]
    e = stats.welch_diff(a, b)
    ci = sps.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert e.lo == pytest.approx(ci.low) and e.hi == pytest.approx(ci.high)


def test_paired_mean_diff_matches_scipy():
    a, b = [1.0, 2.5, 3.1, 4.7, 2.2], [0.2, 0.9, 1.1, 3.0, 2.5]
    e = stats.paired_mean_diff(a, b)
    ci = sps.ttest_rel(a, b).confidence_interval(0.95)
    assert e.lo == pytest.approx(ci.low) and e.hi == pytest.approx(ci.high)


@given(st.floats(-5, 5), st.floats(-5, 5))
def test_ols_recovers_an_exact_line(slope, intercept):
    xs = np.arange(6.0)
    fit = stats.ols(xs, slope * xs + intercept)
    assert fit.slope == pytest.approx(slope, abs=1e-8)
    assert fit.intercept == pytest.approx(intercept, abs=1e-8)


def test_ols_interval_matches_scipy_linregress():
    rng = np.random.default_rng(1)
    x = np.arange(10.0)
    y = 0.3 * x + rng.normal(size=10)
    fit, ref = stats.ols(x, y), sps.linregress(x, y)
    half = sps.t.ppf(0.975, 8) * ref.stderr
    assert fit.slope == pytest.approx(ref.slope)
    assert fit.slope_lo == pytest.approx(ref.slope - half) and fit.se == pytest.approx(ref.stderr)


def test_slope_difference_of_identical_fits_is_centred_on_zero():
    rng = np.random.default_rng(2)
    x = np.repeat(np.arange(5.0), 3)
    fit = stats.ols(x, x + rng.normal(size=x.size))
    d = stats.slope_difference(fit, fit)
    assert d.value == 0 and d.lo == pytest.approx(-d.hi)


def test_spearman_matches_scipy():
    x, y = [1, 2, 3, 4, 5, 6], [2, 1, 4, 3, 6, 5]
    e = stats.spearman(x, y)
    assert e.value == pytest.approx(sps.spearmanr(x, y).statistic)
    assert -1 < e.lo < e.value < e.hi < 1


def test_compare_fits_prefers_the_family_that_generated_the_data():
    d = 2.0 ** np.arange(6, 21)
    m = 3 + 0.8 * np.log(d) ** 2
    fits = stats.compare_fits(
        d, np.log(m), {"polylog": lambda x: np.log(np.log(x)), "power": np.log}
    )
    assert fits[0].name == "polylog" and fits[0].aic < fits[1].aic - 10


def test_censored_line_recovers_a_slope_that_dropping_censored_points_underestimates():
    rng = np.random.default_rng(3)
    x = np.repeat(np.log2([16, 32, 64, 128, 256, 512, 1024]), 40)
    y_true = 1.0 * x + 2 + rng.normal(0, 0.5, x.size)
    cap = 10.5
    censored = y_true > cap
    y = np.minimum(y_true, cap)
    assert censored.sum() >= 6  # the largest d mostly run out of budget
    fit = stats.censored_line(x, y, censored)
    dropped = stats.ols(x[~censored], y[~censored])
    assert fit.slope_lo <= 1.0 <= fit.slope_hi
    assert abs(fit.slope - 1.0) < abs(dropped.slope - 1.0)
    assert fit.censored == int(censored.sum())


def test_censored_line_without_censoring_agrees_with_least_squares():
    rng = np.random.default_rng(4)
    x = np.arange(12.0)
    y = 0.5 * x + rng.normal(0, 1, 12)
    fit, ls = stats.censored_line(x, y, [False] * 12), stats.ols(x, y)
    assert fit.slope == pytest.approx(ls.slope, abs=1e-4)
    # profile-likelihood interval is a little narrower than t (it uses the normal, σ by ML)
    assert ls.slope_lo < fit.slope_lo < fit.slope < fit.slope_hi < ls.slope_hi


def test_bootstrap_is_seeded():
    data = list(range(20))
    a = stats.bootstrap_ci(data, lambda xs: float(np.mean(xs)), resamples=300, seed=5)
    b = stats.bootstrap_ci(data, lambda xs: float(np.mean(xs)), resamples=300, seed=5)
    assert a == b and a.lo < 9.5 < a.hi


def test_mean_ci_bounds_cut_the_interval_not_the_mean():
    free, cut = stats.mean_ci([0.9, 1.0]), stats.mean_ci([0.9, 1.0], (0.0, 1.0))
    assert free.hi > 1.0 and cut.hi == 1.0 and cut.lo == free.lo and cut.value == free.value
    assert stats.mean_ci([0.0, 0.02], (0.0, 1.0)).lo == 0.0
