"""The same-balance control: a uniformly random function with exactly a given acceptance count.

A random transformer rarely computes a balanced function, so comparing it with a *uniformly* random
function (P(K_0 > 0) → 1 − 1/e, E[s/N] = 1/2) mostly measures its imbalance. The matched null is a
random truth table with the model's exact counts: `accept` strings labelled 1, `reject` labelled 0 and,
with a margin ξ, `undecided = 2^n − accept − reject` labelled −1, uniformly shuffled over the 2^n
strings (all C(2^n; accept, reject, undecided) tables equally likely).

Conventions are those of `measure.model_profile` with a margin: a string is zero-sensitive when it is
decided and its n neighbours carry its label (an undecided neighbour counts as a change); s(x) counts
neighbours with another label, over decided x. With no undecided strings this is the plain profile.

Exact (closed forms, any n):
- `same_balance_moments`: E[K_0], Var[K_0] and E[s/n]. A string's closed neighbourhood has n + 1
  strings; two strings at Hamming distance 1 or 2 share neighbourhood members (their union has 2n
  strings and forces one label), at distance ≥ 3 their neighbourhoods are disjoint. Sampling without
  replacement makes every probability a ratio of falling factorials (computed in log space).
Probabilities of events on K_0 (`k0_positive_probability`, `k0_at_least_probability`):
- by enumerating every table when there are few (tiny n),
- else from the moments when they settle it to within `tol` (second-moment bound
  P(K_0 > 0) ≥ E[K_0]² / E[K_0²], Markov P(K_0 > 0) ≤ E[K_0], Cantelli for K_0 ≥ b),
- else by simulation: `draws` shuffled tables (`same_balance_k0_samples`), seeded.
Each returns a `BalanceProbability` saying which method gave it and its error bound or standard error.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

import numpy as np

ENUMERATION_LIMIT = 1 << 20  # tables × strings; above this, moments or simulation


def _log_falling(c: int, k: int) -> float:
    """log of c (c − 1) ... (c − k + 1); −inf when c < k (the event is impossible)."""
    if k <= 0:
        return 0.0
    if c < k:
        return -math.inf
    return math.lgamma(c + 1) - math.lgamma(c - k + 1)


def _ratio(counts: tuple[int, ...], ks: tuple[int, ...], total: int) -> float:
    """P(k_1 given strings all in class 1, k_2 other given strings all in class 2, ...) when the labels
    are a uniform shuffle with class sizes `counts` of `total` strings: Π ff(c_v, k_v) / ff(total, Σk)."""
    log = sum(_log_falling(c, k) for c, k in zip(counts, ks)) - _log_falling(total, sum(ks))
    return 0.0 if log == -math.inf else math.exp(log)


def _check(n: int, accept: int, reject: int | None) -> tuple[int, int, int]:
    total = 1 << n
    reject = total - accept if reject is None else reject
    if n < 1 or accept < 0 or reject < 0 or accept + reject > total:
        raise ValueError(f"counts accept={accept}, reject={reject} do not fit 2^{n} strings")
    return total, accept, reject


@dataclass(frozen=True)
class BalanceMoments:
    n: int
    accept: int
    reject: int
    mean_k0: float  # E[K_0]
    var_k0: float  # Var[K_0]
    mean_s_over_n: float  # E[mean over decided x of s(x) / n]

    @property
    def second_moment(self) -> float:
        return self.var_k0 + self.mean_k0**2


def same_balance_moments(n: int, accept: int, reject: int | None = None) -> BalanceMoments:
    """Exact E[K_0], Var[K_0] and E[s/n] of a shuffled table with these counts (module doc)."""
    total, a, r = _check(n, accept, reject)
    classes = (a, r)
    ball = n + 1
    p_one = sum(_ratio((c,), (ball,), total) for c in classes)  # P(a given x is zero-sensitive)
    mean = total * p_one
    # ordered pairs (x, y), x ≠ y, by Hamming distance: 1 → n, 2 → C(n, 2), ≥ 3 → the rest
    near = n + n * (n - 1) // 2
    far = total - 1 - near
    p_near = sum(_ratio((c,), (2 * n,), total) for c in classes)
    p_far = sum(
        _ratio((classes[v], classes[w]) if v != w else (classes[v],),
               (ball, ball) if v != w else (2 * ball,), total)
        for v in range(2) for w in range(2)
    )  # fmt: skip
    second = mean + total * (near * p_near + max(far, 0) * p_far)
    decided = a + r
    if decided and total > 1:
        s = (a * (total - a) + r * (total - r)) / (decided * (total - 1))
    else:
        s = math.nan
    return BalanceMoments(n, a, r, mean, max(second - mean * mean, 0.0), s)


# -- tables -------------------------------------------------------------------------------------------------
def zero_sensitive_counts(labels: np.ndarray, n: int) -> np.ndarray:
    """K_0 of each row of `labels` (R, 2^n) int8 in {1 accept, 0 reject, −1 undecided}: (R,) int64.

    Row index bit i is x_i; the pairs (x, x^{⊕i}) are the halves of the (·, 2, 2^i) view, so each bit is
    one streaming pass with no index arrays."""
    labels = np.ascontiguousarray(labels, dtype=np.int8)
    rows = labels.shape[0]
    ok = labels >= 0
    for i in range(n):
        v = labels.reshape(rows, -1, 2, 1 << i)
        same = v[:, :, 0] == v[:, :, 1]  # (R, 2^(n−i−1), 2^i)
        okv = ok.reshape(rows, -1, 2, 1 << i)
        okv &= same[:, :, None, :]
    return ok.sum(1).astype(np.int64)


def _base_labels(total: int, a: int, r: int) -> np.ndarray:
    return np.concatenate(
        [np.ones(a, np.int8), np.zeros(r, np.int8), np.full(total - a - r, -1, np.int8)]
    )


@functools.lru_cache(maxsize=256)  # both probabilities of one model read the same draws
def _cached_samples(n: int, a: int, r: int, draws: int, seed: int) -> np.ndarray:
    out = same_balance_k0_samples(n, a, r, draws, seed)
    out.setflags(write=False)
    return out


def same_balance_k0_samples(
    n: int,
    accept: int,
    reject: int | None = None,
    draws: int = 200,
    seed: int | np.random.Generator = 0,
    batch: int = 64,
) -> np.ndarray:
    """K_0 of `draws` uniformly shuffled tables with these counts: (draws,) int64."""
    total, a, r = _check(n, accept, reject)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    base = _base_labels(total, a, r)
    out = []
    for start in range(0, draws, batch):
        rows = min(batch, draws - start)
        tables = rng.permuted(np.broadcast_to(base, (rows, total)), axis=1)
        out.append(zero_sensitive_counts(tables, n))
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def _enumerable(n: int, accept: int) -> bool:
    return math.comb(1 << n, accept) << n <= ENUMERATION_LIMIT


def enumerate_k0(n: int, accept: int) -> np.ndarray:
    """K_0 of every table with exactly `accept` ones on n bits (no undecided): (C(2^n, accept),).
    Exhaustive, so only for tiny n (`ENUMERATION_LIMIT` tables)."""
    total = 1 << n
    count = math.comb(total, accept)
    if not _enumerable(n, accept):
        raise ValueError(f"{count} tables of {total} strings exceed the enumeration limit")
    tables = np.zeros((count, total), np.int8)
    for row, ones in enumerate(itertools.combinations(range(total), accept)):
        tables[row, list(ones)] = 1
    return zero_sensitive_counts(tables, n)


# -- probabilities ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BalanceProbability:
    value: float
    method: str  # "enumeration" | "moments" | "simulation"
    error: float  # enumeration 0; moments: half-width the bounds leave; simulation: std. error


def _simulated(samples: np.ndarray, hit: np.ndarray) -> BalanceProbability:
    p = float(hit.mean())
    se = math.sqrt(max(p * (1 - p), 0.25 / len(samples)) / len(samples))
    return BalanceProbability(p, "simulation", se)


# the same counts recur (eps values that leave a function unchanged): cache by counts
@functools.lru_cache(maxsize=4096)
def k0_positive_probability(
    n: int,
    accept: int,
    reject: int | None = None,
    draws: int = 200,
    seed: int = 0,
    tol: float = 1e-3,
) -> BalanceProbability:
    """P(K_0 > 0) of a same-balance random function (module doc for the method)."""
    total, a, r = _check(n, accept, reject)
    if a + r == total and _enumerable(n, a):
        return BalanceProbability(float((enumerate_k0(n, a) > 0).mean()), "enumeration", 0.0)
    m = same_balance_moments(n, a, r)
    if m.mean_k0 == 0:
        return BalanceProbability(0.0, "moments", 0.0)
    lower = m.mean_k0**2 / m.second_moment  # second-moment (Paley–Zygmund) bound
    upper = min(1.0, m.mean_k0)  # Markov
    if upper - lower <= 2 * tol:
        return BalanceProbability((lower + upper) / 2, "moments", (upper - lower) / 2)
    k0 = _cached_samples(n, a, r, draws, seed)
    return _simulated(k0, k0 > 0)


@functools.lru_cache(maxsize=4096)
def k0_at_least_probability(
    n: int,
    accept: int,
    bound: float,
    reject: int | None = None,
    draws: int = 200,
    seed: int = 0,
    tol: float = 1e-3,
) -> BalanceProbability:
    """P(K_0 ≥ bound) of a same-balance random function (Cantelli when it settles it, else simulation)."""
    total, a, r = _check(n, accept, reject)
    if bound <= 0:
        return BalanceProbability(1.0, "moments", 0.0)
    if bound <= 1:  # K_0 is an integer: K_0 ≥ bound iff K_0 > 0
        return k0_positive_probability(n, a, r, draws, seed, tol)
    if bound > total:
        return BalanceProbability(0.0, "moments", 0.0)
    if a + r == total and _enumerable(n, a):
        return BalanceProbability(float((enumerate_k0(n, a) >= bound).mean()), "enumeration", 0.0)
    m = same_balance_moments(n, a, r)
    gap = m.mean_k0 - math.ceil(bound)
    if m.var_k0 == 0:
        return BalanceProbability(float(m.mean_k0 >= bound), "moments", 0.0)
    if gap > 0:  # P(K_0 < bound) ≤ P(K_0 ≤ E − (gap + 1)) ≤ Var / (Var + (gap + 1)²)
        miss = m.var_k0 / (m.var_k0 + (gap + 1) ** 2)
        if miss <= 2 * tol:
            return BalanceProbability(1 - miss / 2, "moments", miss / 2)
    elif gap < 0:  # P(K_0 ≥ bound) ≤ Var / (Var + gap²)
        hit = m.var_k0 / (m.var_k0 + gap**2)
        if hit <= 2 * tol:
            return BalanceProbability(hit / 2, "moments", hit / 2)
    k0 = _cached_samples(n, a, r, draws, seed)
    return _simulated(k0, k0 >= bound)


__all__ = [
    "BalanceMoments",
    "BalanceProbability",
    "enumerate_k0",
    "k0_at_least_probability",
    "k0_positive_probability",
    "same_balance_k0_samples",
    "same_balance_moments",
    "zero_sensitive_counts",
]
