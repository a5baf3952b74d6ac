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
from learnability.studies.legacy import ClaimResult, FigureSink, StudyResults, Table
from learnability.studies.legacy import LegacyStudy as Study
from learnability.sweep.jobs import RunContext, register_job

INIT_SCHEMES = ("uniform", "gaussian", "xavier_uniform", "xavier_normal")
INIT_LABELS = {
    "uniform": "uniform [−B, B]",
    "gaussian": "Gaussian σ",
    "xavier_uniform": "Xavier uniform",
    "xavier_normal": "Xavier normal",
}
EXACT_LIMIT = (
    22  # 2^22 strings per model: beyond this a random-model profile is not "exact and quick"
)
ONE_MINUS_INV_E = 1.0 - math.exp(-1.0)


# --------------------------------------------------------------------------------------------------
# configs


@dataclass
class RandomProfilesConfig:
    """One cell of random transformers: `models` recognisers of N-bit strings, profiled exactly."""

    n: int = 10  # string length N (the EOS token comes on top)
    init: Literal["uniform", "gaussian", "xavier_uniform", "xavier_normal"] = "xavier_normal"
    init_scale: float = (
        10.0  # B of uniform [−B, B], σ of the Gaussian (Bhattamishra et al. 2023: 10)
    )
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
            raise UserError(
                f"d_ff={self.d_ff} is not allowed; it must be >= 1 (or null for 2·width)"
            )

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
        low, high = torch.aminmax(x, dim=-1)  # one pass over the input
        # only a row whose entries differ by < ~1e-19 can have a variance that rounds to 0, so the
        # exact rule runs on the (rare) rows of tiny spread only
        small = (high - low) < 1e-12
        if bool(small.any()):
            rows = x[small]
            centred = rows - rows.mean(-1, keepdim=True)
            exact = (rows == rows[:, :1]).all(-1) | (centred.pow(2).mean(-1) == 0)
            self.count += int(exact.sum())

    def close(self) -> None:
        for h in self.handles:
            h.remove()


def logit_table(
    model: torch.nn.Module, n: int, device: torch.device | str = "cpu", batch_size: int = 16384
) -> tuple[Tensor, int]:
    """The model's output on all 2^n strings: ((2^n,) float32 logits in bit order, degenerate rows).

    One batched forward pass over the whole input space (`measure.model_outputs`), with the
    zero-variance LayerNorm rows counted on the way.
    """
    from learnability.measure.sensitivity import model_outputs

    counter = _DegenerateCounter(model)
    try:
        out = model_outputs(model, n, device, chunk=batch_size)
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
    """E_x E_i |T(x) − T(x^{⊕i})|, over all 2^n strings and n bits."""
    total = 0.0
    for i in range(n):
        pairs = table.view(-1, 2, 1 << i)
        total += float((pairs[:, 1] - pairs[:, 0]).abs().mean())
    return total / n


def decided_zero_sensitive(table: Tensor, n: int, margin: float) -> tuple[int, int]:
    """(undecided strings, decided strings whose n neighbours are all decided alike).

    Undecided iff |T| < ξ (the rule of `measure.model_profile`: nothing is undecided at ξ = 0);
    a decided string is accepted iff T > 0."""
    side = torch.where(table > 0, 1, -1).to(torch.int8)
    if margin > 0:
        side[table.abs() < margin] = 0
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
    return np.asarray(profile_from_truth_table(tt, n, fourier=False).counts, dtype=np.int64)


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
    keys = (
        "k0",
        "profiles",
        "constant",
        "undecided",
        "k0_decided",
        "degenerate",
        "max_flip",
        "mean_flip",
        "logit_std",
        "logit_range",
    )
    out: dict[str, Any] = {k: [] for k in keys}
    t_forward = t_profile = 0.0
    for j in range(config.models):
        model = build_model(model_config, seed=config.seed * 1_000_003 + j, device=device).eval()
        t0 = time.perf_counter()
        table, degenerate = logit_table(model, n, device, config.batch_size)
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
        # a non-finite logit table (possible with eps = 0 and huge weights) stores null, not NaN
        out["max_flip"].append(float(flips.max()) if finite else None)
        out["mean_flip"].append(mean_one_bit_change(table, n) if finite else None)
        out["logit_std"].append(float(table.std()) if finite else None)
        out["logit_range"].append(float(table.max() - table.min()) if finite else None)
    out.update(
        n=n,
        strings=1 << n,
        models=config.models,
        nonfinite=sum(1 for v in out["max_flip"] if v is None),
        seconds_forward=t_forward,
        seconds_profile=t_profile,
    )
    return out


@register_job("volume.random_profiles", RandomProfilesConfig)
def random_profiles_job(config: RandomProfilesConfig, ctx: RunContext) -> dict:
    return profile_random_models(config, _device_of(ctx))


def random_function_profiles(n: int, count: int, seed: int) -> np.ndarray:
    """(count, n + 1) exact profiles of `count` uniformly random functions on n bits (seeded)."""
    rng = np.random.default_rng([seed, n])
    return np.stack(
        [profile_counts(rng.integers(0, 2, size=1 << n, dtype=np.uint8), n) for _ in range(count)]
    )


@register_job("volume.random_functions", RandomFunctionsConfig)
def random_functions_job(config: RandomFunctionsConfig, ctx: RunContext) -> dict:
    profiles = random_function_profiles(config.n, config.count, config.seed)
    k0 = profiles[:, 0]
    return {
        "n": config.n,
        "count": config.count,
        "k0": k0.tolist(),
        "k0_positive": int((k0 > 0).sum()),
        "mean_fraction": (profiles.mean(0) / (1 << config.n)).tolist(),  # E[K_k] / 2^n
    }


# --------------------------------------------------------------------------------------------------
# the study

RANDOM = "volume/random"
ARCH = "volume/arch"
CONTROL = "volume/control"
TRAINED = "volume/trained"

TRAINED_FUNCTIONS = {
    "parity": "PARITY",
    "majority": "MAJORITY",
    "first": "FIRST",
    "sparse_parity:k=3,seed=0": "3-sparse parity",
}


@dataclass(frozen=True)
class ScalePlan:
    """What one scale runs; every number is stated in the report next to the claims it supports."""

    ns: list[int]  # N of the main random-profile sweep
    eps: list[float]  # LayerNorm eps of the main sweep (0 = the theorem's case)
    archs: list[tuple[int, int]]  # (depth, width) of the main sweep
    models: int  # random models per cell
    arch_n: int  # N of the depth × width sweep
    arch_depths: list[int]
    arch_widths: list[int]
    arch_models: int
    control_count: int  # random functions per N
    trained_ns: list[int]
    trained_seeds: list[int]
    trained_model: dict
    trained_train: dict


PLANS = {
    "quick": ScalePlan(
        ns=[4, 6, 8, 10, 12, 14],
        eps=[0.0, 1e-5, 1.0],
        archs=[(1, 16), (2, 16)],
        models=24,
        arch_n=10,
        arch_depths=[1, 2, 4],
        arch_widths=[8, 32, 64],
        arch_models=12,
        control_count=1000,
        trained_ns=[6, 10, 14],
        trained_seeds=[0, 1, 2],
        trained_model={"n_layers": 2, "n_heads": 2, "d_model": 32, "d_ff": 64},
        trained_train={
            "steps": 600,
            "batch_size": 128,
            "lr": 3e-3,
            "weight_decay": 0.0,
            "eval_every": 100,
            "converge_acc": 1.0,
        },
    ),
    "paper": ScalePlan(
        ns=[4, 6, 8, 10, 12, 14, 16, 18, 20],
        eps=[0.0, 1e-5, 1e-2, 1.0],
        archs=[(1, 16), (2, 16), (2, 64), (4, 64)],
        models=256,
        arch_n=14,
        arch_depths=[1, 2, 4, 8],
        arch_widths=[8, 16, 32, 64, 128, 256],
        arch_models=128,
        control_count=10000,
        trained_ns=[6, 10, 14, 20, 30],
        trained_seeds=[0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
        trained_model={"n_layers": 2, "n_heads": 2, "d_model": 128, "d_ff": 128},
        trained_train={
            "steps": 10000,
            "batch_size": 1024,
            "lr": 3e-4,
            "weight_decay": 0.1,
            "eval_every": 250,
            "converge_acc": 1.0,
        },
    ),
}


class VolumeStudy(Study):
    name = "volume"
    title = "Parameter-space volume of transformers encoding Boolean functions"
    paper = (
        "Kövér, Butoi, Svete, Hahn, Cotterell. Understanding the Parameter Space Geometry (Volume) of "
        "Transformers Encoding Boolean Functions. ICML 2026, arXiv 2606.08768."
    )
    protocol_note = (
        "The paper's experimental numbers and exact protocol are not public in text form: the grids, model "
        "counts and verdict rules here are the project's own protocol (SPEC §3, issue 6), not the paper's."
    )

    def sweeps(self, scale: str) -> list:
        check_choice("scale", scale, list(PLANS))
        return build_sweeps(PLANS[scale])

    def estimate(self, scale: str) -> str:
        p = PLANS[scale]
        runs = sum(len(s.expand()) for s in self.sweeps(scale))
        models = len(p.archs) * len(p.ns) * len(INIT_SCHEMES) * len(p.eps) * p.models
        models += len(p.arch_depths) * len(p.arch_widths) * len(INIT_SCHEMES) * p.arch_models
        return f"{runs} runs: {models} random transformers profiled exactly, and training runs"

    def analyse(self, results: StudyResults, out: FigureSink) -> list[ClaimResult]:
        scale = results.scale
        out.note(self.protocol_note)
        random_records = [
            r for r in results.records if r.sweep.startswith(RANDOM + "/") and r.status == "ok"
        ]
        arch_records = results.of(ARCH)
        control = results.of(CONTROL)
        trained = [r for r in results.records if r.sweep.startswith(TRAINED + "/")]
        cells = [_cell(r) for r in random_records]
        arch_cells = [_cell(r) for r in arch_records]
        ctrl = {int(r.metrics["n"]): r.metrics for r in control}
        _note_counts(out, cells, arch_cells, ctrl)
        summary_table(cells, out)
        return [
            claim_skew(cells, ctrl, out, scale),
            claim_zero_sensitivity(cells + arch_cells, ctrl, out, scale),
            claim_bound(cells, arch_cells, out, scale),
            claim_growth(cells, out, scale),
            claim_lipschitz(cells, out, scale),
            claim_measure_zero(cells, ctrl, out, scale),
            *claims_trained(trained, out, scale),
        ]


def build_sweeps(p: ScalePlan) -> list:
    """The study's sweeps for one plan (`PLANS[scale]`, or a smaller one in tests)."""
    from learnability.sweep.spec import Sweep

    sweeps = []
    for depth, width in p.archs:
        sweeps.append(
            Sweep(
                name=f"{RANDOM}/L{depth}D{width}",
                job="volume.random_profiles",
                base={"depth": depth, "width": width, "heads": 2, "models": p.models},
                grid={"n": p.ns, "init": list(INIT_SCHEMES), "ln_eps": list(p.eps)},
                seeds=[0],
            )
        )
    sweeps.append(
        Sweep(
            name=ARCH,
            job="volume.random_profiles",
            base={"n": p.arch_n, "heads": 2, "models": p.arch_models, "ln_eps": 0.0},
            grid={"depth": p.arch_depths, "width": p.arch_widths, "init": list(INIT_SCHEMES)},
            seeds=[1],
        )
    )
    sweeps.append(
        Sweep(
            name=CONTROL,
            job="volume.random_functions",
            base={"count": p.control_count},
            grid={"n": sorted(set(p.ns) | {p.arch_n})},
            seeds=[0],
        )
    )
    model = {
        "arch": "boolean_transformer",
        "readout": "eos",
        "ln": "post",
        "ln_eps": 1e-5,
        "embedding": "add",
        "positions": "learned",
        "max_len": max(p.trained_ns),
        **p.trained_model,
    }
    # one sweep per seed so the init seed and the data seed move together
    for seed in p.trained_seeds:
        sweeps.append(
            Sweep(
                name=f"{TRAINED}/s{seed}",
                job="train",
                base={
                    "task": {"name": "boolean", "targets": "pm1", "mode": "online"},
                    "model": model,
                    "train": dict(p.trained_train),
                    "measure": ["profile"],
                    "data_seed": seed,
                },
                grid={"task.function": list(TRAINED_FUNCTIONS), "task.n": p.trained_ns},
                seeds=[seed],
            )
        )
    return sweeps


STUDY = VolumeStudy()


# --------------------------------------------------------------------------------------------------
# analysis helpers (pure functions of records, so they can be tested on synthetic ones)


@dataclass
class Cell:
    """One random-profile record, flattened: config fields and per-model arrays."""

    n: int
    init: str
    eps: float
    depth: int
    width: int
    k0: np.ndarray  # (M,)
    profiles: np.ndarray  # (M, n + 1)
    constant: np.ndarray  # (M,) bool
    max_flip: np.ndarray  # (M,)
    logit_range: np.ndarray  # (M,)
    undecided: np.ndarray
    degenerate: np.ndarray

    @property
    def models(self) -> int:
        return len(self.k0)

    @property
    def bound(self) -> float:
        """Theorem 4.5's N^{(D−1)/(2L) − 5}."""
        return float(self.n) ** ((self.width - 1) / (2 * self.depth) - 5)


def _cell(record: Any) -> Cell:
    c, m = record.config, record.metrics
    return Cell(
        n=int(c["n"]),
        init=str(c["init"]),
        eps=float(c["ln_eps"]),
        depth=int(c["depth"]),
        width=int(c["width"]),
        k0=np.asarray(m["k0"], dtype=float),
        profiles=np.asarray(m["profiles"], dtype=float).reshape(len(m["k0"]), -1),
        constant=np.asarray(m["constant"], dtype=bool),
        max_flip=np.asarray(m["max_flip"], dtype=float),
        logit_range=np.asarray(m["logit_range"], dtype=float),
        undecided=np.asarray(m.get("undecided", [0] * len(m["k0"])), dtype=float),
        degenerate=np.asarray(m.get("degenerate", [0] * len(m["k0"])), dtype=float),
    )


def _eps_label(eps: float) -> str:
    return "eps = 0" if eps == 0 else f"eps = {eps:g}"


def _ci(successes: int, trials: int) -> str:
    from learnability.report.figures import wilson_interval

    lo, hi = wilson_interval(successes, trials)
    return f"{successes}/{trials} = {successes / max(trials, 1):.3f} [{lo:.3f}, {hi:.3f}]"


def _proportion(successes: int, trials: int) -> Any:
    """A Summary holding a proportion and its Wilson interval (for `line_with_band`)."""
    from learnability.report.figures import Summary, wilson_interval

    lo, hi = wilson_interval(successes, trials)
    return Summary(successes / trials if trials else math.nan, lo, hi, trials)


def _note_counts(out: FigureSink, cells: list[Cell], arch_cells: list[Cell], ctrl: dict) -> None:
    models = sum(c.models for c in cells)
    strings = sum(c.models * (1 << c.n) for c in cells)
    ns = sorted({c.n for c in cells})
    out.note(
        f"Random-initialisation sweep: {len(cells)} cells (N ∈ {ns}, 4 init schemes, "
        f"eps ∈ {sorted({c.eps for c in cells})}, "
        f"(depth, width) ∈ {sorted({(c.depth, c.width) for c in cells})}), {models} random transformers, "
        f"{strings:,} strings evaluated exactly (every model on all 2^N strings). Depth × width sweep: "
        f"{sum(c.models for c in arch_cells)} more models. Random-function control: "
        + ", ".join(f"N={n}: {int(m['count'])} functions" for n, m in sorted(ctrl.items()))
        + ". Models of one cell share seeds across eps, so the eps values compare the same weights. "
        "Uniform init uses B = 10 and Gaussian σ = 10 (Bhattamishra et al. 2023); Xavier schemes use "
        "zero biases and LayerNorm gain 1."
    )
    degenerate = sum(int(c.degenerate.sum()) for c in cells + arch_cells)
    undecided = sum(int(c.undecided.sum()) for c in cells + arch_cells)
    out.note(
        f"eps = 0 degenerate LayerNorm rows (zero variance, normaliser set to 0, run continued): "
        f"{degenerate} in total; undecided strings (T exactly 0 at margin 0): {undecided}."
    )


def summary_table(cells: list[Cell], out: FigureSink) -> None:
    """One row per (init, eps) at the largest N: what the random functions look like."""
    if not cells:
        return
    n_max = _largest_n(cells)
    rows = []
    for init in INIT_SCHEMES:
        for eps in sorted({c.eps for c in cells}):
            at = [c for c in cells if c.n == n_max and c.init == init and c.eps == eps]
            if not at:
                continue
            total = sum(c.models for c in at)
            constant = np.concatenate([c.constant for c in at])
            nonconst_k0 = np.concatenate([c.k0[~c.constant] for c in at]) / (1 << n_max)
            ratios = np.concatenate([_mean_s_over_n(c)[~c.constant] for c in at])
            flips = np.concatenate([c.max_flip for c in at])
            rows.append(
                [
                    INIT_LABELS[init],
                    f"{eps:g}",
                    total,
                    f"{constant.mean():.2f}",
                    f"{np.mean(np.concatenate([c.k0 for c in at]) > 0):.3f}",
                    f"{np.median(nonconst_k0):.3f}" if nonconst_k0.size else "–",
                    f"{ratios.mean():.3f}" if ratios.size else "–",
                    f"{np.nanmedian(flips):.3g}",
                    int(sum(c.degenerate.sum() for c in at)),
                    int(sum(c.undecided.sum() for c in at)),
                ]
            )
    out.table(
        Table(
            f"Random transformers at N = {n_max} (both depths pooled)",
            [
                "init",
                "eps",
                "models",
                "constant fraction",
                "fraction K_0 > 0",
                "median K_0 / 2^N (non-constant)",
                "mean s/N (non-constant)",
                "median max one-bit change",
                "degenerate LN rows",
                "undecided strings",
            ],
            rows,
            "A constant function has K_0 = 2^N trivially; the non-constant columns exclude them.",
        )
    )


def _largest_n(cells: list[Cell]) -> int:
    return max(c.n for c in cells)


def _mean_s_over_n(cell: Cell) -> np.ndarray:
    """(M,) average sensitivity / N of each model, from its profile."""
    k = np.arange(cell.n + 1)
    return (cell.profiles * k).sum(1) / (1 << cell.n) / cell.n


def _empty_claim(claim: str, statement: str, scale: str, what: str) -> ClaimResult:
    return ClaimResult(claim, statement, f"no finished runs of {what}", "inconclusive", scale)


def claim_skew(cells: list[Cell], ctrl: dict, out: FigureSink, scale: str) -> ClaimResult:
    """Spectra skewed to 0. Rule: over the non-constant models at the largest N, reproduced if the upper
    95% bound of the mean s/N is < 0.25 (half the random-function value 1/2) and s = 0 is the most common
    sensitivity; not reproduced if the lower bound is ≥ 0.4 or the most common s/N is above 1/4;
    inconclusive otherwise (or with no non-constant model)."""
    from learnability.report.figures import finish, histogram, new_figure, summarise

    statement = "Sensitivity spectra of random transformers are heavily skewed to 0 (more than Theorem 4.5 predicts)."
    if not cells:
        return _empty_claim("Spectra skewed to 0", statement, scale, RANDOM)
    eps_values = sorted({c.eps for c in cells})
    fig, axes = new_figure(len(eps_values))
    bins = np.linspace(-0.05, 1.05, 12)
    for ax, eps in zip(axes, eps_values):
        for init in INIT_SCHEMES:
            group = [c for c in cells if c.eps == eps and c.init == init]
            if not group:
                continue
            values, weights = [], []
            for c in group:  # every cell weighs the same; inside a cell every model weighs the same
                frac = c.profiles.mean(0) / (1 << c.n)
                values.extend(np.arange(c.n + 1) / c.n)
                weights.extend(frac / len(group))
            histogram(
                ax, values, bins=bins, label=INIT_LABELS[init], density=False, weights=weights
            )
        if ctrl:
            n_ref = max(ctrl)
            frac = np.asarray(ctrl[n_ref]["mean_fraction"])
            histogram(
                ax,
                np.arange(n_ref + 1) / n_ref,
                bins=bins,
                label=f"random functions (N={n_ref})",
                density=False,
                weights=frac,
                color="black",
                linestyle="--",
            )
        finish(
            ax,
            "sensitivity s(x) / N",
            "fraction of strings",
            f"random transformers, {_eps_label(eps)}",
        )
    out.add(
        "s_histogram",
        fig,
        "Pooled sensitivity histograms of random transformers (all N, both depths; each "
        "cell weighted equally) per init scheme, against uniformly random functions (dashed).",
    )

    n_max = _largest_n(cells)
    top = [c for c in cells if c.n == n_max]
    nonconst = [(c, ~c.constant) for c in top]
    ratios = np.concatenate([_mean_s_over_n(c)[keep] for c, keep in nonconst])
    constant = int(sum(int(c.constant.sum()) for c in top))
    total = sum(c.models for c in top)
    all_ratios = np.concatenate([_mean_s_over_n(c) for c in top])
    s_all = summarise(all_ratios)
    details: dict[str, Any] = {
        "n": n_max,
        "models": total,
        "constant": constant,
        "mean_s_over_n_all": s_all.mean,
    }
    if ratios.size == 0:
        return ClaimResult(
            "Spectra skewed to 0",
            statement,
            f"N={n_max}: all {total} models compute a constant function (s ≡ 0); "
            "no non-constant model to test the skew on",
            "inconclusive",
            scale,
            details,
        )
    s_nc = summarise(ratios)
    pooled = sum((c.profiles[keep].sum(0) for c, keep in nonconst), np.zeros(n_max + 1))
    mode = int(np.argmax(pooled))
    zero_share = float(pooled[0] / pooled.sum())
    rand_mean = 0.5
    if ctrl.get(n_max):
        f = np.asarray(ctrl[n_max]["mean_fraction"])
        rand_mean = float((f * np.arange(n_max + 1)).sum() / n_max)
    if s_nc.ci_high < 0.25 and mode == 0:
        verdict = "reproduced"
    elif s_nc.ci_low >= 0.4 or mode / n_max > 0.25:
        verdict = "not reproduced"
    else:
        verdict = "inconclusive"
    details.update(
        mean_s_over_n=s_nc.mean,
        ci=[s_nc.ci_low, s_nc.ci_high],
        mode=mode,
        zero_share=zero_share,
        random_function_mean=rand_mean,
    )
    measured = (
        f"N={n_max}, {total} random models × 2^{n_max} strings ({scale} scale): {constant} compute a constant "
        f"function. Non-constant models: mean s/N = {s_nc.fmt()} (random functions: {rand_mean:.3f}); most "
        f"common s = {mode}; share of strings with s = 0 = {zero_share:.3f} (random functions ≈ 2^-N = "
        f"{2.0**-n_max:.1e}). All models: mean s/N = {s_all.fmt()}."
    )
    return ClaimResult("Spectra skewed to 0", statement, measured, verdict, scale, details)


def _k0_positive_series(cells: list[Cell], key) -> dict[Any, tuple[list[int], list[Any]]]:
    out: dict[Any, tuple[list[int], list[Any]]] = {}
    for label in sorted({key(c) for c in cells}, key=str):
        group = [c for c in cells if key(c) == label]
        ns = sorted({c.n for c in group})
        props = []
        for n in ns:
            at = [c for c in group if c.n == n]
            props.append(
                _proportion(int(sum(int((c.k0 > 0).sum()) for c in at)), sum(c.models for c in at))
            )
        out[label] = (ns, props)
    return out


def claim_zero_sensitivity(
    cells: list[Cell], ctrl: dict, out: FigureSink, scale: str
) -> ClaimResult:
    """Every random transformer has K_0 > 0, unlike random functions (≈ 1 − 1/e). Rule, at the largest N
    of the main sweep: reproduced if the fraction of random transformers with K_0 > 0 is ≥ 0.95 and its
    Wilson lower bound is above the random-function control's upper bound; not reproduced if the fraction's
    upper bound is < 0.9 or the two intervals overlap; inconclusive otherwise."""
    from learnability.report.figures import finish, line_with_band, new_figure

    statement = (
        "Every random transformer computed a function with zero-sensitivity strings (K_0 > 0), "
        "versus ≈ 1 − 1/e ≈ 0.63 of uniformly random functions."
    )
    main = cells
    if not main:
        return _empty_claim("Random transformers have K_0 > 0", statement, scale, RANDOM)
    eps_values = sorted({c.eps for c in main})
    fig, axes = new_figure(len(eps_values))
    for ax, eps in zip(axes, eps_values):
        group = [c for c in main if c.eps == eps]
        for init, (ns, props) in _k0_positive_series(group, lambda c: c.init).items():
            line_with_band(ax, ns, props, label=INIT_LABELS[init])
        if ctrl:
            ns = sorted(ctrl)
            line_with_band(
                ax,
                ns,
                [_proportion(int(ctrl[n]["k0_positive"]), int(ctrl[n]["count"])) for n in ns],
                label="random functions (measured)",
                color="black",
            )
        ax.axhline(ONE_MINUS_INV_E, color="grey", linestyle="--", linewidth=1, label="1 − 1/e")
        ax.set_ylim(-0.02, 1.05)
        finish(ax, "string length N", "fraction of models with K_0 > 0", f"{_eps_label(eps)}")
    out.add(
        "k0_positive",
        fig,
        "Fraction of random transformers (all depths and widths) whose function has a "
        "zero-sensitivity string, with 95% Wilson intervals, against uniformly random functions drawn at the "
        "same N (black) and the asymptotic 1 − 1/e (dashed).",
    )

    n_max = max(c.n for c in main)
    top = [c for c in main if c.n == n_max]
    pos = int(sum(int((c.k0 > 0).sum()) for c in top))
    total = sum(c.models for c in top)
    nonconst_pos = int(sum(int(((c.k0 > 0) & ~c.constant).sum()) for c in top))
    nonconst = int(sum(int((~c.constant).sum()) for c in top))
    from learnability.report.figures import wilson_interval

    lo, hi = wilson_interval(pos, total)
    details: dict[str, Any] = {"n": n_max, "positive": pos, "models": total, "ci": [lo, hi]}
    ctrl_text = "no random-function control at this N"
    rlo = rhi = math.nan
    if n_max in ctrl:
        rp, rc = int(ctrl[n_max]["k0_positive"]), int(ctrl[n_max]["count"])
        rlo, rhi = wilson_interval(rp, rc)
        ctrl_text = f"random functions: {_ci(rp, rc)} (1 − 1/e = {ONE_MINUS_INV_E:.3f})"
        details.update(random_positive=rp, random_count=rc, random_ci=[rlo, rhi])
    p = pos / total
    if p >= 0.95 and (math.isnan(rhi) or lo > rhi):
        verdict = "reproduced" if not math.isnan(rhi) else "inconclusive"
    elif hi < 0.9 or (not math.isnan(rhi) and lo <= rhi):
        verdict = "not reproduced"
    else:
        verdict = "inconclusive"
    by_eps = "; ".join(
        f"{_eps_label(eps)}: {_ci(int(sum(int((c.k0 > 0).sum()) for c in top if c.eps == eps)), sum(c.models for c in top if c.eps == eps))}"
        for eps in sorted({c.eps for c in top})
    )
    measured = (
        f"N={n_max} ({scale} scale), every model evaluated on all {1 << n_max} strings: K_0 > 0 in {_ci(pos, total)} "
        f"of random transformers ({by_eps}); among the {nonconst} non-constant ones: "
        f"{_ci(nonconst_pos, nonconst) if nonconst else 'none'}; {ctrl_text}."
    )
    return ClaimResult(
        "Random transformers have K_0 > 0", statement, measured, verdict, scale, details
    )


def _median_k0_nonconstant(group: list[Cell]) -> float:
    values = np.concatenate([c.k0[~c.constant] for c in group]) if group else np.zeros(0)
    return float(np.median(values)) if values.size else math.nan


def claim_bound(
    cells: list[Cell], arch_cells: list[Cell], out: FigureSink, scale: str
) -> ClaimResult:
    """Theorem 4.5 (eps = 0): K_0 ≥ N^{(D−1)/(2L) − 5}. Rule: at the largest N of each eps = 0 cell group
    ((depth, width) of the main sweep, plus the depth × width sweep at its N), reproduced if ≥ 95% of models
    meet the bound in every group where the bound is at most 2^N; inconclusive otherwise (the theorem is
    asymptotic in N, so a finite-N shortfall does not contradict it). A group whose bound exceeds 2^N is
    "not applicable": no function on N bits can meet it, so N is not yet in the theorem's regime."""
    from learnability.report.figures import finish, line_with_band, new_figure, summarise

    statement = (
        "Theorem 4.5: with eps = 0 and N large enough, a random transformer almost surely has at "
        "least N^{(D−1)/(2L) − 5} zero-sensitivity strings (D width, L depth)."
    )
    zero = [c for c in cells + arch_cells if c.eps == 0]
    if not zero:
        return _empty_claim("K_0 above the Theorem 4.5 bound", statement, scale, RANDOM)
    groups: dict[tuple, list[Cell]] = {}
    for c in zero:
        groups.setdefault((c.depth, c.width), []).append(c)
    rows, failing, details, skipped = [], [], {}, []
    for (depth, width), group in sorted(groups.items()):
        n_top = max(c.n for c in group)
        top = [c for c in group if c.n == n_top]
        bound = top[0].bound
        meets = int(sum(int((c.k0 >= bound).sum()) for c in top))
        total = sum(c.models for c in top)
        rows.append(
            [
                depth,
                width,
                n_top,
                f"{bound:.3g}",
                total,
                f"{meets / total:.3f}",
                f"{_median_k0_nonconstant(top):.4g}",
                f"{1 << n_top}",
            ]
        )
        details[f"L{depth}D{width}"] = {"n": n_top, "bound": bound, "meets": meets, "models": total}
        if bound > 1 << n_top:
            skipped.append(f"L={depth}, D={width} (bound {bound:.3g} > 2^{n_top})")
            rows[-1][5] = "n/a (bound > 2^N)"
        elif meets < 0.95 * total:
            failing.append(f"L={depth}, D={width}: {_ci(meets, total)}")
    out.table(
        Table(
            "Theorem 4.5 bound at eps = 0 (largest N per architecture)",
            [
                "depth L",
                "width D",
                "N",
                "bound N^((D−1)/(2L)−5)",
                "models",
                "fraction with K_0 ≥ bound",
                "median K_0 (non-constant)",
                "2^N",
            ],
            rows,
            "A bound below 1 is met by any model with K_0 ≥ 1 (K_0 is an integer).",
        )
    )

    fig, axes = new_figure(1, width=5.5)
    ax = axes[0]
    for (depth, width), group in sorted(groups.items()):
        if len({c.n for c in group}) < 2:
            continue
        ns = sorted({c.n for c in group})
        logs = []
        for n in ns:
            at = [c for c in group if c.n == n]
            vals = np.concatenate([c.k0[~c.constant] for c in at])
            logs.append(summarise(np.log10(vals[vals > 0])) if (vals > 0).any() else summarise([]))
        s = [type(x)(10**x.mean, 10**x.ci_low, 10**x.ci_high, x.n) for x in logs]
        line_with_band(ax, ns, s, label=f"L={depth}, D={width}: geometric mean K_0")
        grid = np.linspace(min(ns), max(ns), 50)
        ax.plot(
            grid,
            grid ** ((width - 1) / (2 * depth) - 5),
            linestyle=":",
            linewidth=1,
            label=f"bound N^({width - 1}/{2 * depth}−5)",
        )
    all_ns = sorted({c.n for c in zero})
    ax.plot(
        all_ns,
        [2.0**n for n in all_ns],
        color="grey",
        linestyle="--",
        linewidth=1,
        label="2^N (all strings)",
    )
    finish(
        ax,
        "string length N",
        "zero-sensitivity strings K_0",
        "eps = 0, non-constant models, K_0 > 0",
        logy=True,
    )
    out.add(
        "k0_growth",
        fig,
        "K_0(N) of random transformers with eps = 0 (geometric mean over non-constant models "
        "with K_0 > 0, 95% band) against Theorem 4.5's bound (dotted) and 2^N.",
    )
    measured = f"eps = 0, {scale} scale: " + "; ".join(
        f"L={r[0]}, D={r[1]}, N={r[2]}: bound {r[3]}, {r[5]} of {r[4]} models meet it"
        for r in rows
        if not r[5].startswith("n/a")
    )
    applicable = len(rows) - len(skipped)
    verdict = "reproduced" if applicable and not failing else "inconclusive"
    if failing:
        measured += ". Below 95%: " + "; ".join(failing) + " (the theorem is asymptotic in N)"
    if skipped:
        measured += (
            ". Not applicable at this N (no N-bit function can meet the bound): "
            + "; ".join(skipped)
        )
    measured += "."
    return ClaimResult(
        "K_0 above the Theorem 4.5 bound", statement, measured, verdict, scale, details
    )


def claim_growth(cells: list[Cell], out: FigureSink, scale: str) -> ClaimResult:
    """K_0 grows exponentially in N (reported, beyond the polynomial bound). For each (eps, depth, width)
    group with ≥ 3 N where the median K_0 of non-constant models is > 0, fit log K_0 against N (exponential)
    and against log N (polynomial). Rule: reproduced if the exponential fit has the higher R² with a positive
    slope in a majority of groups; not reproduced if the polynomial fit is better in a majority;
    inconclusive with fewer than 2 fitted groups or a tie."""
    from learnability.report.figures import fit_line

    statement = (
        "Summaries report K_0 possibly growing exponentially in N — far above the theorem's "
        "polynomial bound."
    )
    groups: dict[tuple, list[Cell]] = {}
    for c in cells:
        groups.setdefault((c.eps, c.depth, c.width), []).append(c)
    rows, details, exp_wins, poly_wins = [], {}, 0, 0
    for (eps, depth, width), group in sorted(groups.items()):
        ns, meds = [], []
        for n in sorted({c.n for c in group}):
            m = _median_k0_nonconstant([c for c in group if c.n == n])
            if m > 0:
                ns.append(n)
                meds.append(m)
        if len(ns) < 3:
            continue
        logk = np.log(meds)
        exp_fit = fit_line(ns, logk)
        poly_fit = fit_line(np.log(ns), logk)
        better = "exponential" if exp_fit.r2 > poly_fit.r2 else "polynomial"
        if better == "exponential" and exp_fit.slope > 0:
            exp_wins += 1
        elif better == "polynomial":
            poly_wins += 1
        key = f"{_eps_label(eps)}, L={depth}, D={width}"
        details[key] = {
            "ns": ns,
            "median_k0": meds,
            "exp_rate": exp_fit.slope,
            "exp_r2": exp_fit.r2,
            "poly_degree": poly_fit.slope,
            "poly_r2": poly_fit.r2,
        }
        rows.append(
            [
                key,
                f"{ns[0]}..{ns[-1]}",
                f"{exp_fit.slope:.3f} (×{math.exp(exp_fit.slope):.2f} per bit)",
                f"{exp_fit.r2:.3f}",
                f"{poly_fit.slope:.2f}",
                f"{poly_fit.r2:.3f}",
                better,
            ]
        )
    out.table(
        Table(
            "Growth of the median K_0 (non-constant random models) with N",
            [
                "group",
                "N",
                "log K_0 vs N: slope",
                "R² (exp)",
                "log K_0 vs log N: degree",
                "R² (poly)",
                "better fit",
            ],
            rows,
            "Over a short range of N both forms can fit; the R² difference is the evidence, not a proof.",
        )
    )
    fitted = exp_wins + poly_wins + (len(details) - exp_wins - poly_wins)
    if fitted < 2 or exp_wins == poly_wins:
        verdict = "inconclusive"
    elif exp_wins > fitted / 2:
        verdict = "reproduced"
    elif poly_wins > fitted / 2:
        verdict = "not reproduced"
    else:
        verdict = "inconclusive"
    measured = (
        f"{scale} scale, {len(details)} groups fitted (median K_0 over non-constant models per N): exponential "
        f"fit better in {exp_wins}, polynomial in {poly_wins}. "
        + "(a rate of ln 2 = 0.693 per bit is a fixed fraction of all 2^N strings). "
        + "; ".join(
            f"{k}: rate {d['exp_rate']:.3f}/bit R² {d['exp_r2']:.3f} vs degree {d['poly_degree']:.2f} "
            f"R² {d['poly_r2']:.3f}"
            for k, d in details.items()
        )
    )
    return ClaimResult("K_0 grows exponentially in N", statement, measured, verdict, scale, details)


def claim_lipschitz(cells: list[Cell], out: FigureSink, scale: str) -> ClaimResult:
    """eps > 0: the largest one-bit change of the logit, max_{x,i} |T(x) − T(x^{⊕i})|, shrinks like 1/N.

    Fit log(max change) against log N over the models of each (eps > 0, init, depth, width) group (each
    group has its own intercept). A group "shrinks like 1/N" if the slope's 95% interval is below 0 and the
    slope is within 0.35 of −1; it "does not shrink" if the interval's lower end is above −0.5. Rule:
    reproduced if ≥ 2/3 of all eps > 0 groups shrink like 1/N; not reproduced if ≥ 2/3 do not shrink;
    inconclusive otherwise. The theorem's constant depends on eps against the scale of the hidden states,
    so the measured text breaks the groups down by eps and init."""
    from learnability.report.figures import finish, fit_line, new_figure, plot_series, summarise

    name = "One-bit change shrinks like 1/N (eps > 0)"
    statement = (
        "With eps > 0 the transformer is uniformly Lipschitz: flipping one input bit moves the "
        "output by O(1/N)."
    )
    pos = [c for c in cells if c.eps > 0]
    if not pos:
        return _empty_claim(name, statement, scale, RANDOM)

    def per_n(group: list[Cell], values) -> dict:
        series: dict = {}
        for init in INIT_SCHEMES:
            g = [c for c in group if c.init == init]
            ns = sorted({c.n for c in g})
            if ns:
                series[init] = (
                    ns,
                    [summarise(np.concatenate([values(c) for c in g if c.n == n])) for n in ns],
                )
        return series

    eps_values = sorted({c.eps for c in cells})
    fig, axes = new_figure(len(eps_values) + 1, width=4.8)
    for ax, eps in zip(axes, eps_values):
        group = [c for c in cells if c.eps == eps]
        plot_series(ax, per_n(group, lambda c: c.max_flip), fmt_label=lambda k: INIT_LABELS[k])
        ns = np.asarray(sorted({c.n for c in group}), dtype=float)
        ref = float(np.nanmedian(np.concatenate([c.max_flip for c in group if c.n == ns[0]])))
        ax.plot(ns, ref * ns[0] / ns, color="black", linestyle="--", linewidth=1, label="∝ 1/N")
        finish(
            ax,
            "string length N",
            "max one-bit change of T(x)",
            _eps_label(eps),
            logx=True,
            logy=True,
        )
    top_eps = max(eps_values)
    plot_series(
        axes[-1],
        per_n(
            [c for c in cells if c.eps == top_eps],
            lambda c: c.max_flip / np.where(c.logit_range > 0, c.logit_range, np.nan),
        ),
        fmt_label=lambda k: INIT_LABELS[k],
    )
    finish(
        axes[-1],
        "string length N",
        "max one-bit change / range of T",
        f"{_eps_label(top_eps)}, relative to the range",
        logx=True,
        logy=True,
    )
    out.add(
        "lipschitz",
        fig,
        "Largest one-bit change of the output logit over all strings and bits (mean over random models of "
        "both depths, 95% band) against N, log–log, per LayerNorm eps (eps = 0 for contrast); right: the "
        "same relative to the logit's range over all strings, at the largest eps.",
    )

    details: dict[str, Any] = {}
    rows = []
    groups: dict[tuple, list[Cell]] = {}
    for c in pos:
        groups.setdefault((c.eps, c.init, c.depth, c.width), []).append(c)
    for (eps, init, depth, width), g in sorted(groups.items()):
        xs = np.concatenate([np.full(c.models, float(c.n)) for c in g])
        ys = np.concatenate([c.max_flip for c in g])
        keep = np.isfinite(ys) & (ys > 0)
        if keep.sum() < 3 or len(set(xs[keep])) < 2:
            continue
        fit = fit_line(np.log(xs[keep]), np.log(ys[keep]))
        lo, hi = fit.slope_ci
        kind = (
            "≈ 1/N" if hi < 0 and abs(fit.slope + 1) <= 0.35 else "flat" if lo > -0.5 else "between"
        )
        key = f"{_eps_label(eps)}, {INIT_LABELS[init]}, L={depth}, D={width}"
        details[key] = {"slope": fit.slope, "ci": [lo, hi], "r2": fit.r2, "kind": kind}
        rows.append([_eps_label(eps), INIT_LABELS[init], depth, width, fit.fmt(), kind])
    out.table(
        Table(
            "Slope of log max one-bit change against log N (claim: −1)",
            ["eps", "init", "depth", "width", "fit over models", "class"],
            rows,
            "≈ 1/N: interval below 0 and slope within 0.35 of −1; flat: interval above −0.5.",
        )
    )
    total = len(details)
    like = sum(d["kind"] == "≈ 1/N" for d in details.values())
    flat = sum(d["kind"] == "flat" for d in details.values())
    if total and like >= 2 * total / 3:
        verdict = "reproduced"
    elif total and flat >= 2 * total / 3:
        verdict = "not reproduced"
    else:
        verdict = "inconclusive"
    by_eps = []
    for eps in sorted({c.eps for c in pos}):
        ks = [d for k, d in details.items() if k.startswith(_eps_label(eps) + ",")]
        by_eps.append(
            f"{_eps_label(eps)}: {sum(d['kind'] == '≈ 1/N' for d in ks)} of {len(ks)} groups ≈ 1/N, "
            f"{sum(d['kind'] == 'flat' for d in ks)} flat"
        )
    xav = [
        d["slope"]
        for k, d in details.items()
        if k.startswith(_eps_label(max(eps_values))) and "Xavier" in k
    ]
    measured = (
        f"N ∈ {sorted({c.n for c in pos})}, {sum(c.models for c in pos)} random models with eps > 0 "
        f"({scale} scale), {total} (eps, init, depth, width) groups: {like} shrink like 1/N, {flat} flat. "
        + "; ".join(by_eps)
        + (
            f". Xavier slopes at {_eps_label(max(eps_values))}: "
            + ", ".join(f"{x:.2f}" for x in xav)
            if xav
            else ""
        )
        + ". Full slopes in the table."
    )
    return ClaimResult(name, statement, measured, verdict, scale, details)


def claim_measure_zero(cells: list[Cell], ctrl: dict, out: FigureSink, scale: str) -> ClaimResult:
    """Functions with no zero-sensitivity string (PARITY, FIRST, sparse parity) have measure zero: the
    fraction of random transformers with K_0 = 0 goes to 0 with N. Rule (eps = 0, the theorem's case,
    all inits and architectures pooled): reproduced if, at the largest N, the fraction's Wilson upper bound
    is < 0.05 and the fraction is not above the smallest N's; not reproduced if at the largest N the
    fraction is ≥ 0.2 or its lower bound exceeds the smallest N's upper bound (it grows); inconclusive
    otherwise."""
    from learnability.report.figures import finish, line_with_band, new_figure, wilson_interval

    statement = (
        "Functions without zero-sensitivity strings (PARITY, FIRST, sparse parity) occupy a "
        "measure-zero set of parameters: the chance that a random transformer computes one vanishes "
        "for large N."
    )
    if not cells:
        return _empty_claim("Measure zero of K_0 = 0 functions", statement, scale, RANDOM)
    fig, axes = new_figure(1, width=5.0)
    ax = axes[0]
    counts: dict[float, dict[int, tuple[int, int]]] = {}
    for eps in sorted({c.eps for c in cells}):
        group = [c for c in cells if c.eps == eps]
        ns = sorted({c.n for c in group})
        counts[eps] = {}
        for n in ns:
            at = [c for c in group if c.n == n]
            counts[eps][n] = (
                int(sum(int((c.k0 == 0).sum()) for c in at)),
                sum(c.models for c in at),
            )
        line_with_band(
            ax,
            ns,
            [_proportion(*counts[eps][n]) for n in ns],
            label=f"random transformers, {_eps_label(eps)}",
        )
    if ctrl:
        ns = sorted(ctrl)
        line_with_band(
            ax,
            ns,
            [
                _proportion(
                    int(ctrl[n]["count"]) - int(ctrl[n]["k0_positive"]), int(ctrl[n]["count"])
                )
                for n in ns
            ],
            label="random functions (measured)",
            color="black",
        )
    ax.axhline(math.exp(-1), color="grey", linestyle="--", linewidth=1, label="1/e")
    ax.set_ylim(-0.02, 0.6)
    finish(ax, "string length N", "fraction with K_0 = 0 (no zero-sensitivity string)")
    out.add(
        "measure_zero",
        fig,
        "Fraction of random transformers (all inits, depths, widths pooled) whose function "
        "has no zero-sensitivity string, with 95% Wilson intervals; random functions for reference.",
    )
    eps = 0.0 if 0.0 in counts else min(counts)
    ns = sorted(counts[eps])
    zero_top, tot_top = counts[eps][ns[-1]]
    zero_low, tot_low = counts[eps][ns[0]]
    lo_top, hi_top = wilson_interval(zero_top, tot_top)
    _lo_low, hi_low = wilson_interval(zero_low, tot_low)
    p_top, p_low = zero_top / tot_top, zero_low / tot_low
    if hi_top < 0.05 and p_top <= p_low:
        verdict = "reproduced"
    elif p_top >= 0.2 or lo_top > hi_low:
        verdict = "not reproduced"
    else:
        verdict = "inconclusive"
    measured = (
        f"{_eps_label(eps)} ({scale} scale), fraction of random transformers with K_0 = 0: "
        + ", ".join(f"N={n}: {_ci(*counts[eps][n])}" for n in ns)
        + ". Other eps: "
        + "; ".join(
            f"{_eps_label(e)}: "
            + ", ".join(f"N={n}: {z}/{t}" for n, (z, t) in sorted(counts[e].items()))
            for e in counts
            if e != eps
        )
        + (
            f". Random functions at N={max(ctrl)}: {_ci(int(ctrl[max(ctrl)]['count']) - int(ctrl[max(ctrl)]['k0_positive']), int(ctrl[max(ctrl)]['count']))}"
            if ctrl
            else ""
        )
    )
    details = {
        "eps": eps,
        "counts": {str(e): {str(n): list(v) for n, v in c.items()} for e, c in counts.items()},
    }
    return ClaimResult(
        "Measure zero of K_0 = 0 functions", statement, measured, verdict, scale, details
    )


# --------------------------------------------------------------------------------------------------
# trained models


@dataclass
class TrainedRun:
    function: str
    n: int
    seed: int
    status: str
    accuracy: float  # agreement with the target on all 2^n strings (test accuracy if not exact)
    tv: float  # total variation between the learned and the target normalised profiles
    model_k0: float
    target_k0: float


def target_profile(function: str, n: int) -> np.ndarray:
    """Exact K_0..K_n of a zoo function spec at n."""
    from learnability.boolean import resolve_function

    return profile_counts(resolve_function(function, n).truth_table(), n)


def profile_distance(a: np.ndarray | list, b: np.ndarray | list) -> float:
    """Total variation ½ Σ_k |p_k − q_k| between two profiles normalised to sum 1 (0 same, 1 disjoint)."""
    p, q = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return 0.5 * float(np.abs(p / p.sum() - q / q.sum()).sum())


def _trained_run(record: Any) -> TrainedRun | None:
    c, m = record.config, record.metrics or {}
    function, n = str(c["task"]["function"]), int(c["task"]["n"])
    if (
        record.status not in ("ok", "diverged")
        or m.get("status") == "diverged"
        or "model_counts" not in m
    ):
        return TrainedRun(
            function, n, int(c.get("seed", 0)), record.status, 0.0, math.nan, math.nan, math.nan
        )
    target = target_profile(function, n)
    acc = m.get("function_agreement", m.get("test_acc"))
    return TrainedRun(
        function=function,
        n=n,
        seed=int(c.get("seed", 0)),
        status=str(m.get("status", record.status)),
        accuracy=float(acc) if acc is not None else math.nan,
        tv=profile_distance(m["model_counts"], target),
        model_k0=float(m["model_counts"][0]),
        target_k0=float(target[0]),
    )


def claims_trained(records: list, out: FigureSink, scale: str) -> list[ClaimResult]:
    """Trained profiles. Accuracy is agreement with the target on all 2^N strings; a run "learns" the
    function at accuracy ≥ 0.99. Rules (diverged or failed runs count as not learned):
    - PARITY fails: at the largest N, reproduced if at most half the seeds learn it; not reproduced if all
      seeds learn it; inconclusive otherwise.
    - FIRST is learned at moderate N: at the middle N of the grid, reproduced if at least half the seeds
      learn it; not reproduced if none reaches 0.95; inconclusive otherwise.
    - MAJORITY is learned reliably: over every N and seed, reproduced if ≥ 80% of runs reach 0.95 (ties at
      even N make 1.0 needlessly strict); not reproduced if < 50% do; inconclusive otherwise."""
    from learnability.report.figures import finish, new_figure, plot_series, summarise

    runs = [r for r in (_trained_run(rec) for rec in records) if r is not None]
    statements = {
        "parity": "PARITY is not learned: trained models keep zero-sensitivity strings and miss PARITY's profile.",
        "first": "FIRST (dictator) is learned at moderate N, though it has no zero-sensitivity strings.",
        "majority": "MAJORITY, with exponentially many zero-sensitivity strings, is learned reliably.",
    }
    names = {
        "parity": "PARITY fails",
        "first": "FIRST learned at moderate N",
        "majority": "MAJORITY learned reliably",
    }
    if not runs:
        return [_empty_claim(names[f], statements[f], scale, TRAINED) for f in names]

    fig, axes = new_figure(2)
    for ax, attr, label in (
        (axes[0], "accuracy", "agreement with target on all 2^N strings"),
        (axes[1], "tv", "profile distance (total variation)"),
    ):
        data = {}
        for fn in TRAINED_FUNCTIONS:
            at = [r for r in runs if r.function == fn]
            ns = sorted({r.n for r in at})
            if ns:
                data[fn] = (ns, [summarise(getattr(r, attr) for r in at if r.n == n) for n in ns])
        plot_series(ax, data, fmt_label=lambda k: TRAINED_FUNCTIONS.get(k, k))
        finish(ax, "string length N", label)
    out.add(
        "trained",
        fig,
        "Trained recognisers (train job, ±1 targets, EOS readout): accuracy over all strings and "
        "the total-variation distance between the learned and the target sensitivity profile (mean over seeds, "
        "95% band).",
    )
    rows = []
    for fn in TRAINED_FUNCTIONS:
        for n in sorted({r.n for r in runs if r.function == fn}):
            at = [r for r in runs if r.function == fn and r.n == n]
            ok = [r for r in at if math.isfinite(r.tv)]
            rows.append(
                [
                    TRAINED_FUNCTIONS[fn],
                    n,
                    len(at),
                    f"{np.mean([r.accuracy for r in at]):.3f}",
                    sum(r.accuracy >= 0.99 for r in at),
                    f"{np.mean([r.tv for r in ok]):.3f}" if ok else "–",
                    f"{int(at[0].target_k0) if math.isfinite(at[0].target_k0) else '–'}",
                    f"{np.mean([r.model_k0 for r in ok]):.1f}" if ok else "–",
                ]
            )
    out.table(
        Table(
            "Trained profiles against the target's",
            [
                "function",
                "N",
                "seeds",
                "mean accuracy",
                "seeds ≥ 0.99",
                "mean TV distance",
                "target K_0",
                "learned K_0 (mean)",
            ],
            rows,
        )
    )

    def at(fn: str, n: int) -> list[TrainedRun]:
        return [r for r in runs if r.function == fn and r.n == n]

    def fmt(fn: str) -> str:
        parts = []
        for n in sorted({r.n for r in runs if r.function == fn}):
            rs = at(fn, n)
            tv = [r.tv for r in rs if math.isfinite(r.tv)]
            parts.append(
                f"N={n}: acc {', '.join(f'{r.accuracy:.3f}' for r in rs)}; learned {sum(r.accuracy >= 0.99 for r in rs)}/{len(rs)}; "
                f"TV {np.mean(tv) if tv else math.nan:.3f}; learned K_0 {np.mean([r.model_k0 for r in rs]):.0f} "
                f"(target {rs[0].target_k0:.0f})"
            )
        return f"{scale} scale, seeds per N as listed. " + " | ".join(parts)

    claims = []
    for fn in ("parity", "first", "majority"):
        fruns = [r for r in runs if r.function == fn]
        if not fruns:
            claims.append(_empty_claim(names[fn], statements[fn], scale, TRAINED))
            continue
        ns = sorted({r.n for r in fruns})
        if fn == "parity":
            top = at(fn, ns[-1])
            learned = sum(r.accuracy >= 0.99 for r in top)
            verdict = (
                "reproduced"
                if learned <= len(top) / 2
                else "not reproduced"
                if learned == len(top)
                else "inconclusive"
            )
        elif fn == "first":
            mid = at(fn, ns[len(ns) // 2])
            learned = sum(r.accuracy >= 0.99 for r in mid)
            verdict = (
                "reproduced"
                if learned >= len(mid) / 2
                else "not reproduced"
                if all(r.accuracy < 0.95 for r in mid)
                else "inconclusive"
            )
        else:
            good = sum(r.accuracy >= 0.95 for r in fruns) / len(fruns)
            verdict = (
                "reproduced" if good >= 0.8 else "not reproduced" if good < 0.5 else "inconclusive"
            )
        details = {f"N={n}": [r.accuracy for r in at(fn, n)] for n in ns}
        claims.append(ClaimResult(names[fn], statements[fn], fmt(fn), verdict, scale, details))
    return claims
