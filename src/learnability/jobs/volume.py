"""Jobs of study `volume` (Kövér et al. 2026): random recognisers profiled exactly, with their
same-balance controls computed on the way.

- `volume.random_profiles` (`RandomProfilesConfig`): `models` random transformers of one shape and init,
  each drawn ONCE and evaluated on all 2^N strings under every LayerNorm eps in `eps` (the same weights:
  one independent unit), and its decisions profiled under every margin ξ in `margins` (ξ relative to
  the logit's spread std_x T). One row per (model, eps, margin): acceptance counts, K_0, mean s/N, the
  profile, the same-balance control (`boolean.balance`: exact E[s/N], E[K_0], P(K_0 > 0),
  P(K_0 ≥ Theorem 4.5's bound)), one-bit changes of the logit, the model's own margin min_x |T(x)|,
  LayerNorm input statistics, and how many strings changed label against the first eps.
- `volume.length_profiles` (`LengthProfilesConfig`): the same weights evaluated across string lengths
  N (sinusoidal positions, so the weights do not depend on N), per eps: N·max|ΔT| for the per-bit
  O(1/N) statement, and a finite-difference Lipschitz constant in θ (Lemma 3.1) along fixed random
  directions, kept apart.
- `volume.random_functions` (`RandomFunctionsConfig`): uniformly random (balanced on average) functions,
  the null the pre-engine study compared with (1 − 1/e).

Model j of a cell is initialised from a seed hashed from (seed, N, init, shape, j) and not from the
LayerNorm/bias settings, eps or margin: cells that differ only in those hold the same matrices.
"""

from __future__ import annotations

import functools
import hashlib
import math
import time
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import torch

from learnability.boolean.balance import (
    k0_at_least_probability,
    k0_positive_probability,
    same_balance_moments,
    zero_sensitive_counts,
)
from learnability.device import resolve_device
from learnability.errors import UserError, check_choice
from learnability.measure.recogniser import (
    ENSEMBLE_MAX_N_CPU,
    LayerNormStats,
    decision_labels,
    ensemble_logit_tables,
    label_profile,
    logit_table,
    mean_one_bit_change,
    one_bit_changes,
    set_layernorm_eps,
)
from learnability.models import BooleanTransformerConfig, build_model
from learnability.sweep.jobs import RunContext, register_job

INIT_SCHEMES = ("uniform", "gaussian", "xavier_uniform", "xavier_normal")
EXACT_LIMIT = 22  # 2^22 strings per model: beyond this a profile is not "exact and quick"
BoundLabel = Literal["vacuous", "impossible", "non-trivial"]


def theorem_bound(n: int, depth: int, width: int) -> float:
    """Theorem 4.5's lower bound on K_0 at eps = 0: N^((D − 1)/(2L) − 5)."""
    return float(n) ** ((width - 1) / (2 * depth) - 5)


def bound_label(n: int, depth: int, width: int) -> BoundLabel:
    """`vacuous` (bound < 1: any K_0 ≥ 1 meets it), `impossible` (bound > 2^N: no N-bit function meets
    it, N is not yet in the theorem's regime) or `non-trivial` (the check has content)."""
    b = theorem_bound(n, depth, width)
    if b < 1:
        return "vacuous"
    return "impossible" if b > 2.0**n else "non-trivial"


def model_seed(*parts: Any) -> int:
    """A stable 48-bit seed from the parts (Python's hash() changes between processes)."""
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=6).digest()
    return int.from_bytes(digest, "big")


@dataclass
class _Shape:
    """Shape and initialisation shared by the random-model jobs."""

    init: Literal["uniform", "gaussian", "xavier_uniform", "xavier_normal"] = "xavier_normal"
    init_scale: float = 10.0  # B of U[−B, B], σ of the Gaussian (Bhattamishra et al. 2023: 10)
    ln_init: Literal["scheme", "unit"] = "unit"  # LayerNorm gain 1 / bias 0, as in that public code
    bias_init: Literal["scheme", "zero"] = "zero"  # that code's default: zero biases
    readout_bias_init: Literal["scheme", "zero"] = "zero"  # that code's read-out has no bias
    # "cited": token and position embeddings drawn as Bhattamishra et al.'s code draws them (`cited_embeddings`)
    embedding_init: Literal["scheme", "cited"] = "scheme"
    ln: Literal["post", "pre"] = "post"
    depth: int = 2  # L
    width: int = 16  # D
    heads: int = 2
    d_ff: int | None = None  # None = 2·width
    embedding: Literal["add", "concat"] = "add"
    eps: list[float] = field(
        default_factory=lambda: [0.0, 1e-5, 1.0]
    )  # the same weights under each
    models: int = 16
    seed: int = 0
    control_draws: int = 100  # shuffles when the moments do not settle a control probability
    chunk: int | None = None  # strings per forward (None: the measured default)

    def _check_shape(self) -> None:
        check_choice("init scheme", self.init, INIT_SCHEMES)
        check_choice("embedding_init", self.embedding_init, ("scheme", "cited"))
        for name in ("depth", "width", "heads", "models", "control_draws"):
            if getattr(self, name) < 1:
                raise UserError(f"{name}={getattr(self, name)} is not allowed; it must be >= 1")
        if not self.eps or any(not e >= 0 for e in self.eps):
            raise UserError(f"eps={self.eps} is not allowed; a non-empty list of values >= 0")
        if self.d_ff is not None and self.d_ff < 1:
            raise UserError(f"d_ff={self.d_ff} is not allowed; it must be >= 1 (or null)")

    def model_config(self, max_len: int, positions: str) -> BooleanTransformerConfig:
        return BooleanTransformerConfig(
            n_layers=self.depth, n_heads=self.heads, d_model=self.width,
            d_ff=self.d_ff or 2 * self.width, ln=self.ln, ln_eps=self.eps[0],
            embedding=self.embedding, positions=positions,  # type: ignore[arg-type]
            max_len=max_len, readout="eos", init=self.init, init_scale=self.init_scale,
            ln_init=self.ln_init, bias_init=self.bias_init, readout_bias_init=self.readout_bias_init,
        )  # fmt: skip

    def build(
        self, mc: BooleanTransformerConfig, seed: int, device: torch.device
    ) -> torch.nn.Module:
        model = build_model(mc, seed=seed, device=device).eval()
        if self.embedding_init == "cited":
            cited_embeddings(model, self.init, self.init_scale, seed)
        return model

    def seed_of(self, n: int | str, j: int) -> int:
        shape = (self.init, self.init_scale, self.ln, self.depth, self.width, self.heads, self.d_ff)
        return model_seed(self.seed, n, shape, self.embedding, j)


@dataclass
class RandomProfilesConfig(_Shape):
    """One cell: `models` random recognisers of N-bit strings (EOS read-out), profiled exactly."""

    n: int = 10
    positions: Literal["learned", "sinusoidal"] = "learned"
    margins: list[float] = field(default_factory=lambda: [0.0, 0.01, 0.1])  # ξ / std_x T
    ensemble: Literal["auto", "never", "always"] = "auto"  # auto: where it measured faster

    def __post_init__(self) -> None:
        self._check_shape()
        if not 1 <= self.n <= EXACT_LIMIT:
            raise UserError(f"n={self.n} is not allowed; profiles are exact, n in 1..{EXACT_LIMIT}")
        if not self.margins or any(not m >= 0 for m in self.margins):
            raise UserError(f"margins={self.margins} is not allowed; a list of values >= 0")
        check_choice("ensemble", self.ensemble, ("auto", "never", "always"))


@dataclass
class LengthProfilesConfig(_Shape):
    """The same random weights evaluated at every N in `ns` (sinusoidal positions)."""

    ns: list[int] = field(default_factory=lambda: [4, 6, 8, 10, 12, 14])
    directions: int = 2  # random parameter directions for the Lipschitz-in-θ estimate
    radius: float = 1e-3  # step ρ as a fraction of ‖θ‖

    def __post_init__(self) -> None:
        self._check_shape()
        if not self.ns or any(not 1 <= n <= EXACT_LIMIT for n in self.ns):
            raise UserError(f"ns={self.ns} is not allowed; lengths in 1..{EXACT_LIMIT}")
        if self.directions < 0 or not self.radius > 0:
            raise UserError("directions must be >= 0 and radius > 0")


@dataclass
class RandomFunctionsConfig:
    """`count` uniformly random Boolean functions on N bits (the balanced null)."""

    n: int = 10
    count: int = 1000
    seed: int = 0

    def __post_init__(self) -> None:
        if not 1 <= self.n <= EXACT_LIMIT:
            raise UserError(f"n={self.n} is not allowed; n in 1..{EXACT_LIMIT}")
        if self.count < 1:
            raise UserError(f"count={self.count} is not allowed; it must be >= 1")


@torch.no_grad()
def cited_embeddings(model: Any, init: str, scale: float, seed: int) -> None:
    """Redraw the embeddings as the cited code (Bhattamishra et al. 2023, `TransformerCLF`) does: tokens
    U[−B, B] under `uniform`, else N(0, 1), times √D (its forward scales them so); learned positions
    U[−B, B] (`uniform`), U[−1, 1] (`gaussian`) or N(0, 1) (Xavier). Its read-out has no bias, so the
    read-out's scale, which it also draws differently, does not change the Boolean function."""
    g = torch.Generator().manual_seed(model_seed(seed, "cited embeddings"))
    tokens = model.token_embedding.weight
    drawn = torch.empty(tokens.shape).uniform_(-scale, scale, generator=g) if init == "uniform" else (
        torch.randn(tokens.shape, generator=g))  # fmt: skip
    tokens.copy_(drawn * math.sqrt(model.config.d_model))
    if getattr(model, "position_embedding", None) is not None:
        pos = model.position_embedding.weight
        bound = {"uniform": scale, "gaussian": 1.0}.get(init)
        pos.copy_(torch.randn(pos.shape, generator=g) if bound is None else
                  torch.empty(pos.shape).uniform_(-bound, bound, generator=g))  # fmt: skip


# -- measuring one table ------------------------------------------------------------------------------------
def _num(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None  # JSON has no NaN / inf


def table_summary(table: torch.Tensor, n: int, ln: LayerNormStats) -> dict[str, Any]:
    """What one logit table says regardless of the margin: its spread, own margin, one-bit changes."""
    finite = bool(torch.isfinite(table).all())
    seen = ln.rows > 0  # statistics are taken in one eps pass per model (`_stats_eps`)
    out: dict[str, Any] = {
        "finite": finite,
        "ln_rows": ln.rows,
        "ln_degenerate": ln.degenerate if seen else None,
        "ln_min_std": _num(ln.min_std) if seen else None,
        "ln_max_normaliser": _num(ln.max_normaliser) if seen else None,
    }
    if not finite:
        return {**out, "logit_mean": None, "logit_std": None, "min_abs_logit": None,
                "max_flip": None, "mean_flip": None}  # fmt: skip
    return {
        **out,
        "logit_mean": float(table.mean()),
        "logit_std": float(table.std()) if table.numel() > 1 else 0.0,
        "min_abs_logit": float(table.abs().min()),  # the model's own decision margin
        "max_flip": float(one_bit_changes(table, n).max()),
        "mean_flip": mean_one_bit_change(table, n),
    }


# The same-balance control is a pure function of (n, counts, draws, seed) with frozen results: each
# distinct one is computed once per worker (the 360 models of a cell repeat counts often at small n;
# 8–13% of a `random_profiles` run's CPU from a cold cache: bench/bench_volume_controls.py)
_moments = functools.lru_cache(maxsize=1 << 16)(same_balance_moments)
_k0_positive = functools.lru_cache(maxsize=1 << 16)(k0_positive_probability)


def decision_rows(
    table: torch.Tensor,
    n: int,
    margins: list[float],
    bound: float,
    draws: int,
    reference: torch.Tensor | None = None,
) -> list[dict[str, Any]]:
    """One row per margin: counts, K_0, s/N and the same-balance control (module doc)."""
    std = float(table.std()) if table.numel() > 1 and bool(torch.isfinite(table).all()) else 0.0
    base = decision_labels(table, 0.0)
    constant = bool((base == base[0]).all())
    changed = int((base != reference).sum()) if reference is not None else 0
    rows = []
    for rel in margins:
        labels = decision_labels(table, rel * std)
        counts = label_profile(labels, n)
        accept, reject = int((labels == 1).sum()), int((labels == 0).sum())
        decided = accept + reject
        k = np.arange(n + 1)
        s_mean = float((counts * k).sum() / decided / n) if decided else math.nan
        m = _moments(n, accept, reject)
        pos = _k0_positive(n, accept, reject, draws=draws, seed=n)
        meets = k0_at_least_probability(n, accept, bound, reject, draws=draws, seed=n)
        rows.append({
            "margin": rel, "margin_abs": rel * std, "accept": accept, "reject": reject,
            "undecided": (1 << n) - decided, "constant": constant, "k0": int(counts[0]),
            "s_mean": _num(s_mean), "profile": counts.tolist(), "meets_bound": bool(counts[0] >= bound),
            "changed_vs_first_eps": changed,
            "ctrl_s_mean": _num(m.mean_s_over_n), "ctrl_k0_mean": m.mean_k0,
            "ctrl_k0_positive": pos.value, "ctrl_k0_method": pos.method,
            "ctrl_meets_bound": meets.value,
        })  # fmt: skip
    return rows


# -- jobs ---------------------------------------------------------------------------------------------------
def _device(ctx: RunContext | None) -> torch.device:
    return resolve_device(getattr(ctx, "device", None) or "cpu")


def _tables(
    models: list[torch.nn.Module],
    n: int,
    device: torch.device,
    chunk: int | None,
    ensemble: bool,
    with_stats: bool,
) -> list[tuple[torch.Tensor, LayerNormStats]]:
    if ensemble and len(models) > 1:
        tables, stats = ensemble_logit_tables(models, n, device, chunk)
        return [(tables[j], stats[j]) for j in range(len(models))]
    return [logit_table(m, n, device, chunk, with_stats) for m in models]


def _stats_eps(eps: list[float]) -> float:
    """The eps whose pass records LayerNorm statistics: 0 (Theorem 4.5's case) if profiled, else the
    first (the statistics cost about a third of a forward, so they are taken once per model)."""
    return 0.0 if 0.0 in eps else eps[0]


def profile_random_models(
    config: RandomProfilesConfig, device: torch.device | str = "cpu"
) -> dict[str, Any]:
    """Profile `config.models` random recognisers under every eps and margin (module doc)."""
    device = resolve_device(device)
    n = config.n
    mc = config.model_config(n, config.positions)
    bound = theorem_bound(n, config.depth, config.width)
    seeds = [config.seed_of(n, j) for j in range(config.models)]
    models = [config.build(mc, s, device) for s in seeds]
    ensemble = config.ensemble == "always" or (
        config.ensemble == "auto" and (device.type == "cuda" or n <= ENSEMBLE_MAX_N_CPU)
    )
    rows: list[dict[str, Any]] = []
    t_forward = t_profile = 0.0
    first: list[torch.Tensor] = []
    for e_index, eps in enumerate(config.eps):
        for m in models:
            set_layernorm_eps(m, eps)
        t0 = time.perf_counter()
        stats = eps == _stats_eps(config.eps)
        tables = _tables(models, n, device, config.chunk, ensemble, stats)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        t1 = time.perf_counter()
        for j, (table, ln) in enumerate(tables):
            table = table.cpu()
            labels = decision_labels(table, 0.0)
            if e_index == 0:
                first.append(labels)
            summary = table_summary(table, n, ln)
            for row in decision_rows(table, n, config.margins, bound, config.control_draws,
                                     None if e_index == 0 else first[j]):  # fmt: skip
                rows.append({"model": j, "seed": seeds[j], "eps": eps, **summary, **row})
        t_profile += time.perf_counter() - t1
        t_forward += t1 - t0
    return {
        "n": n, "strings": 1 << n, "models": config.models, "bound": bound,
        "bound_label": bound_label(n, config.depth, config.width), "rows": rows,
        "ensemble": ensemble, "seconds_forward": t_forward, "seconds_profile": t_profile,
    }  # fmt: skip


@register_job("volume.random_profiles", RandomProfilesConfig)
def random_profiles_job(config: RandomProfilesConfig, ctx: RunContext) -> dict[str, Any]:
    return profile_random_models(config, _device(ctx))


def _direction(model: torch.nn.Module, seed: int) -> list[torch.Tensor]:
    """A uniformly random unit direction in parameter space (one tensor per parameter)."""
    g = torch.Generator().manual_seed(seed)
    parts = [torch.randn(p.shape, generator=g) for p in model.parameters()]
    norm = math.sqrt(sum(float(x.pow(2).sum()) for x in parts))
    return [x / norm for x in parts]


@torch.no_grad()
def profile_across_lengths(
    config: LengthProfilesConfig, device: torch.device | str = "cpu"
) -> dict[str, Any]:
    """Each model's weights once, evaluated at every N and eps (module doc)."""
    device = resolve_device(device)
    mc = config.model_config(max(config.ns), "sinusoidal")
    rows: list[dict[str, Any]] = []
    for j in range(config.models):
        seed = config.seed_of("lengths", j)
        model = config.build(mc, seed, device)
        theta = [p.detach().clone() for p in model.parameters()]
        size = math.sqrt(sum(float(p.pow(2).sum()) for p in theta))
        step = config.radius * size
        dirs = [
            _direction(model, model_seed(seed, "direction", k)) for k in range(config.directions)
        ]
        for eps in config.eps:
            set_layernorm_eps(model, eps)
            for n in config.ns:
                stats = eps == _stats_eps(config.eps)
                table, ln = logit_table(model, n, device, config.chunk, with_stats=stats)
                lip = []
                for d in dirs:  # finite difference along a fixed direction: max_x |ΔT| / ‖Δθ‖
                    for p, t, u in zip(model.parameters(), theta, d):
                        p.copy_(t + step * u.to(device))
                    moved, _ = logit_table(model, n, device, config.chunk, with_stats=False)
                    lip.append(float((moved - table).abs().max()) / step)
                for p, t in zip(model.parameters(), theta):
                    p.copy_(t)
                table = table.cpu()
                summary = table_summary(table, n, ln)
                bound = theorem_bound(n, config.depth, config.width)
                [row] = decision_rows(table, n, [0.0], bound, config.control_draws)
                rows.append({"model": j, "seed": seed, "n": n, "eps": eps, "theta_norm": size,
                             "lipschitz_theta": _num(max(lip)) if lip else None, **summary, **row})  # fmt: skip
    return {"ns": list(config.ns), "models": config.models, "rows": rows}


@register_job("volume.length_profiles", LengthProfilesConfig)
def length_profiles_job(config: LengthProfilesConfig, ctx: RunContext) -> dict[str, Any]:
    return profile_across_lengths(config, _device(ctx))


def random_function_k0(n: int, count: int, seed: int) -> np.ndarray:
    """K_0 of `count` uniformly random functions on n bits (seeded): (count,) int64."""
    rng = np.random.default_rng([seed, n])
    out = []
    for start in range(0, count, 256):
        rows = min(256, count - start)
        out.append(zero_sensitive_counts(rng.integers(0, 2, (rows, 1 << n), dtype=np.int8), n))
    return np.concatenate(out)


@register_job("volume.random_functions", RandomFunctionsConfig)
def random_functions_job(config: RandomFunctionsConfig, ctx: RunContext) -> dict[str, Any]:
    k0 = random_function_k0(config.n, config.count, config.seed)
    return {"n": config.n, "count": config.count, "k0": k0.tolist(),
            "k0_positive": int((k0 > 0).sum())}  # fmt: skip


__all__ = [
    "INIT_SCHEMES", "LengthProfilesConfig", "RandomFunctionsConfig", "RandomProfilesConfig",
    "bound_label", "cited_embeddings", "decision_rows", "model_seed", "profile_across_lengths", "profile_random_models",
    "random_function_k0", "table_summary", "theorem_bound",
]  # fmt: skip
