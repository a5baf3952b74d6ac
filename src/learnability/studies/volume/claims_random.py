"""Claims on random transformers (fresh weights per N), each against the same-balance control.

Every claim reads non-constant models by default (a constant function has K_0 = 2^N and s ≡ 0
trivially), one unit per model's weights (its eps values merged by the engine when `eps = all`), and
pairs each model with a random function of exactly its acceptance counts (`boolean.balance`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from learnability import stats
from learnability.claims import (
    AllOf,
    BestFit,
    Choice,
    Choices,
    Claim,
    Contrast,
    Control,
    Evidence,
    Mean,
    Obs,
    Rate,
    Revision,
    Trend,
    Units,
    above,
    below,
)
from learnability.studies.base import Plan, StudyResults
from learnability.studies.volume.data import Row, rows, select
from learnability.studies.volume.plans import INIT_SCHEMES, VolumeParams
from learnability.studies.volume.sweeps import BOUND, CONTROL, LENGTHS, RANDOM

PRE_ENGINE = "2026-11-29"
PRE_ENGINE_WHY = "pre-engine rule (stop 9)"
MODEL, CTRL = "model", "same-balance"
LABELS = {MODEL: "random transformers", CTRL: "same-balance random functions",
          "random functions": "uniformly random functions"}  # fmt: skip

MODELS = Choice("models", "non-constant", ("near-balanced", "all"),
                "constant models have K_0 = 2^N and s ≡ 0 trivially; near-balanced models "
                "(acceptance in [0.25, 0.75]) are where a balance-matched null is least trivial")  # fmt: skip
EPS = Choice("eps", 0.0, (1e-5, 1.0, "all"),
             "eps = 0 is Theorem 4.5's case; 'all' merges each model's eps values into its unit")  # fmt: skip
MARGIN = Choice("margin", 0.0, (0.01, 0.1),
                "the paper's recogniser decides with a margin ξ whose value is not public: ξ = 0.01 "
                "and 0.1 of the logit's spread std_x T stand in for it")  # fmt: skip
INIT = Choice("init", "all", INIT_SCHEMES, "each initialisation scheme alone")
VARIANT = Choice("variant", "public", ("drawn",),
                 "LayerNorm 1/0 and zero biases (the public code) vs every parameter drawn from "
                 "U[−10, 10] / N(0, 100) (the pre-engine models)")  # fmt: skip
N_CHOICE = Choice("n", "largest", ("all",), "the largest N only, or every N pooled")

BALANCE_CONTROL = Control(
    "same-balance shuffle: a uniformly random function with the model's exact accept/reject counts "
    "(exact moments, else enumeration or simulation)", group=CTRL)  # fmt: skip


def _pick(results: StudyResults, p: VolumeParams, choices: Choices, n: Any = None) -> list[Row]:
    all_rows = rows(results, RANDOM)
    choice_n = n if n is not None else choices.get("n", "all")
    if choice_n == "largest" and all_rows:
        choice_n = max(r.n for r in all_rows)  # the grid's largest N, whatever the filter keeps
    return select(
        all_rows, p, models=choices.get("models", "non-constant"), eps=choices.get("eps", 0.0),
        margin=float(choices.get("margin", 0.0)), init=choices.get("init", "all"),
        variant=choices.get("variant", "public"), n=choice_n,
    )  # fmt: skip


def _paired(
    picked: list[Row],
    model: Callable[[Row], float],
    control: Callable[[Row], float],
    x: bool = False,
) -> list[Obs]:
    out = []
    for r in picked:
        xv = float(r.n) if x else None
        out.append(Obs(r.unit, model(r), xv, MODEL))
        out.append(Obs(r.unit, control(r), xv, CTRL))
    return out


def _describe(picked: list[Row], results: StudyResults, choices: Choices) -> str:
    if not picked:
        return ""
    ns = sorted({r.n for r in picked})
    units = len({r.unit for r in picked})
    everyone = _pick(results, _params(results), {**choices, "models": "all"})
    constant = len({r.unit for r in everyone if r.constant})
    acc = np.array([min(r.acceptance, 1 - r.acceptance) for r in picked])
    return (
        f"N ∈ {ns}; {units} models kept of {len({r.unit for r in everyone})} "
        f"({constant} constant); median minority-class share {float(np.median(acc)):.3f}"
    )


def _params(results: StudyResults) -> VolumeParams:
    assert results.plan is not None
    return results.plan.params


def _missing(what: str) -> Evidence:
    return Evidence(
        missing=f"no {what} (no finished `volume/{RANDOM}` runs kept by this selection)"
    )


# -- evidence -----------------------------------------------------------------------------------------------
def skew_evidence(results: StudyResults, choices: Choices) -> Evidence:
    picked = _pick(results, _params(results), choices)
    if not picked:
        return _missing("models")
    obs = _paired(picked, lambda r: r.s_mean, lambda r: r.ctrl_s_mean)
    zero = float(np.mean([r.profile[0] / max(sum(r.profile), 1) for r in picked]))
    notes = f"{_describe(picked, results, choices)}; mean share of strings with s = 0: {zero:.3f}"
    return Evidence(obs, notes=notes)


def k0_positive_evidence(results: StudyResults, choices: Choices) -> Evidence:
    p = _params(results)
    picked = _pick(results, p, choices)
    if not picked:
        return _missing("models")
    obs = _paired(picked, lambda r: float(r.k0 > 0), lambda r: r.ctrl_k0_positive)
    top = max(r.n for r in picked)
    balanced = [rec.metrics for rec in results.of(CONTROL) if int(rec.metrics["n"]) == top]
    if choices.get("null") == "uniform":  # the pre-engine null (1 − 1/e): independent functions
        for m in balanced:
            obs += [
                Obs(f"f{i}", float(k > 0), None, "random functions") for i, k in enumerate(m["k0"])
            ]
    rate = ", ".join(f"{sum(k > 0 for k in m['k0'])}/{len(m['k0'])}" for m in balanced)
    notes = _describe(picked, results, choices) + (
        f"; uniformly random functions at N = {top}: K_0 > 0 in {rate} (1 − 1/e = 0.632)"
        if rate
        else ""
    )
    return Evidence(obs, notes=notes)


def measure_zero_evidence(results: StudyResults, choices: Choices) -> Evidence:
    picked = _pick(results, _params(results), choices)
    if not picked:
        return _missing("models")
    obs = [Obs(r.unit, float(r.k0 == 0), None, MODEL) for r in picked]
    ctrl = stats.mean_ci([1 - r.ctrl_k0_positive for r in picked], (0.0, 1.0))
    return Evidence(
        obs,
        notes=_describe(picked, results, choices),
        details={"same_balance_k0_zero": ctrl.value},
        control=f"same-balance random functions: mean P(K_0 = 0) {ctrl.fmt()}",
    )


def growth_evidence(results: StudyResults, choices: Choices) -> Evidence:
    p = _params(results)
    if choices.get("weights", "fresh per N") == "fixed across N":
        kept = select(rows(results, LENGTHS), p, models=choices.get("models", "non-constant"),
                      eps=choices.get("eps", 0.0), init=choices.get("init", "all"))  # fmt: skip
    else:
        kept = _pick(results, p, choices, n="all")
    if not kept:
        return _missing("models")
    obs = _paired(
        kept, lambda r: math.log2(r.k0 + 1), lambda r: math.log2(r.ctrl_k0_mean + 1), x=True
    )
    return Evidence(obs, notes=_describe(kept, results, {**choices, "n": "all"}))


def bound_evidence(results: StudyResults, choices: Choices) -> Evidence:
    p = _params(results)
    everything = select(rows(results, BOUND), p, models="all", eps=0.0,
                        margin=float(choices.get("margin", 0.0)), init=choices.get("init", "all"))  # fmt: skip
    if not everything:
        return Evidence(missing=f"no finished `volume/{BOUND}` runs")
    labels = sorted({(r.depth, r.width, r.n, r.bound_label) for r in everything})
    count = {
        k: sum(1 for lab in labels if lab[3] == k) for k in ("non-trivial", "vacuous", "impossible")
    }
    cells = (
        ("non-trivial",)
        if choices.get("cells", "non-trivial") == "non-trivial"
        else ("non-trivial", "vacuous")
    )
    picked = select([r for r in everything if r.bound_label in cells], p,
                    models=choices.get("models", "non-constant"), eps=0.0,
                    margin=float(choices.get("margin", 0.0)))  # fmt: skip
    summary = (
        f"(L, D, N) cells: {count['non-trivial']} non-trivial, {count['vacuous']} vacuous (bound < 1), "
        f"{count['impossible']} impossible (bound > 2^N)"
    )
    if not count["non-trivial"]:
        return Evidence(vacuous=f"no cell has a bound between 1 and 2^N; {summary}")
    if not picked:
        return _missing("non-constant models in the judged cells")
    obs = [Obs(r.unit, float(r.meets_bound), None, MODEL) for r in picked]
    ctrl = stats.mean_ci([r.ctrl_meets_bound for r in picked], (0.0, 1.0))
    notes = (
        f"{summary}; judged: {len(picked)} models in {len({(r.depth, r.width, r.n) for r in picked})} "
        "cells"
    )
    return Evidence(
        obs,
        notes=notes,
        details={"cells": [list(c) for c in labels]},
        control=f"same-balance random functions: mean P(K_0 ≥ bound) {ctrl.fmt()}",
    )


# -- claims -------------------------------------------------------------------------------------------------
def _exp(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=float)


def _poly(x: np.ndarray) -> np.ndarray:
    return np.log(np.asarray(x, dtype=float))


def random_claims(plan: Plan[VolumeParams]) -> list[Claim]:
    common = (MODELS, EPS, MARGIN, INIT, VARIANT)
    units = Units("model", min_per_cell=10, note="one model's weights: its eps values are one unit")
    growth_fit = BestFit(MODEL, "exponential", {"exponential": _exp, "polynomial": _poly}, margin=2.0,
                         x="N", y="log2(K_0 + 1)", labels=LABELS)  # fmt: skip
    return [
        Claim(
            slug="skew",
            title="Spectra of random transformers are skewed to s = 0 beyond their balance",
            statement="Non-constant random transformers have a lower mean sensitivity s/N than random "
            "functions with exactly their acceptance counts.",
            paper_statement="Sensitivity spectra of random transformers are heavily skewed to 0, more "
            "than Theorem 4.5 predicts.",
            evidence=skew_evidence,
            rule=Contrast(
                MODEL, CTRL, below(-0.05, 0.0), what="mean s/N", labels=LABELS, version=2
            ),
            units=units,
            control=BALANCE_CONTROL,
            choices=(*common, N_CHOICE),
            history=(
                Revision(
                    Mean(MODEL, below(0.25, 0.4), what="mean s/N", labels=LABELS),
                    PRE_ENGINE,
                    f"{PRE_ENGINE_WHY}: a fixed 0.25 (half a balanced random "
                    "function's 0.5) instead of a matched control; its 'mode s = 0' "
                    "condition is dropped",
                    {"variant": "drawn", "eps": "all"},
                ),
            ),
        ),
        Claim(
            slug="k0-positive",
            title="Random transformers have zero-sensitivity strings more often than balance explains",
            statement="Among non-constant random transformers at the largest N, K_0 > 0 is more frequent "
            "than for random functions with exactly their acceptance counts.",
            paper_statement="Every random transformer computed a function with zero-sensitivity strings "
            "(K_0 > 0), versus ≈ 1 − 1/e of uniformly random functions.",
            evidence=k0_positive_evidence,
            rule=Contrast(
                MODEL, CTRL, above(0.0, 0.05), what="P(K_0 > 0)", labels=LABELS, version=2
            ),
            units=units,
            control=BALANCE_CONTROL,
            choices=(*common, N_CHOICE),
            history=(
                Revision(
                    AllOf(
                        (
                            Rate(
                                MODEL, above(0.9, 0.95), what="fraction with K_0 > 0", labels=LABELS
                            ),
                            Contrast(
                                MODEL,
                                "random functions",
                                above(-0.05, 0.0),
                                kind_of="rate",
                                what="fraction with K_0 > 0",
                                labels=LABELS,
                            ),
                        )
                    ),
                    PRE_ENGINE,
                    f"{PRE_ENGINE_WHY}: all models (constant ones included) "
                    "against uniformly random functions",
                    {"models": "all", "variant": "drawn", "eps": "all", "null": "uniform"},
                ),
            ),
        ),
        Claim(
            slug="measure-zero",
            title="Functions without zero-sensitivity strings are rare among random transformers",
            statement="At the largest N, fewer than 5% of non-constant random transformers compute a "
            "function with K_0 = 0.",
            paper_statement="Functions without zero-sensitivity strings (PARITY, FIRST, sparse parity) "
            "occupy a measure-zero set of parameters.",
            evidence=measure_zero_evidence,
            rule=Rate(
                MODEL, below(0.05, 0.2), what="fraction with K_0 = 0", labels=LABELS, version=2
            ),
            units=units,
            control=Control(
                "same-balance shuffle: P(K_0 = 0) of a random function with the model's counts"
            ),
            choices=(*common, N_CHOICE),
            history=(
                Revision(
                    Rate(MODEL, below(0.05, 0.2), what="fraction with K_0 = 0", labels=LABELS),
                    PRE_ENGINE,
                    f"{PRE_ENGINE_WHY}: every model at eps = 0, constant ones included",
                    {"models": "all", "variant": "drawn"},
                ),
            ),
        ),
        Claim(
            slug="k0-growth",
            title="K_0 grows exponentially in N, faster than balance explains",
            statement="log2(K_0 + 1) of non-constant random transformers is better fitted by a line in "
            "N than in log N, and grows faster than that of same-balance random functions.",
            paper_statement="K_0 possibly grows exponentially in N, far above the theorem's polynomial "
            "bound.",
            evidence=growth_evidence,
            rule=AllOf(
                (
                    growth_fit,
                    Trend(
                        MODEL,
                        above(0.1, 0.3),
                        x="N",
                        y="log2(K_0 + 1)",
                        controls=(CTRL,),
                        control_band=above(0.0, 0.1),
                        labels=LABELS,
                    ),
                ),
                version=2,
            ),
            units=units,
            control=BALANCE_CONTROL,
            choices=(
                MODELS,
                EPS,
                INIT,
                VARIANT,
                Choice(
                    "weights",
                    "fresh per N",
                    ("fixed across N",),
                    "the same weights at every N (sinusoidal positions): per-model slopes",
                ),
            ),
            history=(
                Revision(
                    BestFit(
                        MODEL,
                        "exponential",
                        {"exponential": _exp, "polynomial": _poly},
                        margin=2.0,
                        x="N",
                        y="log2(K_0 + 1)",
                        labels=LABELS,
                    ),
                    PRE_ENGINE,
                    f"{PRE_ENGINE_WHY}: exponential against polynomial fit only, no control",
                    {"variant": "drawn", "eps": "all"},
                ),
            ),
        ),
        Claim(
            slug="bound",
            title="Theorem 4.5's bound holds where it has content",
            statement="With eps = 0, at least 95% of non-constant random transformers in (L, D, N) cells "
            "whose bound lies between 1 and 2^N have K_0 ≥ N^((D−1)/(2L)−5).",
            paper_statement="Theorem 4.5: with eps = 0 and N large enough, a random transformer almost "
            "surely has at least N^((D−1)/(2L)−5) zero-sensitivity strings.",
            evidence=bound_evidence,
            rule=Rate(
                MODEL, above(0.9, 0.95), what="fraction with K_0 ≥ bound", labels=LABELS, version=2
            ),
            units=units,
            control=Control(
                "same-balance shuffle: P(K_0 ≥ bound) of a random function with the model's counts"
            ),
            choices=(
                MODELS,
                MARGIN,
                INIT,
                Choice(
                    "cells",
                    "non-trivial",
                    ("with vacuous",),
                    "vacuous cells (bound < 1) are met by any K_0 ≥ 1",
                ),
            ),
            history=(
                Revision(
                    Rate(MODEL, above(0.9, 0.95), what="fraction with K_0 ≥ bound", labels=LABELS),
                    PRE_ENGINE,
                    f"{PRE_ENGINE_WHY}: constant models and vacuous cells included",
                    {"models": "all", "cells": "with vacuous"},
                ),
            ),
        ),
    ]


__all__ = [
    "BALANCE_CONTROL", "CTRL", "LABELS", "MODEL", "bound_evidence", "growth_evidence",
    "k0_positive_evidence", "measure_zero_evidence", "random_claims", "skew_evidence",
]  # fmt: skip
