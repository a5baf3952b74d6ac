"""The sequential design keeps its error rate when units are added until a verdict is reached."""

from __future__ import annotations

import numpy as np

from learnability import stats
from learnability.claims import (
    Choice,
    Claim,
    Evidence,
    Mean,
    Obs,
    Units,
    above,
    evaluate,
    no_control,
    sequential,
)

EXPERIMENTS = 2000
N0, LOOKS = 3, 4  # looks at 3, 6, 12, 24 units


def _decides(x: np.ndarray, n: int) -> np.ndarray:
    """Mean rule with band above(−ε, ε) on the first n units of each row: true mean 0, so any
    decision (interval clear of 0 on either side) is false. Vectorised over experiments."""
    head = x[:, :n]
    half = stats.t_quantile(n - 1) * head.std(axis=1, ddof=1) / np.sqrt(n)
    return np.abs(head.mean(axis=1)) > half


def test_the_sequential_design_keeps_the_false_decision_rate_while_naive_retesting_inflates_it():
    x = np.random.default_rng(0).standard_normal((EXPERIMENTS, N0 * 2 ** (LOOKS - 1)))
    decided = np.zeros(EXPERIMENTS, dtype=bool)
    for j in range(LOOKS):  # stop at the first decision: later looks only add decisions
        n = N0 + sequential.added_at(j, N0)
        with stats.confidence(sequential.level_at(j)):
            decided |= _decides(x, n)
    naive = np.zeros(EXPERIMENTS, dtype=bool)
    for n in range(N0, x.shape[1] + 1):  # re-test with 95% intervals after every added seed
        naive |= _decides(x, n)
    adaptive_rate, naive_rate = decided.mean(), naive.mean()
    assert adaptive_rate <= 0.05 < naive_rate
    assert naive_rate > 0.10  # many looks at 95% each: far above the nominal 5%
    assert sum(sequential.alpha_at(j) for j in range(60)) <= sequential.ALPHA


class _Design:
    alpha = sequential.ALPHA

    def __init__(self, looks):
        self._looks = looks

    def looks(self, claim):
        return self._looks


def _claim():
    return Claim(
        slug="demo", title="demo", statement="s", paper_statement="p",
        evidence=lambda results, choices: Evidence([Obs(i, v, group="a") for i, v in enumerate(results)]),
        rule=Mean("a", above(0.0, 0.1)), units=Units("seed", 3), control=no_control("test"),
        choices=(Choice("c", 1, (2,)),), replicate=("main",),
    )  # fmt: skip


def test_a_sequential_verdict_is_labelled_with_the_fixed_sample_one_beside_it():
    plan = [0.5, 0.1, 0.45]  # 95% decides nothing at 3 units
    more = [*plan, 0.4, 0.35, 0.5]
    looks = [sequential.Look(0, plan, 0), sequential.Look(1, more, 3)]
    result = evaluate(_claim(), more, "d", "quick", sequential=_Design(looks))
    assert result.verdict == "reproduced" and result.adaptive is not None
    assert result.adaptive["rounds"] == 1 and result.adaptive["units_added"] == 3
    assert result.adaptive["fixed_sample_verdict"] == "reproduced"
    assert "98.75% intervals" in result.measured
    plain = evaluate(_claim(), more, "d", "quick")
    assert plain.adaptive is None and plain.verdict == "reproduced"


def test_the_plan_look_spends_half_the_error_and_can_leave_a_claim_open():
    # decided by the fixed 95% interval at 3 units, not by look 0's 97.5%
    data = [0.5, 0.3, 0.4]
    assert stats.mean_ci(data).lo > 0.1
    with stats.confidence(sequential.level_at(0)):
        assert stats.mean_ci(data).lo < 0.1
    result = evaluate(_claim(), data, "d", "q", sequential=_Design([sequential.Look(0, data, 0)]))
    assert result.verdict == "inconclusive"
    assert result.adaptive == {**result.adaptive, "rounds": 0, "fixed_sample_verdict": "reproduced"}


def test_an_aic_margin_takes_no_part_in_the_design():
    from learnability.claims import AllOf, BestFit

    fit = BestFit("a", "lin", {"lin": lambda x: x, "log": np.log})
    assert not sequential.eligible(fit) and not sequential.eligible(
        AllOf((Mean("a", above(0, 1)), fit))
    )
    assert sequential.eligible(Mean("a", above(0, 1)))
