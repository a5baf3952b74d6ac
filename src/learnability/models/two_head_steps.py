"""Gradient steps of the two-head sparse-XOR model (`learnability.models.two_head`), in closed form.

Nothing here samples over 2^d inputs or trains with an optimiser: a population step is the exact gradient of
the closed-form loss, a finite-sample step the exact gradient on n given strings, and population gradient
descent repeats the exact step. What a step did is recorded as raw numbers (loss, specialisation), so the
analysis can apply any success criterion afterwards.

- `one_step_scan`: one step at every step size of a grid. After one step the scores are s − η·δ with
  δ = ∇ @ Vᵀ, so a grid of G step sizes costs one O(dm) gradient plus O(Gd), not O(Gdm).
- `population_descent`: T population steps at every step size of a grid at once; the first step at which
  each one succeeds.
- `specialisation`: the weaker head's weight on its own target, for the better head → target assignment.

Step sizes are given as η or, with `theory_scale`, as c = η / (d²·ln d): the order of the step size in the
paper's Theorem 2, so the same c grid means the same thing at every d.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from learnability.errors import UserError
from learnability.models.two_head import (
    attention_vjp,
    attention_weights,
    head_masses,
    population_grad,
    population_grad_weights,
    population_loss,
    sample_loss,
)


@dataclass
class StepGrid:
    """log10 step sizes from `lo` to `hi`, `per_decade` points a decade (in units of η or of c);
    per_decade 1/3 gives one point every three decades."""

    lo: float = -3.0
    hi: float = 7.0
    per_decade: float = 4

    def log10(self) -> Tensor:
        if self.hi < self.lo or not self.per_decade > 0:
            raise UserError(
                f"step grid {self.lo}..{self.hi} x{self.per_decade}/decade is invalid; "
                "need lo <= hi and per_decade > 0"
            )
        n = round((self.hi - self.lo) * self.per_decade) + 1
        return torch.linspace(self.lo, self.hi, n, dtype=torch.float64)


@dataclass
class Criterion:
    """Success of a step: population loss ≤ `loss` (the zero predictor has 1) and the weaker head puts
    ≥ `mass` of its weight on its own target (for the better of the two head → target assignments)."""

    loss: float = 0.05
    mass: float = 0.9

    def __call__(self, loss: Tensor, spec: Tensor) -> Tensor:
        return (loss <= self.loss) & (spec >= self.mass)


def theory_scale(d: int) -> float:
    """d²·ln d: the order of the one-step size in Theorem 2 (η = c·d²·ln d)."""
    return float(d) * float(d) * math.log(d)


def default_m(d: int) -> int:
    """The project's m ∝ log² d rule for experiments at a fixed m: ⌈log2(d)² / 2⌉ (at least 4)."""
    return max(4, math.ceil(math.log2(d) ** 2 / 2))


def specialisation(weights: Tensor, p: int, q: int) -> Tensor:
    """(...) weight of the weaker head on its own target, for the better assignment; weights (..., 2, d)."""
    m = head_masses(weights, p, q)  # (..., 2, 2) = [[a_p, a_q], [b_p, b_q]]
    straight = torch.minimum(m[..., 0, 0], m[..., 1, 1])
    crossed = torch.minimum(m[..., 0, 1], m[..., 1, 0])
    return torch.maximum(straight, crossed)


CHUNK_ELEMENTS = 2**22  # step sizes per chunk × 2 × d: bounds a scan's memory (32 MB a temporary)


@dataclass
class Scan:
    """One step at every step size: population loss (G,) and specialisation (G,) after the step; the loss
    on a selection set (G,) when one was given; `weights(i)` rebuilds the weights (2, d) at step size i."""

    etas: Tensor
    s0: Tensor  # (2, d) scores at the starting point
    delta: Tensor  # (2, d): a step of size η moves the scores by −η·delta
    kind: str
    loss: Tensor
    spec: Tensor
    select_loss: Tensor | None

    def weights(self, i: int) -> Tensor:
        return attention_weights(self.s0 - self.etas[i] * self.delta, self.kind)


def scan_scores(
    s0: Tensor,
    delta: Tensor,
    etas: Tensor,
    kind: str,
    p: int,
    q: int,
    x_select: Tensor | None = None,
    y_select: Tensor | None = None,
) -> tuple[Tensor, Tensor, Tensor | None]:
    """Population loss (G,) and specialisation (G,) of the weights σ(s0 − η·delta) for each η (G,); with a
    selection set (x (n, d), y (n,)) also its loss (G,). Non-finite losses become +inf."""
    d = s0.shape[-1]
    etas = etas.to(s0.device, s0.dtype)
    chunk = max(1, CHUNK_ELEMENTS // (2 * d))
    losses, specs, chooser = [], [], []
    for start in range(0, len(etas), chunk):
        e = etas[start : start + chunk]
        w = attention_weights(
            torch.addcmul(s0, e[:, None, None], delta, value=-1.0), kind
        )  # (g, 2, d)
        losses.append(population_loss(w[:, 0], w[:, 1], p, q))
        specs.append(specialisation(w, p, q))
        if x_select is not None and y_select is not None:
            chooser.append(sample_loss(w, x_select, y_select))
    loss = torch.nan_to_num(torch.cat(losses), nan=math.inf, posinf=math.inf)
    spec = torch.nan_to_num(torch.cat(specs), nan=0.0)
    sel = torch.nan_to_num(torch.cat(chooser), nan=math.inf) if chooser else None
    return loss, spec, sel


def one_step_scan(V: Tensor, params: Tensor, kind: str, p: int, q: int, etas: Tensor) -> Scan:
    """One population step from params = [θ; θ̃] (2, m) at every step size η (G,); V (d, m)."""
    with torch.no_grad():
        _, grad = population_grad(V, params, kind, p, q)
        s0, delta = params @ V.T, grad @ V.T  # (2, d) each
        loss, spec, _ = scan_scores(s0, delta, etas, kind, p, q)
    return Scan(etas, s0, delta, kind, loss, spec, None)


@dataclass
class Descent:
    """Population gradient descent at G step sizes: `first` (G,) the first step at which each run met the
    criterion (None: never within the budget), `final` (G,) the last loss, `curve` (T+1,) the loss of the
    run that succeeded first (or ended lowest)."""

    first: list[int | None]
    final: list[float]
    curve: list[float]
    best: int
    steps_run: int


def population_descent(
    V: Tensor,
    params: Tensor,
    kind: str,
    p: int,
    q: int,
    etas: Tensor,
    steps: int,
    criterion: Criterion,
) -> Descent:
    """`steps` population gradient steps from params (2, m) at every step size η (G,) at once.

    A run whose loss or gradient stops being finite is frozen (its later losses are +inf). Stops early when
    every live run has succeeded."""
    if steps < 1:
        raise UserError(f"steps={steps} is invalid; need at least 1 gradient step")
    G = len(etas)
    etas = etas.to(V.device, V.dtype)
    theta = params.detach().expand(G, *params.shape).clone()  # (G, 2, m)
    first: list[int | None] = [None] * G
    alive = torch.ones(G, dtype=torch.bool, device=V.device)
    curves: list[Tensor] = []
    with torch.no_grad():
        for t in range(steps + 1):
            scores = theta @ V.T  # (G, 2, d)
            w = attention_weights(scores, kind)
            loss = population_loss(w[:, 0], w[:, 1], p, q)
            ga, gb = population_grad_weights(w[:, 0], w[:, 1], p, q)
            grad = attention_vjp(scores, w, torch.stack([ga, gb], -2), kind) @ V  # (G, 2, m)
            spec = torch.nan_to_num(specialisation(w, p, q), nan=0.0)
            loss = torch.nan_to_num(loss, nan=math.inf, posinf=math.inf)
            alive &= torch.isfinite(loss) & torch.isfinite(grad).flatten(1).all(1)
            curves.append(torch.where(alive, loss, torch.full_like(loss, math.inf)))
            for i in torch.nonzero(alive & criterion(loss, spec)).flatten().tolist():
                if first[i] is None:
                    first[i] = t
            if t == steps or all(f is not None or not a for f, a in zip(first, alive.tolist())):
                break
            step = torch.where(alive, etas, torch.zeros_like(etas))[:, None, None]
            theta = theta - step * torch.nan_to_num(grad, nan=0.0, posinf=0.0, neginf=0.0)
    hist = torch.stack(curves)  # (T', G)
    best = min(range(G), key=lambda i: (first[i] is None, first[i] or 0, float(hist[-1, i])))
    return Descent(
        first,
        [float(v) for v in hist[-1].tolist()],
        [float(v) for v in hist[:, best].tolist()],
        best,
        hist.shape[0] - 1,
    )


__all__ = [
    "CHUNK_ELEMENTS", "Criterion", "Descent", "Scan", "StepGrid", "default_m", "one_step_scan",
    "population_descent", "scan_scores", "specialisation", "theory_scale",
]  # fmt: skip
