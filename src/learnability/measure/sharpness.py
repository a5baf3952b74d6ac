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
on CUDA (falling back to one `functional_call` per direction where the model cannot be vmapped). On CPU a
model with a stacked path (`run` over parameters with a leading member dim, as a stacked ensemble trains
them: the Boolean transformer and the GPT) evaluates `STACK` directions as the members of one stacked
model (`STACK`, `STACK_ROWS`), each member with the bits of its own forward (`learnability.models.layers`), so the values are
identical to one `functional_call` per direction (the fallback for other models), at about a third of the
CPU time for the small models of the quick plans (bench/bench_measure_stacked.py). `sharpness_radii` gives
the same directions at several radii (the sphere profile), drawn once.
"""

from __future__ import annotations

import copy
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


# directions per stacked pass on CPU: at most STACK, and at most STACK_ROWS token rows in all (past that
# the activations outgrow the caches and a pass costs what its members cost one by one; measured on a
# 2-core EPYC, AVX2: bench/bench_measure_stacked.py)
STACK = 16
STACK_ROWS = 8192
# False: every direction by its own `functional_call` and every radius drawn again, as before stacked
# passes existed (benchmarks and tests compare the two; the numbers are the same)
STACKED = True
STACKED_ARCHS = ("boolean_transformer", "gpt")  # models whose `run` takes stacked parameters
_STACK_BYTES = 256 * 2**20  # at most this much held in drawn directions for a multi-radius call


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
    (one direction per `functional_call`, or `STACK` per stacked pass where the model has one; vmap:
    attention has no CPU batching rule) and 8 on CUDA.
    """
    return sharpness_radii(
        model, batch, [rho], loss_fn, kind, directions, generator, quantity, chunk, perturb
    )[0]


@torch.no_grad()
def sharpness_radii(
    model: nn.Module,
    batch: Batch,
    radii: list[float],
    loss_fn: Callable[[torch.Tensor, Batch], torch.Tensor] | None = None,
    kind: str = "sphere",
    directions: int = 32,
    generator: torch.Generator | None = None,
    quantity: str | None = None,
    chunk: int | None = None,
    perturb: Collection[str] | None = None,
) -> list[Estimate]:
    """`sharpness` at each radius of `radii` along the same `directions` directions, drawn once from
    `generator`: each estimate is what `sharpness` gives at that radius with a generator in the same
    state (the directions at every radius as they were drawn for the first)."""
    check_choice("sharpness kind", kind, ["sphere", "gaussian"])
    quantity = quantity or ("output" if kind == "sphere" else "loss")
    check_choice("sharpness quantity", quantity, ["output", "loss"])
    for rho in radii:
        if not (rho >= 0 and math.isfinite(rho)):
            raise UserError(
                f"sharpness radius rho = {rho} is not allowed; need a finite number ≥ 0"
            )
    if directions < 1:
        raise UserError(f"sharpness directions = {directions} is not allowed; need ≥ 1")
    if not radii:
        return []
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
    size = sum(p.numel() * p.element_size() for p in moving.values())
    per_pass = min(STACK, STACK_ROWS // max(batch.inputs.numel(), 1))
    stacks = chunk == 1 and per_pass >= 2 and _stackable(model, device)
    if len(radii) > 1 and (not stacks or directions * size > _STACK_BYTES):
        # each radius on its own, from the generator's state now (the same directions at each)
        state = gen.get_state()
        out = []
        for rho in radii:
            gen.set_state(state)
            out += sharpness_radii(model, batch, [rho], loss_fn, kind, directions, gen, quantity,
                                   chunk, perturb)  # fmt: skip
        return out
    inputs = batch.inputs.to(device)
    b = batch.to(device)
    was = model.training
    model.eval()
    try:
        base = model(inputs).float()
        base_loss = loss_fn(base, b) if quantity == "loss" else None

        def value(out: torch.Tensor) -> torch.Tensor:
            if quantity == "output":
                return (out - base).pow(2).mean()
            assert base_loss is not None
            return loss_fn(out, b) - base_loss

        if stacks:  # a copy of the model (in eval mode) carries the stacked parameters
            values = _values_stacked(copy.deepcopy(model), inputs, moving, radii, kind, directions,
                                     gen, value, per_pass)  # fmt: skip
        else:
            values = _values_one_by_one(model, inputs, moving, fixed, radii, kind, directions,
                                        gen, chunk, value)  # fmt: skip
    finally:
        model.train(was)
    return [estimate_of(torch.stack(v).cpu()) for v in values]


def _draw(
    moving: dict[str, torch.Tensor], gen: torch.Generator, k: int, device: torch.device
) -> dict[str, torch.Tensor]:
    """k directions, drawn direction by direction (so they do not depend on k), stacked (k, ...)."""
    draws = [
        {
            n: torch.randn(p.shape, generator=gen, device=gen.device, dtype=p.dtype)
            for n, p in moving.items()
        }
        for _ in range(k)
    ]
    return {n: torch.stack([d[n] for d in draws]).to(device) for n in moving}


def _perturbed(
    moving: dict[str, torch.Tensor], noise: dict[str, torch.Tensor], rho: float, kind: str
) -> dict[str, torch.Tensor]:
    """θ + Δ for each of the k directions of `noise` (k, ...): on the sphere of radius ρ, or ρ·z."""
    k = next(iter(noise.values())).shape[0]
    device = next(iter(noise.values())).device
    if kind == "sphere":
        sq = torch.stack([z.reshape(k, -1).pow(2).sum(1) for z in noise.values()]).sum(0)
        scale = rho / sq.sqrt()
    else:
        scale = torch.full((k,), float(rho), device=device)
    return {
        n: moving[n] + z * scale.view(-1, *([1] * (z.dim() - 1))).to(z.dtype)
        for n, z in noise.items()
    }


def _values_one_by_one(
    model: nn.Module,
    inputs: torch.Tensor,
    moving: dict[str, torch.Tensor],
    fixed: dict[str, torch.Tensor],
    radii: list[float],
    kind: str,
    directions: int,
    gen: torch.Generator,
    chunk: int,
    value: Callable[[torch.Tensor], torch.Tensor],
) -> list[list[torch.Tensor]]:
    """Each radius' values, `chunk` directions per vmapped pass (one `functional_call` each at 1)."""
    (rho,) = radii

    def run(stacked: dict[str, torch.Tensor]) -> torch.Tensor:
        return functional_call(model, {**stacked, **fixed}, (inputs,))

    batched = vmap(run)
    values = []
    done = 0
    use_vmap = chunk > 1
    while done < directions:
        k = min(chunk, directions - done)
        stacked = _perturbed(moving, _draw(moving, gen, k, inputs.device), rho, kind)
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
        values += [value(outs[r]) for r in range(k)]
        done += k
    return [values]


def _stackable(model: nn.Module, device: torch.device) -> bool:
    """Whether `model`'s stacked path gives each member the bits of its own forward here (a model
    with one, on CPU, one torch thread, no dropout)."""
    arch = getattr(getattr(model, "config", None), "arch", None)
    if not STACKED or arch not in STACKED_ARCHS or not callable(getattr(model, "run", None)):
        return False
    if device.type != "cpu" or torch.get_num_threads() != 1:
        return False
    return not any(isinstance(m, nn.Dropout) and m.p > 0 for m in model.modules())


def _values_stacked(
    stacked: nn.Module,
    inputs: torch.Tensor,
    moving: dict[str, torch.Tensor],
    radii: list[float],
    kind: str,
    directions: int,
    gen: torch.Generator,
    value: Callable[[torch.Tensor], torch.Tensor],
    per_pass: int,
) -> list[list[torch.Tensor]]:
    """Each radius' values, every (radius, direction) pair a member of a stacked pass of `per_pass`.
    Each direction is drawn and scaled exactly as one direction alone (`_draw`, `_perturbed` at k = 1)."""
    names = [n for n, _ in stacked.named_parameters()]
    own = {n: p.detach() for n, p in stacked.named_parameters()}
    pairs = [(i, d) for i in range(len(radii)) for d in range(directions)]
    noise: list[dict[str, torch.Tensor]] = []
    values: list[list[torch.Tensor]] = [[] for _ in radii]
    for start in range(0, len(pairs), per_pass):
        group = pairs[start : start + per_pass]
        while len(noise) <= max(d for _, d in group):
            noise.append(_draw(moving, gen, 1, inputs.device))
        members = [_perturbed(moving, noise[d], radii[i], kind) for i, d in group]
        k = len(group)
        for name in names:
            tensors = [m[name] for m in members] if name in moving else [own[name][None]] * k
            _set_parameter(stacked, name, torch.cat(tensors))
        outs = stacked.run(inputs.expand(k, *inputs.shape).contiguous())  # type: ignore[operator]
        for (i, _), out in zip(group, outs.float()):
            values[i].append(value(out))
        if len(radii) == 1:
            noise = [{}] * len(noise)  # a direction is needed once: let it go
    return values


def _set_parameter(module: nn.Module, name: str, value: torch.Tensor) -> None:
    owner_name, _, attr = name.rpartition(".")
    owner = module.get_submodule(owner_name) if owner_name else module
    owner._parameters[attr] = nn.Parameter(value, requires_grad=False)


__all__ = ["STACK", "Estimate", "estimate_of", "sharpness", "sharpness_radii"]
