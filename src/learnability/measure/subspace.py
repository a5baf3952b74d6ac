"""Subspace probe with valid nulls: does a model's hidden state concentrate in a few directions?

For a hidden state h (N rows, D dims) the probe reports, for each k, the fraction of the total variance in
the top-k principal components ("pca") and in the k highest-variance coordinates ("neurons"), as
`measure.probes.variance_fractions` does. Such fractions mean little on their own:
- with few rows they are large for any data: N centred rows span at most N − 1 directions, so the top
  N − 1 PCs hold everything (43 rows, D = 256: an isotropic Gaussian already puts ≈ 0.38 of its variance in
  its top 10 PCs, not 10/256);
- the PCs always hold at least as much as the same number of coordinates (they are the best k-dimensional
  subspace), so PC fraction / neuron fraction exceeds 1 even for isotropic data.
So every measurement comes with `isotropic_fractions(N, D)`: the same statistic on isotropic Gaussian rows of
the same shape (mean over a few seeded draws), the finite-sample null. The other control — the same network at
initialisation on the same rows — is the caller's (the job rebuilds the model from its init seed).

`scored_hidden(model, batch)` collects the rows: per hidden state of the model's `Trace` (the embedding output
first, then each layer), the vectors at the batch's scored positions, (N, D) float64 on the CPU.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from learnability.measure.probes import variance_fractions


@torch.no_grad()
def scored_hidden(
    model: nn.Module, inputs: torch.Tensor, mask: torch.Tensor | None, max_rows: int | None = None
) -> list[torch.Tensor]:
    """Hidden states (N, D) per Trace entry at the scored positions (`mask` (B, T); the last position
    when None), at most `max_rows` rows (the first ones)."""
    was = model.training
    model.eval()
    device = next(model.parameters()).device
    _, trace = model(inputs.to(device), trace=True)
    model.train(was)
    out = []
    for h in trace.hidden:  # (B, T, D)
        rows = h[mask.to(device)] if mask is not None else h[:, -1]
        if max_rows is not None:
            rows = rows[:max_rows]
        out.append(rows.detach().double().cpu())
    return out


def isotropic_fractions(
    n: int, d: int, ks: list[int], draws: int = 4, seed: int = 0
) -> dict[str, list[float]]:
    """Mean over `draws` isotropic N(0, I) matrices (n, d) of their top-k PC and top-k coordinate variance
    fractions (the finite-sample null of `variance_fractions` at this shape)."""
    g = torch.Generator().manual_seed(seed)
    pca = torch.zeros(len(ks), dtype=torch.float64)
    neurons = torch.zeros(len(ks), dtype=torch.float64)
    for _ in range(draws):
        x = torch.randn(n, d, generator=g, dtype=torch.float64)
        fr = variance_fractions(x, ks)
        pca += torch.tensor(fr["pca"], dtype=torch.float64)
        neurons += torch.tensor(fr["neurons"], dtype=torch.float64)
    return {"pca": (pca / draws).tolist(), "neurons": (neurons / draws).tolist()}


def subspace_probe(
    trained: list[torch.Tensor],
    ks: list[int],
    at_init: list[torch.Tensor] | None = None,
    null_draws: int = 4,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Per hidden state (index "layer", 0 = the embedding output): top-k PC and neuron fractions of the
    trained model, of the model at initialisation on the same rows (when given), and of the isotropic null
    of the same shape."""
    out = []
    for layer, rows in enumerate(trained):
        n, d = rows.shape
        use = sorted({min(k, d) for k in ks})
        fr = variance_fractions(rows, use)
        null = isotropic_fractions(n, d, use, null_draws, seed + layer)
        entry: dict[str, Any] = {
            "layer": layer,
            "rows": n,
            "k": use,
            "pca": fr["pca"],
            "neurons": fr["neurons"],
            "null_pca": null["pca"],
            "null_neurons": null["neurons"],
        }
        if at_init is not None:
            init = variance_fractions(at_init[layer], use)
            entry["init_pca"], entry["init_neurons"] = init["pca"], init["neurons"]
        out.append(entry)
    return out


def top_pcs(
    matrix: torch.Tensor, k: int = 2, keep: int = 8
) -> tuple[list[list[float]], list[float]]:
    """Rows of `matrix` (N, D) projected on their top-k principal components, and the variance fractions
    of the top `keep` components (e.g. token embeddings: a circle for modular addition)."""
    x = matrix.detach().double().cpu()
    x = x - x.mean(0, keepdim=True)
    u, s, _ = torch.linalg.svd(x, full_matrices=False)
    var = s.pow(2)
    return (u[:, :k] * s[:k]).tolist(), (var[:keep] / var.sum().clamp_min(1e-300)).tolist()


__all__ = ["isotropic_fractions", "scored_hidden", "subspace_probe", "top_pcs"]
