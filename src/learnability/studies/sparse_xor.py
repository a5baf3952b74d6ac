"""Study `sparse_xor`: Han & Ghoshdastidar (2025), "Transformers Provably Learn Sparse XOR with
Polylogarithmic Parameters" (arXiv 2502.07553).

The paper's experimental numbers are not public in text form: every protocol here is the project's own.

Model and closed forms: `learnability.models.two_head`. Success of a step (the project's rule): population
loss ≤ `success_loss` (0.05; the zero predictor has loss 1) and the heads specialise — for the better of the
two assignments (head 1 → i*, head 2 → j*) or the reverse, the weaker head puts mass ≥ `success_mass` (0.9)
on its target.

Jobs (each a registered study job; none trains with a loop of its own — the only trained network, the FFNN
baseline, runs through the shared `train` job):
- `sparse_xor.one_step`: one gradient step from θ̃ = −θ at every step size of a log grid, on the closed-form
  population loss (samples = 0) or on n uniform strings (samples = n; the step size is then chosen by the loss
  on the training strings, and scored on the exact population loss).
- `sparse_xor.min_m`: for one d and several seeds, the smallest m (on a grid) at which one shared step size
  makes ≥ `min_success` of the seeds succeed.
- `sparse_xor.samples`: for one d and seed, the finite-sample step for n on a doubling grid; the samples needed.
- `sparse_xor.many_steps`: gradient descent on the population loss for T steps at every step size of a grid;
  the first step at which the run succeeds.

The step-size trick: after one step the scores are s − η·(∇ @ Vᵀ), so a whole step-size grid of G points costs
one O(dm) gradient plus O(Gd), not O(Gdm).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import torch
from torch import Tensor

from learnability.device import resolve_device
from learnability.errors import UserError
from learnability.models.two_head import (
    ATTENTION_KINDS,
    TwoHead,
    TwoHeadConfig,
    attention_weights,
    draw_support,
    head_masses,
    population_grad,
    population_loss,
    sample_grad,
    sample_loss,
    sign_accuracy,
    worst_case_error,
)
from learnability.report import figures as fg
from learnability.studies.legacy import ClaimResult, FigureSink, StudyResults, Table
from learnability.studies.legacy import LegacyStudy as Study
from learnability.sweep.jobs import RunContext, register_job
from learnability.sweep.spec import Sweep

AttentionKind = Literal["softmax", "linear", "erf", "sigmoid"]


# -- the computations ------------------------------------------------------------------------------------
@dataclass
class StepGrid:
    """log10 step sizes from `lo` to `hi`, `per_decade` points a decade."""

    lo: float = -8.0
    hi: float = 18.0
    per_decade: int = 4

    def etas(self) -> Tensor:
        if self.hi < self.lo or self.per_decade < 1:
            raise UserError(
                f"step grid {self.lo}..{self.hi} x{self.per_decade}/decade is invalid; need lo <= hi, per_decade >= 1"
            )
        n = round((self.hi - self.lo) * self.per_decade) + 1
        return torch.logspace(self.lo, self.hi, n, dtype=torch.float64)


@dataclass
class Criterion:
    success_loss: float = 0.05
    success_mass: float = 0.9


def specialisation(weights: Tensor, p: int, q: int) -> Tensor:
    """(...) mass of the weaker head on its own target, for the better assignment; weights (..., 2, d)."""
    m = head_masses(weights, p, q)  # (..., 2, 2) = [[a_p, a_q], [b_p, b_q]]
    straight = torch.minimum(m[..., 0, 0], m[..., 1, 1])
    crossed = torch.minimum(m[..., 0, 1], m[..., 1, 0])
    return torch.maximum(straight, crossed)


def _model(d: int, m: int, kind: str, seed: int, device: torch.device) -> TwoHead:
    # One seed fixes the embeddings, the initial θ and the support (distinct streams of it).
    cfg = TwoHeadConfig(d=d, m=m, attention=kind, embedding_seed=seed, init_seed=10_000 + seed,
                        support_seed=20_000 + seed)  # fmt: skip
    return TwoHead(cfg, device=device)


def _pm_strings(n: int, d: int, generator: torch.Generator, device: torch.device) -> Tensor:
    return (torch.randint(0, 2, (n, d), generator=generator) * 2 - 1).to(torch.float64).to(device)


@dataclass
class Scan:
    """One step at every step size: population losses (G,), specialisation (G,), success (G,), and the
    loss on a selection set (G,) when one was given. `weights(i)` rebuilds the weights (2, d) at step i."""

    etas: Tensor
    s0: Tensor  # (2, d) scores at the initialisation
    delta: Tensor  # (2, d) ∇ @ Vᵀ: the scores move by −η·delta
    kind: str
    loss: Tensor
    spec: Tensor
    success: Tensor
    select_loss: Tensor | None
    loss0: float

    def weights(self, i: int) -> Tensor:
        return attention_weights(self.s0 - self.etas[i] * self.delta, self.kind)


CHUNK_ELEMENTS = 2**24  # step sizes per chunk × 2 × d: bounds the memory of a scan at large d


def one_step_scan(
    model: TwoHead,
    etas: Tensor,
    criterion: Criterion,
    x: Tensor | None = None,
    y: Tensor | None = None,
    select: int = 0,
) -> Scan:
    """One gradient step (population if x is None, else on the strings x (n, d) with targets y (n,)) at every
    step size; with `select` > 0 also the loss on the first `select` strings of x after each step."""
    V, kind = model.V, model.config.attention
    p, q = model.support
    params = torch.stack([model.theta, model.theta_tilde]).detach()
    losses, specs, chooser = [], [], []
    with torch.no_grad():
        if x is None:
            loss0, grad = population_grad(V, params, kind, p, q)
        else:
            loss0, grad = sample_grad(V, params, kind, x, y)
        s0, delta = params @ V.T, grad @ V.T  # (2, d) each
        etas = etas.to(V.device)
        chunk = max(1, CHUNK_ELEMENTS // (2 * V.shape[0]))
        for start in range(0, len(etas), chunk):
            e = etas[start : start + chunk]
            w = attention_weights(s0 - e[:, None, None] * delta, kind)  # (g, 2, d)
            losses.append(population_loss(w[:, 0], w[:, 1], p, q))
            specs.append(specialisation(w, p, q))
            if select and x is not None:
                chooser.append(sample_loss(w, x[:select], y[:select]))
        loss = torch.nan_to_num(torch.cat(losses), nan=math.inf, posinf=math.inf)
        spec = torch.nan_to_num(torch.cat(specs), nan=0.0)
        success = (loss <= criterion.success_loss) & (spec >= criterion.success_mass)
        sel = torch.nan_to_num(torch.cat(chooser), nan=math.inf) if chooser else None
    return Scan(etas, s0, delta, kind, loss, spec, success, sel, float(loss0))


def _finite(values: Tensor) -> list[float | None]:
    return [float(v) if math.isfinite(float(v)) else None for v in values.tolist()]


# -- jobs --------------------------------------------------------------------------------------------------
@dataclass
class OneStepConfig:
    d: int = 256
    m: int = 0  # 0 = default_m(d) = ⌈log2(d)²/2⌉
    attention: AttentionKind = "softmax"
    seed: int = 0  # embeddings, initial θ, support and (finite-sample) strings
    samples: int = 0  # 0 = the closed-form population step; n > 0 = a step on n uniform strings
    select_size: int = 2048  # finite-sample: training strings used to pick the step size
    steps: StepGrid = field(default_factory=StepGrid)
    criterion: Criterion = field(default_factory=Criterion)
    sign_samples: int = 1000  # Monte Carlo strings for the sign accuracy at the chosen step
    device: str = "cpu"


def one_step(config: OneStepConfig, device: torch.device | str = "cpu") -> dict[str, Any]:
    """One step at every step size of the grid; metrics of the chosen one (see module docstring)."""
    dev = resolve_device(device)
    if config.samples < 0:
        raise UserError(
            f"samples={config.samples} is invalid; use 0 (population) or a positive count"
        )
    m = config.m or default_m(config.d)
    model = _model(config.d, m, config.attention, config.seed, dev)
    p, q = model.support
    etas = config.steps.etas()
    gen = torch.Generator().manual_seed(30_000 + config.seed)
    if config.samples:
        x = _pm_strings(config.samples, config.d, gen, dev)
        y = -x[:, p] * x[:, q]
        scan = one_step_scan(
            model, etas, config.criterion, x, y, min(config.select_size, config.samples)
        )
        best = int(scan.select_loss.argmin())
    else:
        scan = one_step_scan(model, etas, config.criterion)
        best = int(scan.loss.argmin())
    w = scan.weights(best)
    masses = head_masses(w, p, q)
    worst = float(worst_case_error(w, p, q)) if torch.isfinite(w).all() else math.inf
    acc = sign_accuracy(w, p, q, config.sign_samples, gen) if config.sign_samples else None
    return {
        "d": config.d,
        "m": m,
        "support": [p, q],
        "loss0": scan.loss0,
        "log10_eta": torch.log10(etas).tolist(),
        "loss": _finite(scan.loss),
        "spec": scan.spec.tolist(),
        "success": [bool(s) for s in scan.success.tolist()],
        "best_index": best,
        "best_log10_eta": float(torch.log10(etas[best])),
        "best_at_edge": best in (0, len(etas) - 1),
        "best_loss": float(scan.loss[best]) if math.isfinite(float(scan.loss[best])) else None,
        "best_spec": float(scan.spec[best]),
        "best_success": bool(scan.success[best]),
        "masses": masses.tolist(),  # [[a_i*, a_j*], [ã_i*, ã_j*]]
        "worst_case_error": worst if math.isfinite(worst) else None,
        "sign_accuracy": acc,
    }


@register_job("sparse_xor.one_step", OneStepConfig)
def one_step_job(config: OneStepConfig, ctx: RunContext) -> dict:
    return one_step(config, ctx.device)


@dataclass
class MinMConfig:
    d: int = 1024
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2, 3, 4, 5])
    m_grid: list[int] = field(default_factory=lambda: [4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128])
    attention: AttentionKind = "softmax"
    steps: StepGrid = field(default_factory=lambda: StepGrid(-8.0, 18.0, 2))
    criterion: Criterion = field(default_factory=Criterion)
    min_success: float = 0.8  # fraction of seeds that must succeed at one shared step size
    confirm: int = 1  # further m values that must also succeed before the scan stops
    device: str = "cpu"


def min_m(config: MinMConfig, device: torch.device | str = "cpu") -> dict[str, Any]:
    """Scan m upwards; m* = the first m whose best shared step size makes ≥ min_success of seeds succeed."""
    if not config.seeds or not config.m_grid:
        raise UserError("min_m needs non-empty seeds and m_grid")
    dev = resolve_device(device)
    etas = config.steps.etas()
    rows, m_star, streak = [], None, 0
    for m in sorted(config.m_grid):
        wins = torch.zeros(len(etas), dtype=torch.float64)
        for seed in config.seeds:
            scan = one_step_scan(
                _model(config.d, m, config.attention, seed, dev), etas, config.criterion
            )
            wins += scan.success.cpu().double()
        frac = wins / len(config.seeds)
        best = int(frac.argmax())
        ok = float(frac[best]) >= config.min_success
        rows.append(
            {"m": m, "success_rate": float(frac[best]), "log10_eta": float(torch.log10(etas[best]))}
        )
        if ok:
            m_star = m if m_star is None else m_star
            streak += 1
            if streak > config.confirm:
                break
        else:
            m_star, streak = None, 0
    return {"d": config.d, "rows": rows, "m_star": m_star, "n_seeds": len(config.seeds)}


@register_job("sparse_xor.min_m", MinMConfig)
def min_m_job(config: MinMConfig, ctx: RunContext) -> dict:
    return min_m(config, ctx.device)


@dataclass
class SamplesConfig:
    d: int = 64
    m: int = 0  # 0 = ⌈log2(d)²/2⌉, the one-step experiment's rule
    seed: int = 0
    n_grid: list[int] = field(default_factory=lambda: [2**k for k in range(5, 18)])
    attention: AttentionKind = "softmax"
    steps: StepGrid = field(default_factory=lambda: StepGrid(-8.0, 18.0, 4))
    criterion: Criterion = field(default_factory=Criterion)
    select_size: int = 2048
    confirm: int = 1  # further n values that must also succeed before the scan stops
    device: str = "cpu"


def default_m(d: int) -> int:
    """The project's m ∝ log² d rule: ⌈log2(d)² / 2⌉ (at least 4)."""
    return max(4, math.ceil(math.log2(d) ** 2 / 2))


def samples_needed(config: SamplesConfig, device: torch.device | str = "cpu") -> dict[str, Any]:
    """Finite-sample one step for n on a grid (ascending); n* = first n that succeeds and stays successful."""
    rows, n_star, streak = [], None, 0
    m = config.m or default_m(config.d)
    population = one_step(
        OneStepConfig(d=config.d, m=m, attention=config.attention, seed=config.seed,
                      steps=config.steps, criterion=config.criterion, sign_samples=0),
        device,
    )  # fmt: skip
    if not population["best_success"]:
        # This draw fails even on the population loss: no sample size can rescue it.
        return {"d": config.d, "m": m, "rows": rows, "n_star": None, "population_success": False}
    for n in sorted(config.n_grid):
        out = one_step(
            OneStepConfig(d=config.d, m=m, attention=config.attention, seed=config.seed, samples=n,
                          select_size=config.select_size, steps=config.steps,
                          criterion=config.criterion, sign_samples=0),
            device,
        )  # fmt: skip
        rows.append({"n": n, "success": out["best_success"], "loss": out["best_loss"]})
        if out["best_success"]:
            n_star = n if n_star is None else n_star
            streak += 1
            if streak > config.confirm:
                break
        else:
            n_star, streak = None, 0
    return {"d": config.d, "m": m, "rows": rows, "n_star": n_star, "population_success": True}


@register_job("sparse_xor.samples", SamplesConfig)
def samples_job(config: SamplesConfig, ctx: RunContext) -> dict:
    return samples_needed(config, ctx.device)


@dataclass
class ManyStepsConfig:
    d: int = 512
    m: int = 0  # 0 = default_m(d)
    attention: AttentionKind = "softmax"
    seed: int = 0
    steps: int = 200  # gradient steps
    grid: StepGrid = field(default_factory=lambda: StepGrid(-8.0, 16.0, 1))
    criterion: Criterion = field(default_factory=Criterion)
    device: str = "cpu"


def many_steps(config: ManyStepsConfig, device: torch.device | str = "cpu") -> dict[str, Any]:
    """Population gradient descent at every step size at once; first step at which each one succeeds."""
    if config.steps < 1:
        raise UserError(f"steps={config.steps} is invalid; need at least 1 gradient step")
    dev = resolve_device(device)
    m = config.m or default_m(config.d)
    model = _model(config.d, m, config.attention, config.seed, dev)
    V, kind, (p, q) = model.V, config.attention, model.support
    etas = config.grid.etas().to(dev)
    G = len(etas)
    params = torch.stack([model.theta, model.theta_tilde]).detach().expand(G, 2, m).clone()
    first = [None] * G
    alive = torch.ones(G, dtype=torch.bool, device=dev)
    curves: list[Tensor] = []
    with torch.no_grad():
        for t in range(config.steps + 1):
            loss, grad = population_grad(V, params, kind, p, q)
            w = attention_weights(params @ V.T, kind)
            spec = torch.nan_to_num(specialisation(w, p, q), nan=0.0)
            loss = torch.nan_to_num(loss, nan=math.inf, posinf=math.inf)
            alive &= torch.isfinite(loss) & torch.isfinite(grad).flatten(1).all(1)
            curves.append(torch.where(alive, loss, torch.full_like(loss, math.inf)))
            ok = (
                alive
                & (loss <= config.criterion.success_loss)
                & (spec >= config.criterion.success_mass)
            )
            for i in torch.nonzero(ok).flatten().tolist():
                if first[i] is None:
                    first[i] = t
            if t == config.steps or all(
                f is not None or not a for f, a in zip(first, alive.tolist())
            ):
                break
            step = torch.where(alive, etas, torch.zeros_like(etas))[:, None, None]
            params = params - step * torch.nan_to_num(grad, nan=0.0, posinf=0.0, neginf=0.0)
    hist = torch.stack(curves)  # (T', G)
    done = [f for f in first if f is not None]
    best = min(range(G), key=lambda i: (first[i] is None, first[i] or 0, float(hist[-1, i])))
    return {
        "d": config.d,
        "m": m,
        "log10_eta": torch.log10(etas).tolist(),
        "first_success": first,
        "steps_to_success": min(done) if done else None,
        "best_log10_eta": float(torch.log10(etas[best])),
        "final_loss": _finite(hist[-1]),
        "best_curve": _finite(hist[:, best]),
        "steps_run": hist.shape[0] - 1,
    }


@register_job("sparse_xor.many_steps", ManyStepsConfig)
def many_steps_job(config: ManyStepsConfig, ctx: RunContext) -> dict:
    return many_steps(config, ctx.device)


# -- the study ---------------------------------------------------------------------------------------------
S = "sparse_xor"
KIND_D = 512  # the attention-kind comparison's d (m = default_m)
FFNN_TARGET = (
    Criterion().success_loss
)  # the test MSE an FFNN must reach: the transformer's success bar

_SCALES: dict[str, dict[str, Any]] = {
    "quick": {
        "one_step_d": [2**k for k in (4, 6, 8, 10, 12, 14, 16)],
        "one_step_seeds": list(range(8)),
        "min_m_d": [2**k for k in (6, 8, 10, 12, 14, 16)],
        "min_m_seeds": list(range(6)),
        "m_grid": [4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128],
        "kind_seeds": list(range(8)),
        "many_seeds": list(range(3)),
        "many_steps": 150,
        "samples_d": [16, 32, 64, 128],
        "samples_seeds": list(range(6)),
        "n_grid": [2**k for k in range(5, 18)],
        "ffnn_d": [16, 32, 64, 128, 256],
        "ffnn_widths": [2, 4, 8, 16],
        "ffnn_seeds": [0, 1],
        "ffnn_steps": 1000,
    },
    "paper": {
        "one_step_d": [2**k for k in range(4, 21, 2)],
        "one_step_seeds": list(range(32)),
        "min_m_d": [2**k for k in range(6, 19)],
        "min_m_seeds": list(range(20)),
        "m_grid": [4, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64, 80, 96, 128, 160, 192, 256],
        "kind_seeds": list(range(32)),
        "many_seeds": list(range(10)),
        "many_steps": 2000,
        "samples_d": [16, 32, 64, 128, 256, 512],
        "samples_seeds": list(range(16)),
        "n_grid": [2**k for k in range(5, 22)],
        "ffnn_d": [16, 32, 64, 128, 256, 512, 1024],
        "ffnn_widths": [2, 4, 8, 16, 32, 64],
        "ffnn_seeds": [0, 1, 2, 3],
        "ffnn_steps": 5000,
    },
}


def _ffnn_base(d: int, steps: int) -> dict[str, Any]:
    p, q = draw_support(d, 0)
    return {
        # y = −x_i x_j in ±1 is the XOR of the two bits with targets 2·XOR − 1.
        "task": {"name": "boolean", "function": f"x{p} ^ x{q}", "n": d, "targets": "pm1",
                 "mode": "online", "test_size": 2048},
        "model": {"arch": "mlp", "n_inputs": d, "width": 8, "depth": 1, "inputs": "pm1"},
        "train": {"steps": steps, "batch_size": 128, "lr": 3e-3, "weight_decay": 0.0,
                  "eval_every": 100, "converge_loss": FFNN_TARGET / 5},
        "measure": [],
        "save_model": False,
    }  # fmt: skip


def _ok(records: list[Any]) -> list[Any]:
    return [r for r in records if r.status == "ok"]


def _rate(successes: int, n: int) -> str:
    lo, hi = fg.wilson_interval(successes, n)
    return f"{successes}/{n} [{lo:.2f}, {hi:.2f}]"


def shared_step_success(records: list[Any]) -> tuple[int, int, float]:
    """Best step size shared by all records (same grid): (successes there, runs, its log10 η)."""
    if not records:
        return 0, 0, math.nan
    grid = np.asarray(records[0].metrics["log10_eta"])
    wins = np.zeros(len(grid))
    for r in records:
        wins += np.asarray(r.metrics["success"], dtype=float)
    best = int(wins.argmax())
    return int(wins[best]), len(records), float(grid[best])


def _median(values: list[float]) -> float:
    v = [x for x in values if x is not None and math.isfinite(x)]
    return float(np.median(v)) if v else math.nan


class SparseXorStudy(Study):
    name = S
    title = "Transformers learn sparse XOR with polylogarithmic parameters"
    paper = (
        "Han & Ghoshdastidar, Transformers Provably Learn Sparse XOR with Polylogarithmic Parameters "
        "(arXiv 2502.07553, 2025)"
    )
    protocol_note = (
        "The paper's experimental numbers are not public in text form: grids, seeds, success rule "
        "(population loss ≤ 0.05 and each head ≥ 0.9 of its mass on a distinct target), the linear / "
        "element-wise attention scalings and the FFNN protocol are the project's own."
    )

    def sweeps(self, scale: str) -> list[Sweep]:
        from learnability.errors import check_choice

        check_choice("scale", scale, list(_SCALES))
        c = _SCALES[scale]
        out = [
            Sweep(f"{S}/one_step", "sparse_xor.one_step", base={},
                  grid={"d": c["one_step_d"]}, seeds=c["one_step_seeds"], study=S),
            Sweep(f"{S}/min_m", "sparse_xor.min_m", base={"seeds": c["min_m_seeds"], "m_grid": c["m_grid"]},
                  grid={"d": c["min_m_d"]}, seed_key="", study=S),
            Sweep(f"{S}/kinds", "sparse_xor.one_step", base={"d": KIND_D},
                  grid={"attention": list(ATTENTION_KINDS)}, seeds=c["kind_seeds"], study=S),
            Sweep(f"{S}/many_steps", "sparse_xor.many_steps", base={"d": KIND_D, "steps": c["many_steps"]},
                  grid={"attention": list(ATTENTION_KINDS)}, seeds=c["many_seeds"], study=S),
            Sweep(f"{S}/samples", "sparse_xor.samples", base={"n_grid": c["n_grid"]},
                  grid={"d": c["samples_d"]}, seeds=c["samples_seeds"], study=S),
        ]  # fmt: skip
        for d in c["ffnn_d"]:
            out.append(
                Sweep(f"{S}/ffnn_d{d}", "train", base=_ffnn_base(d, c["ffnn_steps"]),
                      grid={"model.width": c["ffnn_widths"]}, seeds=c["ffnn_seeds"], study=S)
            )  # fmt: skip
        return out

    # -- analysis -----------------------------------------------------------------------------------------
    def analyse(self, results: StudyResults, out: FigureSink) -> list[ClaimResult]:
        out.note(
            "Linear attention uses the scores as weights (a_i = v_iᵀθ); element-wise kinds use erf(v_iᵀθ) and "
            "sigmoid(v_iᵀθ − log d) (the −log d bias starts sigmoid at ≈ 1/d per position, like softmax); none "
            "is normalised over positions. The population loss and its gradient are exact (closed form)."
        )
        scale = results.scale
        return [
            self._one_step(results, out, scale),
            self._polylog(results, out, scale),
            self._kinds(results, out, scale),
            self._samples(results, out, scale),
            self._ffnn(results, out, scale),
        ]

    def _one_step(self, results: StudyResults, out: FigureSink, scale: str) -> ClaimResult:
        recs = _ok(results.of(f"{S}/one_step"))
        claim = "softmax: loss ≈ 0 for every input after one step"
        statement = (
            "One population gradient step from θ̃ = −θ makes each head put attention ≈ 1 on a distinct "
            "target and drives the loss for every input to nearly 0 (Theorem 2)."
        )
        if not recs:
            return ClaimResult(claim, statement, "no finished runs", "inconclusive", scale)
        by_d = fg.group_by(recs, "metrics.d")
        rows, ds, etas, rates, edge = [], [], [], [], False
        for (d,), rs in sorted(by_d.items()):
            k, n, log_eta = shared_step_success(rs)
            ds.append(d)
            etas.append(log_eta)
            rates.append((k, n))
            edge |= any(r.metrics["best_at_edge"] for r in rs)
            worst = _median([r.metrics["worst_case_error"] for r in rs])
            rows.append([d, rs[0].metrics["m"], 2 * rs[0].metrics["m"], f"{log_eta:.2f}", _rate(k, n),
                         f"{_median([r.metrics['best_loss'] for r in rs]):.2e}",
                         f"{_median([r.metrics['best_spec'] for r in rs]):.3f}",
                         f"{_median([r.metrics['sign_accuracy'] for r in rs]):.3f}", f"{worst:.3f}"])  # fmt: skip
        out.table(Table("One population step (softmax)",
                        ["d", "m", "params 2m", "log10 η* (shared)", "success at η*", "median loss",
                         "median mass on own target", "median sign acc.", "median worst-case |f−y| bound"],
                        rows, "Per-run best step size for loss/mass/sign columns; success at the best step size shared by all seeds."))  # fmt: skip
        fit = fg.fit_line(np.log10(ds), etas)
        out.note(f"Best shared one-step size η* against d: log10 η* = {fit.slope:.2f}·log10 d + "
                 f"{fit.intercept:.2f} ({fit.fmt()}); the grid spans 10^-8..10^18, and the per-run best step "
                 f"{'touched' if edge else 'never touched'} the grid's edge.")  # fmt: skip
        fig, ax = fg.new_figure(3, width=4.8)
        fg.plot_series(ax[0], fg.series(recs, "metrics.d", "metrics.best_log10_eta"))
        ax[0].plot(ds, etas, "k--", lw=1, label="shared η*")
        fg.finish(ax[0], "sequence length d", "log10 best step size η", "step size", logx=True)
        fg.plot_series(ax[1], fg.series(recs, "metrics.d", lambda r: r.metrics["masses"][0][0] + r.metrics["masses"][0][1]), fmt_label=str)  # fmt: skip
        fg.plot_series(ax[1], fg.series(recs, "metrics.d", "metrics.best_spec"), fmt_label=str)
        ax[1].lines[0].set_label("head 1 mass on {i*, j*}")
        ax[1].lines[1].set_label("weaker head's mass on its own target")
        fg.finish(ax[1], "sequence length d", "attention mass", "heads after one step", logx=True)
        fg.plot_series(ax[2], fg.series(recs, "metrics.d", lambda r: math.log10(max(r.metrics["best_loss"] or 1e-300, 1e-16))))  # fmt: skip
        fg.finish(ax[2], "sequence length d", "log10 population MSE (floored at 1e-16)", "loss after one step", logx=True)  # fmt: skip
        out.add("one_step", fig, "One population step of the softmax two-head model, m = ⌈log2(d)²/2⌉: best step size, attention mass, loss (mean and 95% CI over seeds).")  # fmt: skip
        lows = [fg.wilson_interval(k, n)[0] for k, n in rates]
        measured = (f"{scale} scale, d = {ds[0]}..{ds[-1]}, {rates[0][1]} seeds each; success at the shared best "
                    f"step: " + ", ".join(f"d={d}: {_rate(k, n)}" for d, (k, n) in zip(ds, rates))
                    + f"; η* ∝ d^{fit.slope:.2f}")  # fmt: skip
        ups = [fg.wilson_interval(k, n)[1] for k, n in rates]
        pooled = sum(k for k, _ in rates) / sum(n for _, n in rates)
        if pooled >= 0.8 and min(ups) >= 0.8 and not edge:
            verdict = "reproduced"
        elif min(ups) < 0.5:
            verdict = "not reproduced"
        else:
            verdict = "inconclusive"
        measured += (f"; pooled {pooled:.2f}. Rule: reproduced if the pooled success rate at the shared step sizes is ≥ 0.8, "
                     "no d is significantly below 0.8 (Wilson upper bound ≥ 0.8) and no best step touches the grid edge; "
                     "not reproduced if some d is significantly below 0.5.")  # fmt: skip
        return ClaimResult(claim, statement, measured, verdict, scale,
                           {"d": ds, "success": rates, "log10_eta": etas, "eta_exponent": fit.slope, "wilson_low": lows})  # fmt: skip

    def _polylog(self, results: StudyResults, out: FigureSink, scale: str) -> ClaimResult:
        recs = sorted(_ok(results.of(f"{S}/min_m")), key=lambda r: r.metrics["d"])
        claim = "m = O(polylog d) suffices"
        statement = "The two-head transformer learns sparse XOR with embedding dimension m = O(polylog d), i.e. 2m trainable parameters for d far beyond m."
        if not recs:
            return ClaimResult(claim, statement, "no finished runs", "inconclusive", scale)
        ds = [r.metrics["d"] for r in recs]
        ms = [r.metrics["m_star"] for r in recs]
        found = [(d, m) for d, m in zip(ds, ms) if m is not None]
        fig, ax = fg.new_figure(2)
        if found:
            fd, fm = zip(*found)
            L = np.log(np.asarray(fd, float))
            fit1, fit2 = fg.fit_line(L, fm), fg.fit_line(L**2, fm)
            ax[0].plot(fd, fm, "o-", label="smallest m (≥ 80% of seeds at one step size)")
            for fit, xs, lab in ((fit1, L, "fit a + b·ln d"), (fit2, L**2, "fit a + b·ln² d")):
                ax[0].plot(
                    fd, fit.slope * xs + fit.intercept, "--", lw=1, label=f"{lab} (R²={fit.r2:.2f})"
                )
            ax[0].plot(fd, fd, ":", color="grey", label="m = d")
        fg.finish(
            ax[0],
            "sequence length d",
            "smallest successful m",
            "smallest m vs d",
            logx=True,
            logy=True,
        )
        for r in recs:
            rows = r.metrics["rows"]
            ax[1].plot(
                [x["m"] for x in rows],
                [x["success_rate"] for x in rows],
                "o-",
                ms=3,
                label=f"d={r.metrics['d']}",
            )
        fg.finish(
            ax[1],
            "embedding dimension m",
            "success rate at best shared η",
            "success vs m",
            logx=True,
        )
        ax[1].minorticks_off()
        grid_m = sorted({x["m"] for r in recs for x in r.metrics["rows"]})
        ax[1].set_xticks(grid_m, [str(m) for m in grid_m], fontsize=7)
        out.add("polylog", fig, "Smallest embedding dimension m at which one population step succeeds (≥ 80% of seeds at one shared step size), against d, with fits in ln d and ln² d.")  # fmt: skip
        if len(found) < 2 or len(found) < len(ds):
            miss = [d for d, m in zip(ds, ms) if m is None]
            return ClaimResult(claim, statement, f"{scale} scale: no successful m on the grid for d = {miss}",
                               "not reproduced" if miss else "inconclusive", scale, {"d": ds, "m_star": ms})  # fmt: skip
        top = found[len(found) // 2 :]
        alpha = fg.fit_line(
            np.log(np.asarray([d for d, _ in top], float)),
            np.log(np.asarray([m for _, m in top], float)),
        )
        ratio = found[-1][1] / found[-1][0]
        measured = (f"{scale} scale, {recs[0].metrics['n_seeds']} seeds per d: smallest m = "
                    + ", ".join(f"d={d}: {m}" for d, m in found)
                    + f"; fit m = {fit1.intercept:.1f} + {fit1.slope:.2f}·ln d (R²={fit1.r2:.2f}), "
                    f"m = {fit2.intercept:.1f} + {fit2.slope:.3f}·ln² d (R²={fit2.r2:.2f}); power-law exponent "
                    f"of m in d over the upper half of d: {alpha.slope:.2f}; m/d at d={found[-1][0]}: {ratio:.1e}. "
                    "Rule: reproduced if m/d ≤ 1/16 at the largest d and the upper-half power-law exponent ≤ 0.25; "
                    "not reproduced if the exponent ≥ 0.5.")  # fmt: skip
        if ratio <= 1 / 16 and alpha.slope <= 0.25:
            verdict = "reproduced"
        elif alpha.slope >= 0.5:
            verdict = "not reproduced"
        else:
            verdict = "inconclusive"
        return ClaimResult(claim, statement, measured, verdict, scale,
                           {"d": ds, "m_star": ms, "r2_log": fit1.r2, "r2_log2": fit2.r2, "alpha": alpha.slope})  # fmt: skip

    def _kinds(self, results: StudyResults, out: FigureSink, scale: str) -> ClaimResult:
        one = _ok(results.of(f"{S}/kinds"))
        many = _ok(results.of(f"{S}/many_steps"))
        claim = "only softmax specialises the heads quickly"
        statement = "Linear and element-wise (erf) attention fail to specialise the two heads or need many more steps than softmax."
        if not one:
            return ClaimResult(claim, statement, "no finished runs", "inconclusive", scale)
        fig, ax = fg.new_figure(3, width=4.8)
        rows, rate = [], {}
        for kind in ATTENTION_KINDS:
            rs = [r for r in one if r.config["attention"] == kind]
            ms = [r for r in many if r.config["attention"] == kind]
            if not rs:
                continue
            k, n, log_eta = shared_step_success(rs)
            rate[kind] = (k, n)
            grid = np.asarray(rs[0].metrics["log10_eta"])
            spec = np.median(np.asarray([r.metrics["spec"] for r in rs]), 0)
            ax[0].plot(grid, spec, label=kind)
            loss = np.median(
                np.asarray(
                    [[v if v is not None else np.inf for v in r.metrics["loss"]] for r in rs]
                ),
                0,
            )
            ax[1].plot(grid, np.log10(np.clip(loss, 1e-16, 1e16)), label=kind)
            steps = [r.metrics["steps_to_success"] for r in ms]
            done = [s for s in steps if s is not None]
            if ms:
                curve = np.asarray(
                    [v if v is not None else np.nan for v in ms[0].metrics["best_curve"]]
                )
                ax[2].plot(np.arange(len(curve)), np.log10(np.clip(curve, 1e-16, 1e16)), label=kind)
            rows.append([kind, _rate(k, n), f"{log_eta:.2f}", f"{_median([r.metrics['best_spec'] for r in rs]):.3f}",
                         f"{_median([r.metrics['best_loss'] for r in rs]):.3g}",
                         f"{len(done)}/{len(ms)}", f"{_median(done):.0f}" if done else f"> {ms[0].metrics['steps_run'] if ms else '?'}"])  # fmt: skip
        ax[0].set_ylim(-0.05, 1.05)  # unnormalised kinds can put weights ≫ 1 on a position: clipped
        fg.finish(ax[0], "log10 step size η", "median weaker head's weight on its target", f"one step, d={KIND_D}")  # fmt: skip
        fg.finish(
            ax[1], "log10 step size η", "log10 median population MSE", f"one step, d={KIND_D}"
        )
        fg.finish(ax[2], "gradient step", "log10 population MSE (seed 0, best η)", "many steps")
        out.add("attention_kinds", fig, f"Attention kinds at d={KIND_D}, m={default_m(KIND_D)}, same step-size grid: head specialisation and loss after one step, and population gradient descent.")  # fmt: skip
        out.table(Table(f"Attention kinds (d={KIND_D}, m={default_m(KIND_D)})",
                        ["kind", "one-step success (shared η*)", "log10 η*", "median mass on own target",
                         "median loss", "many-step runs that succeed", "median steps to success"], rows,
                        "Same d, m, seeds and step-size grid for every kind. A best step size at the grid's lower end "
                        "means no step size on the grid improves on (almost) not stepping at all."))  # fmt: skip
        soft = rate.get("softmax", (0, 0))
        soft_ok = soft[1] > 0 and soft[0] / soft[1] >= 0.8
        others = {k: v for k, v in rate.items() if k != "softmax"}
        others_fail = all(k / max(n, 1) <= 0.2 for k, n in others.values())
        soft_steps = _median(
            [r.metrics["steps_to_success"] for r in many if r.config["attention"] == "softmax"]
        )
        slow = True
        for kind in others:
            steps = [r.metrics["steps_to_success"] for r in many if r.config["attention"] == kind]
            done = [s for s in steps if s is not None]
            if done and len(done) * 2 >= len(steps) and _median(done) < 10 * max(soft_steps, 1):
                slow = False
        measured = (f"{scale} scale, d={KIND_D}, m={default_m(KIND_D)}: one-step success "
                    + ", ".join(f"{k}: {_rate(*v)}" for k, v in rate.items())
                    + f"; softmax median steps to success {soft_steps:.0f}; see the table for many steps. "
                    "Rule: reproduced if softmax ≥ 0.8 and every other kind ≤ 0.2 in one step, and no other kind "
                    "succeeds in most runs within 10× softmax's steps; not reproduced if another kind reaches ≥ 0.8 in one step.")  # fmt: skip
        if soft_ok and others_fail and slow:
            verdict = "reproduced"
        elif any(k / max(n, 1) >= 0.8 for k, n in others.values()) or not soft_ok:
            verdict = "not reproduced"
        else:
            verdict = "inconclusive"
        return ClaimResult(
            claim,
            statement,
            measured,
            verdict,
            scale,
            {"one_step": rate, "softmax_steps": soft_steps},
        )

    def _samples(self, results: StudyResults, out: FigureSink, scale: str) -> ClaimResult:
        recs = _ok(results.of(f"{S}/samples"))
        claim = "finite-sample one step needs about O(d) samples"
        statement = "Theory: n = Ω(d⁴ polylog d) samples suffice for one finite-sample step; empirically about O(d)."
        if not recs:
            return ClaimResult(claim, statement, "no finished runs", "inconclusive", scale)
        good = [
            r for r in recs if r.metrics["population_success"] and r.metrics["n_star"] is not None
        ]
        dropped = sum(1 for r in recs if not r.metrics["population_success"])
        unreached = sum(
            1 for r in recs if r.metrics["population_success"] and r.metrics["n_star"] is None
        )
        fig, ax = fg.new_figure(1)
        fg.plot_series(
            ax[0], fg.series(good, "metrics.d", lambda r: math.log10(r.metrics["n_star"]))
        )
        ds = sorted({r.metrics["d"] for r in good})
        if good:
            xs = np.log10([r.metrics["d"] for r in good])
            ys = np.log10([r.metrics["n_star"] for r in good])
            fit = fg.fit_line(xs, ys)
            ax[0].plot(
                ds,
                fit.slope * np.log10(ds) + fit.intercept,
                "k--",
                lw=1,
                label=f"fit: n ∝ d^{fit.slope:.2f}",
            )
        fg.finish(
            ax[0],
            "sequence length d",
            "log10 samples needed n*",
            "finite-sample one step",
            logx=True,
        )
        ax[0].minorticks_off()
        ax[0].set_xticks(ds, [str(d) for d in ds])
        out.add("samples", fig, "Samples needed for one finite-sample step to succeed (first n on a doubling grid that succeeds and stays successful at the next n), against d; step size chosen by the training loss, scored on the exact population loss.")  # fmt: skip
        if len(ds) < 2:
            return ClaimResult(
                claim, statement, f"{scale}: too few d with a measured n*", "inconclusive", scale
            )
        lo, hi = fit.slope_ci
        measured = (f"{scale} scale, d = {ds}: n* median per d " + ", ".join(
            f"d={d}: {_median([r.metrics['n_star'] for r in good if r.metrics['d'] == d]):.0f}" for d in ds)
            + f"; fitted exponent {fit.fmt()} over {len(good)} runs ({dropped} draws failing even on the population "
            f"loss excluded, {unreached} never succeeding on the grid). Rule: reproduced if the exponent's 95% CI lies in "
            "[0.5, 2] (far below 4); not reproduced if the estimate exceeds 2.5; else inconclusive.")  # fmt: skip
        if lo >= 0.5 and hi <= 2.0:
            verdict = "reproduced"
        elif fit.slope > 2.5:
            verdict = "not reproduced"
        else:
            verdict = "inconclusive"
        return ClaimResult(
            claim, statement, measured, verdict, scale, {"exponent": fit.slope, "ci": [lo, hi]}
        )

    def _ffnn(self, results: StudyResults, out: FigureSink, scale: str) -> ClaimResult:
        claim = "FFNN needs Ω(d) parameters, the transformer polylog(d)"
        statement = "A two-layer FFNN needs a number of parameters at least linear in d; the transformer needs O(polylog d)."
        recs = [
            r
            for r in results.records
            if r.sweep.startswith(f"{S}/ffnn_d") and r.status in ("ok", "diverged")
        ]
        if not recs:
            return ClaimResult(claim, statement, "no finished FFNN runs", "inconclusive", scale)
        rows, pts = [], []
        for (d,), rs in sorted(fg.group_by(recs, "config.task.n").items()):
            found = None
            for (w,), ws in sorted(fg.group_by(rs, "config.model.width").items()):
                losses = [r.metrics.get("test_loss") for r in ws]
                ok = sum(1 for v in losses if isinstance(v, (int, float)) and v <= FFNN_TARGET)
                if found is None and ok * 2 >= len(ws) and ok > 0:
                    found = w
            params = None if found is None else found * (d + 1) + found + 1
            pts.append((d, found, params))
            rows.append([d, found if found is not None else "none", params if params is not None else "—",
                         2 * default_m(d)])  # fmt: skip
        out.table(Table("FFNN baseline vs transformer parameters",
                        ["d", "smallest FFNN width reaching test MSE ≤ 0.05", "FFNN parameters", "transformer parameters 2m (one-step rule)"], rows,
                        "Target: the transformer's success bar (population MSE ≤ 0.05); its one-step loss itself is far lower. "
                        "A width counts when at least half its seeds reach the target on the 2,048-string test set."))  # fmt: skip
        have = [(d, p) for d, _, p in pts if p is not None]
        fig, ax = fg.new_figure(1)
        if have:
            ax[0].plot(*zip(*have), "o-", label="FFNN (smallest width)")
        min_m = {
            r.metrics["d"]: r.metrics["m_star"]
            for r in _ok(results.of(f"{S}/min_m"))
            if r.metrics["m_star"]
        }
        if min_m:
            ax[0].plot(
                sorted(min_m),
                [2 * min_m[d] for d in sorted(min_m)],
                "s-",
                label="transformer 2·(smallest m)",
            )
        fg.finish(
            ax[0],
            "sequence length d",
            "trainable parameters",
            "parameters to learn sparse XOR",
            logx=True,
            logy=True,
        )
        out.add("ffnn", fig, "Trainable parameters needed against d: the smallest two-layer ReLU FFNN (Adam, shared Trainer) reaching test MSE ≤ 0.05, and the two-head transformer's 2m.")  # fmt: skip
        if len(have) < 2:
            return ClaimResult(
                claim,
                statement,
                f"{scale}: FFNN reached the target at fewer than two d: {pts}",
                "inconclusive",
                scale,
            )
        fit = fg.fit_line(np.log10([d for d, _ in have]), np.log10([p for _, p in have]))
        tm = (
            fg.fit_line(np.log10(sorted(min_m)), np.log10([2 * min_m[d] for d in sorted(min_m)]))
            if len(min_m) >= 2
            else None
        )
        per_bit = min(p / d for d, p in have)
        largest = max(have)
        t_largest = 2 * min_m[max(min_m)] if min_m else None
        measured = (f"{scale} scale: FFNN smallest width/params " + ", ".join(f"d={d}: {w}/{p}" for d, w, p in pts)
                    + f"; parameters per input bit ≥ {per_bit:.2f} at every d (the dense first layer alone has width·d weights); "
                    f"log-log slope of FFNN params in d {fit.fmt()}"
                    + (f"; transformer 2·m* slope {tm.slope:.2f}, {t_largest} parameters at d={max(min_m)} vs the FFNN's "
                       f"{largest[1]} at d={largest[0]}" if tm else "")
                    + ". Rule: reproduced if the FFNN has ≥ 1 parameter per input bit at every d (Ω(d)) and the "
                    "transformer's 2m* grows with log-log slope ≤ 0.25; not reproduced if FFNN parameters per bit fall "
                    "below 1 or the FFNN log-log slope is < 0.5.")  # fmt: skip
        if per_bit >= 1 and fit.slope >= 0.5 and tm is not None and tm.slope <= 0.25:
            verdict = "reproduced"
        elif per_bit < 1 or fit.slope < 0.5:
            verdict = "not reproduced"
        else:
            verdict = "inconclusive"
        return ClaimResult(
            claim, statement, measured, verdict, scale, {"ffnn_slope": fit.slope, "points": pts}
        )


STUDY = SparseXorStudy()
