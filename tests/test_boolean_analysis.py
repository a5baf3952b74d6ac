"""Exact and sampled analysis: SPEC §1 closed forms, Fourier identities, statistics, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from learnability.boolean import (
    first,
    fourier_spectrum,
    majority,
    make_function,
    mean,
    parity,
    profile,
    profile_from_truth_table,
    sample_profile,
    sensitivity,
    sparse_parity,
)
from learnability.boolean.analysis import check_exact, walsh_hadamard
from learnability.errors import UserError

NS = [1, 2, 5, 6, 7, 9, 12]


def _naive(tt: np.ndarray, n: int) -> np.ndarray:
    """Per-input sensitivity by XOR-index gathers (the textbook definition)."""
    idx = np.arange(1 << n)
    return sum((tt != tt[idx ^ (1 << i)]).astype(int) for i in range(n))


@pytest.mark.parametrize("n", NS)
def test_parity_first_sparse_closed_forms(n):
    p = profile(parity(n))
    assert p.counts[n] == 2**n and p.average == n and p.max_sensitivity == n and p.zero_count == 0
    assert p.degree == n and p.fourier_weights[n] == pytest.approx(1.0)
    q = profile(first(n, i=n - 1))
    assert q.counts[1] == 2**n and q.average == 1 and q.degree == 1
    assert np.allclose(q.influences, np.eye(n)[n - 1])
    k = (n + 1) // 2
    r = profile(sparse_parity(n, k=k, seed=n))
    assert r.counts[k] == 2**n and r.average == k and r.degree == k
    assert r.influences.sum() == pytest.approx(k)


@pytest.mark.parametrize("n", [1, 3, 5, 7, 9, 11, 13])
def test_majority_odd_closed_forms(n):
    p = profile(majority(n))
    c = math.comb(n, (n - 1) // 2)
    assert p.zero_count == 2**n - 2 * c
    assert p.counts[(n + 1) // 2] == 2 * c
    assert p.average == pytest.approx(n * math.comb(n - 1, (n - 1) // 2) / 2 ** (n - 1))
    assert p.max_sensitivity == (n + 1) // 2
    assert p.degree == n  # majority's top coefficient is nonzero for odd n


def test_and_or_threshold():
    n = 8
    a = profile(make_function("and", n))
    assert a.counts[n] == 1 and a.counts[1] == n and a.zero_count == 2**n - n - 1
    o = profile(make_function("or", n))
    assert o.counts[n] == 1 and o.average == pytest.approx(2 * n / 2**n)
    t = profile(make_function("threshold", n, t=3))
    ones = np.bitwise_count(np.arange(2**n))
    assert t.counts[3] == (ones == 3).sum() and t.counts[n - 2] == (ones == 2).sum()


tables = st.integers(1, 11).flatmap(
    lambda n: st.tuples(st.just(n), st.lists(st.integers(0, 1), min_size=2**n, max_size=2**n))
)


@settings(max_examples=60, deadline=None)
@given(tables)
def test_flips_equal_fourier_on_random_tables(case):
    n, values = case
    tt = np.array(values, dtype=np.uint8)
    p = profile_from_truth_table(tt, n)
    s = _naive(tt, n)
    assert (np.bincount(s, minlength=n + 1) == p.counts).all()
    assert (sensitivity(tt) == s).all()
    coef = fourier_spectrum(tt).astype(np.float64)
    assert np.sum(coef**2) == pytest.approx(1.0)  # Parseval
    degrees = np.bitwise_count(np.arange(2**n))
    assert p.average == pytest.approx(float(np.sum(degrees * coef**2)))  # as = Σ|S| f̂(S)²
    assert p.fourier_weights.sum() == pytest.approx(1.0)
    assert p.average == pytest.approx(p.fourier_average_sensitivity)
    idx = np.arange(2**n)
    for i in range(n):
        assert p.influences[i] == pytest.approx(np.mean(tt != tt[idx ^ (1 << i)]))


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 10), st.integers(0, 2**31))
def test_wht_involution_and_dense_matrix(n, seed):
    x = np.random.default_rng(seed).standard_normal(2**n)
    y = walsh_hadamard(x.copy(), n)
    if n <= 8:
        idx = np.arange(2**n)
        dense = 1 - 2 * (np.bitwise_count(idx[:, None] & idx[None, :]) & 1).astype(np.float64)
        assert np.allclose(y, dense @ x)
    assert np.allclose(walsh_hadamard(y.copy(), n) / 2**n, x)  # H·H = 2^n·I


def test_bit_packed_path_matches_naive_at_moderate_n():
    n = 16  # above the 64-strings-per-word threshold, with bits both inside and across words
    tt = np.random.default_rng(7).integers(0, 2, 2**n, dtype=np.uint8)
    p = profile_from_truth_table(tt, n)
    assert (np.bincount(_naive(tt, n), minlength=n + 1) == p.counts).all()
    r = profile_from_truth_table(np.bitwise_xor(tt, parity(n).truth_table()), n)
    assert (p.counts[::-1] == r.counts).all()  # f ⊕ PARITY flips every edge: s ↦ n − s


def test_float32_range_is_exact():
    n = 21  # float32 working precision
    p = profile(sparse_parity(n, support=[0, 7, 20]))
    assert p.degree == 3 and p.fourier_weights[3] == 1.0 and p.fourier_weights.sum() == 1.0


def test_random_function_zero_sensitivity_rate():
    """P(K_0 > 0) → 1 − 1/e for a uniform random function (E K_0 = 1, K_0 ≈ Poisson(1)).

    At n = 10 the exact P(K_0 = 0) is close to e^{-1}; with 2000 seeds the binomial standard deviation
    is √(p(1−p)/2000) ≈ 0.0108, and the test allows 4 σ ≈ 0.043.
    """
    n, seeds = 10, 2000
    tables = np.random.default_rng(12345).integers(0, 2, size=(seeds, 2**n), dtype=np.uint8)
    zero = np.ones_like(tables, dtype=bool)
    for i in range(n):  # vectorised over seeds: same half-comparison as the library
        v = tables.reshape(seeds, -1, 2, 2**i)
        same = v[:, :, 0, :] == v[:, :, 1, :]
        z = zero.reshape(seeds, -1, 2, 2**i)
        z[:, :, 0, :] &= same
        z[:, :, 1, :] &= same
    rate = float((zero.sum(axis=1) > 0).mean())
    p = 1 - math.exp(-1)
    assert abs(rate - p) < 4 * math.sqrt(p * (1 - p) / seeds)
    for s in range(5):  # the library agrees with the vectorised count
        assert profile_from_truth_table(tables[s], n, fourier=False).zero_count == zero[s].sum()


def test_monte_carlo_intervals_cover_exact():
    n = 12
    f = majority(13)
    exact = profile(f)
    sampled = sample_profile(f, 4000, seed=3)
    assert not sampled.exact and sampled.fourier_weights is None and sampled.zero_count is None
    lo, hi = sampled.average_ci
    assert lo <= exact.average <= hi
    assert (sampled.fraction_ci[:, 0] <= exact.fractions + 1e-12).sum() >= n - 1
    assert (sampled.fraction_ci[:, 1] >= exact.fractions - 1e-12).sum() >= n - 1
    covered = (sampled.influence_ci[:, 0] <= exact.influences) & (
        exact.influences <= sampled.influence_ci[:, 1]
    )
    assert covered.sum() >= 11  # 95% intervals: at most a couple of misses among 13
    assert any("cannot be estimated by sampling" in note for note in sampled.notes)


def test_sampled_parity_above_exact_limit():
    p = profile("parity", 64, samples=500, seed=1)
    assert p.average == 64 and p.zero_fraction == 0 and 0 < p.zero_fraction_upper < 0.01
    assert p.max_sensitivity == 64


def test_torch_tables_and_dict():
    tt = torch.tensor([0, 1, 1, 0], dtype=torch.float32)
    p = profile_from_truth_table(tt, 2)
    assert p.counts.tolist() == [0, 0, 4]
    d = p.to_dict()
    assert d["counts"] == [0, 0, 4] and d["degree"] == 2 and d["exact"] is True
    assert profile_from_truth_table(torch.tensor([True, False]), 1).counts.tolist() == [0, 2]


def test_bad_input():
    with pytest.raises(UserError, match="real-valued"):
        profile(mean(5))
    with pytest.raises(UserError, match="0 or 1"):
        profile_from_truth_table(np.array([0, 1, 2, 0]), 2)
    with pytest.raises(UserError, match="0 or 1"):
        profile_from_truth_table(torch.tensor([0.0, 0.5]), 1)
    with pytest.raises(UserError, match="2\\^n"):
        profile_from_truth_table(np.zeros(6, dtype=np.uint8))
    with pytest.raises(UserError, match="for n=3 it must have"):
        profile_from_truth_table(np.zeros(4, dtype=np.uint8), 3)
    with pytest.raises(UserError, match="--samples"):
        check_exact(29)
    with pytest.raises(UserError, match="memory budget"):
        check_exact(20, memory_budget=1 << 20)
    with pytest.raises(UserError, match="samples"):
        sample_profile(parity(4), 0)


@pytest.mark.parametrize("n", [4, 8, 10])
def test_fast_spectrum_matches_dense_matrix(n):
    tt = np.random.default_rng(n).integers(0, 2, 2**n, dtype=np.uint8)
    idx = np.arange(2**n)
    chi = 1 - 2 * (np.bitwise_count(idx[:, None] & idx[None, :]) & 1).astype(np.float64)
    assert np.allclose(fourier_spectrum(tt), chi @ (1 - 2 * tt.astype(np.float64)) / 2**n)


def test_thread_setting_is_restored():
    before = torch.get_num_threads()
    profile_from_truth_table(np.random.default_rng(0).integers(0, 2, 2**12, dtype=np.uint8))
    assert torch.get_num_threads() == before
