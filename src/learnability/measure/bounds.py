"""The quantities in Hahn & Rofin's bounds, measured on a model (docs/studies/sensitivity.md).

Units: the paper's transformer outputs T(x) ∈ [−1, 1]. A model trained on 0/1 targets outputs
T01 = (T + 1)/2, so squared output differences are 4× smaller on its scale; every function here
reports ±1 units (`scale=4` for 0/1 outputs, 1 for ±1 outputs).

- `real_average_sensitivity(outputs, n)`: as(T) = ¼ Σ_i E_x (T(x) − T(x^{⊕i}))² of a real output
  table in ±1 units (for a 0/1 table: Σ_i E_x (T01(x) − T01(x^{⊕i}))²); a Boolean table gives as(f).
  `sampled_real_sensitivity` estimates it from sampled strings when 2^n is too many.
- `sharpness_profile(model, batch, radii)`: L_ρ = E_x E_{‖Δ‖=ρ} (T_{θ+Δ}(x) − T_θ(x))² for each ρ, with the
  *same* random directions at every radius (so L_ρ is a smooth curve in ρ, not noise between radii).
- `bound_radius(radii, values, target)`: the radius at which the profile first reaches `target`
  (the sharpness bound of the paper's §5: lim_{ρ→0} liminf_n L_ρ,n ≥ liminf_n as(T)/(2n) − slack), by log–log interpolation.
- `output_scale(task)`, `reference_radius(model, eps)`: the ±1-unit factor (4 for 0/1 targets) and the
  norm ε√P of the published Gaussian perturbation (P the non-positional parameters).
- `sharpness_bound(model, task, batch, multipliers, ...)`: the §5 bound on one model: as(T) (exact up to
  n = 16, else sampled), the level as(T)/(2n), L_ρ at ρ = multiplier · ε√P and the bound radius.
- `lipschitz_scaled(model)`: log C for the Lipschitz constant of the paper's §4,
  C = exp(4d · max_h Σ_{i=2}^{L} ‖Γ_i K_{i,h}ᵀ Q_{i,h} Γ_i‖₂² / d_h), where the paper's attention score
  (K y_j)ᵀ(Q y_i) is matched to this model's: the 1/√d_h of scaled dot-product attention is split
  as d_h^{-1/4} into K and Q, and the LayerNorm gain Γ_i = diag(γ) of the LayerNorm whose output feeds
  layer i is folded into both (the paper's LayerNorm has no gain). LayerNorm and projection biases only
  shift scores by terms the paper's model does not have; they are left out.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Literal

import torch
from torch import nn

from learnability.errors import UserError
from learnability.measure.norms import _query_keys, positional_names
from learnability.measure.sensitivity import model_outputs
from learnability.measure.sharpness import Estimate, sharpness_radii
from learnability.tasks.base import Batch, Task


# -- average sensitivity of a real-valued output ---------------------------------------------------------
def real_average_sensitivity(outputs: torch.Tensor, n: int, scale: float = 1.0) -> float:
    """scale · Σ_i E_x (t(x) − t(x^{⊕i}))² of an output table `outputs` (2^n,) in index order (bit k of the
    index = x_k). With scale 1 a 0/1-scale table gives as(T) in ±1 units (a Boolean table: as(f));
    pass scale ¼ for a table already on the ±1 scale."""
    t = outputs.double().reshape(-1)
    if t.numel() != 2**n:
        raise UserError(f"output table has {t.numel()} entries; n={n} needs {2**n}")
    total = 0.0
    for i in range(n):
        v = t.view(-1, 2, 2**i)  # axis 1 is bit i
        total += float((v[:, 0] - v[:, 1]).pow(2).mean())
    return total * scale


@torch.no_grad()
def sampled_real_sensitivity(
    model: nn.Module,
    n: int,
    samples: int,
    generator: torch.Generator,
    device: torch.device | str = "cpu",
) -> float:
    """Monte-Carlo estimate of `real_average_sensitivity` (scale 1): `samples` uniform strings, each with
    all n one-bit flips (n + 1 forward passes of `samples` strings)."""
    x = torch.randint(0, 2, (samples, n), generator=generator).to(device)
    was = model.training
    model.eval()
    base = model(x).double()
    total = 0.0
    for i in range(n):
        flipped = x.clone()
        flipped[:, i] ^= 1
        total += float((model(flipped).double() - base).pow(2).mean())
    model.train(was)
    return total


# -- sharpness at several radii ---------------------------------------------------------------------------
def sharpness_profile(
    model: nn.Module,
    batch: Batch,
    radii: list[float],
    directions: int = 16,
    seed: int = 0,
    scale: float = 1.0,
) -> list[Estimate]:
    """Sphere sharpness L_ρ (output quantity) at each radius, same `directions` unit directions at every
    radius (drawn once from a generator seeded with `seed`: what each radius alone with that seed
    gives), times `scale` (4 for 0/1 outputs → ±1 units)."""
    found = sharpness_radii(model, batch, list(radii), kind="sphere", directions=directions,
                            generator=torch.Generator().manual_seed(seed), quantity="output")  # fmt: skip
    return [Estimate(e.mean * scale, e.ci_low * scale, e.ci_high * scale, e.n) for e in found]


RadiusStatus = Literal["crossed", "at_smallest", "beyond_largest"]


@dataclass(frozen=True)
class BoundRadius:
    """Where L_ρ first reaches the target: `radius`, and whether it lies inside the grid ("crossed"),
    at or below its smallest radius ("at_smallest": radius = the smallest, an upper bound), or beyond
    its largest ("beyond_largest": radius = the largest, a lower bound)."""

    radius: float
    status: RadiusStatus


def bound_radius(radii: list[float], values: list[float], target: float) -> BoundRadius:
    """First radius (ascending grid) at which `values` (L_ρ) reaches `target`, interpolated linearly in
    log ρ against log L between the grid points that bracket it."""
    if len(radii) != len(values) or not radii:
        raise UserError(
            f"bound_radius needs one value per radius, got {len(radii)} and {len(values)}"
        )
    if any(b <= a for a, b in itertools.pairwise(radii)) or radii[0] <= 0:
        raise UserError(f"radii must be positive and increasing, got {radii}")
    if not target > 0:
        raise UserError(f"the target must be > 0, got {target}")
    if values[0] >= target:
        return BoundRadius(radii[0], "at_smallest")
    for i in range(1, len(radii)):
        if values[i] >= target:
            lo_r, hi_r, lo_v, hi_v = radii[i - 1], radii[i], values[i - 1], values[i]
            if lo_v <= 0:  # no log below: interpolate in ρ
                frac = (target - lo_v) / (hi_v - lo_v)
                return BoundRadius(lo_r + frac * (hi_r - lo_r), "crossed")
            frac = (math.log(target) - math.log(lo_v)) / (math.log(hi_v) - math.log(lo_v))
            return BoundRadius(
                math.exp(math.log(lo_r) + frac * (math.log(hi_r) - math.log(lo_r))), "crossed"
            )
    return BoundRadius(radii[-1], "beyond_largest")


# -- the bound on one model ------------------------------------------------------------------------------
EXACT_SENSITIVITY_N = 16  # the model's own as(T) is exact on all 2^n strings up to this n
SAMPLED_SENSITIVITY_STRINGS = 1024


def output_scale(task: Task) -> float:
    """Factor from the model's output scale to ±1 units for squared differences (4 for 0/1 targets)."""
    return 4.0 if getattr(getattr(task, "config", None), "targets", "01") == "01" else 1.0


def reference_radius(model: nn.Module, eps: float) -> float:
    """ε·√P, P the non-positional parameters: the norm of the published Gaussian perturbation."""
    skip = positional_names(model)
    return eps * math.sqrt(sum(p.numel() for n, p in model.named_parameters() if n not in skip))


@torch.no_grad()
def model_real_sensitivity(
    model: nn.Module, task: Task, device: torch.device | str, seed: int
) -> tuple[float, bool]:
    """(as(T) in ±1 units of the model's real output on a scalar Boolean task, exact?): exact on all 2^n
    strings up to n = EXACT_SENSITIVITY_N, else from SAMPLED_SENSITIVITY_STRINGS strings (seeded)."""
    n = int(getattr(task, "max_len", 0))
    scale = 1.0 if getattr(getattr(task, "config", None), "targets", "01") == "01" else 0.25
    if n <= EXACT_SENSITIVITY_N:
        return real_average_sensitivity(model_outputs(model, n, device).cpu(), n, scale), True
    g = torch.Generator().manual_seed(seed + 11)
    return scale * sampled_real_sensitivity(model, n, SAMPLED_SENSITIVITY_STRINGS, g, device), False


def sharpness_bound(
    model: nn.Module,
    task: Task,
    batch: Batch,
    multipliers: list[float],
    eps: float,
    directions: int,
    seed: int,
    device: torch.device | str = "cpu",
) -> dict[str, object]:
    """The sharpness bound of Hahn & Rofin §5 measured on one model (module docstring): as(T), the level
    as(T)/(2n), the profile L_ρ (±1 units) at ρ = m·ε√P for each multiplier m, and the radius where the
    profile first reaches the level (with where it lies on the grid)."""
    as_real, exact = model_real_sensitivity(model, task, device, seed)
    n = int(getattr(task, "max_len", 0))
    rho0 = reference_radius(model, eps)
    radii = [m * rho0 for m in multipliers]
    profile = sharpness_profile(model, batch, radii, directions, seed + 31, output_scale(task))
    values = [e.mean for e in profile]
    level = as_real / (2 * n)
    out: dict[str, object] = {
        "model_as_real": as_real, "model_as_real_exact": exact, "bound_level": level,
        "bound_rho0": rho0, "bound_radii": radii, "bound_profile": values,
    }  # fmt: skip
    if level > 0 and radii and all(r > 0 for r in radii):
        hit = bound_radius(radii, values, level)
        out["bound_radius"], out["bound_radius_status"] = hit.radius, hit.status
    return out


# -- the Lipschitz constant with the model's attention scaling and LayerNorm gains -------------------------
def attention_input_gains(model: nn.Module) -> list[torch.Tensor | None]:
    """Per layer, the gain γ (d,) of the LayerNorm whose output is that layer's attention input (None
    where no LayerNorm feeds it: the first post-LN layer reads the embeddings)."""
    config = getattr(model, "config", None)
    layers = getattr(model, "layers", None)
    if config is None or layers is None or not hasattr(config, "ln"):
        raise UserError(
            f"{type(model).__name__}: cannot tell which LayerNorm feeds each attention layer"
        )
    if config.ln == "post":  # x_i = LN2_{i−1}(…): layer i reads layer i−1's second LayerNorm
        return [None] + [block.ln2.weight.detach() for block in list(layers)[:-1]]
    if config.ln == "pre":  # layer i's attention reads LN1_i(x)
        return [block.ln1.weight.detach() for block in layers]
    return [None for _ in layers]


@torch.no_grad()
def lipschitz_scaled(model: nn.Module) -> dict[str, float]:
    """{"log_C", "log10_C"} of C = exp(4d · max_h Σ_{i≥2} ‖Γ_i K_{i,h}ᵀ Q_{i,h} Γ_i‖₂² / d_h) (module doc)."""
    layers = _query_keys(model)
    gains = attention_input_gains(model)
    heads = len(layers[0])
    d = layers[0][0][0].shape[1]
    sums = [0.0] * heads
    for i, per_head in enumerate(layers):
        if i == 0:
            continue  # the sum starts at the second layer
        gain = gains[i]
        for h, (k, q) in enumerate(per_head):
            dh = k.shape[0]
            m = k.double().T @ q.double()  # (d, d): y_jᵀ Kᵀ Q y_i is the score before 1/√d_h
            if gain is not None:
                g = gain.double()
                m = g[:, None] * m * g[None, :]
            sums[h] += float(torch.linalg.matrix_norm(m, ord=2)) ** 2 / dh
    log_c = 4 * d * max(sums) if sums else 0.0
    return {"log_C": log_c, "log10_C": log_c / math.log(10)}


__all__ = [
    "BoundRadius", "attention_input_gains", "bound_radius", "lipschitz_scaled", "model_real_sensitivity",
    "output_scale", "real_average_sensitivity", "reference_radius", "sampled_real_sensitivity",
    "sharpness_bound", "sharpness_profile",
]  # fmt: skip
