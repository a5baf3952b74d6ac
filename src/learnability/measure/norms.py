"""Parameter norm and the Lipschitz constant C (docs/studies/sensitivity.md, "Measurements").

- `parameter_norm(model)`: ‖θ‖₂ over every parameter except the positional ones
  (`model.positional_parameter_names()`; none when the model does not define it).
- `norm_change(model, initial, names)`: over the parameters `names` (the trainable, non-positional ones
  in the `param_norm_trainable` measure), ‖θ‖, ‖θ₀‖ of the initial model, ‖θ‖/‖θ₀‖, ‖θ − θ₀‖ and
  ‖θ − θ₀‖/‖θ₀‖.
- `lipschitz_constant(model)`: the *uncorrected* constant (the `lipschitz` measure; kept because stored
  runs used it): C = exp(4d · max_h Σ_{i=2}^{L} ‖K_i^{hᵀ} Q_i^h‖₂²), d the model width, K/Q the
  per-head key/query matrices (dh × d) of layer i (layers counted from 1, so the first layer is left out).
  C overflows quickly, so it is reported as log C and log10 C (C itself only when it is finite in float64).
  K/Q come from `model.query_key_matrices()` when the model has it, else from fused `in_proj` weights
  (rows q | k | v, heads contiguous) of modules named `layers.{i}.attn`. It ignores the model's 1/√d_h
  score scaling and LayerNorm gains, so it overstates C by orders of magnitude (log10 C ≈ 233 on a small
  model): the corrected constant is `measure.bounds.lipschitz_scaled` (the `lipschitz_scaled` measure).
"""

from __future__ import annotations

import math
from collections.abc import Collection

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


@torch.no_grad()
def norm_change(model: nn.Module, initial: nn.Module, names: Collection[str]) -> dict[str, float]:
    """Norm of the parameters `names` of `model`, of the same ones at initialisation, and of the change
    (keys: norm, init_norm, ratio, distance, relative_distance; ratios are nan when ‖θ₀‖ = 0)."""
    now, then = dict(model.named_parameters()), dict(initial.named_parameters())
    missing = [n for n in names if n not in now or n not in then]
    if missing:
        raise UserError(
            f"parameter {missing[0]!r} is not in both models; they are not the same model"
        )
    sq = sq0 = sqd = 0.0
    for n in names:
        a, b = now[n].detach().double(), then[n].detach().double().to(now[n].device)
        if a.shape != b.shape:
            raise UserError(f"parameter {n!r} has shape {list(a.shape)} ≠ {list(b.shape)} at init")
        sq += float(a.pow(2).sum())
        sq0 += float(b.pow(2).sum())
        sqd += float((a - b).pow(2).sum())
    norm, init, dist = math.sqrt(sq), math.sqrt(sq0), math.sqrt(sqd)
    nan = float("nan")
    return {"norm": norm, "init_norm": init, "ratio": norm / init if init > 0 else nan,
            "distance": dist, "relative_distance": dist / init if init > 0 else nan}  # fmt: skip


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


__all__ = ["lipschitz_constant", "norm_change", "parameter_norm", "positional_names"]
