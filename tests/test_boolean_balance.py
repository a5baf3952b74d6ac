"""The same-balance control: exact moments, enumeration, bounds and simulation agree with brute force."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from learnability.boolean.balance import (
    enumerate_k0,
    k0_at_least_probability,
    k0_positive_probability,
    same_balance_k0_samples,
    same_balance_moments,
    zero_sensitive_counts,
)


def _k0_brute(table: list[int], n: int) -> int:
    """K_0 by the definition, one string and one bit at a time (−1 = undecided)."""
    count = 0
    for x in range(1 << n):
        if table[x] >= 0 and all(table[x ^ (1 << i)] == table[x] for i in range(n)):
            count += 1
    return count


def test_zero_sensitive_counts_match_the_definition():
    rng = np.random.default_rng(0)
    tables = rng.integers(-1, 2, size=(40, 32)).astype(np.int8)
    tables[:5] = 1  # constant tables: every string is zero-sensitive
    got = zero_sensitive_counts(tables, 5)
    assert got.tolist() == [_k0_brute(t.tolist(), 5) for t in tables]
    assert got[:5].tolist() == [32] * 5


def test_k0_positive_of_an_unbalanced_table_matches_an_exact_count():
    # N = 4 with 5 accepted strings of 16: count, over all C(16, 5) = 4368 tables, those with K_0 > 0
    n, accept = 4, 5
    exact = sum(
        _k0_brute([1 if x in ones else 0 for x in range(16)], n) > 0
        for ones in map(set, itertools.combinations(range(16), accept))
    ) / math.comb(16, accept)
    p = k0_positive_probability(n, accept)
    assert p.method == "enumeration" and p.value == pytest.approx(exact, abs=1e-12)
    # the simulation the larger N use agrees within 4 standard errors
    sim = same_balance_k0_samples(n, accept, draws=4000, seed=3)
    se = math.sqrt(exact * (1 - exact) / 4000)
    assert abs(float((sim > 0).mean()) - exact) < 4 * se


@pytest.mark.parametrize("n,accept", [(3, 2), (3, 4), (4, 3), (4, 8), (4, 13)])
def test_exact_moments_match_enumeration(n, accept):
    k0 = enumerate_k0(n, accept)
    m = same_balance_moments(n, accept)
    assert m.mean_k0 == pytest.approx(k0.mean(), rel=1e-9)
    assert m.var_k0 == pytest.approx(k0.var(), rel=1e-9, abs=1e-12)
    # E[s/N]: each of the N·2^N ordered neighbour pairs differs with probability 2a(M − a)/(M(M − 1))
    total = 1 << n
    assert m.mean_s_over_n == pytest.approx(2 * accept * (total - accept) / (total * (total - 1)))


def test_three_class_moments_match_simulation():
    # with a margin some strings are undecided (−1): moments of K_0 against 20,000 shuffles
    n, accept, reject = 6, 20, 30
    m = same_balance_moments(n, accept, reject)
    sim = same_balance_k0_samples(n, accept, reject, draws=20000, seed=1)
    assert sim.mean() == pytest.approx(m.mean_k0, abs=4 * math.sqrt(m.var_k0 / 20000))
    assert sim.var() == pytest.approx(m.var_k0, rel=0.05)


def test_probabilities_from_moments_and_simulation():
    # heavily unbalanced at N = 14: E[K_0] ≈ 2300, the second-moment bound settles P(K_0 > 0) ≈ 1
    p = k0_positive_probability(14, 2000)
    assert p.method == "moments" and p.value > 0.999 and p.error < 1e-3
    # balanced at N = 10: E[K_0] ≈ 0.95, P(K_0 > 0) near the 1 − 1/e of the Poisson limit
    q = k0_positive_probability(10, 512, draws=1000, seed=2)
    assert q.method == "simulation"
    assert (
        abs(q.value - (1 - math.exp(-same_balance_moments(10, 512).mean_k0))) < 4 * q.error + 0.02
    )
    # K_0 ≥ bound: far below and far above the mean are settled by Cantelli, the middle simulated
    assert k0_at_least_probability(14, 2000, 10.0).value > 0.999
    assert k0_at_least_probability(14, 8192, 500.0).value < 0.002
    mid = k0_at_least_probability(4, 5, 2.0)
    assert mid.method == "enumeration" and mid.value == pytest.approx(
        float((enumerate_k0(4, 5) >= 2).mean())
    )


def test_constant_and_impossible_counts():
    assert same_balance_moments(5, 32).mean_k0 == 32  # a constant table: every string
    assert k0_positive_probability(5, 0).value == 1.0
    with pytest.raises(ValueError, match="do not fit"):
        same_balance_moments(3, 5, 4)
