"""The power analysis against Monte-Carlo simulation of the rules themselves, and its claims.json row."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from learnability import stats
from learnability.claims import (
    AllOf,
    Choice,
    Claim,
    Contrast,
    Evidence,
    Frame,
    Mean,
    Obs,
    Rate,
    Trend,
    Units,
    above,
    evaluate,
    no_control,
    pilot_power,
    power,
    within,
)

REPS = 1000


def _decided(rule, draw, n: int, side: str) -> float:
    """The share of simulated experiments with n units whose verdict is `side` (the rule itself)."""
    rng = np.random.default_rng(7)
    return float(np.mean([rule.decide(Frame(draw(rng, n))).verdict == side for _ in range(REPS)]))


def _group(values, group="a", tag=None):
    return [Obs((tag, i) if tag else i, float(v), group=group) for i, v in enumerate(values)]


def test_mean_power_matches_simulation_of_the_rule():
    rule = Mean("a", above(0.0, 0.1))
    data = np.array([0.3, 0.05, 0.5, 0.1])
    c = power.curve(rule, Frame(_group(data)))
    m, s = data.mean(), data.std(ddof=1)
    for n in (4, 8):
        simulated = _decided(rule, lambda rng, n: _group(rng.normal(m, s, n)), n, c.side)
        assert c(n) == pytest.approx(simulated, abs=0.05)
    assert c.side == "reproduced" and 0.1 < c(4) < 0.25  # a real, low power: the test can fail


def test_rate_power_matches_simulation_of_the_rule():
    rule = Rate("a", above(0.5, 0.6))
    c = power.curve(rule, Frame(_group([1, 1, 1, 1, 1, 1, 1, 0])))
    for n in (8, 20):
        simulated = _decided(rule, lambda rng, n: _group(rng.random(n) < 7 / 8), n, c.side)
        assert c(n) == pytest.approx(simulated, abs=0.05)
    assert c(8) < 0.5 < c(20)


def test_paired_contrast_power_matches_simulation_of_the_rule():
    rule = Contrast("a", "b", above(0.0, 0.05))
    a, b = np.array([0.5, 0.7, 0.4, 0.6]), np.array([0.4, 0.45, 0.42, 0.3])
    c = power.curve(rule, Frame(_group(a, "a") + _group(b, "b")))
    d = a - b

    def draw(rng, n):
        base = rng.normal(0, 1, n)  # a shared per-unit level, cancelled by pairing
        return _group(base + rng.normal(d.mean(), d.std(ddof=1), n), "a") + _group(base, "b")

    for n in (4, 6):
        assert c(n) == pytest.approx(_decided(rule, draw, n, c.side), abs=0.05)


def test_welch_contrast_power_matches_simulation_of_the_rule():
    rule = Contrast("a", "b", above(0.0, 0.05))
    a, b = np.array([0.5, 0.7, 0.4, 0.6]), np.array([0.4, 0.45, 0.42, 0.3])
    c = power.curve(rule, Frame(_group(a, "a", "a") + _group(b, "b", "b")))

    def draw(rng, n):
        return _group(rng.normal(a.mean(), a.std(ddof=1), n), "a", "a") + _group(
            rng.normal(b.mean(), b.std(ddof=1), n), "b", "b"
        )

    for n in (4, 8):
        assert c(n) == pytest.approx(_decided(rule, draw, n, c.side), abs=0.05)


def test_pooled_trend_power_matches_simulation_of_the_rule():
    rule = Trend("a", above(0.0, 0.05))
    rng = np.random.default_rng(0)
    xs = (4, 6, 8)
    obs = [Obs((x, u), 0.08 * x + rng.normal(0, 0.1), x=x, group="a") for x in xs for u in range(3)]
    fit = stats.ols([o.x for o in obs], [o.y for o in obs])
    resid = np.array([o.y for o in obs]) - fit.predict([o.x for o in obs])
    sigma = float(np.sqrt((resid**2).sum() / (len(obs) - 2)))
    c = power.curve(rule, Frame(obs))

    def draw(rng, n):
        return [
            Obs((x, u), fit.intercept + fit.slope * x + rng.normal(0, sigma), x=x, group="a")
            for x in xs
            for u in range(n)
        ]

    for n in (3, 6):
        assert c(n) == pytest.approx(_decided(rule, draw, n, c.side), abs=0.05)


def test_per_unit_trend_power_matches_simulation_of_the_rule():
    rule = Trend("a", above(0.0, 0.05))
    xs = (4, 6, 8)
    slopes = np.array([0.12, 0.02, 0.2, 0.09])
    obs = [Obs(u, s * x, x=x, group="a") for u, s in enumerate(slopes) for x in xs]
    c = power.curve(rule, Frame(obs))

    def draw(rng, n):
        drawn = rng.normal(slopes.mean(), slopes.std(ddof=1), n)
        return [Obs(u, s * x, x=x, group="a") for u, s in enumerate(drawn) for x in xs]

    for n in (4, 8):
        assert c(n) == pytest.approx(_decided(rule, draw, n, c.side), abs=0.05)


def test_within_band_power_is_simulated_and_matches():
    rule = Mean("a", within(0.0, 1.0, 0.2))
    data = np.array([0.5, 0.3, 0.7, 0.6])
    c = power.curve(rule, Frame(_group(data)))
    draw = lambda rng, n: _group(rng.normal(data.mean(), data.std(ddof=1), n))  # noqa: E731
    assert c(3) == pytest.approx(_decided(rule, draw, 3, "reproduced"), abs=0.05)


def test_units_needed_is_the_smallest_that_reaches_80_percent():
    c = power.curve(Mean("a", above(0.0, 0.1)), Frame(_group([0.3, 0.05, 0.5, 0.1])))
    need = power.units_needed(c)
    assert need is not None and c(need) >= 0.8 > c(need - 1)


def test_all_of_needs_every_part_and_an_estimate_in_the_zone_decides_nothing():
    frame = Frame(_group([0.3, 0.05, 0.5, 0.1]))
    one = power.curve(Mean("a", above(0.0, 0.1)), frame)
    both = power.curve(AllOf((Mean("a", above(0.0, 0.1)), Mean("a", above(-1.0, 0.0)))), frame)
    assert both(6) == pytest.approx(one(6) * power.curve(Mean("a", above(-1.0, 0.0)), frame)(6))
    with pytest.raises(power.Undecidable, match="indifference zone"):
        power.curve(Mean("a", above(0.0, 0.5)), frame)  # mean 0.24 lies in [0, 0.5]


def _records(seconds: float, seeds=(0, 1, 2)):
    return [
        SimpleNamespace(sweep="demo/main", seed=s, seconds=seconds, status="ok", y=v)
        for s, v in zip(seeds, (0.3, 0.05, 0.5))
    ]


class _Results:
    def __init__(self, records):
        self.records = records

    def of(self, sweep, status="ok"):
        return [r for r in self.records if r.sweep.endswith("/" + sweep)]


def _claim(**kw):
    def evidence(results, choices):
        return Evidence([Obs(r.seed, r.y, group="a") for r in results.records])

    kw.setdefault("units", Units("seed", 3))
    return Claim(
        slug="demo", title="demo", statement="s", paper_statement="p", evidence=evidence,
        rule=Mean("a", above(0.0, 0.1)), control=no_control("test"),
        choices=(Choice("c", 1, (2,)),), **kw,
    )  # fmt: skip


def test_the_power_row_prices_the_units_from_recorded_run_times():
    result = evaluate(_claim(replicate=("main",)), _Results(_records(120.0)), "demo", "quick")
    p = result.power
    assert p is not None and p["units_now"] == 3 and 0 < p["current"] < 0.8
    assert p["cost_cpu_min"] == pytest.approx((p["units_needed"] - 3) * 120.0 / 60)
    assert p["text"].startswith("3 seeds give ") and "would give 80% (≈ " in p["text"]
    unpriced = evaluate(_claim(), _Results(_records(120.0)), "demo", "quick").power
    assert unpriced is not None and unpriced["cost_cpu_min"] is None
    assert "cost unknown: no replicate sweeps declared" in unpriced["text"]


def test_prior_sd_stands_in_for_the_spread_of_a_single_unit():
    one = _Results(_records(60.0, seeds=(0,)))
    claim = _claim(units=Units("seed", 1))
    assert "spread between units is unknown" in evaluate(claim, one, "d", "q").power["text"]
    priced = evaluate(_claim(units=Units("seed", 1), prior_sd=0.2), one, "d", "q").power
    assert priced["current"] is not None and priced["units_needed"] > 1


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(-2, 2, allow_nan=False), min_size=2, max_size=8),
    st.floats(-1, 1),
    st.floats(0.05, 1),
)
def test_t_power_grows_with_units_and_units_needed_is_minimal(values, lo, width):
    frame = Frame(_group(values))
    try:
        c = power.curve(Mean("a", above(lo, lo + width)), frame)
    except power.NoPower:
        return  # the estimate lies in the indifference zone (or no spread): nothing to grow
    ps = [c(n) for n in (2, 3, 5, 8, 13, 21)]
    assert all(b >= a - 1e-9 for a, b in itertools.pairwise(ps))
    need = power.units_needed(c)
    if need is not None:
        assert c(need) >= 0.8 and (need <= 2 or c(need - 1) < 0.8)


def test_stricter_levels_nest_the_intervals():
    data = [0.3, 0.05, 0.5, 0.1]
    wide, narrow = stats.mean_ci(data), None
    with stats.confidence(0.99):
        narrow = stats.mean_ci(data)
        assert stats.level() == 0.99
    assert narrow.lo < wide.lo and narrow.hi > wide.hi and stats.level() == 0.95


def test_a_part_with_no_observations_gives_no_power_not_a_guess():
    # one m* analysis of polylog-m had no points at all: "0 distinct d, more units do not help" was a guess
    frame = Frame(_group([0.3, 0.05, 0.5, 0.1]))
    rule = AllOf((Mean("a", above(0.0, 0.1)), Mean("b", above(0.0, 0.1))))
    with pytest.raises(power.NoPower, match="group 'b' has no observations"):
        power.curve(rule, frame)
    row = power.analyse(rule, frame, kind="d")
    assert row.current is None and row.units_needed is None
    assert row.text == "no power estimate: group 'b' has no observations (the evidence says why)"


def test_pilot_resampling_matches_the_t_power_of_a_large_pilot():
    # a pilot of 400 normal units (mean 0.25, sd 0.5) against `above(0, 0.1)`: drawing n units from it
    # with replacement is (nearly) drawing from the normal, so the shares match the t-based curve
    rng = np.random.default_rng(3)
    pilot = [SimpleNamespace(seed=i, y=float(v)) for i, v in enumerate(rng.normal(0.25, 0.5, 400))]
    claim = _claim()
    curve = power.curve(claim.rule, Frame(claim.evidence(SimpleNamespace(records=pilot), {}).obs))
    found = pilot_power(claim, SimpleNamespace(records=pilot), [10, 30, 60], draws=2000, seed=1)
    assert found.pool == 400
    for n in (10, 30, 60):
        assert found.shares[n].get("reproduced", 0.0) == pytest.approx(curve(n), abs=0.05)
    assert found.shares[60]["reproduced"] > found.shares[10]["reproduced"]  # more units, more power


def test_pilot_resampling_draws_n_units_per_independent_group():
    # two groups with their own units (a Welch contrast): a plan with n units per cell has n in each,
    # so 3 draws must give 3 per group (pooled drawing would give some group fewer than 3 every time)
    rng = np.random.default_rng(5)
    obs = [Obs(("a", i), float(v), group="a") for i, v in enumerate(rng.normal(10.0, 1.0, 40))]
    obs += [Obs(("b", i), float(v), group="b") for i, v in enumerate(rng.normal(0.0, 1.0, 40))]
    claim = Claim(
        slug="welch", title="t", statement="s", paper_statement="p",
        evidence=lambda results, choices: Evidence(list(obs)), rule=Contrast("a", "b", above(0.0, 1.0)),
        units=Units("seed", 3), control=no_control("test"), choices=(Choice("c", 1, (2,)),),
    )  # fmt: skip
    found = pilot_power(claim, None, [2, 3], draws=200)
    assert found.pool == 80
    assert found.shares[2] == {"inconclusive": 1.0}  # below the 3 per cell the claim needs
    assert found.shares[3]["reproduced"] > 0.9


def test_a_bimodal_rate_like_outcome_gets_its_power_by_resampling_its_units():
    # mod-add-like seeds: each generalises (≈ 1) or only memorises (0.3); a normal model fitted to the
    # four would call the mean decidable, resampling sees how often a draw holds the memoriser
    from learnability.claims import Claim, Evidence, Mean, Obs, Units, above, evaluate, no_control
    from learnability.claims.claim import Choice

    values = [1.0, 1.0, 0.302, 0.953]
    claim = Claim(
        slug="solves", title="t", statement="s", paper_statement="p",
        evidence=lambda r, c: Evidence([Obs(i, v, group="a") for i, v in enumerate(values)]),
        rule=Mean("a", above(0.7, 0.8), bounds=(0.0, 1.0)), units=Units("seed", 3),
        control=no_control("test"), choices=(Choice("x", 0, (1,)),),
    )  # fmt: skip
    row = evaluate(claim, None, "d", "q")
    power = row.power
    assert "resampled from the observed units" in power["text"]
    assert "a normal model would say" in power["text"]
    # P(a resampled 4-seed experiment clears 0.8) is what decides: every draw without the 0.302 seed
    # (0.75^4 = 32%) at most, so the resampled power lies well below that bound
    assert power["current"] <= 0.32 + 0.1
    # the units of a card and of its power line agree: 4 seeds
    assert power["units_now"] == row.units["count"] == 4


def test_a_rate_like_outcome_on_many_units_keeps_the_normal_model():
    # from RESAMPLE_BELOW units on a cell's mean is near normal: no resampling (volume's thousands of
    # models once took minutes of analysis for the same answer)
    from learnability.claims import Claim, Evidence, Mean, Obs, Units, above, evaluate, no_control
    from learnability.claims.claim import RESAMPLE_BELOW, Choice

    values = [1.0 if i % 5 else 0.0 for i in range(RESAMPLE_BELOW)]  # a rate of 0.8 over 0/1 units
    claim = Claim(
        slug="rate", title="t", statement="s", paper_statement="p",
        evidence=lambda r, c: Evidence([Obs(i, v, group="a") for i, v in enumerate(values)]),
        rule=Mean("a", above(0.5, 0.6), bounds=(0.0, 1.0)), units=Units("model", 3),
        control=no_control("test"), choices=(Choice("x", 0, (1,)),),
    )  # fmt: skip
    power = evaluate(claim, None, "d", "q").power
    assert "resampled" not in power["text"] and power["units_now"] == RESAMPLE_BELOW
    fewer = evaluate(
        Claim(**{**claim.__dict__, "evidence": lambda r, c: Evidence(
            [Obs(i, v, group="a") for i, v in enumerate(values[: RESAMPLE_BELOW - 1])])}),
        None, "d", "q",
    )  # fmt: skip
    assert "resampled from the observed units" in fewer.power["text"]
