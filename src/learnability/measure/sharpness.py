"""Average-direction sharpness, evaluated with `torch.func.functional_call` (no model copies).

Two variants (docs/studies/sensitivity.md, "Measurements"), both over the non-positional parameters (positional embeddings stay unperturbed):
- kind="sphere": Δ uniform on the sphere ‖Δ‖₂ = ρ in the space of all non-positional parameters (a Gaussian
  direction normalised to length ρ). Default quantity ("output"): the paper's L_ρ = E_x E_Δ (T_{θ+Δ}(x) − T_θ(x))².
- kind="gaussian": Δ ~ N(0, ρ² I) per coordinate (the published code's ε = 0.02; ‖Δ‖ ≈ ρ√P). Default quantity
  ("loss"): the mean loss increase E_Δ [loss(θ+Δ) − loss(θ)] of `loss_fn` on the batch.
Either quantity can be asked for with `quantity=`. `perturb` (parameter names) restricts Δ to those
parameters — the trainable ones, say — still leaving the positional ones out.

Directions are drawn from `generator` and never re-seeded here: pass one generator across batches and every
batch gets fresh, independent directions (the published code re-seeded per call, reusing 10 directions).
The estimate is the mean over directions with a normal-approximation 95% CI (each direction's value is its
batch mean). Several directions are evaluated in one pass with `torch.func.vmap` over stacked parameter dicts
on CUDA (falling back to one `functional_call` per direction where the model cannot be vmapped); on CPU one
`functional_call` per direction is faster. Either way the cost is about one forward pass per direction.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Collection
from dataclasses import dataclass

import torch
from torch import nn
from torch.func import functional_call, vmap

from learnability.errors import UserError, check_choice
from learnability.measure.norms import positional_names
from learnability.tasks.base import Batch


@dataclass
class Estimate:
    mean: float
    ci_low: float
    ci_high: float
    n: int

    def summary(self) -> dict[str, float]:
        return {"mean": self.mean, "ci_low": self.ci_low, "ci_high": self.ci_high, "n": self.n}


def estimate_of(values: torch.Tensor) -> Estimate:
    """Mean of `values` with a normal-approximation 95% CI."""
    v = values.double().flatten()
    n = v.numel()
    mean = float(v.mean())
    half = 1.96 * float(v.std()) / math.sqrt(n) if n > 1 else float("nan")
    return Estimate(mean, mean - half, mean + half, n)


def _mse_loss(output: torch.Tensor, batch: Batch) -> torch.Tensor:
    return ((output.float() - batch.targets.float()) ** 2).mean()


@torch.no_grad()
def sharpness(
    model: nn.Module,
    batch: Batch,
    loss_fn: Callable[[torch.Tensor, Batch], torch.Tensor] | None = None,
    rho: float = 0.02,
    kind: str = "sphere",
    directions: int = 32,
    generator: torch.Generator | None = None,
    quantity: str | None = None,
    chunk: int | None = None,
    perturb: Collection[str] | None = None,
) -> Estimate:
    """Average-direction sharpness of `model` on `batch` (see the module docstring); `directions` = R.

    `loss_fn(output, batch) -> scalar` is used for quantity "loss" (default: MSE against batch.targets).
    `chunk` directions are evaluated per vectorised pass (memory ∝ chunk × batch); the default is 1 on CPU
    (measured faster there: attention has no CPU batching rule under vmap) and 8 on CUDA.
    """
    check_choice("sharpness kind", kind, ["sphere", "gaussian"])
    quantity = quantity or ("output" if kind == "sphere" else "loss")
    check_choice("sharpness quantity", quantity, ["output", "loss"])
    if not (rho >= 0 and math.isfinite(rho)):
        raise UserError(f"sharpness radius rho = {rho} is not allowed; need a finite number ≥ 0")
    if directions < 1:
        raise UserError(f"sharpness directions = {directions} is not allowed; need ≥ 1")
    loss_fn = loss_fn or _mse_loss
    params = dict(model.named_parameters())
    device = next(iter(params.values())).device
    skip = positional_names(model)
    if perturb is not None:
        chosen = set(perturb)
        skip |= {n for n in params if n not in chosen}
    moving = {n: p.detach() for n, p in params.items() if n not in skip}
    fixed = {n: p.detach() for n, p in params.items() if n in skip}
    fixed.update(dict(model.named_buffers()))
    if not moving:
        which = "chosen non-positional" if perturb is not None else "non-positional"
        raise UserError(f"the model has no {which} parameters to perturb")
    if chunk is None:
        chunk = 1 if device.type == "cpu" else 8
    gen = generator if generator is not None else torch.Generator().manual_seed(0)
    inputs = batch.inputs.to(device)
    b = batch.to(device)
    was = model.training
    model.eval()
    base = model(inputs).float()
    base_loss = loss_fn(base, b) if quantity == "loss" else None

    def run(stacked: dict[str, torch.Tensor]) -> torch.Tensor:
        return functional_call(model, {**stacked, **fixed}, (inputs,))

    batched = vmap(run)
    values = []
    done = 0
    use_vmap = chunk > 1
    while done < directions:
        k = min(chunk, directions - done)
        # draw direction by direction, so the directions do not depend on `chunk`
        draws = [
            {
                n: torch.randn(p.shape, generator=gen, device=gen.device, dtype=p.dtype)
                for n, p in moving.items()
            }
            for _ in range(k)
        ]
        noise = {n: torch.stack([d[n] for d in draws]).to(device) for n in moving}
        if kind == "sphere":
            sq = torch.stack([z.reshape(k, -1).pow(2).sum(1) for z in noise.values()]).sum(0)
            scale = rho / sq.sqrt()
        else:
            scale = torch.full((k,), float(rho), device=device)
        stacked = {
            n: moving[n] + z * scale.view(-1, *([1] * (z.dim() - 1))).to(z.dtype)
            for n, z in noise.items()
        }
        outs = None
        if use_vmap:
            try:
                with (
                    warnings.catch_warnings()
                ):  # the per-op fallback warning is expected for some ops
                    warnings.simplefilter("ignore")
                    outs = batched(stacked).float()
            except Exception:  # a model op without a batching rule: evaluate direction by direction
                use_vmap = False
        if outs is None:
            outs = torch.stack(
                [run({n: t[r] for n, t in stacked.items()}).float() for r in range(k)]
            )
        for r in range(k):
            if quantity == "output":
                values.append((outs[r] - base).pow(2).mean())
            else:
                assert base_loss is not None
                values.append(loss_fn(outs[r], b) - base_loss)
        done += k
    model.train(was)
    return estimate_of(torch.stack(values).cpu())


__all__ = ["Estimate", "estimate_of", "sharpness"]
