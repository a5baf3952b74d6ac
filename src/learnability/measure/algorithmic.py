"""Diagnostics of a model's predictions on the algorithmic tasks (`learnability.tasks.algorithmic`), with the
chance line each one is read against.

All functions take teacher-forced predictions `pred` (B, T) (argmax of the logits) and the task's `Batch`
(inputs / targets (B, T), mask (B, T)); the full sequence is `inputs` plus the last target.

- `needle_by_m`: accuracy on rows with m marker/value pairs, for each m; chance = copying one of the m values
  in context at random, 1/m (its mean over the rows, E[1/m], is the copy baseline of the whole set).
- `decimal_scores`: the published metric (every output position whose *input* is an answer digit or the stop
  token: the first answer digit is never scored, the padding after the stop is), the full metric (every answer
  digit and the stop), accuracy per answer digit (least significant first; chance 0.1),
  the stop token, and whole-sum exact match (every answer digit and the stop right).
- `majority_rate`: the share of the most frequent answer at the scored positions (the line a constant
  guess reaches, e.g. "unbalanced" for brackets).
- `blind_table` / `blind_rate`: the chance line of every task — the best *input-blind* predictor under a
  scoring mask: one that reads only the position and the token it sits on (under teacher forcing that is the
  previous answer token, so it knows that padding follows the stop and the stop follows a carry digit), never
  the problem. `blind_table` fits it (the most frequent target per (position, token) cell, ties shared) on a
  large sample of the rows' distribution; `blind_rate` scores it on the rows in question, so its cell maxima
  cannot overfit them (on a 43-row test set with 29 cells they would).
"""

from __future__ import annotations

from typing import Any

import torch

from learnability.tasks.algorithmic import DecimalAddTask
from learnability.tasks.base import Batch


def full_rows(batch: Batch) -> torch.Tensor:
    """The full sequences (B, T + 1) a next-token batch was cut from."""
    return torch.cat([batch.inputs, batch.targets[:, -1:]], 1)


def _rate(hit: torch.Tensor) -> float:
    return float(hit.float().mean()) if hit.numel() else float("nan")


def needle_by_m(pred: torch.Tensor, batch: Batch) -> dict[str, Any]:
    """{"acc_by_m": {m: accuracy}, "count_by_m": {m: rows}, "copy_baseline": E[1/m]} (keys as strings)."""
    assert batch.mask is not None
    query = batch.mask.float().argmax(1)  # the query sits at position 2m, right after the m pairs
    m = (query // 2).long()
    rows = torch.arange(len(m))
    hit = pred[rows, query] == batch.targets[rows, query]
    acc, count = {}, {}
    for value in sorted(set(m.tolist())):
        pick = m == value
        acc[str(value)] = _rate(hit[pick])
        count[str(value)] = int(pick.sum())
    return {"acc_by_m": acc, "count_by_m": count, "copy_baseline": float((1.0 / m).mean())}


def decimal_scores(pred: torch.Tensor, batch: Batch, digits: int) -> dict[str, Any]:
    """Published and full accuracy, per-digit and stop accuracy, exact match (see the module docstring)."""
    assert batch.mask is not None
    full = full_rows(batch)
    hit = pred == batch.targets  # (B, T)
    published = DecimalAddTask.published_mask(full)
    positions = (
        torch.arange(digits + 1) + 2 * digits + 1
    )  # output positions of answer digits 1..d+1
    answer = batch.targets[
        :, positions
    ]  # (B, d+1): answer tokens, or the stop / padding after the sum
    is_digit = (answer >= DecimalAddTask.ANSWER0) & (answer < DecimalAddTask.STOP)
    per_digit = [_rate(hit[:, p][is_digit[:, j]]) for j, p in enumerate(positions.tolist())]
    stop = batch.targets == DecimalAddTask.STOP
    answer_or_stop = batch.targets >= DecimalAddTask.ANSWER0  # every answer digit and the stop
    row_ok = (hit | ~answer_or_stop).all(1)
    return {
        "acc_published": _rate(hit[published]),
        "acc_full": _rate(hit[answer_or_stop]),
        "digit_acc": per_digit,
        "stop_acc": _rate(hit[stop]),
        "exact_match": _rate(row_ok),
        "digit_chance": 0.1,
    }


def majority_rate(batch: Batch) -> float:
    """Share of the most frequent target token at the scored positions."""
    assert batch.mask is not None
    answers = batch.targets[batch.mask]
    if answers.numel() == 0:
        return float("nan")
    return float(torch.bincount(answers).max()) / answers.numel()


def blind_table(batch: Batch, vocab: int, mask: torch.Tensor | None = None) -> torch.Tensor:
    """(T, vocab, vocab): per (position, current token) cell of `batch` on `mask`, the credit the best
    predictor of that cell earns for each target — 1/k for each of its k most frequent targets (a tie broken at
    random), else 0."""
    mask = batch.mask if mask is None else mask
    assert mask is not None
    t = mask.shape[1]
    position = torch.arange(t).expand_as(mask)[mask]
    cell = (position * vocab + batch.inputs[mask]) * vocab + batch.targets[mask]
    counts = torch.bincount(cell, minlength=t * vocab * vocab).view(t, vocab, vocab)
    best = (counts == counts.max(-1, keepdim=True).values) & (counts > 0)
    return best / best.sum(-1, keepdim=True).clamp_min(1)


def blind_rate(table: torch.Tensor, batch: Batch, mask: torch.Tensor | None = None) -> float:
    """Expected accuracy of the predictor `table` (from `blind_table`) on `batch` at `mask` (default: its scored
    positions)."""
    mask = batch.mask if mask is None else mask
    assert mask is not None
    position = torch.arange(mask.shape[1]).expand_as(mask).clamp_max(table.shape[0] - 1)
    credit = table[
        position,
        batch.inputs.clamp_max(table.shape[1] - 1),
        batch.targets.clamp_max(table.shape[2] - 1),
    ]
    return float(credit[mask].mean()) if mask.any() else float("nan")


__all__ = [
    "blind_rate",
    "blind_table",
    "decimal_scores",
    "full_rows",
    "majority_rate",
    "needle_by_m",
]
