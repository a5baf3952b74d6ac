"""What every task hands the trainer and the measurements: a `Batch` of data and the `Task` interface.

A task decides what a model sees (`inputs`, token ids), what it is scored against (`targets`) and how:
- output "scalar": targets (B,) float, loss "mse", accuracy thresholded (Boolean tasks),
- output "tokens": targets (B, T) long with `mask` (B, T) marking the scored positions, loss "ce",
  accuracy = teacher-forced argmax on scored positions,
- output "distribution": targets (B, V) float probabilities for the last position, loss "kl".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch

Output = Literal["scalar", "tokens", "distribution"]
Loss = Literal["mse", "ce", "kl"]


@dataclass
class Batch:
    """inputs: LongTensor (B, T); targets: (B,) float | (B, T) long | (B, V) float; mask: BoolTensor (B, T) | None."""

    inputs: torch.Tensor
    targets: torch.Tensor
    mask: torch.Tensor | None = None

    def to(self, device: torch.device | str) -> Batch:
        return Batch(
            self.inputs.to(device),
            self.targets.to(device),
            None if self.mask is None else self.mask.to(device),
        )

    def __len__(self) -> int:
        return int(self.inputs.shape[0])

    def at(self, positions: torch.Tensor) -> Batch:
        """The batch scored at `positions` (P,) long only: per-position targets and mask (B, P); targets
        of another shape (a last-position distribution) as they are. A scored position outside
        `positions` is an error in the task's `scored_positions`, never silently dropped."""
        if self.mask is None or self.targets.shape != self.mask.shape:
            return self
        mask = self.mask.index_select(1, positions)
        if int(mask.sum()) != int(self.mask.sum()):
            raise RuntimeError("the batch scores a position outside its task's scored_positions")
        return Batch(self.inputs, self.targets.index_select(1, positions), mask)

    def slice(self, start: int, stop: int) -> Batch:
        """Rows start..stop-1 (a view; used to chunk evaluation)."""
        return Batch(
            self.inputs[start:stop],
            self.targets[start:stop],
            None if self.mask is None else self.mask[start:stop],
        )


class Task:
    """Base class: subclasses set the attributes and implement `sample` / `test_set` (and `train_set` if fixed)."""

    vocab_size: int
    seq_len: int
    output: Output = "scalar"
    loss: Loss = "mse"

    def sample(self, batch_size: int, generator: torch.Generator) -> Batch:
        """A fresh training batch drawn with `generator` (streamed tasks; never contains test items)."""
        raise NotImplementedError

    def train_set(self) -> Batch | None:
        """The fixed training set of a fixed-dataset task, else None (the trainer then calls `sample`)."""
        return None

    def test_set(self) -> Batch:
        """The fixed evaluation set (deterministic for a given task config and data seed)."""
        raise NotImplementedError

    def scored_positions(self) -> tuple[int, ...] | None:
        """Every output position a loss or accuracy of this task can ever read, the same for every
        batch (a fixed answer slot), or None when that is all of them or not fixed. A model that can
        ask only some queries (`GPT.run(at=...)`) then trains on those outputs alone."""
        return None

    def accuracy(self, output: torch.Tensor, batch: Batch) -> float:
        """The task's metric on `output` (the model's output for `batch.inputs`); default by output kind."""
        return default_accuracy(self.output, output, batch)


def default_accuracy(
    kind: str, output: torch.Tensor, batch: Batch, threshold: float = 0.5
) -> float:
    """Accuracy by output kind: thresholded agreement (scalar), masked argmax (tokens / distribution)."""
    if kind == "scalar":
        pred = output.detach() > threshold
        want = batch.targets > threshold
        return (pred == want).float().mean().item()
    if kind == "tokens":
        pred = output.detach().argmax(-1)
        hit = pred == batch.targets
        if batch.mask is not None:
            return (hit & batch.mask).sum().item() / max(int(batch.mask.sum().item()), 1)
        return hit.float().mean().item()
    # distribution: does the student's top token agree with the target's top token at the scored position
    logits = output.detach()
    if logits.dim() == 3:
        logits = logits[:, -1]
    return (logits.argmax(-1) == batch.targets.argmax(-1)).float().mean().item()
