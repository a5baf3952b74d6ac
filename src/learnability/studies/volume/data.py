"""Stored runs of study `volume` as flat rows, and the selections the claims and exhibits share.

A `Row` is one random model under one LayerNorm eps and one margin ξ. Its `unit` names the model's
weights (sweep, init, N and model seed): rows of the same model under other eps or margins share it,
so the claims engine merges them into one independent unit. The same-balance control of a row is
computed by the job from the row's own counts (`boolean.balance`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from learnability.studies.base import StudyResults
from learnability.studies.volume.plans import DRAWN_SCHEMES, INIT_SCHEMES, VolumeParams
from learnability.studies.volume.sweeps import BOUND, LENGTHS, RANDOM, TRAINED


@dataclass(frozen=True)
class Row:
    sweep: str  # "random", "bound" or "lengths"
    variant: str  # "public" / "drawn" (LayerNorm and bias initialisation)
    depth: int
    width: int
    init: str
    n: int
    model: int
    seed: int
    eps: float
    margin: float
    accept: int
    reject: int
    k0: int
    s_mean: float
    constant: bool
    meets_bound: bool
    bound: float
    bound_label: str
    ctrl_s_mean: float
    ctrl_k0_mean: float
    ctrl_k0_positive: float
    ctrl_meets_bound: float
    changed: int  # strings whose ξ = 0 label differs from the first eps's
    max_flip: float
    mean_flip: float
    logit_std: float
    min_abs_logit: float
    ln_min_std: float
    ln_max_normaliser: float
    ln_degenerate: int
    lipschitz_theta: float
    profile: tuple[int, ...]

    @property
    def unit(self) -> str:
        """The model's weights: the same under every eps and margin (and across N in `lengths`)."""
        n = "" if self.sweep == LENGTHS else f"/N{self.n}"
        return f"{self.sweep}/{self.variant}/L{self.depth}D{self.width}/{self.init}{n}/{self.seed}"

    @property
    def acceptance(self) -> float:
        decided = self.accept + self.reject
        return self.accept / decided if decided else math.nan

    def near_balanced(self, band: float) -> bool:
        return band <= self.acceptance <= 1 - band


def _f(value: Any) -> float:
    return math.nan if value is None else float(value)


def _rows_of(record: Any, sweep: str, variant: str) -> list[Row]:
    c, m = record.config, record.metrics or {}
    out = []
    for r in m.get("rows", []):
        n = int(r.get("n", c.get("n", 0)))
        out.append(Row(
            sweep=sweep, variant=variant, depth=int(c["depth"]), width=int(c["width"]),
            init=str(c["init"]), n=n, model=int(r["model"]), seed=int(r["seed"]),
            eps=float(r["eps"]), margin=float(r["margin"]), accept=int(r["accept"]),
            reject=int(r["reject"]), k0=int(r["k0"]), s_mean=_f(r["s_mean"]),
            constant=bool(r["constant"]), meets_bound=bool(r["meets_bound"]),
            bound=float(n) ** ((int(c["width"]) - 1) / (2 * int(c["depth"])) - 5),
            bound_label=str(m.get("bound_label", "")), ctrl_s_mean=_f(r["ctrl_s_mean"]),
            ctrl_k0_mean=_f(r["ctrl_k0_mean"]), ctrl_k0_positive=_f(r["ctrl_k0_positive"]),
            ctrl_meets_bound=_f(r["ctrl_meets_bound"]), changed=int(r["changed_vs_first_eps"]),
            max_flip=_f(r["max_flip"]), mean_flip=_f(r["mean_flip"]), logit_std=_f(r["logit_std"]),
            min_abs_logit=_f(r["min_abs_logit"]), ln_min_std=_f(r["ln_min_std"]),
            ln_max_normaliser=_f(r["ln_max_normaliser"]), ln_degenerate=int(r["ln_degenerate"] or 0),
            lipschitz_theta=_f(r.get("lipschitz_theta")), profile=tuple(r["profile"]),
        ))  # fmt: skip
    return out


def rows(results: StudyResults, kind: str) -> list[Row]:
    """Every row of the `random`, `bound` or `lengths` sweeps (cached on the results object)."""
    cache: dict[str, list[Row]] = results.__dict__.setdefault("_volume_rows", {})
    if kind not in cache:
        out: list[Row] = []
        for rec in results.records:
            parts = rec.sweep.split("/")
            if rec.status != "ok" or len(parts) < 2 or parts[1] != kind:
                continue
            variant = parts[3] if kind == RANDOM and len(parts) > 3 else "public"
            out.extend(_rows_of(rec, kind, variant))
        cache[kind] = out
    return cache[kind]


def select(
    all_rows: list[Row],
    p: VolumeParams,
    *,
    models: str = "non-constant",
    eps: Any = 0.0,
    margin: float = 0.0,
    init: str = "all",
    variant: str = "public",
    n: str | int = "all",
) -> list[Row]:
    """The rows a claim reads under one set of analysis choices.

    models: "non-constant" | "near-balanced" (acceptance in [b, 1 − b]) | "all"; eps: a value or "all";
    variant "drawn" means the pre-engine population: U/Gaussian with every parameter drawn, plus the
    Xavier schemes (identical under both variants); n: "all", "largest" or a length."""
    out = [r for r in all_rows if r.margin == margin and (eps == "all" or r.eps == float(eps))]
    if variant == "drawn":
        out = [r for r in out if (r.variant == "drawn") == (r.init in DRAWN_SCHEMES)]
    else:
        out = [r for r in out if r.variant == variant]
    if init != "all":
        out = [r for r in out if r.init == init]
    if models == "non-constant":
        out = [r for r in out if not r.constant]
    elif models == "near-balanced":
        out = [r for r in out if not r.constant and r.near_balanced(p.near_balanced)]
    if n == "largest" and out:
        top = max(r.n for r in out)
        out = [r for r in out if r.n == top]
    elif isinstance(n, int):
        out = [r for r in out if r.n == n]
    return out


# -- trained runs -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TrainedRun:
    function: str
    n: int
    seed: int
    status: str
    agreement: float  # agreement with the target on all 2^n strings
    steps: int
    budget: int  # the step budget of its config
    plateaued: bool  # did not improve its test loss over the last half of its evaluations
    left_start: bool  # best test loss below 0.9 of the constant predictor's (1.0 on ±1 targets)
    model_k0: float
    target_k0: float

    def learned(self, at: float) -> bool:
        return self.agreement >= at


def plateau(history: list[dict[str, Any]], tolerance: float = 0.02) -> tuple[bool, bool]:
    """(plateaued, left the start) from a run's evaluation history of test loss.

    Plateaued: the best test loss of the second half of the evaluations is no lower than (1 −
    tolerance) × the best of the first half. Left the start: the best loss fell below 0.9 (the
    constant predictor scores 1.0 on ±1 targets)."""
    losses = [float(h["test_loss"]) for h in history if h.get("test_loss") is not None]
    losses = [v for v in losses if math.isfinite(v)]
    if len(losses) < 4:
        return False, bool(losses) and min(losses) < 0.9
    half = len(losses) // 2
    return min(losses[half:]) >= (1 - tolerance) * min(losses[:half]), min(losses) < 0.9


def trained_runs(results: StudyResults) -> list[TrainedRun]:
    out = []
    for rec in results.records:
        if not rec.sweep.startswith(f"volume/{TRAINED}/"):
            continue
        if rec.status not in ("ok", "diverged"):  # a crashed run is not a training outcome
            continue
        c, m = rec.config, rec.metrics or {}
        agreement = m.get("function_agreement")  # absent when diverged: not learned
        flat, left = plateau(m.get("history") or [])
        out.append(TrainedRun(
            function=str(c["task"]["function"]), n=int(c["task"]["n"]), seed=int(c.get("seed", 0)),
            status=str(m.get("status", rec.status)), agreement=0.0 if agreement is None else float(agreement),
            steps=int(m.get("steps") or 0), budget=int(c.get("train", {}).get("steps") or 0),
            plateaued=flat, left_start=left,
            model_k0=_f(m.get("model_K0")), target_k0=_f(m.get("target_K0")),
        ))  # fmt: skip
    return out


__all__ = [
    "BOUND",
    "INIT_SCHEMES",
    "Row",
    "TrainedRun",
    "plateau",
    "rows",
    "select",
    "trained_runs",
]
