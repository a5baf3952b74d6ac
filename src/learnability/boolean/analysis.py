"""Exact and sampled sensitivity / Fourier analysis of Boolean functions.

Conventions (docs/ARCHITECTURE.md, "Conventions"): s(f, x) = #{i : f(x) ≠ f(x^{⊕i})}; K_k = #{x : s(f, x) = k}; as(f) = E_x s(f, x)
= Σ_S |S| f̂(S)² where f̂(S) = E_x (−1)^{f(x)} χ_S(x) and χ_S(x) = (−1)^{Σ_{i∈S} x_i}, and
Inf_i(f) = Pr_x[f(x) ≠ f(x^{⊕i})]. Bit order: bit k of the table index is x_k.

How the exact profile is computed (f is evaluated once: the analysis only ever sees the truth table):

* Sensitivity. The table (2^n uint8) is bit-packed into 2^n/64 words. For bit i ≥ 6 the flip partner of a
  string sits in another word at the same bit position, so the words viewed as (2^(n−i−1), 2, 2^(i−6)) give
  every pair's disagreement with one XOR of the two halves (no index arrays, 64 strings per operation); for
  i < 6 a shift-and-mask inside each word does the same. The n disagreement planes are summed per string by
  a carry-save adder over bit planes (full adders on whole words), giving the binary digits of s(f, x) for
  64 strings per word; K_k then comes from popcounts of ANDs of digit planes (Möbius inversion over digit
  subsets). Working set at n = 24: a few 2 MB planes.
* Fourier. A fast Walsh–Hadamard transform of (−1)^f in three parts. (1) Each 16-string group of the packed
  table (one uint16) indexes a lookup table holding its 16-point transform — the ±1 conversion and the first
  4 butterfly stages in one gather. (2) The remaining bits in radix-16 stages, each one matmul
  `H_16 · Aᵀ` on the (2^n/16, 16) view: it transforms the 4 lowest bits of the layout and rotates them to the
  top, so after all stages the index order is restored (radix 16 keeps a stage memory-bound: no 2^n×2^n
  matrix, ~one read and one write of the buffer per 4 bits). (3) For the weight by degree the last stage is
  fused with the squaring and the degree contraction, in cache-sized chunks, so the final spectrum is never
  written. Coefficients of a ±1 function are integers of magnitude ≤ 2^n, exact in float32 up to n = 24
  (float64 above, and for n ≤ 20 where it is cheap); at 20 < n ≤ 24 the squared weights carry float32
  rounding (relative ~1e-6), while the degree stays exact (a nonzero integer squares to a positive float).

The matmuls run on one torch thread (`WHT_THREADS`; the process-wide setting is restored afterwards): they
are small and memory-bound, and thread hand-offs cost more than they save. Two work buffers (2 × 64 MB at
n = 24) are kept between calls at the same n, because first-touching fresh pages costs as much as a stage;
`release_workspace()` frees them. Peak extra memory at n = 24: about 130 MB.

Analysis runs on the CPU (numpy, and torch for the matmuls): a truth table that lives on a CUDA device (a
model's thresholded outputs) is copied to host memory once, which at n ≤ 28 is cheap next to computing it.

Above the memory budget (estimate from available RAM) or above `EXACT_MAX_N`, exact analysis raises a
`UserError` pointing at `--samples`; `sample_profile` then gives Monte Carlo estimates with Wilson
intervals. K_0 cannot be estimated by sampling when it is tiny (a uniform random function has E[K_0] = 1
out of 2^n strings): the sampled profile reports an upper confidence bound on the fraction instead.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np
import torch

from learnability.boolean.functions import BooleanFunction, check_n, resolve_function
from learnability.errors import UserError

EXACT_MAX_N = 28
# Masks selecting, inside a 64-bit word, the positions whose bit i (i < 6) is 0.
_LOW_MASKS = [
    np.uint64(0x5555555555555555),
    np.uint64(0x3333333333333333),
    np.uint64(0x0F0F0F0F0F0F0F0F),
    np.uint64(0x00FF00FF00FF00FF),
    np.uint64(0x0000FFFF0000FFFF),
    np.uint64(0x00000000FFFFFFFF),
]


# ------------------------------------------------------------------------------------------- inputs


def as_truth_table(
    tt: Any, n: int | None = None, *, what: str = "truth table"
) -> tuple[np.ndarray, int]:
    """Validate a 0/1 truth table (numpy, torch tensor, list, or BooleanFunction) → ((2^n,) uint8, n)."""
    if isinstance(tt, BooleanFunction):
        tt.require_boolean()
        if n is not None and n != tt.n:
            raise UserError(f"n={n} does not match the function {tt.name!r} with n={tt.n}")
        return tt.truth_table(), tt.n
    if hasattr(tt, "detach") and hasattr(tt, "cpu"):  # a torch tensor, without importing torch here
        tt = tt.detach().cpu().numpy()
    arr = np.asarray(tt)
    if arr.ndim != 1:
        arr = arr.reshape(-1)
    size = arr.shape[0]
    inferred = size.bit_length() - 1
    if size == 0 or 1 << inferred != size or inferred == 0:
        raise UserError(f"{what} has {size} entries; its length must be 2^n for some n ≥ 1")
    if n is None:
        n = inferred
    check_n(n)
    if size != 1 << n:
        raise UserError(f"{what} has {size} entries; for n={n} it must have 2^{n} = {1 << n}")
    if arr.dtype == np.bool_:
        return arr.view(np.uint8), n
    if arr.dtype == np.uint8 and int(arr.max()) <= 1:
        return arr, n
    bad = arr[(arr != 0) & (arr != 1)]
    if bad.size:
        raise UserError(
            f"{what} has value {bad[0].item()!r}; sensitivity and Fourier analysis need a Boolean function "
            "with values 0 or 1 (threshold a real-valued function first)"
        )
    return arr.astype(np.uint8), n


def _available_bytes() -> int:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def exact_memory_bytes(n: int) -> int:
    """Estimated peak extra memory of `profile_from_truth_table` at n (bytes)."""
    size = 1 << n
    item = 4 if 20 < n <= 24 else 8
    # two transform buffers, the uint16 keys as int32, and ~16 bit planes of 2^n / 8 bytes
    return 2 * size * item + size // 4 + 16 * (size // 8 + 8)


def check_exact(n: int, memory_budget: int | None = None) -> None:
    """Raise a UserError when an exact analysis at n is beyond the limit or the memory budget."""
    if n > EXACT_MAX_N:
        raise UserError(
            f"n={n} is above the exact limit n ≤ {EXACT_MAX_N}; use a Monte Carlo estimate (--samples S)"
        )
    budget = memory_budget if memory_budget is not None else _available_bytes() // 2
    need = exact_memory_bytes(n)
    if need > budget:
        raise UserError(
            f"exact analysis at n={n} needs about {need / 2**30:.1f} GiB, above the memory budget of "
            f"{budget / 2**30:.1f} GiB; use a Monte Carlo estimate (--samples S) or a smaller n"
        )


# ------------------------------------------------------------------------------------- sensitivity


def sensitivity(tt: Any, n: int | None = None) -> np.ndarray:
    """Per-input sensitivity s(f, x) for every x in index order: (2^n,) uint8."""
    table, n = as_truth_table(tt, n)
    out = np.zeros(1 << n, dtype=np.uint8)
    for i in range(n):
        view = table.reshape(1 << (n - i - 1), 2, 1 << i)
        diff = view[:, 0, :] != view[:, 1, :]
        acc = out.reshape(1 << (n - i - 1), 2, 1 << i)
        acc[:, 0, :] += diff
        acc[:, 1, :] += diff
    return out


def _pack(table: np.ndarray) -> np.ndarray:
    """(2^n,) 0/1 → (2^n/64,) uint64 with string 64w + j at bit j of word w (n ≥ 6)."""
    return np.packbits(table, bitorder="little").view("<u8").astype(np.uint64, copy=False)


class _Pool:
    """Recycles equal-length uint64 planes: fresh multi-MB allocations cost page faults every time."""

    def __init__(self, length: int):
        self.length = length
        self.free: list[np.ndarray] = []

    def get(self) -> np.ndarray:
        return self.free.pop() if self.free else np.empty(self.length, dtype=np.uint64)

    def put(self, plane: np.ndarray) -> None:
        self.free.append(plane)


def _flip_plane(words: np.ndarray, i: int, plane: np.ndarray, scratch: np.ndarray) -> None:
    """plane ← D_i: bit j of D_i[w] = [f(x) ≠ f(x^{⊕i})] for x = 64w + j."""
    if i < 6:
        shift = np.uint64(1 << i)
        np.right_shift(words, shift, out=scratch)
        np.bitwise_xor(scratch, words, out=scratch)
        np.bitwise_and(scratch, _LOW_MASKS[i], out=scratch)  # marks the lower string of each pair
        np.left_shift(scratch, shift, out=plane)
        np.bitwise_or(plane, scratch, out=plane)
    else:
        pairs = words.reshape(-1, 2, 1 << (i - 6))
        out = plane.reshape(-1, 2, 1 << (i - 6))
        np.bitwise_xor(pairs[:, 0, :], pairs[:, 1, :], out=out[:, 0, :])
        out[:, 1, :] = out[:, 0, :]


def _popcount(plane: np.ndarray, scratch: np.ndarray) -> int:
    np.bitwise_count(plane, out=scratch)
    return int(scratch.sum(dtype=np.int64))


def _full_add(a: np.ndarray, b: np.ndarray, c: np.ndarray, scratch: np.ndarray) -> None:
    """Bit-sliced full adder, in place: the sum a ^ b ^ c goes to `c` (this weight), the carry
    ab | c(a ^ b) to `a` (next weight); `b` and `scratch` are left as scratch."""
    np.bitwise_xor(a, b, out=scratch)
    np.bitwise_and(a, b, out=a)
    np.bitwise_and(scratch, c, out=b)
    np.bitwise_or(a, b, out=a)
    np.bitwise_xor(scratch, c, out=c)


def _bit_sliced_counts(words: np.ndarray, n: int) -> tuple[list[np.ndarray], list[int], _Pool]:
    """Add the n flip planes per string with a carry-save (full adder) tree over whole words.

    Returns (digits, flips, pool): digits[j] holds bit j of s(f, x) for every string, flips[i] = #{x : f(x) ≠
    f(x^{⊕i})}.
    """
    length = words.shape[0]
    pool = _Pool(length)
    scratch = np.empty(length, dtype=np.uint64)
    counts8 = np.empty(length, dtype=np.uint8)
    columns: list[list[np.ndarray]] = []
    flips: list[int] = []

    def push(weight: int, plane: np.ndarray) -> None:
        while len(columns) <= weight:
            columns.append([])
        col = columns[weight]
        col.append(plane)
        if len(col) == 3:
            a, b, c = col
            col.clear()
            _full_add(a, b, c, scratch)
            pool.put(b)
            col.append(c)
            push(weight + 1, a)

    for i in range(n):
        plane = pool.get()
        _flip_plane(words, i, plane, scratch)
        if i < 6:
            flips.append(_popcount(plane, counts8))
        else:  # both halves hold the same pair differences: count one, double it
            half = plane.reshape(-1, 2, 1 << (i - 6))[:, 0, :]
            flips.append(2 * int(np.bitwise_count(half).sum(dtype=np.int64)))
        push(0, plane)

    # Each column now holds ≤ 2 planes; ripple the carries up to get one digit plane per weight.
    digits: list[np.ndarray] = []
    carry: np.ndarray | None = None
    weight = 0
    while weight < len(columns) or carry is not None:
        items = (columns[weight] if weight < len(columns) else []) + (
            [carry] if carry is not None else []
        )
        carry = None
        if not items:
            plane = pool.get()
            plane.fill(0)
            digits.append(plane)
        elif len(items) == 1:
            digits.append(items[0])
        elif len(items) == 2:
            a, b = items
            np.bitwise_xor(a, b, out=scratch)
            np.bitwise_and(a, b, out=a)
            digits.append(b)
            b[...] = scratch
            carry = a
        else:
            a, b, c = items
            _full_add(a, b, c, scratch)
            pool.put(b)
            digits.append(c)
            carry = a
        weight += 1
    return digits, flips, pool


def _histogram(digits: list[np.ndarray], n: int, total: int, pool: _Pool) -> np.ndarray:
    """K_k for k = 0..n from the digit planes of s(f, x), by Möbius inversion over digit subsets.

    P(t) = #{x : all digits in t are 1} needs one AND per subset (depth-first, one buffer per depth);
    the number of strings whose digits spell exactly k is Σ_{t ⊇ k} (−1)^{|t|−|k|} P(t).
    """
    bits = len(digits)
    ones = np.zeros(1 << bits, dtype=np.int64)
    ones[0] = total
    counts8 = np.empty(digits[0].shape[0], dtype=np.uint8)
    buffers = [pool.get() for _ in range(bits)]

    def visit(mask: int, current: np.ndarray | None, start: int, depth: int) -> None:
        for j in range(start, bits):
            if current is None:
                node = digits[j]
            else:
                node = buffers[depth]
                np.bitwise_and(current, digits[j], out=node)
            sub = mask | (1 << j)
            ones[sub] = _popcount(node, counts8)
            if ones[sub] and j + 1 < bits:
                visit(sub, node, j + 1, depth + 1)

    visit(0, None, 0, 0)
    exact = _moebius(bits) @ ones
    if exact[n + 1 :].any():
        raise AssertionError("sensitivity above n: bit-sliced counter is inconsistent")
    return exact[: n + 1]


@functools.lru_cache(maxsize=8)
def _moebius(bits: int) -> np.ndarray:
    """M[k, t] = (−1)^{|t|−|k|} for t ⊇ k, else 0: exact-pattern counts from all-ones counts."""
    k = np.arange(1 << bits)[:, None]
    t = np.arange(1 << bits)[None, :]
    sign = 1 - 2 * ((np.bitwise_count(t).astype(np.int64) - np.bitwise_count(k)) & 1)
    return np.where((t & k) == k, sign, 0).astype(np.int64)


def _sensitivity_counts(table: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(K_0..K_n as int64, influences as float64) of a (2^n,) uint8 table."""
    size = 1 << n
    if n < 7:  # under two words: the direct count is simpler and as fast
        s = sensitivity(table, n)
        counts = np.bincount(s, minlength=n + 1).astype(np.int64)
        halves = [table.reshape(-1, 2, 1 << i) for i in range(n)]
        infl = np.array([np.mean(v[:, 0] != v[:, 1]) for v in halves], dtype=np.float64)
        return counts, infl
    words = _pack(table)
    digits, flips, pool = _bit_sliced_counts(words, n)
    counts = _histogram(digits, n, size, pool)
    return counts, np.array(flips, dtype=np.float64) / size


# ----------------------------------------------------------------------------------------- Fourier

_LUT_BITS = 4  # the first 4 WHT stages come from a lookup on 16-string groups of the packed table


def _work_dtype(n: int) -> np.dtype:
    # float32 holds every integer ≤ 2^24 exactly, and ±1 Walsh sums at n ≤ 24 never exceed 2^24;
    # small n (cheap anyway) and n > 24 use float64.
    return np.dtype(np.float32) if 20 < n <= 24 else np.dtype(np.float64)


@functools.lru_cache(maxsize=8)
def _hadamard(bits: int, dtype: str) -> torch.Tensor:
    idx = np.arange(1 << bits)
    parity = (np.bitwise_count(idx[:, None] & idx[None, :]) & 1).astype(np.int64)
    return torch.from_numpy((1 - 2 * parity).astype(dtype))


_TORCH = {"float32": torch.float32, "float64": torch.float64}


@functools.lru_cache(maxsize=2)
def _group_lut(dtype: str) -> torch.Tensor:
    """(16, 2^16): column g is the 16-point WHT of the ±1 values whose 0/1 bits are g (bit j = string j)."""
    keys = np.arange(1 << 16)
    signs = 1 - 2 * ((keys[:, None] >> np.arange(16)) & 1)
    return torch.from_numpy(
        np.ascontiguousarray((signs @ _hadamard(_LUT_BITS, "int64").numpy()).T.astype(dtype))
    )


@functools.lru_cache(maxsize=8)
def _onehot_popcount(bits: int, dtype: str) -> torch.Tensor:
    pc = np.bitwise_count(np.arange(1 << bits))
    out = np.zeros((1 << bits, bits + 1), dtype=dtype)
    out[np.arange(1 << bits), pc] = 1
    return torch.from_numpy(out)


def _stages(bits: int, radix: int = 4) -> list[int]:
    """Split `bits` WHT stages into matmul stages of ≤ radix bits, as even as possible."""
    if bits == 0:
        return []
    parts = -(-bits // radix)
    return [bits // parts + (1 if j < bits % parts else 0) for j in range(parts)]


# Threads for the WHT matmuls. They are small, memory-bound products; one thread avoids thread-pool
# hand-offs per call (which cost more than they save on a busy 2-core machine). None keeps torch's setting.
WHT_THREADS: int | None = 1


@contextlib.contextmanager
def _torch_threads(count: int | None):
    previous = torch.get_num_threads()
    if count is not None and count != previous:
        torch.set_num_threads(count)
    try:
        yield
    finally:
        if torch.get_num_threads() != previous:
            torch.set_num_threads(previous)


def _wht_packed(table: np.ndarray, n: int, *, weights: bool) -> np.ndarray:
    with _torch_threads(WHT_THREADS):
        return _wht_packed_body(table, n, weights=weights)


def _wht_packed_body(table: np.ndarray, n: int, *, weights: bool) -> np.ndarray:
    """WHT of (−1)^f: the coefficients c_S = Σ_x (−1)^{f(x)+S·x} (2^n,), or (weights=True) the unnormalised
    weight by degree Σ_{|S|=d} c_S² (n+1,) without storing the last stage.

    Stage 1 maps each 16-string group (one uint16 of the packed table) through a lookup table to its
    16-point transform, written transposed; every later stage is one matmul `H_{2^r} · Aᵀ` on the
    (2^n / 2^r, 2^r) view, which transforms the r lowest bits of the layout and rotates them to the top,
    so after all stages the bits are back in index order.
    """
    dtype = _work_dtype(n)
    size = 1 << n
    keys = torch.from_numpy(np.packbits(table, bitorder="little").view("<u2").astype(np.int32))
    # the spectrum is handed to the caller, so its buffers are not cached
    with _workspace(size, dtype, keep=weights) as (ta, tb):
        return _wht_stages(ta, tb, keys, n, dtype, weights=weights)


# Two transform buffers are reused across calls at the same n (first-touching 64 MB of fresh pages costs
# as much as a transform stage). Only one pair is kept, and only up to this size; taken out of the cache
# while in use, so concurrent callers never share one. `release_workspace()` frees it.
_WORKSPACE_MAX_BYTES = 256 << 20
_workspace_cache: dict[tuple[int, str], tuple[torch.Tensor, torch.Tensor]] = {}
_workspace_lock = threading.Lock()


def release_workspace() -> None:
    """Free the cached WHT work buffers (at most 2 × 64 MB, held after an n = 24 profile)."""
    with _workspace_lock:
        _workspace_cache.clear()


@contextlib.contextmanager
def _workspace(size: int, dtype: np.dtype, *, keep: bool = True):
    key = (size, dtype.name)
    with _workspace_lock:
        pair = _workspace_cache.pop(key, None)
    if pair is None:
        # numpy buffers: numpy asks the kernel for huge pages (far fewer page faults than torch.empty)
        pair = (
            torch.from_numpy(np.empty(size, dtype=dtype)),
            torch.from_numpy(np.empty(size, dtype=dtype)),
        )
    try:
        yield pair
    finally:
        if keep and 2 * size * dtype.itemsize <= _WORKSPACE_MAX_BYTES:
            with _workspace_lock:
                _workspace_cache.clear()
                _workspace_cache[key] = pair


def _wht_stages(
    ta: torch.Tensor,
    tb: torch.Tensor,
    keys: torch.Tensor,
    n: int,
    dtype: np.dtype,
    *,
    weights: bool,
) -> np.ndarray:
    size = 1 << n
    lut = _group_lut(dtype.name)
    stages = _stages(n - _LUT_BITS)
    last = stages.pop() if weights and stages else None
    # torch's index_select gathers several times faster than np.take here (and than a fused, chunked
    # lookup + first stage, measured: per-chunk 1-D gathers lose to one 2-D gather)
    torch.index_select(lut, 1, keys, out=ta.view(16, size >> 4))
    for r in stages:
        rows = size >> r
        torch.matmul(_hadamard(r, dtype.name), ta.view(rows, 1 << r).T, out=tb.view(1 << r, rows))
        ta, tb = tb, ta
    if not weights:
        return ta.numpy()
    if last is None:  # n = 4: the lookup did everything
        return _weights_by_degree(ta.numpy().astype(np.float64) ** 2, n)
    # Last stage fused with the weight contraction, chunk by chunk so each chunk stays in cache: the squared
    # coefficients are summed per popcount class of the chunk index (|S| = |u| + |c| + |j| for top bits u,
    # chunk c and column j inside the chunk), and contracted with one-hot popcounts at the end.
    rows = size >> last
    h = _hadamard(last, dtype.name)
    chunk_bits = max(0, min(n - last, 15 - last))
    chunk = 1 << chunk_bits
    classes = n - last - chunk_bits + 1
    acc = torch.zeros((classes, 1 << last, chunk), dtype=ta.dtype)
    total = torch.zeros((classes, 1 << last, chunk), dtype=torch.float64)
    src = ta.view(rows, 1 << last)
    out = torch.empty((1 << last, chunk), dtype=ta.dtype)
    for c in range(rows // chunk):
        torch.matmul(h, src[c * chunk : (c + 1) * chunk].T, out=out)
        acc[c.bit_count()].addcmul_(out, out)
        if c % 64 == 63:  # fold into float64 before float32 sums lose digits (≤ 64 terms: ~1e-6)
            total += acc
            acc.zero_()
    total += acc
    p_top = _onehot_popcount(last, "float64")  # (2^last, last+1)
    p_low = _onehot_popcount(chunk_bits, "float64")  # (chunk, chunk_bits+1)
    tiles = torch.matmul(
        torch.matmul(p_top.T, total), p_low
    ).numpy()  # (classes, last+1, chunk_bits+1)
    result = np.zeros(n + 1)
    for hi in range(classes):
        for t in range(last + 1):
            result[hi + t : hi + t + chunk_bits + 1] += tiles[hi, t]
    return result


def _weights_by_degree(squares: np.ndarray, n: int) -> np.ndarray:
    return np.bincount(np.bitwise_count(np.arange(1 << n)), weights=squares, minlength=n + 1)


def walsh_hadamard(values: np.ndarray, n: int) -> np.ndarray:
    """Unnormalised WHT of any real vector: out[S] = Σ_x values[x] (−1)^{|S ∧ x|}; (2^n,) → (2^n,).

    One matmul per ≤ 6-bit stage on the rotating (2^n/2^r, 2^r) view; `values` is overwritten.
    """
    values = np.ascontiguousarray(values)
    a = torch.from_numpy(values)
    b = torch.empty_like(a)
    size = 1 << n
    for r in _stages(n, 6):
        rows = size >> r
        h = _hadamard(r, values.dtype.name)
        torch.matmul(h, a.view(rows, 1 << r).T, out=b.view(1 << r, rows))
        a, b = b, a
    return a.numpy()


def _signed(table: np.ndarray, n: int) -> np.ndarray:
    out = table.astype(_work_dtype(n))
    out *= -2
    out += 1
    return out


def _transform(table: np.ndarray, n: int) -> np.ndarray:
    if n >= 8:
        return _wht_packed(table, n, weights=False)
    return walsh_hadamard(_signed(table, n), n)


def fourier_spectrum(tt: Any, n: int | None = None) -> np.ndarray:
    """Walsh–Fourier coefficients f̂(S) of (−1)^f, indexed like the table (bit k of S ↔ k ∈ S); (2^n,) float.

    Σ_S f̂(S)² = 1 (Parseval); float32 for 20 < n ≤ 24 (exact up to the 2^-n scale), float64 otherwise.
    """
    table, n = as_truth_table(tt, n)
    coef = _transform(table, n)
    coef *= coef.dtype.type(1.0 / (1 << n))
    return coef


def fourier_weights_of_table(table: np.ndarray, n: int) -> np.ndarray:
    """W_d = Σ_{|S|=d} f̂(S)² for d = 0..n (sums to 1)."""
    if n >= 8:
        raw = _wht_packed(table, n, weights=True)
    else:
        raw = _weights_by_degree(_transform(table, n).astype(np.float64) ** 2, n)
    return raw / float(1 << n) ** 2


# ---------------------------------------------------------------------------------------- profiles


@dataclass
class SensitivityProfile:
    """The sensitivity / Fourier summary of one function.

    Exact profiles fill `counts` (K_0..K_n, int), `zero_count`, `max_sensitivity` and the Fourier fields;
    sampled ones fill the `*_ci` fields (confidence intervals at `confidence`), give `max_sensitivity` as the
    largest value seen (a lower bound), `zero_count` None and `zero_fraction_upper` (an upper bound).
    """

    n: int
    exact: bool
    fractions: np.ndarray  # (n+1,) K_k / 2^n
    average: float  # as(f)
    max_sensitivity: int
    influences: np.ndarray  # (n,) Inf_i
    counts: np.ndarray | None = None  # (n+1,) int64, exact only
    zero_count: int | None = None
    fourier_weights: np.ndarray | None = None  # (n+1,) W_d, Σ W_d = 1
    degree: int | None = None
    name: str = ""
    samples: int | None = None
    confidence: float | None = None
    average_ci: tuple[float, float] | None = None
    fraction_ci: np.ndarray | None = None  # (n+1, 2)
    influence_ci: np.ndarray | None = None  # (n, 2)
    zero_fraction_upper: float | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def zero_fraction(self) -> float:
        return float(self.fractions[0])

    @property
    def fourier_average_sensitivity(self) -> float | None:
        """Σ_d d·W_d — equals `average` for a Boolean function (a consistency check)."""
        if self.fourier_weights is None:
            return None
        return float(np.dot(np.arange(self.n + 1), self.fourier_weights))

    def to_dict(self) -> dict[str, Any]:
        def arr(a: np.ndarray | None) -> Any:
            return None if a is None else np.asarray(a).tolist()

        return {
            "name": self.name,
            "n": self.n,
            "exact": self.exact,
            "counts": arr(self.counts),
            "fractions": arr(self.fractions),
            "average_sensitivity": self.average,
            "max_sensitivity": self.max_sensitivity,
            "zero_count": self.zero_count,
            "zero_fraction": self.zero_fraction,
            "zero_fraction_upper": self.zero_fraction_upper,
            "influences": arr(self.influences),
            "fourier_weights": arr(self.fourier_weights),
            "degree": self.degree,
            "samples": self.samples,
            "confidence": self.confidence,
            "average_ci": None if self.average_ci is None else list(self.average_ci),
            "fraction_ci": arr(self.fraction_ci),
            "influence_ci": arr(self.influence_ci),
            "notes": list(self.notes),
        }


def profile_from_truth_table(
    tt: Any, n: int | None = None, *, fourier: bool = True, memory_budget: int | None = None,
    name: str = "",
) -> SensitivityProfile:  # fmt: skip
    """Exact profile of a 0/1 truth table (numpy or torch, (2^n,), index bit k = x_k)."""
    table, n = as_truth_table(tt, n)
    check_exact(n, memory_budget)
    counts, influences = _sensitivity_counts(table, n)
    size = 1 << n
    ks = np.arange(n + 1)
    average = float(np.dot(ks, counts)) / size
    weights = degree = None
    if fourier:
        weights = fourier_weights_of_table(table, n)
        nonzero = np.flatnonzero(weights > 0)
        degree = int(nonzero[-1]) if nonzero.size else 0
    return SensitivityProfile(
        n=n,
        exact=True,
        fractions=counts / size,
        average=average,
        max_sensitivity=int(np.flatnonzero(counts)[-1]),
        influences=influences,
        counts=counts,
        zero_count=int(counts[0]),
        fourier_weights=weights,
        degree=degree,
        name=name,
    )


# -------------------------------------------------------------------------------------- Monte Carlo


def _z(confidence: float) -> float:
    if not 0.5 < confidence < 1.0:
        raise UserError(f"confidence={confidence} is not allowed; it must be in (0.5, 1)")

    return NormalDist().inv_cdf(0.5 + confidence / 2)


def wilson_interval(successes: np.ndarray, trials: int, z: float) -> np.ndarray:
    """Wilson score interval for binomial proportions; (..., 2)."""
    k = np.asarray(successes, dtype=np.float64)
    p = k / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * np.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    low = np.where(k == 0, 0.0, np.clip(centre - half, 0, 1))
    high = np.where(k == trials, 1.0, np.clip(centre + half, 0, 1))
    return np.stack([low, high], axis=-1)


def sample_profile(
    f: BooleanFunction, samples: int, *, seed: int = 0, confidence: float = 0.95, chunk: int = 4096,
    progress: Callable[[int, int], None] | None = None,
) -> SensitivityProfile:  # fmt: skip
    """Monte Carlo profile from `samples` uniform strings: each costs n + 1 evaluations of f (f is a black
    box here), done in vectorised chunks. Wilson intervals for fractions and influences, a normal interval
    for as(f). No Fourier weights (they are not estimated). `progress(done, samples)` is called after
    each chunk."""
    f.require_boolean("sensitivity sampling")
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise UserError(
            f"samples={samples!r} is not allowed; give a positive number of sampled strings"
        )
    z = _z(confidence)
    n = f.n
    rng = np.random.default_rng(seed)
    hist = np.zeros(n + 1, dtype=np.int64)
    flips = np.zeros(n, dtype=np.int64)
    s_sum = 0.0
    s_sq = 0.0
    done = 0
    while done < samples:
        b = min(chunk, samples - done, max(1, (1 << 22) // max(n, 1)))
        x = rng.integers(0, 2, size=(b, n), dtype=np.uint8)
        base = _check01(f(x), f.name)
        sens = np.zeros(b, dtype=np.int64)
        for i in range(n):
            x[:, i] ^= 1
            diff = _check01(f(x), f.name) != base
            x[:, i] ^= 1
            sens += diff
            flips[i] += int(diff.sum())
        hist += np.bincount(sens, minlength=n + 1)
        s_sum += float(sens.sum())
        s_sq += float((sens.astype(np.float64) ** 2).sum())
        done += b
        if progress is not None:
            progress(done, samples)
    fractions = hist / samples
    average = s_sum / samples
    var = max(s_sq / samples - average**2, 0.0) * samples / max(samples - 1, 1)
    half = z * math.sqrt(var / samples)
    fraction_ci = wilson_interval(hist, samples, z)
    zero_upper = float(fraction_ci[0, 1])
    notes = [
        f"Monte Carlo estimate from {samples} strings (seed {seed}); intervals at {confidence:.0%}.",
        "K_0 cannot be estimated by sampling when it is tiny (a random function has E[K_0] = 1 of "
        f"2^{n} strings): only an upper bound on the zero-sensitivity fraction is given, "
        f"K_0/2^n ≤ {zero_upper:.3g}.",
        "Max sensitivity is the largest value seen (a lower bound); Fourier weights are not estimated.",
    ]
    return SensitivityProfile(
        n=n,
        exact=False,
        fractions=fractions,
        average=average,
        max_sensitivity=int(np.flatnonzero(hist)[-1]),
        influences=flips / samples,
        name=f.name,
        samples=samples,
        confidence=confidence,
        average_ci=(average - half, average + half),
        fraction_ci=fraction_ci,
        influence_ci=wilson_interval(flips, samples, z),
        zero_fraction_upper=zero_upper,
        notes=notes,
    )


def _check01(values: np.ndarray, name: str) -> np.ndarray:
    values = np.asarray(values)
    if values.dtype != np.uint8 and values.dtype != np.bool_:
        bad = values[(values != 0) & (values != 1)]
        if bad.size:
            raise UserError(
                f"{name!r} returned {bad.flat[0]!r}; a Boolean function's values must be 0 or 1"
            )
    return values.astype(np.uint8, copy=False)


def profile(
    f: Any, n: int | None = None, *, samples: int | None = None, seed: int = 0,
    confidence: float = 0.95, memory_budget: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> SensitivityProfile:  # fmt: skip
    """The notebook entry point: `profile("majority", 11)`, `profile(parity(10))`, `profile(tt)`.

    `f` is a spec string (zoo name, expression or file), a BooleanFunction, or a 0/1 truth table (numpy or
    torch). Exact unless `samples` is given.
    """
    if isinstance(f, str):
        f = resolve_function(f, n)
    if isinstance(f, BooleanFunction):
        f.require_boolean("sensitivity analysis")
        if samples is not None:
            return sample_profile(f, samples, seed=seed, confidence=confidence, progress=progress)
        check_exact(f.n, memory_budget)
        return profile_from_truth_table(
            f.truth_table(), f.n, memory_budget=memory_budget, name=f.name
        )
    if samples is not None:
        table, n = as_truth_table(f, n)
        return sample_profile(
            BooleanFunction(n, "table", table=table),
            samples,
            seed=seed,
            confidence=confidence,
            progress=progress,
        )
    return profile_from_truth_table(f, n, memory_budget=memory_budget)
