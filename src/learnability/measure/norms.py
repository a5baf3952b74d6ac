"""Parameter norm and the Lipschitz constant C (docs/studies/sensitivity.md, "Measurements").

- `parameter_norm(model)`: ‖θ‖₂ over every parameter except the positional ones
  (`model.positional_parameter_names()`; none when the model does not define it).
- `lipschitz_constant(model)`: C = exp(4d · max_h Σ_{i=2}^{L} ‖K_i^{hᵀ} Q_i^h‖₂²), d the model width, K/Q the
  per-head key/query matrices (dh × d) of layer i (layers counted from 1, so the first layer is left out).
  C overflows quickly, so it is reported as log C and log10 C (C itself only when it is finite in float64).
  K/Q come from `model.query_key_matrices()` when the model has it, else from fused `in_proj` weights
  (rows q | k | v, heads contiguous) of modules named `layers.{i}.attn`.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from learnability.errors import UserError


def positional_names(model: nn.Module) -> set[str]:
    fn = getattr(model, "positional_parameter_names", None)
    return set(fn()) if callable(fn) else set()


@torch.no_grad()
def parameter_norm(model: nn.Module, exclude_positional: bool = True) -> float:
    """‖θ‖₂ over all parameters, positional embeddings excluded unless `exclude_positional=False`."""
    skip = positional_names(model) if exclude_positional else set()
    total = sum(
        float(p.detach().double().pow(2).sum())
        for n, p in model.named_parameters()
        if n not in skip
    )
    return math.sqrt(total)


def _query_keys(model: nn.Module) -> list[list[tuple[torch.Tensor, torch.Tensor]]]:
    fn = getattr(model, "query_key_matrices", None)
    if callable(fn):
        return fn()
    layers = []
    for name, module in model.named_modules():
        parts = name.split(".")
        if (
            len(parts) == 3
            and parts[0] == "layers"
            and parts[2] == "attn"
            and hasattr(module, "in_proj")
        ):
            w = module.in_proj.weight
            d = w.shape[1]
            h = int(getattr(module, "n_heads", 1))
            dh = d // h
            layers.append(
                [(w[d + j * dh : d + (j + 1) * dh], w[j * dh : (j + 1) * dh]) for j in range(h)]
            )
    if not layers:
        raise UserError(
            f"{type(model).__name__} has no attention layers: the Lipschitz constant C is undefined"
        )
    return layers


@torch.no_grad()
def lipschitz_constant(model: nn.Module) -> dict[str, float]:
    """{"log_C", "log10_C", "C"} with C = exp(4d · max_h Σ_{i≥2} ‖K_iᵀQ_i‖₂²) (C = inf if it overflows)."""
    layers = _query_keys(model)
    heads = len(layers[0])
    d = layers[0][0][0].shape[1]
    sums = [0.0] * heads
    for per_head in layers[1:]:
        for h, (k, q) in enumerate(per_head):
            sums[h] += float(torch.linalg.matrix_norm(k.double().T @ q.double(), ord=2)) ** 2
    log_c = 4 * d * max(sums)
    c = math.exp(log_c) if log_c < 709 else float("inf")
    return {"log_C": log_c, "log10_C": log_c / math.log(10), "C": c}


__all__ = ["lipschitz_constant", "parameter_norm", "positional_names"]
