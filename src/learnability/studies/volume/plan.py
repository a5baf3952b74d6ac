"""Study `volume`, plan: what each scale runs. The paper's experimental protocol is not public in text form,
so every number here is the project's own protocol (docs/studies/volume.md, which gives the quick plan's
design by power and cost); `deviations` says what the quick scale cuts relative to the paper scale."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from learnability.studies.base import Plan

INIT_SCHEMES = ("uniform", "gaussian", "xavier_uniform", "xavier_normal")
DRAWN_SCHEMES = ("uniform", "gaussian")  # the schemes whose LayerNorm/bias draws `drawn` changes
UNIT_LN = {"ln_init": "unit", "bias_init": "zero", "readout_bias_init": "zero"}
VARIANTS: dict[str, dict[str, Any]] = {
    # the project's recogniser (post-LN, two heads) with LayerNorm 1/0, zero biases, no read-out bias
    "project": UNIT_LN,
    # the same matrices, every parameter drawn from the scheme (the pre-engine study's models)
    "drawn": {"ln_init": "scheme", "bias_init": "scheme", "readout_bias_init": "scheme"},
    # Bhattamishra et al.'s code: pre-LN, one head, their embedding draws (√D-scaled tokens)
    "cited": {**UNIT_LN, "ln": "pre", "heads": 1, "embedding_init": "cited"},
}
SPARSE = "sparse_parity:k=3,seed=0"
TRAINED_FUNCTIONS = {
    "parity": "PARITY",
    SPARSE: "3-sparse parity",
    "first": "FIRST",
    "majority": "MAJORITY",
}
BOUND_SHARE = 0.01  # Theorem 4.5 is judged where its bound is at most this share of all 2^N strings
PROTOCOL = (
    "The paper's experimental numbers and exact protocol are not public in text form, and the paper has "
    "no published code: the recogniser, grids, model counts, initialisation settings, controls and "
    "verdict rules here are the project's own protocol (docs/studies/volume.md), not the paper's."
)


@dataclass(frozen=True)
class VolumeParams:
    # random profiles, fresh weights per N: (depth L, width D) × N × init × variant
    ns: tuple[int, ...]
    archs: tuple[tuple[int, int], ...]
    models: int  # per cell of the `project` variant
    variant_models: int  # per cell of the `drawn` and `cited` variants
    eps: tuple[float, ...]  # every model of the `project` variant profiled under each (one unit)
    margins: tuple[float, ...]  # ξ relative to std_x T; 0 first
    # Theorem 4.5 cells at eps = 0
    bound_ns: tuple[int, ...]
    bound_archs: tuple[tuple[int, int], ...]
    bound_models: int
    # fixed weights across N (sinusoidal positions)
    length_ns: tuple[int, ...]
    length_arch: tuple[int, int]
    length_models: int  # per init
    length_eps: tuple[float, ...]
    directions: int  # parameter directions for the Lipschitz-in-θ estimate
    control_count: int  # uniformly random functions per N (the balanced null)
    control_draws: int  # shuffles per same-balance probability the moments do not settle
    # training: one sweep per seed (initialisation and data seed together)
    trained_ns: tuple[int, ...]
    trained_seeds: tuple[int, ...]
    trained_functions: tuple[str, ...]
    trained_model: dict[str, Any] = field(hash=False)
    trained_train: dict[str, Any] = field(hash=False)
    # random-model seed; bound cells seed + 1. Used before: 0–2 (pilot), 10–12 (stops 28–31), 40–42 (stop-28
    # pilot); 50/51 are fresh at issue 34 (round 6) for the claims it changed (k0-positive, k0-excess-trend,
    # measure-zero, bound), whose rules were written and committed before any run on them
    seed: int = 50
    length_seed: int = (
        12  # fixed weights across N (one-bit-change, lipschitz-theta: rules not changed in round 6)
    )
    informative: float = 0.9  # k0-positive: models whose same-balance P(K_0 > 0) is at most this
    variant_eps: tuple[float, ...] | None = None  # eps of the drawn and cited variants (None: eps)


# fmt: off
QUICK = Plan(
    "quick",
    VolumeParams(
        ns=(4, 6, 8, 10, 12), archs=((1, 16), (2, 16)), models=300, variant_models=12, eps=(0.0,),
        margins=(0.0, 0.01, 0.1), bound_ns=(10, 12), bound_archs=((1, 12), (2, 24), (3, 36)),
        bound_models=16, length_ns=(4, 6, 8, 10, 12), length_arch=(2, 16), length_models=16,
        length_eps=(0.0, 1e-5, 1.0), directions=1, control_count=1000, control_draws=100,
        trained_ns=(6, 10), trained_seeds=tuple(range(10, 22)), trained_functions=(SPARSE, "first", "majority"),
        trained_model={"n_layers": 2, "n_heads": 2, "d_model": 32, "d_ff": 64},
        trained_train={"steps": 3000, "batch_size": 128, "lr": 1e-3, "weight_decay": 0.0, "eval_every": 100,
                       "converge_acc": 1.0},
        variant_eps=(0.0, 1.0),
    ),
    deviations={
        "*": "Quick scale, designed by power (docs/studies/volume.md): N ≤ 12, 300 models per cell (12 in the drawn "
        "and cited variants, 16 per bound cell and per init on fixed weights), widths ≤ 36, fresh seeds. The "
        "paper-scale plan goes to N = 20 with 128–256 models per cell. Issue 36 (quick reproduce ≤ 25 min; this "
        "study ≈ 840 → ≈ 575 CPU-s): (1) the `project` random models are profiled at eps = 0 only (was 0 and 1): "
        "every claim's rule reads eps = 0; the eps = 1 and 'all' alternatives of skew, k0-positive, k0-excess-trend, "
        "measure-zero and k0-growth are not evaluated at this scale (the drawn and cited variants keep eps 0 and 1, "
        "the paper plan profiles eps 0, 1e-5, 1e-2, 1); saves ≈ 30% of those sweeps. (2) 300 models per `project` "
        "cell (was 360: the first 300 of them, the same weights): 2,400 models at the largest N instead of 2,880, "
        "intervals ≈ 9% wider (√(360/300)); skew (16 models give 80%) and k0-growth (72 per cell give 80%) keep "
        "≈ 100% power; k0-positive, k0-excess-trend and measure-zero have new rules (round 6) with no power "
        "estimate yet on seed 50; on seed 10 the old rules' power fell 68% → ≈ 60% (k0-positive v3) and 93% → "
        "≈ 90% (measure-zero v2). (3) bound cell L1 D16 dropped: its bound (316 at N = 10, 499 at N = 12) exceeds "
        "1% of 2^N at both N, so no rule judged it (the paper plan keeps it).",
        "bound": "On fresh cells (seed 41, a pilot at stop 28: docs/studies/volume.md) v3 read inconclusive "
        "(224/229 = 0.978 [0.950, 0.991]): at its 0.95 edge here, fragile. Round 6 (issue 34): v4 also asks the "
        "rate to exceed the same-balance null's (met by it with probability 0.79–0.96 per cell on seed 11), and is "
        "vacuous where the null alone clears 0.95; bound cells moved to seed 51, fresh (11 and 41 shaped the rule).",
        "k0-positive": "Round 6 (issue 34): v4 reads the largest N only (v3 pooled every N, and its 'reproduced' "
        "came from N ≤ 6: by N the paired difference ran 0.131, 0.117, 0.042, −0.002, −0.031 on seed 10); the "
        "per-N, per-architecture table and the claim k0-excess-trend show the rest. Random models moved to seed "
        "50, fresh (seeds 10 and 40 shaped this rule). Earlier: with 144 models per cell from a fresh seed (a pilot at stop 28: docs/studies/volume.md) this "
        "claim read reproduced (0.084 [0.051, 0.117], 520 informative models). Stop 29: 360 models per cell (was "
        "24, which left 80 informative models, 24% power, ≈ 400 asked; a first look at 120 per cell read "
        "reproduced, 0.090 [0.051, 0.129] on 424 informative models; each look keeps the earlier models as its "
        "first ones).",
        "measure-zero": "Round 6 (issue 34): v3 compares the K_0 = 0 rate with the same-balance null's, paired per "
        "model (v2's 'below 5%' was met by the null itself: 49/1,513 = 0.032 vs 0.030 on seed 10, 42 of the 49 "
        "dictators); random models moved to seed 50, fresh. Earlier: with 144 models per cell from a fresh seed (a pilot at stop 28) this claim read reproduced "
        "(17/610 = 0.028 [0.018, 0.044]). Stop 29, by power in two looks on seed 10: 24 models per cell gave "
        "5/103 (1% power), 120 gave 18/505 = 0.036 [0.023, 0.056] (28% power, 1,647 asked); this plan's 360 per "
        "cell was the second look (models 1–120 kept): over both looks a one-sided 2.5% error can at most double. "
        "Issue 36: 300 per cell, the first 300 of those 360 (see '*').",
        "parity-fails": "Not run at the quick scale: in the pilot no PARITY run at N = 14 left the constant "
        "predictor in 3,000 steps while N = 10 needed up to 2,900, so no affordable budget separates "
        "failing to learn from failing to start; the paper scale trains it.",
        "sparse-parity-fails": "12 seeds at N ∈ {6, 10}, a d = 32 model, 3,000 steps at lr 1e-3 (batch 128), early "
        "stop; the paper scale trains a d = 128 model (batch 1,024) for 20,000 steps at N up to 30.",
        "k0-excess-trend": "New in round 6 (issue 34), on seed 50 (fresh); no extra runs: it reads the random sweeps "
        "of k0-positive.",
        "first-learned": "as sparse-parity-fails",
        "majority-learned": "as sparse-parity-fails",
    },
    cost="about 2 minutes with 2 workers on an idle 2-core machine",
)
PAPER = Plan(
    "paper",
    VolumeParams(
        ns=(4, 6, 8, 10, 12, 14, 16, 18, 20), archs=((1, 16), (2, 16), (2, 32), (4, 64)), models=256,
        variant_models=128, eps=(0.0, 1e-5, 1e-2, 1.0), margins=(0.0, 0.01, 0.1),
        bound_ns=(10, 12, 14, 16, 18),
        bound_archs=((1, 8), (1, 12), (1, 14), (1, 16), (1, 18), (2, 16), (2, 24), (2, 28), (2, 32), (3, 36),
                     (3, 48), (4, 48), (4, 64)),
        bound_models=128, length_ns=(4, 6, 8, 10, 12, 14, 16, 18, 20), length_arch=(2, 16), length_models=32,
        length_eps=(0.0, 1e-5, 1e-2, 1.0), directions=8, control_count=10000, control_draws=1000,
        trained_ns=(6, 10, 14, 20, 30), trained_seeds=tuple(range(10)), trained_functions=tuple(TRAINED_FUNCTIONS),
        trained_model={"n_layers": 2, "n_heads": 2, "d_model": 128, "d_ff": 128},
        trained_train={"steps": 20000, "batch_size": 1024, "lr": 3e-4, "weight_decay": 0.1, "eval_every": 250,
                       "converge_acc": 1.0},
    ),
    cost="about 6e10 string evaluations (≈ 300 CPU core-hours at the ~6e4 strings/s per core measured "
    "for L2 D16; a GPU box or cluster) and up to 4e6 training steps of a D128 model at batch 1,024",
)
# fmt: on

PLANS = {"quick": QUICK, "paper": PAPER}

__all__ = [
    "BOUND_SHARE", "DRAWN_SCHEMES", "INIT_SCHEMES", "PAPER", "PLANS", "PROTOCOL", "QUICK", "SPARSE",
    "TRAINED_FUNCTIONS", "VARIANTS", "VolumeParams",
]  # fmt: skip
