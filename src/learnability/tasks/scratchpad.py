"""PARITY with an autoregressive scratchpad of prefix parities.

Hahn & Rofin (§6) argue that intermediate steps make PARITY learnable because each step is a
low-sensitivity function. Their published code trains an encoder–decoder that writes the prefix
parities one at a time and, at test time, reads its own previous outputs back. This task is the
decoder-only form of the same protocol:

    tokens  (B, 2n): x_1 … x_n, SEP, y_1 … y_{n−1}        y_t = x_1 ⊕ … ⊕ x_t, SEP = token 2
    targets (B, 2n): 0 on the input positions, y_t at position n − 1 + t (0-based), t = 1 … n
    mask    (B, 2n): True on positions n … 2n − 1 (the n scored predictions)

A causal model read at every position (e.g. the Boolean transformer with readout="all", causal=True,
vocab_size=3) predicts y_t at the position holding y_{t−1} (SEP for t = 1): as a function of the
tokens it sees, y_t = y_{t−1} ⊕ x_t depends on two of them (sensitivity 2), while the last target y_n is
PARITY(x). Training feeds the true y_{<t} (teacher forcing; MSE on the scored positions, 0/1 targets).
At test time `learnability.measure.scratchpad.generate` feeds the model's own thresholded outputs back.

The strings x come from a plain PARITY `BooleanTask` of the same n and data seed, so the test strings are
the same as plain PARITY's and training batches never contain them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch

from learnability.errors import UserError
from learnability.tasks import register_task
from learnability.tasks.base import Batch, Task
from learnability.tasks.boolean import BooleanTask, BooleanTaskConfig

SEP = 2  # the separator token between the input bits and the scratchpad


@dataclass
class ScratchpadParityConfig:
    name: Literal["scratchpad_parity"] = (
        "scratchpad_parity"  # PARITY with every prefix parity as target
    )
    n: int = 8  # string length
    test_size: int = 1024  # strings in the test set


def prefix_parities(bits: torch.Tensor) -> torch.Tensor:
    """(B, n) 0/1 → (B, n) long: y_t = x_1 ⊕ … ⊕ x_t."""
    return torch.cumsum(bits.to(torch.int64), 1) % 2


class ScratchpadParityTask(Task):
    """See the module docstring. `inner` is the plain PARITY task that supplies the strings."""

    vocab_size = 3
    output = "tokens"
    loss = "mse"
    threshold = 0.5

    def __init__(self, config: ScratchpadParityConfig, data_seed: int = 0) -> None:
        if config.n < 1:
            raise UserError(f"task.n = {config.n} is not allowed; the string length must be ≥ 1")
        self.config = config
        self.n = config.n
        self.seq_len = 2 * config.n
        self.inner = BooleanTask(
            BooleanTaskConfig(function="parity", n=config.n, test_size=config.test_size), data_seed
        )
        self._test = self.make_batch(self.inner.test_set().inputs)

    def make_batch(self, bits: torch.Tensor) -> Batch:
        """(B, n) bits → the teacher-forced batch: tokens (B, 2n), targets (B, 2n) float, mask (B, 2n)."""
        b, n = bits.shape
        bits = bits.to(torch.int64)
        y = prefix_parities(bits)
        sep = torch.full((b, 1), SEP, dtype=torch.int64, device=bits.device)
        tokens = torch.cat([bits, sep, y[:, :-1]], 1)
        targets = torch.zeros(b, 2 * n, dtype=torch.float32, device=bits.device)
        targets[:, n:] = y.to(torch.float32)
        mask = torch.zeros(b, 2 * n, dtype=torch.bool, device=bits.device)
        mask[:, n:] = True
        return Batch(tokens, targets, mask)

    def sample(self, batch_size: int, generator: torch.Generator) -> Batch:
        return self.make_batch(self.inner.sample(batch_size, generator).inputs)

    def test_set(self) -> Batch:
        return self._test

    def accuracy(self, output: torch.Tensor, batch: Batch) -> float:
        """Teacher-forced accuracy over the scored positions (every step given the true prefix)."""
        hit = (output.detach() > self.threshold) == (batch.targets > self.threshold)
        mask = batch.mask if batch.mask is not None else torch.ones_like(hit)
        return (hit & mask).sum().item() / max(int(mask.sum().item()), 1)


def build_scratchpad_task(
    config: ScratchpadParityConfig, data_seed: int = 0
) -> ScratchpadParityTask:
    return ScratchpadParityTask(config, data_seed=data_seed)


register_task(ScratchpadParityConfig, build_scratchpad_task)

__all__ = [
    "SEP", "ScratchpadParityConfig", "ScratchpadParityTask", "build_scratchpad_task",
    "prefix_parities",
]  # fmt: skip
