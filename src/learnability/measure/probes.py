"""Probes of what a model does: accuracy by input length, attention maps, and PCA-vs-neuron variance.

- `length_generalisation(model, task)`: accuracy per length bucket of a task with `length_test_sets()` (Boolean
  tasks with `length_buckets`). Lengths beyond a learned position table are refused by the model with a
  UserError; use a length-agnostic position scheme (e.g. sinusoidal) to evaluate beyond the training length.
- `attention_maps(model, inputs)`: per layer, (B, H, T, T) softmax weights from the model's Trace (rows = queries);
  `mean=True` averages over the batch → (H, T, T).
- `pca_vs_neurons(model, inputs, ks)`: per hidden state of the Trace (after embedding and after each layer), the
  fraction of variance explained by the top-k principal components vs by the k highest-variance neurons
  (coordinates), over all (input, position) rows or one `position`. PCs ≫ neurons means the model works in a
  low-dimensional subspace that is not axis-aligned (subspace selection rather than sparsification).
"""

from __future__ import annotations

import torch
from torch import nn

from learnability.device import resolve_device
from learnability.errors import UserError
from learnability.tasks.base import Task


@torch.no_grad()
def length_generalisation(
    model: nn.Module, task: Task, device: torch.device | str = "cpu", per_length: int = 256
) -> dict[str, float]:
    """{bucket "lo-hi": accuracy averaged over the lengths in the bucket}."""
    sets = getattr(task, "length_test_sets", None)
    if sets is None:
        raise UserError(
            f"task {type(task).__name__} has no length buckets; length generalisation needs them"
        )
    device = resolve_device(device)
    was = model.training
    model.eval()
    out: dict[str, float] = {}
    for bucket, batches in sets(per_length).items():
        accs = [task.accuracy(model(b.inputs.to(device)), b.to(device)) for b in batches]
        out[bucket] = sum(accs) / len(accs)
    model.train(was)
    if not out:
        raise UserError(
            "the task defines no length_buckets; set task.length_buckets, e.g. [[1, 20], [21, 40]]"
        )
    return out


@torch.no_grad()
def attention_maps(
    model: nn.Module, inputs: torch.Tensor, device: torch.device | str = "cpu", mean: bool = False
) -> list[torch.Tensor]:
    """Per layer attention weights (B, H, T, T), or (H, T, T) averaged over the batch with `mean=True`."""
    device = resolve_device(device)
    was = model.training
    model.eval()
    _, trace = model(inputs.to(device), trace=True)
    model.train(was)
    maps = [a.detach() for a in trace.attentions]
    return [a.mean(0) for a in maps] if mean else maps


def variance_fractions(h: torch.Tensor, ks: list[int]) -> dict[str, list[float]]:
    """h (N, D) rows → {"pca": [top-k PC variance fraction], "neurons": [top-k coordinate variance fraction]}."""
    h = h.double()
    centred = h - h.mean(0, keepdim=True)
    total = centred.pow(2).sum()
    if total <= 0:
        return {"pca": [1.0 for _ in ks], "neurons": [1.0 for _ in ks]}
    eig = torch.linalg.svdvals(centred).pow(2)  # PC variances, descending
    neuron = centred.pow(2).sum(0).sort(descending=True).values
    return {
        "pca": [float(eig[:k].sum() / total) for k in ks],
        "neurons": [float(neuron[:k].sum() / total) for k in ks],
    }


@torch.no_grad()
def pca_vs_neurons(
    model: nn.Module,
    inputs: torch.Tensor,
    ks: list[int] | None = None,
    device: torch.device | str = "cpu",
    position: int | None = None,
) -> list[dict[str, object]]:
    """Per hidden state (embedding, then each layer): {"layer", "k", "pca", "neurons"} variance fractions."""
    device = resolve_device(device)
    was = model.training
    model.eval()
    _, trace = model(inputs.to(device), trace=True)
    model.train(was)
    results = []
    for layer, h in enumerate(trace.hidden):
        rows = h[:, position] if position is not None else h.reshape(-1, h.shape[-1])
        width = rows.shape[-1]
        use = sorted({min(k, width) for k in (ks or [1, 2, 4, 8, 16, 32])})
        fr = variance_fractions(rows, use)
        results.append({"layer": layer, "k": use, **fr})
    return results


__all__ = ["attention_maps", "length_generalisation", "pca_vs_neurons", "variance_fractions"]
