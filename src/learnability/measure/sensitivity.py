"""A model's own Boolean function and its sensitivity profile.

`model_outputs(model, n)` evaluates a scalar Boolean model once on all 2^n inputs (index order of
docs/ARCHITECTURE.md, in chunks of `default_chunk` strings unless `chunk` is given); `model_truth_table` thresholds it; `model_profile` counts
per-input sensitivities from that one pass with n gathers (x XOR 2^i), never re-evaluating flipped strings.

Threshold: the model computes f(x) = [T(x) > threshold]; use 0.5 for models trained on 0/1 targets and 0 for
±1 targets or recognisers (the default). Margin ξ: strings with |T(x) − threshold| < ξ are *undecided*; they are
counted apart (`undecided`) and left out of the profile. For a decided x, a neighbour x^{⊕i} counts as a change
when it is decided with the other value *or undecided* (the output does not confidently keep its value).

Above `exact_limit` the profile is estimated from `samples` uniform strings, each evaluated with its n
neighbours (n+1 forwards per sample); counts are then fractions of 2^n with normal-approximation 95% CIs
(a tiny K_0 cannot be estimated this way — its CI says so by containing 0), and `accept_fraction` is the
share of the sampled strings the model accepts. `exact_limit=0` samples at any n.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from learnability.boolean.analysis import profile_from_truth_table
from learnability.device import resolve_device
from learnability.errors import UserError

EXACT_LIMIT = 20

# Strings per forward chunk: about CHUNK_ELEMENTS activations of the widest layer (strings × tokens ×
# width) keep a chunk's working set cache-sized. Measured with bench/bench_volume.py on a 2-core CPU:
# at n = 16, d = 128 a 256-string chunk ran 2× faster than the former fixed 65,536; at d = 16 the
# curve is flat between 256 and 2,048 strings.
CHUNK_ELEMENTS = 1 << 18
MIN_CHUNK, MAX_CHUNK = 64, 1 << 16


def default_chunk(n: int, d_model: int, d_ff: int | None = None) -> int:
    """Strings per forward chunk for an n-bit input on a model of width d_model (MLP width d_ff): a
    power of two near CHUNK_ELEMENTS / ((n + 1) · max(d_model, d_ff)), within [MIN_CHUNK, MAX_CHUNK]."""
    width = max(d_model, d_ff or 0, 1)
    target = CHUNK_ELEMENTS / ((n + 1) * width)
    chunk = 1 << max(int(math.log2(max(target, 1.0))), 0)
    return int(min(max(chunk, MIN_CHUNK), MAX_CHUNK))


def _model_chunk(model: nn.Module, n: int) -> int:
    config = getattr(model, "config", None)
    d = getattr(config, "d_model", None)
    if not isinstance(d, int):
        return 4096
    ff = getattr(config, "d_ff", None)
    return default_chunk(n, d, ff if isinstance(ff, int) else None)


def all_bit_strings(n: int, device: torch.device | str = "cpu") -> torch.Tensor:
    """(2^n, n) long tokens, row i = the bits of i (position k = bit k)."""
    codes = torch.arange(2**n, device=resolve_device(device), dtype=torch.int64)
    return (codes.unsqueeze(1) >> torch.arange(n, device=codes.device)) & 1


def _scalar_output(model: nn.Module, tokens: torch.Tensor) -> torch.Tensor:
    out = model(tokens)
    if out.dim() != 1:
        raise UserError(
            f"the model's output has shape {tuple(out.shape)}; a sensitivity profile needs a scalar model (B,)"
        )
    return out


@torch.no_grad()
def model_outputs(
    model: nn.Module, n: int, device: torch.device | str = "cpu", chunk: int | None = None
) -> torch.Tensor:
    """T(x) for all 2^n inputs in index order: (2^n,) float on `device` (`chunk` None: measured default)."""
    if not 1 <= n <= 26:
        raise UserError(f"n = {n} is not allowed for an exact model truth table; allowed 1..26")
    device = resolve_device(device)
    chunk = chunk or _model_chunk(model, n)
    was = model.training
    model.eval()
    tokens = all_bit_strings(n, device)
    out = torch.cat(
        [_scalar_output(model, tokens[s : s + chunk]) for s in range(0, len(tokens), chunk)]
    )
    model.train(was)
    return out.float()


def model_truth_table(
    model: nn.Module,
    n: int,
    device: torch.device | str = "cpu",
    chunk: int | None = None,
    threshold: float = 0.0,
) -> torch.Tensor:
    """The thresholded function [T(x) > threshold] on all 2^n inputs: (2^n,) uint8 on `device`."""
    return (model_outputs(model, n, device, chunk) > threshold).to(torch.uint8)


@dataclass
class ModelProfile:
    """Sensitivity profile of a model's thresholded function.

    counts[k] = #{decided x : s(x) = k} (exact) or its estimate (sampled, then `fraction`/`ci` are per-k).
    """

    n: int
    exact: bool
    counts: list[float]
    undecided: float
    average_sensitivity: float
    max_sensitivity: int
    zero_sensitivity: float  # K_0
    fraction: list[float] = field(default_factory=list)  # counts / 2^n
    ci: list[tuple[float, float]] = field(
        default_factory=list
    )  # 95% CI of each fraction (sampled only)
    truth_table: torch.Tensor | None = field(default=None, repr=False)
    samples: int = 0
    # sampled only: the share of the sampled strings with T(x) > threshold (margin aside), an estimate
    # of the accepted fraction (× 2^n: the balance a same-balance null needs)
    accept_fraction: float | None = None

    def summary(self) -> dict[str, Any]:
        """JSON-friendly numbers (no tensors)."""
        out = {
            "n": self.n,
            "exact": self.exact,
            "counts": self.counts,
            "undecided": self.undecided,
            "average_sensitivity": self.average_sensitivity,
            "max_sensitivity": self.max_sensitivity,
            "zero_sensitivity": self.zero_sensitivity,
        }
        if not self.exact:
            out["samples"] = self.samples
            out["fraction_ci"] = [list(c) for c in self.ci]
        return out

    def analysis(self) -> Any:
        """The Boolean-analysis profile of the thresholded truth table (exact, margin 0 only)."""
        if self.truth_table is None:
            raise UserError(
                "no exact truth table: the profile was sampled (n above the exact limit)"
            )

        return profile_from_truth_table(self.truth_table.cpu().numpy(), self.n)


def _sensitivities(labels: torch.Tensor, n: int) -> torch.Tensor:
    """labels (2^n,) int8 in {0, 1, -1 undecided} → s(x) (2^n,) with undecided neighbours counting as changes."""
    idx = torch.arange(2**n, device=labels.device)
    s = torch.zeros(2**n, dtype=torch.int64, device=labels.device)
    for i in range(n):
        s += (labels[idx ^ (1 << i)] != labels).to(torch.int64)
    return s


def _labels(out: torch.Tensor, threshold: float, margin: float) -> torch.Tensor:
    lab = (out > threshold).to(torch.int8)
    if margin > 0:
        lab[(out - threshold).abs() < margin] = -1
    return lab


@torch.no_grad()
def model_profile(
    model: nn.Module,
    n: int,
    device: torch.device | str = "cpu",
    margin: float = 0.0,
    threshold: float = 0.0,
    exact_limit: int = EXACT_LIMIT,
    samples: int = 4096,
    generator: torch.Generator | None = None,
    chunk: int | None = None,
) -> ModelProfile:
    """Sensitivity profile of the model's function [T(x) > threshold] (see the module docstring)."""
    if margin < 0:
        raise UserError(f"margin = {margin} is not allowed; it must be ≥ 0")
    device = resolve_device(device)
    if n <= exact_limit:
        out = model_outputs(model, n, device, chunk)
        lab = _labels(out, threshold, margin)
        s = _sensitivities(lab, n)
        decided = lab >= 0
        counts = torch.bincount(s[decided], minlength=n + 1).tolist()
        total = int(decided.sum())
        avg = float(s[decided].float().mean()) if total else float("nan")
        return ModelProfile(
            n=n,
            exact=True,
            counts=[float(c) for c in counts],
            undecided=float(2**n - total),
            average_sensitivity=avg,
            max_sensitivity=max((k for k, c in enumerate(counts) if c > 0), default=0),
            zero_sensitivity=float(counts[0]),
            fraction=[c / 2**n for c in counts],
            truth_table=(out > threshold).to(torch.uint8) if margin == 0 else None,
        )
    if not isinstance(samples, int) or isinstance(samples, bool) or samples < 1:
        raise UserError(
            f"samples={samples!r} is not allowed; a sampled profile needs an integer ≥ 1"
        )
    gen = generator if generator is not None else torch.Generator().manual_seed(0)
    x = torch.randint(0, 2, (samples, n), generator=gen).to(device)
    flips = x.unsqueeze(1).repeat(
        1, n + 1, 1
    )  # (S, n+1, n): row 0 = x, row i+1 = x with bit i flipped
    ar = torch.arange(n, device=device)
    flips[:, ar + 1, ar] ^= 1
    flat = flips.reshape(-1, n)
    was = model.training
    model.eval()
    step = max((chunk or _model_chunk(model, n)) // (n + 1), 1) * (n + 1)
    out = torch.cat(
        [_scalar_output(model, flat[s : s + step]) for s in range(0, len(flat), step)]
    ).float()
    model.train(was)
    accept_fraction = float((out.reshape(samples, n + 1)[:, 0] > threshold).double().mean())
    lab = _labels(out, threshold, margin).reshape(samples, n + 1)
    decided = lab[:, 0] >= 0
    s = (lab[:, 1:] != lab[:, :1]).sum(1)
    scale = 2.0**n
    fractions, cis = [], []
    for k in range(n + 1):
        p = float(((s == k) & decided).float().mean())
        half = 1.96 * math.sqrt(max(p * (1 - p), 0.0) / samples)
        fractions.append(p)
        cis.append((max(p - half, 0.0), min(p + half, 1.0)))
    counts = [f * scale for f in fractions]
    return ModelProfile(
        n=n,
        exact=False,
        counts=counts,
        undecided=float((~decided).float().mean()) * scale,
        average_sensitivity=float(s[decided].float().mean())
        if bool(decided.any())
        else float("nan"),
        max_sensitivity=int(s[decided].max()) if bool(decided.any()) else 0,
        zero_sensitivity=counts[0],
        fraction=fractions,
        ci=cis,
        samples=samples,
        accept_fraction=accept_fraction,
    )


__all__ = [
    "ModelProfile",
    "all_bit_strings",
    "default_chunk",
    "model_outputs",
    "model_profile",
    "model_truth_table",
]
