"""A scalar recogniser measured on every string: its logit table, decisions with a margin, the
sensitivity profile of those decisions, one-bit changes, and the LayerNorm input statistics on the way.

    table = logit_table(model, n)                       # (2^n,) float32, index bit k = x_k
    labels = decision_labels(table, margin)             # int8: 1 accept, 0 reject, −1 undecided
    counts = label_profile(labels, n)                   # K_0..K_n over decided strings
    changes = one_bit_changes(table, n)                 # (n,) max_x |T(x) − T(x^{⊕i})|

Decisions follow `measure.model_profile`: a string is undecided when |T| < ξ, else accepted iff
T > 0; s(x) counts neighbours with another label (an undecided neighbour counts as a change), over
decided x. At ξ = 0 nothing is undecided and this is the plain profile of [T > 0].

`LayerNormWatch` records, over every LayerNorm input row the forward meets, the smallest variance, the
largest normaliser 1/√(var + eps) and the rows with no normaliser at eps = 0 (zero variance: the model
applies 0 and goes on). It uses tensor reductions only, so it also works inside `torch.func.vmap`.

Many models of one shape at once: `ensemble_logit_tables` stacks their parameters and runs one
`vmap`ped forward. Measured on a 2-core CPU (bench/bench_volume.py) it is faster than a loop only for
short strings (n ≤ `ENSEMBLE_MAX_N_CPU`), where per-call overhead dominates; callers use it there.
"""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn
from torch.func import functional_call, stack_module_state, vmap

from learnability.measure.sensitivity import all_bit_strings, default_chunk
from learnability.models.layers import LayerNorm

ENSEMBLE_MAX_N_CPU = 6  # measured: the vmapped ensemble beats a loop on CPU only up to here


@dataclass
class LayerNormStats:
    """Over every LayerNorm input row of a forward pass (all strings, positions and LayerNorms)."""

    rows: int = 0
    degenerate: int = 0  # rows with no normaliser (eps = 0 and zero variance)
    min_var: float = math.inf  # smallest biased variance of a row
    max_normaliser: float = 0.0  # largest 1/√(var + eps) over rows that have one

    @property
    def min_std(self) -> float:
        return math.sqrt(self.min_var) if math.isfinite(self.min_var) else math.nan

    def merge(self, other: LayerNormStats) -> None:
        self.rows += other.rows
        self.degenerate += other.degenerate
        self.min_var = min(self.min_var, other.min_var)
        self.max_normaliser = max(self.max_normaliser, other.max_normaliser)


def _row_stats(x: Tensor, eps: float) -> Tensor:
    """(4,) [rows, degenerate rows, min variance, max normaliser] of LayerNorm input x (..., D).
    The normaliser 1/√(var + eps) is largest at the smallest variance, so no per-row root is taken."""
    # the centred form is exact enough and ~10× faster than Tensor.var over a short last dim on CPU
    var = (x - x.mean(-1, keepdim=True)).pow(2).mean(-1)
    rows = torch.full_like(var.sum(), float(var.numel()))
    if eps == 0:
        # the model's rule: zero variance, or all entries equal (a rounded mean leaves ~1e-16)
        degenerate = (var == 0) | (x == x[..., :1]).all(-1)
        usable = torch.where(degenerate, torch.full_like(var, math.inf), var).min()
        count = degenerate.sum().to(var.dtype)
    else:
        usable, count = var.min(), torch.zeros_like(rows)
    return torch.stack([rows, count, var.min(), (usable + eps).rsqrt()])


def _reduce(parts: Tensor) -> LayerNormStats:
    """parts (..., 4) of `_row_stats` → one LayerNormStats."""
    flat = parts.reshape(-1, 4).double()
    if flat.numel() == 0:
        return LayerNormStats()
    return LayerNormStats(
        int(flat[:, 0].sum()),
        int(flat[:, 1].sum()),
        float(flat[:, 2].min()),
        float(flat[:, 3].max()),
    )


class LayerNormWatch:
    """Collects `_row_stats` of every LayerNorm input through forward pre-hooks (a context manager)."""

    def __init__(self, model: nn.Module) -> None:
        self.model = model
        self.parts: list[Tensor] = []
        self.handles: list = []

    def _hook(self, module: nn.Module, args: tuple) -> None:
        self.parts.append(_row_stats(args[0], float(module.eps)))  # type: ignore[arg-type]

    def __enter__(self) -> LayerNormWatch:
        self.handles = [
            m.register_forward_pre_hook(self._hook)
            for m in self.model.modules()
            if isinstance(m, LayerNorm)
        ]
        return self

    def __exit__(self, *exc: object) -> None:
        for h in self.handles:
            h.remove()
        self.handles = []

    def stats(self) -> LayerNormStats:
        return _reduce(torch.stack(self.parts)) if self.parts else LayerNormStats()


def set_layernorm_eps(model: nn.Module, eps: float) -> None:
    """Set eps of every LayerNorm (the same weights profiled under several eps)."""
    for m in model.modules():
        if isinstance(m, LayerNorm):
            m.eps = float(eps)


def _width(model: nn.Module) -> tuple[int, int]:
    config = getattr(model, "config", None)
    d = int(getattr(config, "d_model", 64))
    return d, int(getattr(config, "d_ff", 2 * d))


@torch.no_grad()
def logit_table(
    model: nn.Module,
    n: int,
    device: torch.device | str = "cpu",
    chunk: int | None = None,
    with_stats: bool = True,
) -> tuple[Tensor, LayerNormStats]:
    """T(x) on all 2^n strings ((2^n,) float32 on `device`) and the LayerNorm statistics of that pass.
    `chunk` strings per forward (None: `default_chunk`, chosen by measurement)."""
    d, ff = _width(model)
    chunk = chunk or default_chunk(n, d, ff)
    tokens = all_bit_strings(n, device)
    was = model.training
    model.eval()
    watch = LayerNormWatch(model)
    try:
        if with_stats:
            watch.__enter__()
        out = torch.cat([model(tokens[s : s + chunk]) for s in range(0, len(tokens), chunk)])
    finally:
        watch.__exit__()
        model.train(was)
    return out.float(), watch.stats() if with_stats else LayerNormStats()


@torch.no_grad()
def ensemble_logit_tables(
    models: Sequence[nn.Module],
    n: int,
    device: torch.device | str = "cpu",
    chunk: int | None = None,
) -> tuple[Tensor, list[LayerNormStats]]:
    """`logit_table` of many models of one shape at once: ((M, 2^n) float32, one stats per model).

    The parameters are stacked (M, ...) and one `torch.func.vmap` of the model's forward runs all of
    them on each chunk of strings; LayerNorm statistics come back as auxiliary outputs."""

    models = list(models)
    params, buffers = stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta").eval()
    norms = [m for m in base.modules() if isinstance(m, LayerNorm)]
    d, ff = _width(models[0])
    chunk = chunk or max(default_chunk(n, d, ff) // len(models), 16)

    def one(p: dict, b: dict, x: Tensor) -> tuple[Tensor, Tensor]:
        parts: list[Tensor] = []
        hooks = [
            m.register_forward_pre_hook(
                lambda mod, args: parts.append(_row_stats(args[0], mod.eps))
            )
            for m in norms
        ]
        try:
            out = functional_call(base, (p, b), (x,))
        finally:
            for h in hooks:
                h.remove()
        return out, torch.stack(parts) if parts else out.new_zeros(0, 4)

    run = vmap(one, in_dims=(0, 0, None))
    tokens = all_bit_strings(n, device)
    outs, stats = [], []
    with (
        warnings.catch_warnings()
    ):  # torch warns that fused attention falls back to a loop under vmap
        warnings.filterwarnings("ignore", message=".*batching rule.*")
        for s in range(0, len(tokens), chunk):
            out, part = run(params, buffers, tokens[s : s + chunk])
            outs.append(out)
            stats.append(part)
    table = torch.cat(outs, dim=1).float()
    per_model = torch.cat(stats, dim=1)  # (M, calls, 4)
    return table, [_reduce(per_model[j]) for j in range(len(models))]


# -- tables -------------------------------------------------------------------------------------------------
def _pairs(table: Tensor, i: int) -> Tensor:
    """(2^(n−i−1), 2, 2^i) view whose two halves along dim 1 are x and x^{⊕i}."""
    return table.view(-1, 2, 1 << i)


def one_bit_changes(table: Tensor, n: int) -> Tensor:
    """(n,) max over x of |T(x) − T(x^{⊕i})| for each bit i (one streaming pass per bit)."""
    out = torch.empty(n, dtype=table.dtype, device=table.device)
    for i in range(n):
        pairs = _pairs(table, i)
        out[i] = (pairs[:, 1] - pairs[:, 0]).abs().max()
    return out


def mean_one_bit_change(table: Tensor, n: int) -> float:
    """E_x E_i |T(x) − T(x^{⊕i})| over all 2^n strings and n bits."""
    total = 0.0
    for i in range(n):
        pairs = _pairs(table, i)
        total += float((pairs[:, 1] - pairs[:, 0]).abs().mean())
    return total / n


def decision_labels(table: Tensor, margin: float = 0.0) -> Tensor:
    """int8 labels: 1 accept (T > 0), 0 reject, −1 undecided (|T| < margin; none at margin 0).
    A non-finite T is a reject (NaN compares False); callers flag non-finite tables themselves."""
    labels = (table > 0).to(torch.int8)
    if margin > 0:
        labels[table.abs() < margin] = -1
    return labels


def label_profile(labels: Tensor, n: int) -> np.ndarray:
    """K_0..K_n (int64, length n + 1) over decided strings; an undecided neighbour counts as a change."""
    s = torch.zeros(labels.shape, dtype=torch.int16, device=labels.device)
    for i in range(n):
        pairs = _pairs(labels, i)
        changed = (pairs[:, 0] != pairs[:, 1]).to(torch.int16)  # (2^(n−i−1), 2^i)
        _pairs(s, i).add_(changed.unsqueeze(1))
    decided = labels >= 0
    counts = torch.bincount(s[decided].long(), minlength=n + 1)
    return counts.cpu().numpy().astype(np.int64)


__all__ = [
    "ENSEMBLE_MAX_N_CPU",
    "LayerNormStats",
    "LayerNormWatch",
    "decision_labels",
    "ensemble_logit_tables",
    "label_profile",
    "logit_table",
    "mean_one_bit_change",
    "one_bit_changes",
    "set_layernorm_eps",
]
