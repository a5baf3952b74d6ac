"""The measures a training run can take, by name: `register_measure(name)` adds one.

A measure is `fn(ctx: MeasureContext) -> dict` of JSON numbers. Standard ones:
- "accuracy": test_loss / test_acc,
- "profile": the model's thresholded function on all 2^n inputs (sampled above 2^20): model_as, model_K0,
  model_max_sensitivity, model_undecided, model_counts, profile_exact, and model_accept, the number of
  strings the model accepts (its balance: what a same-balance null needs); function_agreement with the
  target when exact. The run's `profile_samples` (None or 0: every string up to n = 20, 4,096 sampled
  strings above) samples that many strings (each with its n one-bit neighbours) at any n. A sampled
  profile's counts are estimates (fraction × 2^n) and so is model_accept, with model_accept_samples (the
  strings it is estimated from) and model_accept_ci (a 95% Wilson interval, × 2^n),
- "blowup": blowup_paper (mean), blowup_paper_max, blowup_published (mean), blowup_published_max, ln_degenerate
  (a product over the model's LayerNorms: a pre-LN model has one more, its final LayerNorm, than a post-LN
  one of the same depth, so blowups across placements are not like-for-like: docs/STUDIES.md),
- "param_norm": param_norm over every parameter but the positional ones (frozen ones included),
- "param_norm_trainable": over the parameters the run's freeze spec trains (positional ones excluded, as in
  param_norm; under "full" the two agree): param_norm_trainable ‖θ‖, param_norm_trainable_init ‖θ₀‖ (the
  run's own initialisation, rebuilt from its model config and seed), param_norm_trainable_ratio ‖θ‖/‖θ₀‖,
  param_distance_trainable ‖θ − θ₀‖, param_distance_trainable_relative ‖θ − θ₀‖/‖θ₀‖,
- "lipschitz": log10_lipschitz, log_lipschitz — the UNCORRECTED constant of `measure.norms.lipschitz_constant`
  (no 1/√d_h score scaling, no LayerNorm gains: orders of magnitude too large; kept for stored runs),
- "lipschitz_scaled": log10_lipschitz_scaled, log_lipschitz_scaled — the corrected constant of Hahn &
  Rofin §4 (`measure.bounds.lipschitz_scaled`, what the sensitivity study reports),
- "sharpness": sphere radius `sharpness_rho`, E(T_{θ+Δ} − T_θ)² → sharpness, sharpness_ci_low, sharpness_ci_high
  (Δ over every non-positional parameter, frozen ones included),
- "sharpness_gauss": N(0, `sharpness_eps`²) per coordinate, mean loss increase → sharpness_gauss(_ci_low/_ci_high),
- "sharpness_trainable", "sharpness_gauss_trainable": the same two with Δ over the trainable parameters
  only (positional ones still excluded) → sharpness_trainable(_ci_low/_ci_high), sharpness_gauss_trainable(…),
- "real_sensitivity": model_as_real, as(T) of the model's real output in ±1 units (exact up to n = 16, else
  1,024 sampled strings; model_as_real_exact says which), and bound_level = as(T)/(2n),
- "sharpness_bound": the §5 sharpness bound (`measure.bounds.sharpness_bound`): model_as_real, bound_level,
  bound_rho0 = `sharpness_eps`·√P, bound_radii = `bound_radii` × ρ0, bound_profile (L_ρ in ±1 units,
  `sharpness_directions` directions, the same at every radius), bound_radius and bound_radius_status
  (where L_ρ first reaches the level: crossed / at_smallest / beyond_largest),
- "length_generalisation": length_acc {bucket: accuracy},
- "pca": pca_vs_neurons per hidden state (fractions for k in `pca_ks`).
Measures run on a fixed batch (the first `measure_batch` test items); sharpness directions come from a
generator seeded with the run's `seed` (independent directions across batches).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import torch
from torch import nn

from learnability.device import resolve_device
from learnability.errors import UserError, did_you_mean
from learnability.measure.bounds import (
    lipschitz_scaled,
    model_real_sensitivity,
    sharpness_bound,
)
from learnability.measure.layernorm import layernorm_blowup
from learnability.measure.norms import (
    lipschitz_constant,
    norm_change,
    parameter_norm,
    positional_names,
)
from learnability.measure.probes import length_generalisation, pca_vs_neurons
from learnability.measure.sensitivity import all_bit_strings, model_outputs, model_profile
from learnability.measure.sharpness import sharpness
from learnability.stats import wilson
from learnability.tasks import Task
from learnability.tasks.boolean import BooleanTask
from learnability.train import compute_loss, evaluate, seeded_model, trainable_names


class MeasureSettings(Protocol):
    """What measures read from a run's config (the train job's config has these fields)."""

    seed: int
    measure_batch: int
    profile_margin: float
    sharpness_rho: float
    sharpness_eps: float
    sharpness_directions: int
    pca_ks: list[int]


@dataclass
class MeasureContext:
    model: nn.Module
    task: Task
    config: MeasureSettings
    device: torch.device
    batch: Any  # the measure batch (first measure_batch test items, on device)


MEASURES: dict[str, Callable[[MeasureContext], dict[str, Any]]] = {}
# sphere radii of the sharpness_bound profile, in units of ε√P (the sensitivity study's grid)
DEFAULT_BOUND_RADII = (0.0625, 0.125, 0.25, 0.5, 1.0, 2.0, 4.0)


def register_measure(name: str) -> Callable:
    """Decorator: `fn(ctx: MeasureContext) -> dict` becomes measure `name` of the train job."""

    def decorate(fn: Callable[[MeasureContext], dict[str, Any]]) -> Callable:
        MEASURES[name] = fn
        return fn

    return decorate


def _boolean(ctx: MeasureContext, what: str) -> BooleanTask:
    if not isinstance(ctx.task, BooleanTask) or ctx.task.output != "scalar":
        raise UserError(
            f"measure {what!r} needs a scalar Boolean task, not {type(ctx.task).__name__}"
        )
    return ctx.task


@register_measure("accuracy")
def _accuracy(ctx: MeasureContext) -> dict[str, Any]:
    r = evaluate(ctx.model, ctx.task, ctx.task.test_set(), ctx.device)
    return {"test_loss": r["loss"], "test_acc": r["acc"]}


@register_measure("profile")
def _profile(ctx: MeasureContext) -> dict[str, Any]:
    task = _boolean(ctx, "profile")
    n = task.max_len
    # an option a config may lack (jobs other than `train` run measures too): None = the default
    samples = getattr(ctx.config, "profile_samples", None)
    sample = {"exact_limit": 0, "samples": samples} if samples else {}
    p = model_profile(
        ctx.model,
        n,
        ctx.device,
        margin=ctx.config.profile_margin,
        threshold=task.threshold,
        generator=torch.Generator().manual_seed(ctx.config.seed),
        **sample,
    )
    out: dict[str, Any] = {
        "model_as": p.average_sensitivity,
        "model_K0": p.zero_sensitivity,
        "model_max_sensitivity": p.max_sensitivity,
        "model_undecided": p.undecided,
        "model_counts": p.counts,
        "profile_exact": p.exact,
    }
    if p.exact and not task.variable:
        target = task.target_values(torch.as_tensor(_all_bits(n))) > task.threshold
        model_tt = (
            p.truth_table.cpu().bool()
            if p.truth_table is not None
            else (_outputs(ctx.model, n, ctx.device) > task.threshold)
        )
        out["function_agreement"] = float((model_tt == target).float().mean())
        if p.truth_table is not None:  # margin 0: every string decided, accepted or rejected
            out["model_accept"] = int(p.truth_table.sum())
    if not p.exact and p.accept_fraction is not None:
        low, high = wilson(round(p.accept_fraction * p.samples), p.samples)
        out["model_accept"] = p.accept_fraction * 2.0**n  # an estimate: a fraction of 2^n
        out["model_accept_samples"] = p.samples
        out["model_accept_ci"] = [low * 2.0**n, high * 2.0**n]
    return out


def _all_bits(n: int) -> torch.Tensor:
    return all_bit_strings(n)


def _outputs(model: nn.Module, n: int, device: torch.device) -> torch.Tensor:
    return model_outputs(model, n, device).cpu()


@register_measure("blowup")
def _blowup(ctx: MeasureContext) -> dict[str, Any]:
    paper = layernorm_blowup(ctx.model, ctx.batch.inputs, "paper", ctx.device)
    published = layernorm_blowup(ctx.model, ctx.batch.inputs, "published", ctx.device)
    return {
        "blowup_paper": paper.mean,
        "blowup_paper_max": paper.max,
        "blowup_published": published.mean,
        "blowup_published_max": published.max,
        "ln_degenerate": paper.degenerate,
    }


@register_measure("param_norm")
def _param_norm(ctx: MeasureContext) -> dict[str, Any]:
    return {"param_norm": parameter_norm(ctx.model)}


@register_measure("lipschitz")
def _lipschitz(ctx: MeasureContext) -> dict[str, Any]:
    c = lipschitz_constant(ctx.model)
    return {"log10_lipschitz": c["log10_C"], "log_lipschitz": c["log_C"]}


@register_measure("lipschitz_scaled")
def _lipschitz_scaled(ctx: MeasureContext) -> dict[str, Any]:
    c = lipschitz_scaled(ctx.model)
    return {"log10_lipschitz_scaled": c["log10_C"], "log_lipschitz_scaled": c["log_C"]}


def _run_part(ctx: MeasureContext, name: str, what: str) -> Any:
    value = getattr(ctx.config, name, None)
    if value is None:
        raise UserError(f"measure {what!r} needs the run's {name} config (a train job's config)")
    return value


def _trainable(ctx: MeasureContext, what: str) -> list[str]:
    """The parameters the run's freeze spec trains, positional ones left out."""
    freeze = _run_part(ctx, "train", what).freeze
    skip = positional_names(ctx.model)
    names = [n for n in trainable_names(ctx.model, freeze) if n not in skip]
    if not names:
        raise UserError(
            f"measure {what!r}: the freeze spec {freeze!r} trains only positional parameters"
        )
    return names


@register_measure("param_norm_trainable")
def _param_norm_trainable(ctx: MeasureContext) -> dict[str, Any]:
    names = _trainable(ctx, "param_norm_trainable")
    initial = seeded_model(_run_part(ctx, "model", "param_norm_trainable"), ctx.config.seed)
    c = norm_change(ctx.model, initial, names)
    return {
        "param_norm_trainable": c["norm"], "param_norm_trainable_init": c["init_norm"],
        "param_norm_trainable_ratio": c["ratio"], "param_distance_trainable": c["distance"],
        "param_distance_trainable_relative": c["relative_distance"],
    }  # fmt: skip


def _sharp(
    ctx: MeasureContext, kind: str, key: str, radius: float, perturb: list[str] | None = None
) -> dict[str, Any]:
    est = sharpness(
        ctx.model,
        ctx.batch,
        lambda out, b: compute_loss(ctx.task.loss, out, b),
        rho=radius,
        kind=kind,
        directions=ctx.config.sharpness_directions,
        generator=torch.Generator().manual_seed(ctx.config.seed + 7919),
        perturb=perturb,
    )
    return {key: est.mean, f"{key}_ci_low": est.ci_low, f"{key}_ci_high": est.ci_high}


@register_measure("sharpness")
def _sharpness(ctx: MeasureContext) -> dict[str, Any]:
    return _sharp(ctx, "sphere", "sharpness", ctx.config.sharpness_rho)


@register_measure("sharpness_gauss")
def _sharpness_gauss(ctx: MeasureContext) -> dict[str, Any]:
    return _sharp(ctx, "gaussian", "sharpness_gauss", ctx.config.sharpness_eps)


@register_measure("sharpness_trainable")
def _sharpness_trainable(ctx: MeasureContext) -> dict[str, Any]:
    names = _trainable(ctx, "sharpness_trainable")
    return _sharp(ctx, "sphere", "sharpness_trainable", ctx.config.sharpness_rho, names)


@register_measure("sharpness_gauss_trainable")
def _sharpness_gauss_trainable(ctx: MeasureContext) -> dict[str, Any]:
    names = _trainable(ctx, "sharpness_gauss_trainable")
    return _sharp(ctx, "gaussian", "sharpness_gauss_trainable", ctx.config.sharpness_eps, names)


@register_measure("real_sensitivity")
def _real_sensitivity(ctx: MeasureContext) -> dict[str, Any]:
    task = _boolean(ctx, "real_sensitivity")
    as_real, exact = model_real_sensitivity(ctx.model, task, ctx.device, ctx.config.seed)
    return {"model_as_real": as_real, "model_as_real_exact": exact,
            "bound_level": as_real / (2 * task.max_len)}  # fmt: skip


@register_measure("sharpness_bound")
def _sharpness_bound(ctx: MeasureContext) -> dict[str, Any]:
    task = _boolean(ctx, "sharpness_bound")
    multipliers = list(getattr(ctx.config, "bound_radii", DEFAULT_BOUND_RADII))
    return sharpness_bound(ctx.model, task, ctx.batch, multipliers, ctx.config.sharpness_eps,
                           ctx.config.sharpness_directions, ctx.config.seed, ctx.device)  # fmt: skip


@register_measure("length_generalisation")
def _length(ctx: MeasureContext) -> dict[str, Any]:
    return {"length_acc": length_generalisation(ctx.model, ctx.task, ctx.device)}


@register_measure("pca")
def _pca(ctx: MeasureContext) -> dict[str, Any]:
    return {"pca": pca_vs_neurons(ctx.model, ctx.batch.inputs, ctx.config.pca_ks, ctx.device)}


def check_measures(names: list[str], what: str = "measure") -> None:
    """UserError for a name that is not a registered measure (`what` names the setting)."""
    for name in names:
        if name not in MEASURES:
            raise UserError(
                f"unknown {what} {name!r}{did_you_mean(str(name), MEASURES)}; allowed: {', '.join(sorted(MEASURES))}"
            )


def run_measures(
    model: nn.Module,
    task: Task,
    config: MeasureSettings,
    names: list[str],
    device: torch.device | str,
) -> dict[str, Any]:
    """Run the named measures on `model`; returns their merged metrics."""
    check_measures(names)
    device = resolve_device(device)
    test = task.test_set()
    batch = test.slice(0, config.measure_batch).to(device)
    ctx = MeasureContext(model, task, config, device, batch)
    out: dict[str, Any] = {}
    for name in names:
        out.update(MEASURES[name](ctx))
    return out


__all__ = [
    "DEFAULT_BOUND_RADII",
    "MEASURES",
    "MeasureContext",
    "MeasureSettings",
    "check_measures",
    "register_measure",
    "run_measures",
]
