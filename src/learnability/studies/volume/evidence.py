"""Study `volume`, evidence: stored runs as flat rows, the selections the claims and exhibits share, and
one evidence function per claim.

A `Row` is one random model under one LayerNorm eps and one margin ξ. Its `unit` names the model's
weights (sweep, init, N and model seed): rows of the same model under other eps or margins share it,
so the claims engine merges them into one independent unit. The same-balance control of a row is
computed by the job from the row's own counts (`boolean.balance`): every claim on random transformers
pairs each model with a random function of exactly its acceptance counts, and reads non-constant
models by default (a constant function has K_0 = 2^N and s ≡ 0 trivially).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from learnability import stats
from learnability.studies import Choices, Evidence, Obs, StudyResults, paired
from learnability.studies.volume.plan import DRAWN_SCHEMES, TRAINED_FUNCTIONS, VolumeParams
from learnability.studies.volume.sweeps import BOUND, CONTROL, LENGTHS, RANDOM, TRAINED

MODEL, CTRL = "model", "same-balance"
LABELS = {MODEL: "random transformers", CTRL: "same-balance random functions",
          "random functions": "uniformly random functions"}  # fmt: skip


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


# -- random transformers against the same-balance control -------------------------------------------
def _pick(results: StudyResults, choices: Choices, n: Any = None) -> list[Row]:
    p = results.params
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
    """Each model beside its own same-balance control (the same unit in both groups)."""
    return paired(
        picked,
        lambda r: r.unit,
        {MODEL: model, CTRL: control},
        (lambda r: float(r.n)) if x else None,
    )


def _describe(picked: list[Row], results: StudyResults, choices: Choices) -> str:
    if not picked:
        return ""
    ns = sorted({r.n for r in picked})
    units = len({r.unit for r in picked})
    everyone = _pick(results, {**choices, "models": "all"})
    constant = len({r.unit for r in everyone if r.constant})
    acc = np.array([min(r.acceptance, 1 - r.acceptance) for r in picked])
    return (
        f"N ∈ {ns}; {units} models kept of {len({r.unit for r in everyone})} "
        f"({constant} constant); median minority-class share {float(np.median(acc)):.3f}"
    )


def _missing(what: str) -> Evidence:
    return Evidence(
        missing=f"no {what} (no finished `volume/{RANDOM}` runs kept by this selection)"
    )


def skew_evidence(results: StudyResults, choices: Choices) -> Evidence:
    picked = _pick(results, choices)
    if not picked:
        return _missing("models")
    obs = _paired(picked, lambda r: r.s_mean, lambda r: r.ctrl_s_mean)
    zero = float(np.mean([r.profile[0] / max(sum(r.profile), 1) for r in picked]))
    notes = f"{_describe(picked, results, choices)}; mean share of strings with s = 0: {zero:.3f}"
    return Evidence(obs, notes=notes)


def k0_positive_evidence(results: StudyResults, choices: Choices) -> Evidence:
    picked = _pick(results, choices)
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
    picked = _pick(results, choices)
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
    p = results.params
    if choices.get("weights", "fresh per N") == "fixed across N":
        kept = select(rows(results, LENGTHS), p, models=choices.get("models", "non-constant"),
                      eps=choices.get("eps", 0.0), init=choices.get("init", "all"))  # fmt: skip
    else:
        kept = _pick(results, choices, n="all")
    if not kept:
        return _missing("models")
    obs = _paired(
        kept, lambda r: math.log2(r.k0 + 1), lambda r: math.log2(r.ctrl_k0_mean + 1), x=True
    )
    return Evidence(obs, notes=_describe(kept, results, {**choices, "n": "all"}))


def bound_evidence(results: StudyResults, choices: Choices) -> Evidence:
    p = results.params
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


# -- fixed weights across N -------------------------------------------------------------------------
def _unit_slopes(picked: list[Row], value: str, scaled: bool) -> stats.Estimate:
    """Mean over models of the OLS slope of log(N·value) (or log value) against log N."""
    by_unit: dict[str, list[tuple[float, float]]] = {}
    for r in picked:
        v = getattr(r, value)
        if math.isfinite(v) and v > 0:
            y = math.log(r.n * v) if scaled else math.log(v)
            by_unit.setdefault(r.unit, []).append((math.log(r.n), y))
    slopes = [stats.ols([a for a, _ in pts], [b for _, b in pts]).slope for pts in by_unit.values()]
    return stats.mean_ci([s for s in slopes if math.isfinite(s)])


def _length_obs(results: StudyResults, choices: Choices, value: str, scaled: bool) -> Evidence:
    p = results.params
    eps = choices.get("eps", 1e-5)
    if (
        choices.get("weights", "fixed across N") == "fresh per N"
    ):  # the pre-engine data: eps > 0 pooled
        source = [r for r in rows(results, RANDOM) if r.eps > 0 and r.margin == 0]
        picked = select(source, p, models="all", eps="all", variant="drawn")
    else:
        picked = select(
            rows(results, LENGTHS), p, models="all", eps=eps, init=choices.get("init", "all")
        )
    if not picked:
        return Evidence(missing=f"no finished `volume/{LENGTHS}` runs")
    obs = []
    for r in picked:
        v = getattr(r, value)
        if math.isfinite(v) and v > 0:  # a table with no change at all has no logarithm
            y = (
                math.log(r.n * v)
                if scaled and choices.get("statistic") != "log max"
                else math.log(v)
            )
            obs.append(Obs(r.unit, y, math.log(r.n), MODEL))
    zero = select(rows(results, LENGTHS), p, models="all", eps=0.0, init=choices.get("init", "all"))
    control = _unit_slopes(zero, value, scaled)
    what = f"log(N·{value})" if scaled else f"log {value}"
    return Evidence(
        obs,
        notes=f"N ∈ {sorted({r.n for r in picked})}, {len({r.unit for r in picked})} models",
        details={"eps0_slope": control.value},
        control=f"eps = 0 on the same weights (no Lipschitz guarantee): mean per-model slope of {what} "
        f"{control.fmt()}",
    )


def one_bit_evidence(results: StudyResults, choices: Choices) -> Evidence:
    return _length_obs(results, choices, "max_flip", scaled=True)


def lipschitz_evidence(results: StudyResults, choices: Choices) -> Evidence:
    return _length_obs(results, choices, "lipschitz_theta", scaled=False)


# -- trained ------------------------------------------------------------------------------------------------
def _pick_n(runs: list[TrainedRun], which: str) -> int | None:
    ns = sorted({r.n for r in runs})
    if not ns:
        return None
    return ns[-1] if which == "largest" else ns[len(ns) // 2]


def _steps_to_learn(runs: list[TrainedRun], function: str, at: float) -> str:
    parts = []
    for n in sorted({r.n for r in runs if r.function == function}):
        rs = [r for r in runs if r.function == function and r.n == n]
        done = sorted(r.steps for r in rs if r.learned(at))
        parts.append(f"N = {n}: {len(done)}/{len(rs)}" + (f" in {done} steps" if done else ""))
    return "; ".join(parts)


def _tight_budget(
    runs: list[TrainedRun], judged: list[TrainedRun], function: str, at: float
) -> str:
    """Why failing here may be failing to start, or "": every unlearned run at the judged N stayed at
    the constant predictor for its whole budget, while at a smaller N the same function needed more than
    half the budget to be learned (so the budget cannot tell 'slower' from 'never')."""
    unlearned = [r for r in judged if not r.learned(at)]
    if not unlearned or any(r.left_start for r in unlearned):
        return ""
    n = min(r.n for r in judged)
    smaller = [r for r in runs if r.function == function and r.n < n and r.learned(at)]
    budget = max(r.budget for r in judged)
    slowest = max((r.steps for r in smaller), default=0)
    if not smaller or slowest * 2 <= budget:
        return ""
    return (
        f"all {len(unlearned)} unlearned runs at N = {n} stayed at the constant predictor (best test "
        f"loss ≥ 0.9) for the whole {budget}-step budget, while at N = "
        f"{max(r.n for r in smaller if r.steps == slowest)} it took up to {slowest} steps to learn: "
        "the budget does not separate failing to learn from failing to start"
    )


def trained_evidence(
    function: str, which: str, at_default: float
) -> Callable[[StudyResults, Choices], Evidence]:
    def evidence(results: StudyResults, choices: Choices) -> Evidence:
        runs = trained_runs(results)
        at = float(choices.get("learned_at", at_default))
        mine = [r for r in runs if r.function == function]
        where = choices.get("n", which)
        n = None if where == "all" else _pick_n(mine, where)
        mine = [r for r in mine if n is None or r.n == n]
        if not mine:
            return Evidence(missing=f"no finished training runs of {TRAINED_FUNCTIONS[function]}")
        others = []
        for fn, label in TRAINED_FUNCTIONS.items():
            same = [r for r in runs if r.function == fn and (n is None or r.n == n)]
            if same and fn != function:
                others.append(f"{label} {sum(r.learned(at) for r in same)}/{len(same)}")
        control = f"N = {'all' if n is None else n}, same pipeline and budget: {', '.join(others)}"
        baseline = [r for r in runs if r.function == "majority" and (n is None or r.n == n)]
        if (
            function != "majority"
            and baseline
            and sum(r.learned(0.95) for r in baseline) * 2 < len(baseline)
        ):
            return Evidence(pipeline=f"MAJORITY, through the same pipeline and budget, is learned by "
                            f"only {sum(r.learned(0.95) for r in baseline)}/{len(baseline)} seeds",
                            control=control)  # fmt: skip
        open_runs = [r for r in mine if not r.learned(at) and not r.plateaued]
        if function != "majority" and open_runs:
            return Evidence(pipeline=f"{len(open_runs)} unlearned runs were still improving when the "
                            "budget ran out: 'fails' would mean 'ran out of steps'", control=control)  # fmt: skip
        tight = _tight_budget(runs, mine, function, at)
        if tight and choices.get("start_check", "budget vs smaller N") == "budget vs smaller N":
            return Evidence(pipeline=tight, control=control)
        obs = [Obs(f"s{r.seed}/N{r.n}", float(r.learned(at)), None, function) for r in mine]
        stuck = sum(1 for r in mine if not r.left_start)
        notes = (
            f"N = {'all' if n is None else n}, learned = agreement ≥ {at:g} on all 2^N strings; "
            f"steps used {sorted(r.steps for r in mine)}; {stuck} of {len(mine)} runs never left the "
            f"constant predictor (best test loss ≥ 0.9); "
            f"{TRAINED_FUNCTIONS[function]} learned by N: {_steps_to_learn(runs, function, at)}"
        )
        return Evidence(obs, notes=notes, control=control)

    return evidence


__all__ = [
    "CTRL", "LABELS", "MODEL", "Row", "TrainedRun", "bound_evidence", "growth_evidence", "k0_positive_evidence",
    "lipschitz_evidence", "measure_zero_evidence", "one_bit_evidence", "plateau", "rows", "select",
    "skew_evidence", "trained_evidence", "trained_runs",
]  # fmt: skip
