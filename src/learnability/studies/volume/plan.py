"""Study `volume`, plan: what each scale runs. The paper's experimental protocol is not public in text form,
so every number here is the project's own protocol (docs/studies/volume.md); `deviations` says what
the quick scale cuts relative to the paper scale."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from learnability.studies.base import Plan

INIT_SCHEMES = ("uniform", "gaussian", "xavier_uniform", "xavier_normal")
DRAWN_SCHEMES = (
    "uniform",
    "gaussian",
)  # the schemes whose LayerNorm/bias draws the variant changes
VARIANTS = {
    # LayerNorm gain 1 / bias 0, zero biases, no read-out bias: the public code of Bhattamishra et al.
    "public": {"ln_init": "unit", "bias_init": "zero", "readout_bias_init": "zero"},
    # every parameter drawn from the scheme (U[−10, 10] / N(0, 100)): the pre-engine study's models
    "drawn": {"ln_init": "scheme", "bias_init": "scheme", "readout_bias_init": "scheme"},
}
SPARSE = "sparse_parity:k=3,seed=0"
TRAINED_FUNCTIONS = {
    "parity": "PARITY",
    SPARSE: "3-sparse parity",
    "first": "FIRST",
    "majority": "MAJORITY",
}
PROTOCOL = (
    "The paper's experimental numbers and exact protocol are not public in text form, and the paper has "
    "no published code: the grids, model counts, initialisation settings, controls and verdict rules "
    "here are the project's own protocol (docs/studies/volume.md), not the paper's."
)


@dataclass(frozen=True)
class VolumeParams:
    # random profiles, fresh weights per N: (depth L, width D) × N × init × variant
    ns: tuple[int, ...]
    archs: tuple[tuple[int, int], ...]
    models: int  # per cell
    eps: tuple[float, ...]  # every model profiled under each (one unit)
    margins: tuple[float, ...]  # ξ relative to std_x T; 0 first
    # Theorem 4.5 cells at eps = 0
    bound_ns: tuple[int, ...]
    bound_archs: tuple[tuple[int, int], ...]
    bound_models: int
    # fixed weights across N (sinusoidal positions)
    length_ns: tuple[int, ...]
    length_arch: tuple[int, int]
    length_models: int
    length_eps: tuple[float, ...]
    directions: int  # parameter directions for the Lipschitz-in-θ estimate
    control_count: int  # uniformly random functions per N (the balanced null)
    control_draws: int  # shuffles per same-balance probability the moments do not settle
    # training
    trained_ns: tuple[int, ...]
    trained_seeds: tuple[int, ...]
    trained_model: dict[str, Any] = field(hash=False)
    trained_train: dict[str, Any] = field(hash=False)
    near_balanced: float = 0.25  # acceptance rate in [0.25, 0.75]


# fmt: off
QUICK = Plan(
    "quick",
    VolumeParams(
        ns=(4, 6, 8, 10, 12, 14), archs=((1, 16), (2, 16)), models=12, eps=(0.0, 1e-5, 1.0),
        margins=(0.0, 0.01, 0.1),
        bound_ns=(10, 12), bound_archs=((1, 8), (1, 12), (1, 16), (1, 18), (2, 16), (2, 24), (2, 32), (3, 48), (4, 64)),
        bound_models=8,
        length_ns=(4, 6, 8, 10, 12), length_arch=(2, 16), length_models=8, length_eps=(0.0, 1e-5, 1.0),
        directions=1, control_count=1000, control_draws=100,
        trained_ns=(6, 10, 14), trained_seeds=(0, 1, 2, 3, 4),
        trained_model={"n_layers": 2, "n_heads": 2, "d_model": 32, "d_ff": 64},
        trained_train={"steps": 3000, "batch_size": 128, "lr": 1e-3, "weight_decay": 0.0, "eval_every": 100,
                       "converge_acc": 1.0},
    ),
    deviations={
        "*": "Quick scale: N ≤ 14 (bound cells N ≤ 12, fixed-weight lengths N ≤ 12), 12 models per "
        "cell (8 in the bound and length sweeps), widths ≤ 64; the paper-scale plan goes to N = 20 "
        "with 128–256 models per cell.",
        "parity-fails": "5 seeds, a d = 32 model, 3,000 steps at lr 1e-3 (batch 128) with early stop at "
        "full test accuracy; the paper scale trains the published-size model (d = 128, batch 1,024) "
        "for 20,000 steps with 10 seeds.",
        "sparse-parity-fails": "as parity-fails",
        "first-learned": "as parity-fails",
        "majority-learned": "as parity-fails",
    },
    cost="about 5 minutes with 2 workers on an idle 2-core machine (14 min measured at load 5.6)",
)
PAPER = Plan(
    "paper",
    VolumeParams(
        ns=(4, 6, 8, 10, 12, 14, 16, 18, 20), archs=((1, 16), (2, 16), (2, 32), (4, 64)), models=256,
        eps=(0.0, 1e-5, 1e-2, 1.0), margins=(0.0, 0.01, 0.1),
        bound_ns=(10, 12, 14, 16, 18),
        bound_archs=((1, 8), (1, 12), (1, 14), (1, 16), (1, 18), (2, 16), (2, 24), (2, 28), (2, 32), (3, 36),
                     (3, 48), (4, 48), (4, 64)),
        bound_models=128,
        length_ns=(4, 6, 8, 10, 12, 14, 16, 18, 20), length_arch=(2, 16), length_models=128,
        length_eps=(0.0, 1e-5, 1e-2, 1.0), directions=8, control_count=10000, control_draws=1000,
        trained_ns=(6, 10, 14, 20, 30), trained_seeds=tuple(range(10)),
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
    "DRAWN_SCHEMES", "INIT_SCHEMES", "PAPER", "PLANS", "PROTOCOL", "QUICK", "SPARSE", "TRAINED_FUNCTIONS",
    "VARIANTS", "VolumeParams",
]  # fmt: skip
