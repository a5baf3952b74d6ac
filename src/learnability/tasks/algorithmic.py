"""Algorithmic tasks of Zhong & Andreas (2024), "Algorithmic Capabilities of Random Transformers".

Every task here is next-token prediction for a causal LM (the GPT model, or the LSTM in LM mode): a full
sequence S (B, L) becomes `inputs = S[:, :-1]`, `targets = S[:, 1:]` (so output position t predicts token t+1),
and `mask` (B, L-1) marks the scored positions. Output "tokens", loss "ce", accuracy = teacher-forced argmax on the
scored positions (the `Task` default).

Formats (token ids follow the published code where it fixed them):
- `mod_add`: S = [a, b, (a+b) mod p], vocab p (199). All p² pairs are split once, with the data seed, into
  floor(0.95 p²) training and the rest test pairs (37,620 / 1,981 for p = 199). Only the answer is scored.
  Fixed dataset: `train_set()` is every training pair; `sample` draws training pairs with replacement.
- `needle`: m ~ U{1..k} distinct markers (k = max_pairs; tokens 128..128+k-1, as the published code draws them
  from its k keys), each followed by a value (1..127), then the query token (its marker + k) whose answer is that
  marker's value; right-padded with 0 to length 2k + 3 (63 at k = 30), vocab 256. One scored position (the
  query). Copying a random value in context scores E[1/m] ≈ 0.133 at k = 30.
- `decimal_add`: a, b with `digits` digits (leading digit non-zero, as published), written least significant digit
  first: digits 0..9 are tokens 0..9, `+` = 10, `=` = 11, answer digits (reversed) are tokens 20..29, stop = 30,
  padding = 12; length 3·digits + 4, vocab 31. Trained and scored (`mask`): every answer digit *including the
  first* (predicted at `=`; the published code never trained or scored it), the stop token, and, as the published
  code did, the padding token after the stop when the sum is short (`published_mask` is the published positions).
- `parens`: the published generator's distribution (about 52% balanced): one third uniform random strings of
  1..2·max_pairs symbols; two thirds a random balanced string of 1..max_pairs pairs, half of those left intact and
  the rest mutated by random swaps and / or flips. `(` = 1, `)` = 2, `?` = 3, padding 0; after `?` the answer is
  `)` (balanced) or `(` (unbalanced); length 2·max_pairs + 3, vocab 4. One scored position.
- `memorise`: every pair (x, y) ∈ [0, n_keys)² is mapped to a uniform random value v ∈ [0, n_values) (data seed);
  S = [x, y, v]. Fixed dataset; the test set is the training set (memorisation is scored on what was seen).

Streamed tasks (needle, decimal_add, parens) have a fixed test set of `test_size` sequences drawn with the data
seed; `sample` draws fresh sequences and redraws any row equal to a test sequence (exact equality: a row is
compared against the test set through a hash, and rows whose hash matches a test row are redrawn — this never
lets a test row through and at worst excludes a vanishing number of extra rows).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Literal

import torch

from learnability.errors import UserError
from learnability.tasks import register_task
from learnability.tasks.base import Batch, Task

_HASH_MULT = 1_000_003  # int64 polynomial row hash; overflow wraps, equal rows always hash equal


def row_hash(rows: torch.Tensor) -> torch.Tensor:
    """(B, L) integer rows → (B,) int64 hashes (equal rows give equal hashes)."""
    h = torch.zeros(rows.shape[0], dtype=torch.int64, device=rows.device)
    for col in rows.to(torch.int64).unbind(1):
        h = h * _HASH_MULT + col + 1
    return h


def hash_unit(hashes: torch.Tensor, buckets: int) -> torch.Tensor:
    """Row hashes (B,) int64 → well-mixed buckets in [0, buckets) (a SplitMix64-style finaliser; int64
    arithmetic wraps, so the same hash always lands in the same bucket)."""
    x = hashes * -7046029254386353131  # 0x9E3779B97F4A7C15 as a signed int64
    x = x ^ (x >> 31)
    x = x * -4658895280553007687  # 0xBF58476D1CE4E5B9
    x = x ^ (x >> 29)
    return torch.remainder(x, buckets)


def lm_batch(full: torch.Tensor, scored: torch.Tensor) -> Batch:
    """Full sequences (B, L) and a (B, L-1) mask of scored output positions → a next-token Batch."""
    return Batch(full[:, :-1].contiguous(), full[:, 1:].contiguous(), scored.contiguous())


def _check_positive(what: str, value: int, low: int = 1, high: int | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise UserError(f"{what} = {value!r} is not allowed; it must be an integer")
    if value < low or (high is not None and value > high):
        allowed = f"{low}..{high}" if high is not None else f"≥ {low}"
        raise UserError(f"{what} = {value!r} is out of range; allowed: {allowed}")


def _check_fraction(what: str, value: float) -> None:
    if not 0.0 < value < 1.0:
        raise UserError(f"{what} = {value!r} is out of range; allowed: 0 < f < 1")


def _check_streamed(task: str, config: NeedleConfig | DecimalAddConfig | ParensConfig) -> None:
    # the ranges a streamed task's test split needs, when the config is built (dry runs see them)
    _check_positive(f"{task}.test_size", config.test_size, 1)
    _check_fraction(f"{task}.hash_test_fraction", config.hash_test_fraction)
    limit = config.max_rejection
    if limit is not None and not 0.0 <= limit <= 1.0:
        raise UserError(
            f"{task}.max_rejection = {limit!r} is out of range; allowed: 0..1, or null (no limit)"
        )


def _python_rng(generator: torch.Generator) -> random.Random:
    """A Python RNG seeded from a torch generator (for the sequential, recursive generators)."""
    return random.Random(int(torch.randint(0, 2**62, (1,), generator=generator).item()))


# ---------------------------------------------------------------------------------------------- configs


@dataclass
class ModAddConfig:
    name: Literal["mod_add"] = "mod_add"  # (a + b) mod p, answer scored
    p: int = 199  # the modulus (and vocabulary)
    train_fraction: float = 0.95  # share of the p² pairs in the training split

    # Ranges are checked when the config is built, so `sweep --dry-run` and `train`'s pre-run checks
    # find them; `vocab` and `length` let the job check the model against the task before it runs.
    def __post_init__(self) -> None:
        _check_positive("mod_add.p", self.p, 2, 4096)
        _check_fraction("mod_add.train_fraction", self.train_fraction)

    @property
    def vocab(self) -> int:
        return self.p

    @property
    def length(self) -> int:
        return 2


@dataclass
class NeedleConfig:
    name: Literal["needle"] = "needle"  # recall the value stored after a queried marker
    max_pairs: int = 30  # at most this many marker-value pairs per sequence
    test_size: int = 4000  # sequences in the fixed test set
    split: Literal["exclude", "hash"] = "exclude"  # how the test set is kept out of training
    hash_test_fraction: float = 0.05  # split "hash": the share of the string space held out
    max_rejection: float | None = (
        0.10  # fail when more training draws than this fall in the test set
    )

    def __post_init__(self) -> None:
        _check_positive("needle.max_pairs", self.max_pairs, 1, 30)
        _check_streamed("needle", self)

    @property
    def vocab(self) -> int:
        return NeedleTask.vocab_size

    @property
    def length(self) -> int:
        return 62 if self.max_pairs == 30 else 2 * self.max_pairs + 2


@dataclass
class DecimalAddConfig:
    name: Literal["decimal_add"] = "decimal_add"  # add two numbers written digit by digit
    digits: int = 10  # digits of each addend
    test_size: int = 4000  # sequences in the fixed test set
    split: Literal["exclude", "hash"] = "exclude"  # how the test set is kept out of training
    hash_test_fraction: float = 0.05  # split "hash": the share of the string space held out
    max_rejection: float | None = (
        0.10  # fail when more training draws than this fall in the test set
    )

    def __post_init__(self) -> None:
        _check_positive("decimal_add.digits", self.digits, 1, 17)
        _check_streamed("decimal_add", self)

    @property
    def vocab(self) -> int:
        return DecimalAddTask.vocab_size

    @property
    def length(self) -> int:
        return 3 * self.digits + 3


@dataclass
class ParensConfig:
    name: Literal["parens"] = "parens"  # is the bracket string balanced?
    max_pairs: int = 30  # strings of up to 2·max_pairs symbols
    test_size: int = 4000  # sequences in the fixed test set
    split: Literal["exclude", "hash"] = "exclude"  # how the test set is kept out of training
    hash_test_fraction: float = 0.05  # split "hash": the share of the string space held out
    max_rejection: float | None = (
        0.10  # fail when more training draws than this fall in the test set
    )

    def __post_init__(self) -> None:
        _check_positive("parens.max_pairs", self.max_pairs, 1, 500)
        _check_streamed("parens", self)

    @property
    def vocab(self) -> int:
        return ParensTask.vocab_size

    @property
    def length(self) -> int:
        return 2 * self.max_pairs + 2


@dataclass
class MemoriseConfig:
    name: Literal["memorise"] = "memorise"  # memorise a random table (x, y) -> v
    n_keys: int = 512  # x and y each range over n_keys tokens
    n_values: int = 512  # values v range over n_values tokens
    # the published format: y tokens are offset by n_keys, so x and y never share ids (vocab 2·n_keys);
    # False keeps x and y on the same ids 0..n_keys-1
    offset_y: bool = False

    def __post_init__(self) -> None:
        _check_positive("memorise.n_keys", self.n_keys, 1, 4096)
        _check_positive("memorise.n_values", self.n_values, 2, 65536)

    @property
    def vocab(self) -> int:
        return max(self.n_keys * (2 if self.offset_y else 1), self.n_values)

    @property
    def length(self) -> int:
        return 2


# ---------------------------------------------------------------------------------------------- fixed


class ModAddTask(Task):
    """(a + b) mod p on a fixed 95/5 split of all p² pairs."""

    output = "tokens"
    loss = "ce"
    seq_len = 2

    def __init__(self, config: ModAddConfig, data_seed: int = 0) -> None:
        _check_positive("mod_add.p", config.p, 2, 4096)
        if not 0.0 < config.train_fraction < 1.0:
            raise UserError(
                f"mod_add.train_fraction = {config.train_fraction!r} is out of range; allowed: 0 < f < 1"
            )
        self.config = config
        self.p = config.p
        self.vocab_size = config.p
        g = torch.Generator().manual_seed(data_seed)
        order = torch.randperm(config.p**2, generator=g)
        n_train = int(config.train_fraction * config.p**2)
        self.train_pairs = order[:n_train].sort().values
        self.test_pairs = order[n_train:].sort().values

    def make_batch(self, codes: torch.Tensor) -> Batch:
        """Pair codes a·p + b (B,) → Batch with inputs (B, 2), targets (B, 2), only the answer scored."""
        a, b = codes // self.p, codes % self.p
        full = torch.stack([a, b, (a + b) % self.p], 1)
        mask = torch.zeros(len(codes), 2, dtype=torch.bool)
        mask[:, 1] = True
        return lm_batch(full, mask)

    def scored_positions(self) -> tuple[int, ...]:
        return (1,)

    def sample(self, batch_size: int, generator: torch.Generator) -> Batch:
        pick = torch.randint(0, len(self.train_pairs), (batch_size,), generator=generator)
        return self.make_batch(self.train_pairs[pick])

    def train_set(self) -> Batch:
        return self.make_batch(self.train_pairs)

    def test_set(self) -> Batch:
        return self.make_batch(self.test_pairs)


class MemoriseTask(Task):
    """A random lookup table [x, y] → v over all n_keys² pairs; scored on the table itself."""

    output = "tokens"
    loss = "ce"
    seq_len = 2

    def __init__(self, config: MemoriseConfig, data_seed: int = 0) -> None:
        _check_positive("memorise.n_keys", config.n_keys, 1, 4096)
        _check_positive("memorise.n_values", config.n_values, 2, 65536)
        self.config = config
        n = config.n_keys
        self.y_offset = n if config.offset_y else 0
        self.vocab_size = max(n + self.y_offset, config.n_values)
        g = torch.Generator().manual_seed(data_seed)
        self.values = torch.randint(0, config.n_values, (n * n,), generator=g)
        self._all = self.make_batch(torch.arange(n * n))

    @property
    def bits_per_item(self) -> float:
        """Information in one uniformly random value, log2(n_values) bits."""

        return math.log2(self.config.n_values)

    def make_batch(self, codes: torch.Tensor) -> Batch:
        n = self.config.n_keys
        full = torch.stack([codes // n, codes % n + self.y_offset, self.values[codes]], 1)
        mask = torch.zeros(len(codes), 2, dtype=torch.bool)
        mask[:, 1] = True
        return lm_batch(full, mask)

    def scored_positions(self) -> tuple[int, ...]:
        return (1,)

    def sample(self, batch_size: int, generator: torch.Generator) -> Batch:
        n = self.config.n_keys
        return self.make_batch(torch.randint(0, n * n, (batch_size,), generator=generator))

    def train_set(self) -> Batch:
        return self._all

    def test_set(self) -> Batch:
        return self._all


# ---------------------------------------------------------------------------------------------- streamed


class StreamedTask(Task):
    """A task with a fixed test set (data seed) and fresh training batches that never contain test rows.

    Two ways to keep the test set out of training (`split`):
    - "exclude" (the published code): the test set is `test_size` draws of the generator; training draws
      equal to a test row are redrawn. In a small sequence space most frequent strings end up in the test
      set, so training loses much of its distribution and the test set measures strings training never shows.
    - "hash": a fixed partition of the string space: a row belongs to the test side when a mix of its hash
      falls in the lowest `hash_test_fraction` of the hash range (the same rows for every data seed). The test
      set is `test_size` draws of the generator that fall on the test side (the generator's distribution
      restricted to held-out strings); training redraws rows on the test side.
    Either way `rejection_rate` is the share of the generator's draws that training must redraw, estimated on
    `REJECTION_PROBE` draws when the task is built; above `max_rejection` building fails (UserError).
    `fresh_set(n, seed)` draws rows from the unrestricted generator: accuracy on the training distribution.
    """

    output = "tokens"
    loss = "ce"
    test_size: int = 4000
    REJECTION_PROBE = 8192  # generator draws used to estimate the rejection rate
    _HASH_BUCKETS = 1 << 20

    def generate(self, count: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """`count` full sequences (count, L) long and their scored mask (count, L-1) bool."""
        raise NotImplementedError

    def _build_test(self, data_seed: int) -> None:
        _check_positive("test_size", self.test_size, 1)
        config = self.config  # type: ignore[attr-defined]
        self.split = getattr(config, "split", "exclude")
        self.hash_fraction = float(getattr(config, "hash_test_fraction", 0.05))
        if self.split not in ("exclude", "hash"):
            raise UserError(f"split = {self.split!r} is not allowed; allowed: exclude, hash")
        if self.split == "hash" and not 0.0 < self.hash_fraction < 1.0:
            raise UserError(
                f"hash_test_fraction = {self.hash_fraction!r} is out of range; allowed: 0 < f < 1"
            )
        g = torch.Generator().manual_seed(data_seed)
        if self.split == "exclude":
            full, mask = self.generate(self.test_size, g)
        else:
            full, mask = self._draw_held_out(self.test_size, g)
        self._test = lm_batch(full, mask)
        self._test_hashes = row_hash(full)
        self.test_distinct = int(torch.unique(self._test_hashes).numel())
        probe, _ = self.generate(self.REJECTION_PROBE, torch.Generator().manual_seed(data_seed + 1))
        self.rejection_rate = float(self.held_out(probe).float().mean())
        limit = getattr(config, "max_rejection", None)
        if limit is not None and self.rejection_rate > limit:
            raise UserError(
                f"{config.name}: {self.rejection_rate:.1%} of the generator's draws fall in the test set "
                f"(split {self.split!r}), more than max_rejection = {limit:.0%}: training would lose that "
                "share of its distribution. Use split 'hash' with a smaller hash_test_fraction, a larger "
                "task, or a smaller test_size"
            )

    def _draw_held_out(
        self, count: int, generator: torch.Generator
    ) -> tuple[torch.Tensor, torch.Tensor]:
        fulls, masks, have = [], [], 0
        for _ in range(10_000):
            full, mask = self.generate(max(4 * count, 256), generator)
            keep = self.held_out(full)
            fulls.append(full[keep])
            masks.append(mask[keep])
            have += int(keep.sum())
            if have >= count:
                return torch.cat(fulls)[:count], torch.cat(masks)[:count]
        raise UserError(
            "the hash partition holds almost none of the generator's draws; raise hash_test_fraction"
        )

    def held_out(self, full: torch.Tensor) -> torch.Tensor:
        """(B,) bool: which full rows (B, L) belong to the test side (training must not see them)."""
        h = row_hash(full)
        if self.split == "exclude":
            return torch.isin(h, self._test_hashes)
        return hash_unit(h, self._HASH_BUCKETS) < self.hash_fraction * self._HASH_BUCKETS

    def sample(self, batch_size: int, generator: torch.Generator) -> Batch:
        full, mask = self.generate(batch_size, generator)
        for _ in range(1000):
            clash = self.held_out(full)
            if not clash.any():
                return lm_batch(full, mask)
            new_full, new_mask = self.generate(int(clash.sum()), generator)
            full[clash], mask[clash] = new_full, new_mask
        raise UserError(
            "could not draw training rows outside the test set after 1000 tries; "
            "the task's sequence space is too small for its test_size — lower test_size"
        )

    def test_set(self) -> Batch:
        return self._test

    def fresh_set(self, count: int, seed: int) -> Batch:
        """`count` rows of the unrestricted generator (seeded): the training distribution itself."""
        return lm_batch(*self.generate(count, torch.Generator().manual_seed(seed)))


class NeedleTask(StreamedTask):
    """Needle in a haystack: recall the value written after the queried marker."""

    vocab_size = 256
    PAD, VALUE_LOW, VALUE_HIGH, MARKER0 = 0, 1, 127, 128

    def __init__(self, config: NeedleConfig, data_seed: int = 0) -> None:
        _check_positive("needle.max_pairs", config.max_pairs, 1, 30)
        self.config = config
        self.max_pairs = config.max_pairs
        self.full_len = 2 * config.max_pairs + 3
        self.seq_len = self.full_len - 1
        self.test_size = config.test_size
        self._build_test(data_seed)

    def scored_positions(self) -> tuple[int, ...]:
        return tuple(2 * m for m in range(1, self.max_pairs + 1))  # the query after m pairs

    def generate(self, count: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        k = self.max_pairs
        m = torch.randint(1, k + 1, (count,), generator=generator)
        # distinct markers: a random permutation of the k marker ids (the published code's k keys)
        markers = torch.rand(count, k, generator=generator).argsort(1) + self.MARKER0
        values = torch.randint(self.VALUE_LOW, self.VALUE_HIGH + 1, (count, k), generator=generator)
        pick = (
            torch.rand(count, generator=generator) * m
        ).long()  # queried pair, uniform in [0, m)
        full = torch.full((count, self.full_len), self.PAD, dtype=torch.long)
        slot = torch.arange(k)
        used = slot.unsqueeze(0) < m.unsqueeze(1)
        full[:, 0 : 2 * k : 2] = torch.where(used, markers, self.PAD)
        full[:, 1 : 2 * k : 2] = torch.where(used, values, self.PAD)
        rows = torch.arange(count)
        full[rows, 2 * m] = markers[rows, pick] + k  # the published query id: marker + k
        full[rows, 2 * m + 1] = values[rows, pick]
        mask = torch.zeros(count, self.full_len - 1, dtype=torch.bool)
        mask[rows, 2 * m] = True
        return full, mask


class DecimalAddTask(StreamedTask):
    """a + b with reversed digits; every answer digit and the stop token are scored."""

    vocab_size = 31
    PLUS, EQUALS, PAD, ANSWER0, STOP = 10, 11, 12, 20, 30

    def __init__(self, config: DecimalAddConfig, data_seed: int = 0) -> None:
        _check_positive("decimal_add.digits", config.digits, 1, 17)
        self.config = config
        self.digits = config.digits
        self.full_len = 3 * config.digits + 4
        self.seq_len = self.full_len - 1
        self.test_size = config.test_size
        self._build_test(data_seed)

    def draw_numbers(self, count: int, generator: torch.Generator) -> torch.Tensor:
        """(count,) int64 uniform numbers with exactly `digits` digits."""
        low, high = 10 ** (self.digits - 1), 10**self.digits
        return (
            low
            + (torch.rand(count, generator=generator, dtype=torch.float64) * (high - low)).long()
        )

    @staticmethod
    def reversed_digits(x: torch.Tensor, width: int) -> torch.Tensor:
        """(B,) int64 → (B, width) digits, least significant first."""
        powers = 10 ** torch.arange(width, dtype=torch.int64)
        return (x.unsqueeze(1) // powers) % 10

    def scored_positions(self) -> tuple[int, ...]:
        # from `=` (predicting the first answer digit) to the padding after a (d+1)-digit answer's stop
        return tuple(range(2 * self.digits + 1, 3 * self.digits + 3))

    def generate(self, count: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        d = self.digits
        a, b = self.draw_numbers(count, generator), self.draw_numbers(count, generator)
        s = a + b
        n_sum = torch.where(s >= 10**d, d + 1, d)  # the sum has d or d+1 digits
        full = torch.full((count, self.full_len), self.PAD, dtype=torch.long)
        full[:, :d] = self.reversed_digits(a, d)
        full[:, d] = self.PLUS
        full[:, d + 1 : 2 * d + 1] = self.reversed_digits(b, d)
        full[:, 2 * d + 1] = self.EQUALS
        answer = self.reversed_digits(s, d + 1) + self.ANSWER0
        col = torch.arange(d + 1)
        start = 2 * d + 2
        answer = torch.where(col.unsqueeze(0) < n_sum.unsqueeze(1), answer, self.PAD)
        full[:, start : start + d + 1] = answer
        rows = torch.arange(count)
        full[rows, start + n_sum] = self.STOP
        # output position t predicts token t+1: the answer digits and stop sit at start..start+n_sum
        pos = torch.arange(self.full_len - 1).unsqueeze(0)
        mask = (pos >= start - 1) & (pos < (start + n_sum).unsqueeze(1))
        return full, mask | self.published_mask(full)

    @classmethod
    def published_mask(cls, full: torch.Tensor) -> torch.Tensor:
        """(B, L-1) bool: the positions the published code trained and scored — every output position
        whose input token is an answer digit or the stop token (so the answer's first digit, predicted at
        `=`, is never scored, while the padding token after the stop is)."""
        return full[:, :-1] >= cls.ANSWER0

    def answer_positions(self) -> torch.Tensor:
        """(digits + 1,) output positions predicting answer digits 1..digits+1 (least significant first)."""
        return torch.arange(self.digits + 1) + 2 * self.digits + 1

    @staticmethod
    def decode_answer(row: torch.Tensor) -> int:
        """The sum written in a full sequence (reads the reversed answer tokens up to the stop)."""
        digits = [int(t) - 20 for t in row.tolist() if 20 <= t <= 29]
        return sum(dig * 10**i for i, dig in enumerate(digits))


class ParensTask(StreamedTask):
    """Is the bracket string balanced? The published generator's mixture of random and mutated strings."""

    vocab_size = 4
    PAD, OPEN, CLOSE, QUERY = 0, 1, 2, 3

    def __init__(self, config: ParensConfig, data_seed: int = 0) -> None:
        _check_positive("parens.max_pairs", config.max_pairs, 1, 500)
        self.config = config
        self.max_pairs = config.max_pairs
        self.full_len = 2 * config.max_pairs + 3
        self.seq_len = self.full_len - 1
        self.test_size = config.test_size
        self._build_test(data_seed)

    @staticmethod
    def balanced(rng: random.Random, pairs: int) -> list[int]:
        """A random balanced string of `pairs` pairs: wrap a smaller one, or concatenate two (iterative)."""
        # Explicit stack instead of recursion (deep nesting at 500 pairs would hit Python's recursion limit).
        out: list[int] = []
        todo: list[int | str] = [pairs]
        while todo:
            item = todo.pop()
            if isinstance(item, str):
                out.append(ParensTask.CLOSE)
                continue
            if item == 0:
                continue
            if item == 1:
                out += [ParensTask.OPEN, ParensTask.CLOSE]
            elif rng.randint(0, 1):
                out.append(ParensTask.OPEN)
                todo += [")", item - 1]
            else:
                left = rng.randint(1, item - 1)
                todo += [item - left, left]
        return out

    @staticmethod
    def is_balanced(seq: list[int]) -> bool:
        depth = 0
        for t in seq:
            depth += 1 if t == ParensTask.OPEN else -1
            if depth < 0:
                return False
        return depth == 0

    def one(self, rng: random.Random) -> list[int]:
        """One bracket string (without `?` and answer)."""
        mutate = rng.randint(0, 3)  # bit 0: swaps, bit 1: flips
        if rng.randint(0, 2) == 0:
            s = [
                rng.choice((self.OPEN, self.CLOSE))
                for _ in range(rng.randint(1, 2 * self.max_pairs))
            ]
        else:
            s = self.balanced(rng, rng.randint(1, self.max_pairs))
            if rng.randint(0, 1):
                mutate = 0
        if mutate & 1:
            rep = 1
            while rng.randint(0, 1):
                rep += 1
            for _ in range(rep):
                i, j = rng.randint(0, len(s) - 1), rng.randint(0, len(s) - 1)
                if i < j:
                    s[i], s[j] = s[j], s[i]
        if mutate & 2:
            rep = 1
            while rng.randint(0, 1):
                rep += 1
            if rng.randint(0, 2):
                rep *= 2
            for _ in range(rep):
                i = rng.randint(0, len(s) - 1)
                s[i] = self.OPEN + self.CLOSE - s[i]
        return s

    def generate(self, count: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        rng = _python_rng(generator)
        full = torch.full((count, self.full_len), self.PAD, dtype=torch.long)
        mask = torch.zeros(count, self.full_len - 1, dtype=torch.bool)
        for r in range(count):
            s = self.one(rng)
            answer = self.CLOSE if self.is_balanced(s) else self.OPEN
            row = [*s, self.QUERY, answer]
            full[r, : len(row)] = torch.tensor(row)
            mask[r, len(s)] = True
        return full, mask


register_task(ModAddConfig, ModAddTask)
register_task(MemoriseConfig, MemoriseTask)
register_task(NeedleConfig, NeedleTask)
register_task(DecimalAddConfig, DecimalAddTask)
register_task(ParensConfig, ParensTask)

__all__ = [
    "DecimalAddConfig", "DecimalAddTask", "MemoriseConfig", "MemoriseTask", "ModAddConfig",
    "ModAddTask", "NeedleConfig", "NeedleTask", "ParensConfig", "ParensTask", "StreamedTask",
    "lm_batch", "row_hash",
]  # fmt: skip
