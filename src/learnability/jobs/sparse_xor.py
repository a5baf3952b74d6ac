"""Jobs of the `sparse_xor` study (two-head model of Han & Ghoshdastidar 2025), registered on import.

Each job records raw numbers — the population loss and the heads' specialisation after a step, at every
step size of its grid — so the analysis can apply any success criterion afterwards (the claims' robustness
alternatives change thresholds without rerunning anything). One seed fixes a draw: the positional
embeddings, the initial θ (θ̃ = −θ) and the support {i*, j*}.

- `sparse_xor.one_step`: one population step at every step size of a log grid (η, or c = η/(d²·ln d)).
- `sparse_xor.min_m`: one population step for every m of a grid, from one nested draw (see
  `learnability.models.two_head_scaling`), at a few step sizes c.
- `sparse_xor.many_steps`: population gradient descent at every step size of a grid; first success.
- `sparse_xor.samples`: one finite-sample step on the first n strings of a stream, n on a doubling grid.

The only trained network of the study, the FFNN baseline, runs through the shared `train` job.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import torch

from learnability.device import resolve_device
from learnability.errors import UserError
from learnability.models.two_head import (
    AttentionKind,
    TwoHead,
    TwoHeadConfig,
    attention_weights,
    draw_support,
    head_masses,
    population_loss,
    sign_accuracy,
    worst_case_error,
)
from learnability.models.two_head_scaling import (
    NestedEmbeddings,
    finite,
    nested_m_scan,
    sample_ladder,
)
from learnability.models.two_head_steps import (
    Criterion,
    StepGrid,
    default_m,
    one_step_scan,
    population_descent,
    specialisation,
    theory_scale,
)
from learnability.sweep.jobs import RunContext, register_job

GridUnit = Literal["c", "eta"]


def two_head(d: int, m: int, kind: str, seed: int, device: torch.device) -> TwoHead:
    """The draw of one seed: embeddings, initial θ and support from distinct streams of it."""
    cfg = TwoHeadConfig(d=d, m=m, attention=kind, embedding_seed=seed,  # type: ignore[arg-type]
                        init_seed=10_000 + seed, support_seed=20_000 + seed)  # fmt: skip
    return TwoHead(cfg, device=device)


def _draw(
    d: int, m: int, kind: str, seed: int, device: torch.device
) -> tuple[TwoHead, int, torch.Tensor]:
    """`two_head` at m (0: `default_m(d)`), that m, and its (θ, θ̃) stacked as the scans take them."""
    m = m or default_m(d)
    model = two_head(d, m, kind, seed, device)
    return model, m, torch.stack([model.theta, model.theta_tilde]).detach()


def step_sizes(grid: StepGrid, unit: GridUnit, d: int) -> torch.Tensor:
    """η for each grid point: 10^g, or 10^g·d²·ln d when the grid is in units of c."""
    scale = theory_scale(d) if unit == "c" else 1.0
    return torch.pow(10.0, grid.log10()) * scale


def _floats(values: torch.Tensor) -> list[float | None]:
    return [finite(float(v)) for v in values.tolist()]


# -- one step ------------------------------------------------------------------------------------------------
@dataclass
class OneStepConfig:
    d: int = 256
    m: int = 0  # 0 = default_m(d) = ⌈log2(d)²/2⌉
    attention: AttentionKind = "softmax"
    seed: int = 0
    grid: StepGrid = field(default_factory=StepGrid)
    grid_unit: GridUnit = "c"  # "c": η = 10^g·d²·ln d; "eta": η = 10^g
    sign_samples: int = 0  # Monte Carlo strings for the sign accuracy at the lowest-loss step size
    device: str = "cpu"


def one_step(config: OneStepConfig, device: torch.device | str = "cpu") -> dict[str, Any]:
    dev = resolve_device(device)
    model, m, params = _draw(config.d, config.m, config.attention, config.seed, dev)
    p, q = model.support
    scan = one_step_scan(model.V, params, config.attention, p, q,
                         step_sizes(config.grid, config.grid_unit, config.d).to(dev))  # fmt: skip
    with torch.no_grad():
        start = attention_weights(scan.s0, config.attention)
        loss0 = float(population_loss(start[0], start[1], p, q))
        spec0 = float(specialisation(start, p, q))
    best = int(scan.loss.argmin())
    w = scan.weights(best)
    gen = torch.Generator().manual_seed(30_000 + config.seed)
    ok = bool(torch.isfinite(w).all())
    return {
        "d": config.d,
        "m": m,
        "support": [p, q],
        "loss0": loss0,
        "spec0": spec0,
        "grid_unit": config.grid_unit,
        "log10_grid": config.grid.log10().tolist(),
        "loss": _floats(scan.loss),
        "spec": scan.spec.tolist(),
        "best_index": best,
        "masses": head_masses(w, p, q).tolist() if ok else None,  # [[a_i*, a_j*], [ã_i*, ã_j*]]
        "worst_case_error": finite(float(worst_case_error(w, p, q))) if ok else None,
        "sign_accuracy": sign_accuracy(w, p, q, config.sign_samples, gen)
        if config.sign_samples and ok
        else None,
    }


@register_job("sparse_xor.one_step", OneStepConfig)
def one_step_job(config: OneStepConfig, ctx: RunContext) -> dict[str, Any]:
    return one_step(config, ctx.device)


# -- m grid --------------------------------------------------------------------------------------------------
@dataclass
class MinMConfig:
    d: int = 1024
    seed: int = 0
    m_grid: list[int] = field(default_factory=lambda: [2, 3, 4, 6, 8, 11, 16, 22, 32, 45, 64])
    grid: StepGrid = field(default_factory=lambda: StepGrid(0.0, 6.0, 1))  # in units of c
    attention: AttentionKind = "softmax"


def min_m(config: MinMConfig) -> dict[str, Any]:
    """One population step at every m of the grid (one nested draw) and every c; CPU (numpy draws)."""
    if not config.m_grid or sorted(set(config.m_grid)) != list(config.m_grid):
        raise UserError(f"m_grid={config.m_grid} is invalid; give ascending distinct m")
    emb = NestedEmbeddings(config.d, max(config.m_grid), config.seed)
    p, q = draw_support(config.d, 20_000 + config.seed)
    scans = nested_m_scan(emb, config.m_grid, config.attention, p, q,
                          step_sizes(config.grid, "c", config.d))  # fmt: skip
    return {
        "d": config.d,
        "support": [p, q],
        "m_grid": list(config.m_grid),
        "log10_c": config.grid.log10().tolist(),
        "loss": [_floats(s.loss) for s in scans],  # (M, G)
        "spec": [s.spec.tolist() for s in scans],
        "loss0": [s.loss0 for s in scans],
    }


@register_job("sparse_xor.min_m", MinMConfig)
def min_m_job(config: MinMConfig, ctx: RunContext) -> dict[str, Any]:
    return min_m(config)


# -- many steps ----------------------------------------------------------------------------------------------
@dataclass
class ManyStepsConfig:
    d: int = 512
    m: int = 0  # 0 = default_m(d)
    attention: AttentionKind = "softmax"
    seed: int = 0
    steps: int = 150  # population gradient steps
    grid: StepGrid = field(default_factory=lambda: StepGrid(-8.0, 16.0, 1))  # η itself
    criterion: Criterion = field(default_factory=Criterion)
    device: str = "cpu"


def many_steps(config: ManyStepsConfig, device: torch.device | str = "cpu") -> dict[str, Any]:
    dev = resolve_device(device)
    model, m, params = _draw(config.d, config.m, config.attention, config.seed, dev)
    p, q = model.support
    run = population_descent(model.V, params, config.attention, p, q,
                             step_sizes(config.grid, "eta", config.d).to(dev), config.steps,
                             config.criterion)  # fmt: skip
    done = [f for f in run.first if f is not None]
    return {
        "d": config.d,
        "m": m,
        "log10_eta": config.grid.log10().tolist(),
        "first_success": run.first,
        "steps_to_success": min(done) if done else None,
        "final_loss": [finite(v) for v in run.final],
        "best_curve": [finite(v) for v in run.curve],
        "best_log10_eta": float(config.grid.log10()[run.best]),
        "steps_run": run.steps_run,
    }


@register_job("sparse_xor.many_steps", ManyStepsConfig)
def many_steps_job(config: ManyStepsConfig, ctx: RunContext) -> dict[str, Any]:
    return many_steps(config, ctx.device)


# -- samples -------------------------------------------------------------------------------------------------
@dataclass
class SamplesConfig:
    d: int = 64
    m: int = 0  # 0 = default_m(d)
    seed: int = 0
    n_grid: list[int] = field(default_factory=lambda: [2**k for k in range(5, 19)])
    grid: StepGrid = field(default_factory=StepGrid)  # in units of c
    select_size: int = 2048  # training strings that choose the step size
    stop: Criterion = field(default_factory=lambda: Criterion(loss=0.01))  # the strictest analysed
    stop_after: int = 2  # consecutive successes under `stop` that end the ladder
    device: str = "cpu"


def samples(config: SamplesConfig, device: torch.device | str = "cpu") -> dict[str, Any]:
    """The population step of the draw (the precondition), then the finite-sample ladder."""
    dev = resolve_device(device)
    model, m, params = _draw(config.d, config.m, "softmax", config.seed, dev)
    p, q = model.support
    etas = step_sizes(config.grid, "c", config.d).to(dev)
    population = one_step_scan(model.V, params, "softmax", p, q, etas)
    gen = torch.Generator().manual_seed(30_000 + config.seed)
    rows = sample_ladder(model.V, params, "softmax", p, q, config.n_grid, etas, gen,
                         config.select_size, config.stop, config.stop_after)  # fmt: skip
    return {
        "d": config.d,
        "m": m,
        "n_max": max(config.n_grid),
        "log10_c": config.grid.log10().tolist(),
        "population_loss": _floats(population.loss),
        "population_spec": population.spec.tolist(),
        "rows": [
            {"n": r.n, "index": r.index, "loss": finite(r.loss), "spec": r.spec} for r in rows
        ],
    }


@register_job("sparse_xor.samples", SamplesConfig)
def samples_job(config: SamplesConfig, ctx: RunContext) -> dict[str, Any]:
    return samples(config, ctx.device)


__all__ = [
    "ManyStepsConfig", "MinMConfig", "OneStepConfig", "SamplesConfig", "many_steps", "min_m",
    "one_step", "samples", "step_sizes", "two_head",
]  # fmt: skip
