"""Boolean-function tasks: uniform bit strings x ∈ {0,1}^n as tokens 0/1, target f(x).

Conventions (see docs/ARCHITECTURE.md): position k holds x_k; the integer code of x is Σ_k x_k 2^k.
- targets "01": f(x) ∈ {0,1} (real-valued zoo functions such as MEAN keep their value in [0,1]);
  targets "pm1": 2 f(x) − 1 ∈ {−1,+1}. Accuracy thresholds output and target at 0.5 ("01") or 0 ("pm1").
- mode "online": a fresh uniform batch per step. The test set is every string when 2^n ≤ test_size, else
  test_size distinct uniform strings, which training batches then exclude (resampled rows).
  mode "fixed": train_size distinct strings chosen with the data seed; the test set is up to test_size of the
  remaining strings (all of them when they fit), so generalisation is measured on unseen strings only.
  train_size is a count (an integer ≥ 1) or a fraction of the 2^n strings (a float in (0, 1]: 0.25 is a
  quarter of them, rounded to the nearest count and at least 1; n ≤ 24) — `train_count(config)`.
- length generalisation: with min_len / max_len set, each training batch has one length drawn uniformly from
  [min_len, max_len] (one length per batch keeps batches rectangular without padding); the function is resolved
  again per length (meaningful for length-generic zoo functions: parity, majority, first, ...).
  `length_buckets` ([[lo, hi], ...], may exceed max_len) are the evaluation buckets of `length_test_sets()`.
- scratchpad: PARITY with the prefix parity x_0 ⊕ … ⊕ x_t as target at every position t: per-position scalar
  targets (B, T) float in the target scale with `mask` (B, T) (every position scored), output "tokens", loss
  "mse", accuracy thresholded per scored position. Train a model with per-position scalar output, e.g. the
  Boolean transformer with readout="all" and causal=True.
- label_noise p: training labels flipped with probability p (0/1 targets f -> 1 − f, ±1 targets f -> −f);
  the test set and the length buckets stay clean, so test accuracy measures the clean function. Online,
  every drawn string's label flips independently (a fresh draw from the batch generator after the
  strings); fixed, exactly round(p · train_size) training strings, chosen from the data seed, carry a
  flipped label for the whole run (`noisy` marks them). p = 0 draws nothing: runs are as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import torch

from learnability.boolean.functions import resolve_function
from learnability.config import HASH_OMIT_DEFAULT
from learnability.errors import UserError, check_int, check_number
from learnability.tasks import register_task
from learnability.tasks.base import Batch, Task, default_accuracy

EXACT_SPACE_LIMIT = 24  # enumerate / permute the whole input space up to 2^24 strings


@dataclass
class BooleanTaskConfig:
    name: Literal["boolean"] = "boolean"  # a Boolean function of uniform bit strings
    # a zoo name ("parity", "sparse_parity:k=3"), an expression ("x0 ^ x3"), a truth-table file, or a
    # callable by reference ("py:package.module:fn")
    function: str = "parity"
    n: int = 8  # string length (bits)
    targets: Literal["01", "pm1"] = "01"  # targets f(x) in {0, 1} or 2 f(x) − 1 in {−1, +1}
    mode: Literal["online", "fixed"] = "online"  # fresh batches every step, or a fixed training set
    # fixed mode: distinct training strings, a count ≥ 1 (256) or a fraction in (0, 1] of the 2^n (0.25)
    train_size: int | float = 256
    test_size: int = 1024  # test strings (every string when 2^n fits)
    min_len: int | None = None  # variable-length training (length generalisation); None = always n
    max_len: int | None = None  # longest training length (with min_len); None = n
    # evaluation buckets [[lo, hi], ...] of the length_generalisation measure
    length_buckets: list[list[int]] = field(default_factory=list)
    scratchpad: bool = False  # PARITY with the prefix parity at every position as target
    # probability p in [0, 0.5) that a TRAINING label is flipped (test labels stay clean): online, each
    # drawn string's label independently; fixed, round(p·train_size) chosen strings' labels for good.
    # Drawn from the data seed; 0 (not in run ids) draws nothing
    label_noise: float = field(default=0.0, metadata=HASH_OMIT_DEFAULT)

    def __post_init__(self) -> None:
        _check_config(self)


MAX_TASK_N = 4096  # longest string a Boolean task draws (the sampled analyses' own limit is higher)


def _check_config(c: BooleanTaskConfig) -> None:
    """The task's ranges and its function spec, checked when the config is built (so a sweep's
    `--dry-run` finds them) rather than when a worker builds the task."""

    check_int("task.n", c.n, 1, MAX_TASK_N)
    for name in ("min_len", "max_len"):
        if getattr(c, name) is not None:
            check_int(f"task.{name}", getattr(c, name), 1, MAX_TASK_N)
    low = c.min_len if c.min_len is not None else (c.max_len or c.n)
    high = c.max_len if c.max_len is not None else max(c.n, low)
    if low > high:
        raise UserError(
            f"task.min_len={low} > task.max_len={high} is not allowed; need min_len ≤ max_len"
        )
    for bucket in c.length_buckets:
        if (
            len(bucket) != 2
            or any(isinstance(b, bool) or not isinstance(b, int) for b in bucket)
            or not 1 <= bucket[0] <= bucket[1]
        ):
            raise UserError(
                f"task.length_buckets entry {bucket!r} is not allowed; use [lo, hi] with 1 ≤ lo ≤ hi"
            )
    check_int("task.test_size", c.test_size, 1)
    check_number("task.label_noise", c.label_noise, 0, 0.5, high_open=True)
    if c.label_noise and c.scratchpad:
        raise UserError(
            f"task.label_noise={c.label_noise:g} is not allowed with task.scratchpad; it flips one "
            "label per string, and the scratchpad has one per position"
        )
    if c.mode == "fixed":
        if low != high:
            raise UserError("task.mode='fixed' needs one length; unset task.min_len / task.max_len")
        train_count(c)
    if c.scratchpad:
        if c.function.strip().lower() != "parity":
            raise UserError(f"task.scratchpad needs function 'parity', not {c.function!r}")
        return
    try:
        resolve_function(c.function, c.n)
    except UserError as exc:
        raise UserError(f"task.function={c.function!r}: {exc}") from None


def train_count(c: BooleanTaskConfig) -> int:
    """The number of training strings `train_size` asks for (a count, or a fraction of 2^n)."""
    size = c.train_size
    if isinstance(size, float):
        if not (0 < size <= 1):
            raise UserError(
                f"task.train_size={size!r} is a fraction of the 2^n strings and must be in (0, 1]; "
                "give a count as an integer (e.g. 256)"
            )
        if c.n > EXACT_SPACE_LIMIT:
            raise UserError(
                f"task.train_size={size!r} (a fraction of 2^n) needs n ≤ {EXACT_SPACE_LIMIT}, not "
                f"n={c.n}; give a count as an integer"
            )
        return max(1, round(size * 2**c.n))
    return check_int("task.train_size", size, 1, 2 ** min(c.n, 62))


def codes_of(bits: torch.Tensor) -> torch.Tensor:
    """(B, n) 0/1 → (B,) int64 codes Σ_k x_k 2^k (n ≤ 62)."""
    weights = 2 ** torch.arange(bits.shape[1], dtype=torch.int64, device=bits.device)
    return (bits.to(torch.int64) * weights).sum(1)


def bits_of(codes: torch.Tensor, n: int) -> torch.Tensor:
    """(B,) int64 codes → (B, n) int64 bits, position k = bit k."""
    shifts = torch.arange(n, dtype=torch.int64, device=codes.device)
    return (codes.unsqueeze(1) >> shifts) & 1


def _evaluate(fn: Any, bits: torch.Tensor) -> torch.Tensor:
    """f on a (B, n) 0/1 batch → (B,) float64, through whichever interface the function object offers."""

    out = fn(bits.to(torch.uint8).cpu().numpy())
    return torch.as_tensor(np.asarray(out, dtype=np.float64)).reshape(-1)


class BooleanTask(Task):
    """A Boolean-function task built from a `BooleanTaskConfig` and a data seed."""

    vocab_size = 2

    def __init__(self, config: BooleanTaskConfig, data_seed: int = 0) -> None:
        self.config = c = config
        self.data_seed = int(data_seed)
        if c.n < 1:
            raise UserError(f"task.n = {c.n} is not allowed; the string length must be ≥ 1")
        if c.targets not in ("01", "pm1"):
            raise UserError(f"task.targets = {c.targets!r} is not allowed; allowed: 01, pm1")
        if c.mode not in ("online", "fixed"):
            raise UserError(f"task.mode = {c.mode!r} is not allowed; allowed: online, fixed")
        self.min_len = c.min_len if c.min_len is not None else (c.max_len or c.n)
        self.max_len = c.max_len if c.max_len is not None else max(c.n, self.min_len)
        if not 1 <= self.min_len <= self.max_len:
            raise UserError(
                f"task lengths min_len={self.min_len}, max_len={self.max_len} are not allowed; need 1 ≤ min_len ≤ max_len"
            )
        for bucket in c.length_buckets:
            if len(bucket) != 2 or not 1 <= bucket[0] <= bucket[1]:
                raise UserError(
                    f"task.length_buckets entry {bucket!r} is not allowed; use [lo, hi] with 1 ≤ lo ≤ hi"
                )
        if c.mode == "fixed":
            if self.min_len != self.max_len:
                raise UserError("task.mode = 'fixed' needs one length; unset min_len/max_len")
            self.train_count = train_count(c)
        if c.test_size < 1:
            raise UserError(f"task.test_size = {c.test_size} is not allowed; need ≥ 1")
        self.seq_len = self.max_len
        self.variable = self.min_len != self.max_len
        if c.scratchpad:
            if c.function.strip().lower() != "parity":
                raise UserError(f"task.scratchpad needs function 'parity', not {c.function!r}")
            self.output, self.loss = "tokens", "mse"
        else:
            self.output, self.loss = "scalar", "mse"
        self.threshold = 0.5 if c.targets == "01" else 0.0
        self._functions: dict[int, Any] = {}
        self._tables: dict[int, torch.Tensor] = {}
        self.function_at(c.n)  # resolve now so a bad spec fails at build time
        self._build_splits()

    # -- the target function -------------------------------------------------------------------------------
    def function_at(self, length: int) -> Any:
        """The resolved Boolean function for strings of `length` (None for the scratchpad task)."""
        if self.config.scratchpad:
            return None
        if length not in self._functions:
            self._functions[length] = resolve_function(self.config.function, length)
        return self._functions[length]

    def target_values(self, bits: torch.Tensor) -> torch.Tensor:
        """f(x) for a (B, L) 0/1 batch, in the task's target scale: (B,) float, or (B, L) long (scratchpad)."""
        if self.config.scratchpad:
            f = (torch.cumsum(bits.to(torch.int64), 1) % 2).to(torch.float32)
            return f if self.config.targets == "01" else 2 * f - 1
        length = bits.shape[1]
        if length <= 20:  # one truth table per length, then gather: cheap and exact
            if length not in self._tables:
                self._tables[length] = _evaluate(
                    self.function_at(length), bits_of(torch.arange(2**length), length)
                )
            f = self._tables[length].to(bits.device)[codes_of(bits)]
        else:
            f = _evaluate(self.function_at(length), bits).to(bits.device)
        f = f.to(torch.float32)
        return f if self.config.targets == "01" else 2 * f - 1

    def make_batch(self, bits: torch.Tensor) -> Batch:
        bits = bits.to(torch.int64)
        targets = self.target_values(bits)
        mask = torch.ones_like(bits, dtype=torch.bool) if self.config.scratchpad else None
        return Batch(bits, targets, mask)

    def flipped(self, targets: torch.Tensor, flip: torch.Tensor) -> torch.Tensor:
        """`targets` (B,) with the labels where `flip` (B,) bool is set flipped: f -> 1 − f (0/1
        targets, real values in [0, 1] mirrored), or -> −f (±1 targets)."""
        other = 1 - targets if self.config.targets == "01" else -targets
        return torch.where(flip, other, targets)

    # -- splits --------------------------------------------------------------------------------------------
    def _generator(self, salt: int) -> torch.Generator:
        return torch.Generator().manual_seed(self.data_seed * 1_000_003 + salt)

    def _distinct(
        self, n: int, count: int, generator: torch.Generator, exclude: torch.Tensor | None
    ) -> torch.Tensor:
        """`count` distinct strings of length n (fewer if the space runs out), avoiding codes in `exclude`."""
        if n <= EXACT_SPACE_LIMIT:
            order = torch.randperm(2**n, generator=generator)
            if exclude is not None:
                order = order[~torch.isin(order, exclude)]
            return bits_of(order[:count], n)
        bits = torch.randint(0, 2, (count, n), generator=generator)
        if (
            n <= 62
        ):  # collisions are astronomically rare above 2^24, but drop them to keep "distinct" true
            codes = codes_of(bits)
            keep = torch.ones(count, dtype=torch.bool)
            if exclude is not None:
                keep &= ~torch.isin(codes, exclude)
            _, first = _first_occurrence(codes)
            keep &= first
            bits = bits[keep]
        return bits

    def _build_splits(self) -> None:
        c, n = self.config, self.max_len
        self._exclude: torch.Tensor | None = None
        self._train: Batch | None = None
        self.noisy: torch.Tensor | None = None  # fixed mode: which training labels are flipped
        if c.mode == "fixed":
            pick = self._distinct(n, self.train_count, self._generator(1), None)
            self._train = self.make_batch(pick)
            if c.label_noise:
                # exactly round(p·N) labels, chosen by their own stream (the splits are unchanged)
                count = len(pick)
                chosen = torch.randperm(count, generator=self._generator(3))
                self.noisy = torch.zeros(count, dtype=torch.bool)
                self.noisy[chosen[: round(c.label_noise * count)]] = True
                self._train = Batch(
                    self._train.inputs, self.flipped(self._train.targets, self.noisy), None
                )
            rest_exclude = codes_of(pick) if n <= 62 else None
            test = self._distinct(n, c.test_size, self._generator(2), rest_exclude)
            if len(test) == 0:  # the training set is the whole space: score on it
                test = pick
            self._test = self.make_batch(test)
            return
        if n <= 62 and 2**n <= c.test_size:
            self._test = self.make_batch(bits_of(torch.arange(2**n), n))
            return
        test = self._distinct(n, c.test_size, self._generator(2), None)
        self._test = self.make_batch(test)
        if n <= 62:  # batches at the test length avoid test strings (other lengths cannot hit them)
            self._exclude = codes_of(test).sort().values

    # -- Task interface ------------------------------------------------------------------------------------
    def sample(self, batch_size: int, generator: torch.Generator) -> Batch:
        length = self.max_len
        if self.variable:
            length = int(
                torch.randint(self.min_len, self.max_len + 1, (1,), generator=generator).item()
            )
        bits = torch.randint(0, 2, (batch_size, length), generator=generator)
        if self._exclude is not None and length == self.max_len:
            hit = torch.isin(codes_of(bits), self._exclude)
            while bool(hit.any()):
                bits[hit] = torch.randint(0, 2, (int(hit.sum()), length), generator=generator)
                hit = torch.isin(codes_of(bits), self._exclude)
        batch = self.make_batch(bits)
        if self.config.label_noise:  # drawn after the strings, so p > 0 draws the same first batch
            flip = torch.rand(batch_size, generator=generator) < self.config.label_noise  # (B,)
            batch = Batch(batch.inputs, self.flipped(batch.targets, flip), batch.mask)
        return batch

    def train_set(self) -> Batch | None:
        return self._train

    def test_set(self) -> Batch:
        return self._test

    def accuracy(self, output: torch.Tensor, batch: Batch) -> float:
        if self.config.scratchpad:  # per-position scalars, thresholded on the scored positions
            hit = (output.detach() > self.threshold) == (batch.targets > self.threshold)
            mask = batch.mask if batch.mask is not None else torch.ones_like(hit)
            return (hit & mask).sum().item() / max(int(mask.sum().item()), 1)
        return default_accuracy("scalar", output, batch, threshold=self.threshold)

    def length_test_sets(self, per_length: int = 256) -> dict[str, list[Batch]]:
        """Evaluation batches per length bucket "lo-hi": one batch of `per_length` strings per length."""
        out: dict[str, list[Batch]] = {}
        for k, (lo, hi) in enumerate(self.config.length_buckets):
            g = self._generator(100 + k)
            batches = []
            for length in range(lo, hi + 1):
                count = min(per_length, 2**length) if length <= 62 else per_length
                batches.append(self.make_batch(torch.randint(0, 2, (count, length), generator=g)))
            out[f"{lo}-{hi}"] = batches
        return out


def _first_occurrence(codes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(unique codes, mask of each row being the first row with its code)."""
    uniq, inverse = torch.unique(codes, return_inverse=True)
    first_index = torch.full((len(uniq),), len(codes), dtype=torch.int64)
    first_index.scatter_reduce_(0, inverse, torch.arange(len(codes)), reduce="amin")
    mask = torch.zeros(len(codes), dtype=torch.bool)
    mask[first_index] = True
    return uniq, mask


def build_boolean_task(config: BooleanTaskConfig, data_seed: int = 0) -> BooleanTask:
    return BooleanTask(config, data_seed=data_seed)


register_task(BooleanTaskConfig, build_boolean_task)

__all__ = [
    "BooleanTask", "BooleanTaskConfig", "bits_of", "build_boolean_task", "codes_of", "train_count",
]  # fmt: skip
