"""Study `volume`: Kövér, Butoi, Svete, Hahn, Cotterell (ICML 2026), "Understanding the Parameter Space
Geometry (Volume) of Transformers Encoding Boolean Functions" (arXiv 2606.08768).

The paper's experimental numbers are not public in text form, so the protocol here is the project's own
(SPEC §3, issue 6), and the report says so.

Model (the paper's recogniser): a `BooleanTransformer` reading x ∈ {0,1}^N with an EOS token appended;
logit T(x) = wᵀ y_EOS + b; x is accepted iff T(x) > ξ, rejected iff T(x) < −ξ, and *undecided* otherwise
(ξ = `margin`, default 0, where only an exact T = 0 is undecided). The Boolean function profiled is
f(x) = [T(x) > 0]; with ξ > 0 we also count `k0_decided`, the strings that are decided and whose N
neighbours are all decided the same way (zero sensitivity that survives the margin).

Jobs (registered here, run through the shared sweep machinery):
- `volume.random_profiles` (`RandomProfilesConfig`): `models` random transformers of one cell (N, init
  scheme, init scale, LayerNorm eps, depth, width, heads), each evaluated ONCE on all 2^N strings in
  batches (`logit_table`), then profiled from its truth table with `learnability.boolean`'s
  `profile_from_truth_table`, and its logit table scanned for the largest one-bit change
  max_{x,i} |T(x) − T(x^{⊕i})| with the same XOR-half trick (the table viewed as (2^(N−i−1), 2, 2^i)).
  Model j of a cell is initialised from seed `seed·1_000_003 + j`, so cells that differ only in eps (or
  margin) hold the *same* weights: eps = 0 vs eps > 0 is a paired comparison.
  With eps = 0 a LayerNorm row of zero variance is "degenerate" (the model applies normaliser 0 and goes
  on); the job counts those rows per model with forward pre-hooks on the LayerNorms (the same rule the
  model's `Trace.degenerate` uses), without paying for a full trace.
- `volume.random_functions` (`RandomFunctionsConfig`): the control. Draws `count` uniformly random
  functions on N bits (seeded) and profiles each exactly, so the K_0 > 0 rate of random functions is
  measured at the same N, not only quoted as 1 − 1/e.
- Training uses the shared `train` job (sweep `volume/trained`) with the `model_profile` measurement.

Claims and the rules that decide their verdicts are written next to each claim in `VolumeStudy.analyse`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import torch
from torch import Tensor

from learnability.errors import UserError, check_choice
from learnability.studies.base import ClaimResult, FigureSink, Study, StudyResults, Table
from learnability.sweep.jobs import RunContext, register_job

INIT_SCHEMES = ("uniform", "gaussian", "xavier_uniform", "xavier_normal")
INIT_LABELS = {
    "uniform": "uniform [−B, B]",
    "gaussian": "Gaussian σ",
    "xavier_uniform": "Xavier uniform",
    "xavier_normal": "Xavier normal",
}
EXACT_LIMIT = 22  # 2^22 strings per model: beyond this a random-model profile is not "exact and quick"
ONE_MINUS_INV_E = 1.0 - math.exp(-1.0)


# --------------------------------------------------------------------------------------------------
# configs


@dataclass
class RandomProfilesConfig:
    """One cell of random transformers: `models` recognisers of N-bit strings, profiled exactly."""

    n: int = 10  # string length N (the EOS token comes on top)
    init: Literal["uniform", "gaussian", "xavier_uniform", "xavier_normal"] = "xavier_normal"
    init_scale: float = 10.0  # B of uniform [−B, B], σ of the Gaussian (Bhattamishra et al. 2023: 10)
    ln_eps: float = 0.0  # LayerNorm eps; exactly 0 allowed (the paper's main case)
    ln: Literal["post", "pre"] = "post"
    depth: int = 2  # number of layers L
    width: int = 16  # d_model D
    heads: int = 2
    d_ff: int | None = None  # MLP width; None = 2·width
    embedding: Literal["add", "concat"] = "add"
    models: int = 32  # random models in this cell
    margin: float = 0.0  # ξ: strings with |T| ≤ ξ are undecided (counted apart)
    seed: int = 0
    batch_size: int = 16384  # strings per forward batch

    def __post_init__(self) -> None:
        check_choice("init scheme", self.init, INIT_SCHEMES)
        if not 1 <= self.n <= EXACT_LIMIT:
            raise UserError(
                f"n={self.n} is not allowed; random profiles are exact over all 2^n strings, n in 1..{EXACT_LIMIT}"
            )
        for name in ("depth", "width", "heads", "models", "batch_size"):
            if getattr(self, name) < 1:
                raise UserError(f"{name}={getattr(self, name)} is not allowed; it must be >= 1")
        if not self.ln_eps >= 0:
            raise UserError(f"ln_eps={self.ln_eps} is not allowed; it must be >= 0 (0 allowed)")
        if not self.margin >= 0:
            raise UserError(f"margin={self.margin} is not allowed; it must be >= 0")
        if self.d_ff is not None and self.d_ff < 1:
            raise UserError(f"d_ff={self.d_ff} is not allowed; it must be >= 1 (or null for 2·width)")

    def model_config(self) -> Any:
        from learnability.models import BooleanTransformerConfig

        return BooleanTransformerConfig(
            n_layers=self.depth,
            n_heads=self.heads,
            d_model=self.width,
            d_ff=self.d_ff or 2 * self.width,
            ln=self.ln,
            ln_eps=self.ln_eps,
            embedding=self.embedding,
            positions="learned",
            max_len=self.n,
            readout="eos",
            init=self.init,
            init_scale=self.init_scale,
        )


@dataclass
class RandomFunctionsConfig:
    """The control: `count` uniformly random Boolean functions on N bits."""

    n: int = 10
    count: int = 1000
    seed: int = 0

    def __post_init__(self) -> None:
        if not 1 <= self.n <= EXACT_LIMIT:
            raise UserError(f"n={self.n} is not allowed; n in 1..{EXACT_LIMIT}")
        if self.count < 1:
            raise UserError(f"count={self.count} is not allowed; it must be >= 1")


# --------------------------------------------------------------------------------------------------
# measurements on logit tables


def all_tokens(n: int, device: torch.device | str = "cpu") -> Tensor:
    """(2^n, n) long: row i is x(i) in the project's bit order (bit k of i at position k)."""
    from learnability.boolean import all_inputs

    return torch.from_numpy(all_inputs(n)).to(device=device, dtype=torch.long)


class _DegenerateCounter:
    """Counts zero-variance LayerNorm rows (eps = 0) through forward pre-hooks: the rule of
    `models.layers.LayerNorm` (biased variance exactly 0, or all entries equal), with no trace."""

    def __init__(self, model: torch.nn.Module) -> None:
        from learnability.models.layers import LayerNorm

        self.count = 0
        self.handles = [
            m.register_forward_pre_hook(self._hook)
            for m in model.modules()
            if isinstance(m, LayerNorm) and m.eps == 0
        ]

    def _hook(self, module: torch.nn.Module, args: tuple) -> None:
        x = args[0]
        centred = x - x.mean(-1, keepdim=True)
        bad = (centred.pow(2).mean(-1) == 0) | (x == x[..., :1]).all(-1)
        self.count += int(bad.sum())

    def close(self) -> None:
        for h in self.handles:
            h.remove()


@torch.inference_mode()
def logit_table(
    model: torch.nn.Module, n: int, device: torch.device | str = "cpu", batch_size: int = 16384,
    tokens: Tensor | None = None,
) -> tuple[Tensor, int]:
    """The model's output on all 2^n strings: ((2^n,) float32 logits in bit order, degenerate rows).

    One batched forward pass over the whole input space; `tokens` (2^n, n) may be passed in to reuse.
    """
    x = all_tokens(n, device) if tokens is None else tokens
    counter = _DegenerateCounter(model)
    try:
        out = torch.cat([model(chunk).reshape(-1) for chunk in x.split(batch_size)])
    finally:
        counter.close()
    return out.float(), counter.count


def one_bit_changes(table: Tensor, n: int) -> Tensor:
    """(n,) max over x of |T(x) − T(x^{⊕i})| for each bit i, from a (2^n,) table.

    Viewed as (2^(n−i−1), 2, 2^i) the two halves along dim 1 are exactly the pairs (x, x^{⊕i}), so
    each bit is one streaming pass: no index arrays, no re-evaluation of the model.
    """
    out = torch.empty(n, dtype=table.dtype, device=table.device)
    for i in range(n):
        pairs = table.view(-1, 2, 1 << i)
        out[i] = (pairs[:, 1] - pairs[:, 0]).abs().max()
    return out


def mean_one_bit_change(table: Tensor, n: int) -> float:
    """E_x E_i |T(x) − T(x^{⊕i})| (each unordered pair counted once per direction: the same mean)."""
    total = 0.0
    for i in range(n):
        pairs = table.view(-1, 2, 1 << i)
        total += float((pairs[:, 1] - pairs[:, 0]).abs().mean())
    return total / n


def decided_zero_sensitive(table: Tensor, n: int, margin: float) -> tuple[int, int]:
    """(undecided strings, decided strings whose n neighbours are all decided alike).

    Accept iff T > ξ, reject iff T < −ξ, undecided iff |T| ≤ ξ (with ξ = 0 only T = 0 exactly)."""
    side = (table > margin).to(torch.int8) - (table < -margin).to(torch.int8)
    ok = side != 0
    for i in range(n):
        pairs = side.view(-1, 2, 1 << i)
        same = pairs[:, 0] == pairs[:, 1]  # (2^(n−i−1), 2^i), one flag per pair
        ok.view(-1, 2, 1 << i).logical_and_(same.unsqueeze(1))
    return int((side == 0).sum()), int(ok.sum())


def profile_counts(tt: np.ndarray | Tensor, n: int) -> np.ndarray:
    """K_0..K_n (int64, length n + 1) of a 0/1 truth table, via `learnability.boolean`."""
    from learnability.boolean import profile_from_truth_table

    if isinstance(tt, Tensor):
        tt = tt.detach().to("cpu", torch.uint8).numpy()
    prof = profile_from_truth_table(np.ascontiguousarray(tt, dtype=np.uint8), n)
    for attr in ("counts", "profile", "K"):
        if hasattr(prof, attr):
            prof = getattr(prof, attr)
            break
    counts = np.asarray(prof, dtype=np.int64).reshape(-1)
    if counts.shape != (n + 1,):
        raise RuntimeError(f"profile_from_truth_table returned shape {counts.shape}, expected ({n + 1},)")
    return counts


# --------------------------------------------------------------------------------------------------
# jobs


def _device_of(ctx: RunContext | None) -> torch.device:
    from learnability.device import resolve_device

    return resolve_device(getattr(ctx, "device", None) or "cpu")


def profile_random_models(config: RandomProfilesConfig, device: torch.device | str = "cpu") -> dict:
    """Profile `config.models` random transformers exactly; returns per-model lists (see module doc)."""
    from learnability.models import build_model

    device = torch.device(device) if isinstance(device, str) else device
    n = config.n
    model_config = config.model_config()
    tokens = all_tokens(n, device)
    keys = (
        "k0", "profiles", "constant", "undecided", "k0_decided", "degenerate", "max_flip",
        "mean_flip", "logit_std", "logit_range",
    )  # fmt: skip
    out: dict[str, Any] = {k: [] for k in keys}
    t_forward = t_profile = 0.0
    for j in range(config.models):
        model = build_model(model_config, seed=config.seed * 1_000_003 + j, device=device).eval()
        t0 = time.perf_counter()
        table, degenerate = logit_table(model, n, device, config.batch_size, tokens)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        t1 = time.perf_counter()
        finite = bool(torch.isfinite(table).all())
        accept = table > 0  # NaN compares False: counted as reject, and flagged below
        counts = profile_counts(accept, n)
        undecided, k0_decided = decided_zero_sensitive(table, n, config.margin)
        flips = one_bit_changes(table, n)
        t_profile += time.perf_counter() - t1
        t_forward += t1 - t0
        out["k0"].append(int(counts[0]))
        out["profiles"].append(counts.tolist())
        out["constant"].append(bool(counts[0] == 1 << n))
        out["undecided"].append(undecided)
        out["k0_decided"].append(k0_decided)
        out["degenerate"].append(int(degenerate))
        out["max_flip"].append(float(flips.max()) if finite else math.nan)
        out["mean_flip"].append(mean_one_bit_change(table, n) if finite else math.nan)
        out["logit_std"].append(float(table.std()) if finite else math.nan)
        out["logit_range"].append(float(table.max() - table.min()) if finite else math.nan)
    out.update(
        n=n,
        strings=1 << n,
        models=config.models,
        nonfinite=sum(1 for v in out["max_flip"] if not math.isfinite(v)),
        seconds_forward=t_forward,
        seconds_profile=t_profile,
    )
    return out


@register_job("volume.random_profiles", RandomProfilesConfig)
def random_profiles_job(config: RandomProfilesConfig, ctx: RunContext) -> dict:
    return profile_random_models(config, _device_of(ctx))


def random_function_k0(n: int, count: int, seed: int) -> list[int]:
    """K_0 of `count` uniformly random functions on n bits (exact profiles of seeded truth tables)."""
    rng = np.random.default_rng([seed, n])
    return [int(profile_counts(rng.integers(0, 2, size=1 << n, dtype=np.uint8), n)[0]) for _ in range(count)]


@register_job("volume.random_functions", RandomFunctionsConfig)
def random_functions_job(config: RandomFunctionsConfig, ctx: RunContext) -> dict:
    k0 = random_function_k0(config.n, config.count, config.seed)
    return {
        "n": config.n,
        "count": config.count,
        "k0": k0,
        "k0_positive": sum(1 for k in k0 if k > 0),
    }
