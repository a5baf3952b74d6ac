"""Study `volume`, evidence: stored runs as flat rows, the selections claims and exhibits share, and one
evidence function per claim. A `Row` is one random model under one LayerNorm eps and one margin ξ; its
`unit` names the model's weights, so the engine merges a model's eps and margin rows into one independent
unit. Each row carries its same-balance control (computed by the job from its own counts,
`boolean.balance`); claims read non-constant models by default (a constant function has K_0 = 2^N)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from learnability import stats
from learnability.studies import (
    Choices,
    Evidence,
    Obs,
    RegimeCheck,
    StudyResults,
    group_by,
    num,
    paired,
)
from learnability.studies.volume.plan import BOUND_SHARE, DRAWN_SCHEMES, TRAINED_FUNCTIONS
from learnability.studies.volume.sweeps import BOUND, CONTROL, LENGTHS, RANDOM, TRAINED

# fmt: off
MODEL, CTRL = "model", "same-balance"
EXCESS = "excess"  # a model's 1[K_0 > 0] minus its same-balance P(K_0 > 0): the paired difference, per model
LABELS = {MODEL: "random transformers", CTRL: "same-balance random functions",
          "random functions": "uniformly random functions",
          EXCESS: "random transformers' 1[K_0 > 0] minus their same-balance P(K_0 > 0)"}


@dataclass(frozen=True)
class Row:
    sweep: str  # "random", "bound" or "lengths"
    variant: str  # "project" / "drawn" / "cited" (plan.VARIANTS)
    depth: int
    width: int
    init: str
    n: int
    seed: int
    eps: float
    margin: float
    accept: int
    reject: int
    k0: int
    s_mean: float
    constant: bool
    meets_bound: bool
    ctrl_s_mean: float
    ctrl_k0_mean: float
    ctrl_k0_positive: float
    ctrl_meets_bound: float
    changed_vs_first_eps: int  # strings whose ξ = 0 label differs from the first eps's
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
    def bound(self) -> float:
        """Theorem 4.5's N^((D − 1)/(2L) − 5), D read as the model width d_model."""
        return float(self.n) ** ((self.width - 1) / (2 * self.depth) - 5)

    @property
    def acceptance(self) -> float:
        decided = self.accept + self.reject
        return self.accept / decided if decided else math.nan


# a stored value as its field's type (None: NaN / 0); the job's row keys are the field names
_CAST: dict[str, Callable[[Any], Any]] = {"float": num, "int": lambda v: int(v or 0), "bool": bool,
                                          "tuple[int, ...]": tuple}
_READ = {f.name: _CAST[t] for f in fields(Row) if (t := str(f.type)) in _CAST}


def _rows_of(record: Any, sweep: str, variant: str) -> list[Row]:
    c, out = record.config, []
    shape = {"sweep": sweep, "variant": variant, "depth": int(c["depth"]),
             "width": int(c["width"]), "init": str(c["init"])}
    for r in (record.metrics or {}).get("rows", []):
        values = {k: read(r.get(k)) for k, read in _READ.items()}
        out.append(Row(**values | shape | {"n": int(r.get("n", c.get("n", 0)))}))
    return out


def rows(results: StudyResults, kind: str) -> list[Row]:
    """Every row of the `random`, `bound` or `lengths` sweeps (cached on the results object)."""
    cache: dict[str, list[Row]] = results.__dict__.setdefault("_volume_rows", {})
    if kind not in cache:
        out: list[Row] = []
        for rec in results.records:
            parts = rec.sweep.split("/")
            if rec.status == "ok" and len(parts) > 1 and parts[1] == kind:
                out.extend(_rows_of(rec, kind, parts[3] if kind == RANDOM and len(parts) > 3 else "project"))
        cache[kind] = out
    return cache[kind]


SELECTION = {"models": "non-constant", "eps": 0.0, "margin": 0.0, "init": "all", "variant": "project", "n": "all"}


def select(all_rows: list[Row], choices: Mapping[str, Any] | None = None, **over: Any) -> list[Row]:
    """The rows a claim reads under its choices (`SELECTION`, then `choices`, then `over`). models: "non-constant"
    | "near-balanced" | "all"; eps: a value or "all"; variant "drawn": the pre-engine population (U/Gaussian
    with every parameter drawn, plus the Xavier schemes, the same under both); n: "all", "largest" or a length."""
    c = {**SELECTION, **{k: v for k, v in (choices or {}).items() if k in SELECTION}, **over}
    n = max((r.n for r in all_rows), default=0) if c["n"] == "largest" else c["n"]
    out = [r for r in all_rows if r.margin == float(c["margin"]) and c["eps"] in ("all", r.eps)
           and c["init"] in ("all", r.init) and (isinstance(n, str) or r.n == n)]
    if c["models"] != "all":
        out = [r for r in out if not r.constant]
    if c["models"] == "near-balanced":
        out = [r for r in out if 0.25 <= r.acceptance <= 0.75]
    if c["variant"] == "drawn":
        return [r for r in out if (r.variant == "drawn") == (r.init in DRAWN_SCHEMES)]
    return [r for r in out if r.variant == c["variant"]]


# -- random transformers against the same-balance control -------------------------------------------
def _pick(results: StudyResults, choices: Choices, **over: Any) -> list[Row]:
    return select(rows(results, RANDOM), choices, **over)


def _paired(picked: list[Row], model: Callable[[Row], float], control: Callable[[Row], float], x: bool = False) -> list[Obs]:
    """Each model beside its own same-balance control (the same unit in both groups)."""
    return paired(picked, lambda r: r.unit, {MODEL: model, CTRL: control}, (lambda r: float(r.n)) if x else None)


def _describe(picked: list[Row], results: StudyResults, choices: Choices) -> str:
    everyone = _pick(results, choices, models="all")
    constant = len({r.unit for r in everyone if r.constant})
    share = float(np.median([min(r.acceptance, 1 - r.acceptance) for r in picked]))
    return (f"N ∈ {sorted({r.n for r in picked})}; {len({r.unit for r in picked})} models kept of "
            f"{len({r.unit for r in everyone})} ({constant} constant); median minority-class share {share:.3f}")


def _missing(what: str) -> Evidence:
    return Evidence(missing=f"no {what} (no finished `volume/{RANDOM}` runs kept by this selection)")


def skew_evidence(results: StudyResults, choices: Choices) -> Evidence:
    picked = _pick(results, choices)
    if not picked:
        return _missing("models")
    zero = float(np.mean([r.profile[0] / max(sum(r.profile), 1) for r in picked]))
    notes = f"{_describe(picked, results, choices)}; mean share of strings with s = 0: {zero:.3f}"
    return Evidence(_paired(picked, lambda r: r.s_mean, lambda r: r.ctrl_s_mean), notes=notes)


def dictator(r: Row) -> bool:
    """s = 1 on every decided string: a dictator x_i or its negation (no other function has that profile)."""
    total = sum(r.profile)
    return total > 0 and len(r.profile) > 1 and r.profile[1] == total


def informative(picked: list[Row], room: float) -> list[Row]:
    """k0-positive's models: those whose same-balance P(K_0 > 0) is at most `room` (their balance leaves room)."""
    return [r for r in picked if r.ctrl_k0_positive <= room]


def _depth(picked: list[Row], choices: Choices) -> list[Row]:
    depth = choices.get("depth", "all")
    return picked if depth == "all" else [r for r in picked if r.depth == int(depth)]


def k0_positive_evidence(results: StudyResults, choices: Choices) -> Evidence:
    """v3: only models whose own balance leaves room (same-balance P(K_0 > 0) ≤ `informative`); v4: at the
    largest N (choice `n`), v3 pooled every N."""
    room = float(choices.get("informative", results.params.informative))
    picked = informative(_depth(_pick(results, choices), choices), room)
    if not picked:
        return _missing(f"models whose same-balance P(K_0 > 0) ≤ {room:g}")
    obs = _paired(picked, lambda r: float(r.k0 > 0), lambda r: r.ctrl_k0_positive)
    top = max(r.n for r in picked)
    uniform = [rec.metrics for rec in results.of(CONTROL) if int(rec.metrics["n"]) == top]
    if choices.get("null") == "uniform":  # the pre-engine null (1 − 1/e): independent functions
        obs += [Obs(f"f{i}", float(k > 0), None, "random functions") for m in uniform for i, k in enumerate(m["k0"])]
    rate = ", ".join(f"{sum(k > 0 for k in m['k0'])}/{len(m['k0'])}" for m in uniform)
    notes = f"same-balance P(K_0 > 0) ≤ {room:g}; {_describe(picked, results, choices)}" + (
        f"; uniformly random functions at N = {top}: K_0 > 0 in {rate} (1 − 1/e = 0.632)" if rate else "")
    return Evidence(obs, notes=notes)


def k0_excess_evidence(results: StudyResults, choices: Choices) -> Evidence:
    """k0-excess-trend: each informative model's paired difference 1[K_0 > 0] − same-balance P(K_0 > 0) at its
    N (fresh models per N: one unit at one N), every N."""
    room = float(choices.get("informative", results.params.informative))
    picked = informative(_depth(_pick(results, choices, n="all"), choices), room)
    if not picked:
        return _missing(f"models whose same-balance P(K_0 > 0) ≤ {room:g}")
    obs = [Obs(r.unit, float(r.k0 > 0) - r.ctrl_k0_positive, float(r.n), EXCESS) for r in picked]
    by_n = group_by(picked, lambda r: r.n)
    per_n = ", ".join(f"N = {n}: {stats.mean_ci([float(r.k0 > 0) - r.ctrl_k0_positive for r in rs]).fmt()}"
                      for n, rs in sorted(by_n.items()))
    return Evidence(obs, notes=f"same-balance P(K_0 > 0) ≤ {room:g}; paired difference by N: {per_n}; "
                    f"{_describe(picked, results, {**choices, 'n': 'all'})}")


def measure_zero_evidence(results: StudyResults, choices: Choices) -> Evidence:
    """v3: each model's 1[K_0 = 0] beside its same-balance P(K_0 = 0) (a Contrast); v2 read the first group
    alone against 5%. The notes count how many K_0 = 0 models are dictators."""
    picked = _depth(_pick(results, choices), choices)  # the depth=1 / depth=2 alternatives
    if not picked:
        return _missing("models")
    ctrl = stats.mean_ci([1 - r.ctrl_k0_positive for r in picked], (0.0, 1.0))
    hits = [r for r in picked if r.k0 == 0]
    dictators = sum(dictator(r) for r in hits)
    notes = (f"{_describe(picked, results, choices)}; {len(hits)} with K_0 = 0, of which {dictators} dictators "
             "(s = 1 on every string)")
    return Evidence(_paired(picked, lambda r: float(r.k0 == 0), lambda r: 1 - r.ctrl_k0_positive),
                    notes=notes, details={"same_balance_k0_zero": ctrl.value, "k0_zero": len(hits),
                                          "dictators": dictators},
                    control=f"same-balance random functions: mean P(K_0 = 0) {ctrl.fmt()}")


def growth_evidence(results: StudyResults, choices: Choices) -> Evidence:
    if choices.get("weights", "fresh per N") == "fixed across N":
        kept = select(rows(results, LENGTHS), choices, margin=0.0, variant="project", n="all")
    else:
        kept = _pick(results, choices, n="all")
    if not kept:
        return _missing("models")
    obs = _paired(kept, lambda r: math.log2(r.k0 + 1), lambda r: math.log2(r.ctrl_k0_mean + 1), x=True)
    return Evidence(obs, notes=_describe(kept, results, {**choices, "n": "all"}))


BOUND_RATE = 0.95  # bound: the share of models the rule asks to meet the bound (its Rate's upper edge)
CELLS = {  # which (L, D, N) cells Theorem 4.5 is judged in, by the rule version that reads them
    "small": (1.0, BOUND_SHARE),  # v3: 1 ≤ bound ≤ 1% of 2^N (the theorem's "N large enough")
    "non-trivial": (1.0, 1.0),  # v2: 1 ≤ bound ≤ 2^N
    "with vacuous": (0.0, 1.0),  # v1: every cell a K_0 can meet
}


def bound_evidence(results: StudyResults, choices: Choices) -> Evidence:
    everything = select(rows(results, BOUND), choices, models="all", eps=0.0, variant="project")
    if not everything:
        return Evidence(missing=f"no finished `volume/{BOUND}` runs")
    low, share = CELLS[choices.get("cells", "small")]
    cells = {(r.depth, r.width, r.n): r.bound for r in everything}
    judged = {c for c, b in cells.items() if low <= b <= share * 2 ** c[2]}
    summary = (f"{len(judged)} of {len(cells)} (L, D, N) cells judged ({low:g} ≤ bound ≤ {share:g}·2^N; "
               f"D = d_model): {', '.join(f'L{c[0]} D{c[1]} N{c[2]} ({cells[c]:.3g})' for c in sorted(judged))}")
    if not judged:
        return Evidence(vacuous=f"no cell has a bound in the judged range; {summary}")
    picked = select([r for r in everything if (r.depth, r.width, r.n) in judged], choices)
    if not picked:
        return _missing("non-constant models in the judged cells")
    ctrl = stats.mean_ci([r.ctrl_meets_bound for r in picked], (0.0, 1.0))
    if choices.get("null_check", "vacuous when met") == "vacuous when met" and ctrl.lo > BOUND_RATE:
        return Evidence(vacuous=f"same-balance random functions meet the bound with mean probability {ctrl.fmt()}, "
                        f"above the {BOUND_RATE:g} the rule asks: the check is met by the null alone; {summary}",
                        control=f"same-balance random functions: mean P(K_0 ≥ bound) {ctrl.fmt()}")
    return Evidence(_paired(picked, lambda r: float(r.meets_bound), lambda r: r.ctrl_meets_bound),
                    notes=f"{summary}; {len(picked)} models", details={"cells": [list(c) for c in sorted(judged)]},
                    control=f"same-balance random functions: mean P(K_0 ≥ bound) {ctrl.fmt()}")


# -- fixed weights across N -------------------------------------------------------------------------
def _logs(picked: list[Row], value: str, scaled: bool) -> list[tuple[str, float, float]]:
    """(model, log N, log(N·value) or log value) per row (no change at all has no logarithm)."""
    return [(r.unit, math.log(r.n), math.log(r.n * v if scaled else v))
            for r in picked if math.isfinite(v := getattr(r, value)) and v > 0]


def _length_obs(results: StudyResults, choices: Choices, value: str, scaled: bool) -> Evidence:
    fixed: dict[str, Any] = {"models": "all", "margin": 0.0, "n": "all"}
    if choices.get("weights") == "fresh per N":  # the pre-engine data: eps > 0 pooled, log max
        source = [r for r in rows(results, RANDOM) if r.eps > 0]
        picked, scaled = select(source, **fixed, eps="all", variant="drawn"), False
    else:
        picked = select(rows(results, LENGTHS), choices, **fixed, variant="project")
    if not picked:
        return Evidence(missing=f"no finished `volume/{LENGTHS}` runs")
    eps0 = select(rows(results, LENGTHS), choices, **fixed, eps=0.0, variant="project")
    models = group_by(_logs(eps0, value, scaled), lambda t: t[0]).values()
    slopes = [stats.ols([x for _, x, _ in m], [y for _, _, y in m]).slope for m in models]
    control = stats.mean_ci(slopes)
    what = f"log(N·{value})" if scaled else f"log {value}"
    return Evidence([Obs(u, y, x, MODEL) for u, x, y in _logs(picked, value, scaled)],
                    notes=f"N ∈ {sorted({r.n for r in picked})}, {len({r.unit for r in picked})} models",
                    details={"eps0_slope": control.value},
                    control=f"eps = 0 on the same weights (no Lipschitz guarantee): mean per-model slope of "
                    f"{what} {control.fmt()}")


def one_bit_evidence(results: StudyResults, choices: Choices) -> Evidence:
    return _length_obs(results, choices, f"{choices.get('statistic', 'max')}_flip", scaled=True)


def lipschitz_evidence(results: StudyResults, choices: Choices) -> Evidence:
    return _length_obs(results, choices, "lipschitz_theta", scaled=False)


# -- trained ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TrainedRun:
    function: str
    n: int
    seed: int
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
    """(plateaued, left the start) from a run's test-loss history: the second half's best loss is no lower than
    (1 − tolerance) × the first half's; the best loss fell below 0.9 (the constant predictor's is 1.0)."""
    losses = [v for h in history if h.get("test_loss") is not None and math.isfinite(v := float(h["test_loss"]))]
    if len(losses) < 4:
        return False, bool(losses) and min(losses) < 0.9
    half = len(losses) // 2
    return min(losses[half:]) >= (1 - tolerance) * min(losses[:half]), min(losses) < 0.9


def trained_runs(results: StudyResults) -> list[TrainedRun]:
    out = []
    for rec in results.records:  # a crashed run is not a training outcome; a diverged one is unlearned
        if rec.sweep.startswith(f"volume/{TRAINED}/") and rec.status in ("ok", "diverged"):
            c, m = rec.config, rec.metrics or {}
            flat, left = plateau(m.get("history") or [])
            out.append(TrainedRun(
                function=str(c["task"]["function"]), n=int(c["task"]["n"]), seed=int(c.get("seed", 0)),
                agreement=float(m.get("function_agreement") or 0.0), steps=int(m.get("steps") or 0),
                budget=int(c.get("train", {}).get("steps") or 0), plateaued=flat, left_start=left,
                model_k0=num(m.get("model_K0")), target_k0=num(m.get("target_K0"))))
    return out


def _steps_to_learn(runs: list[TrainedRun], function: str, at: float) -> str:
    done = {n: (sorted(r.steps for r in rs if r.learned(at)), len(rs))
            for n, rs in group_by([r for r in runs if r.function == function], lambda r: r.n).items()}
    return "; ".join(f"N = {n}: {len(s)}/{k}" + (f" in {s} steps" if s else "") for n, (s, k) in done.items())


def _tight_budget(runs: list[TrainedRun], judged: list[TrainedRun], function: str, at: float) -> str:
    """Why failing here may be failing to start, or "": every unlearned run at the judged N stayed at the constant
    predictor, while a smaller N needed over half the budget (the budget cannot tell 'slower' from 'never')."""
    unlearned = [r for r in judged if not r.learned(at)]
    if not unlearned or any(r.left_start for r in unlearned):
        return ""
    n, budget = min(r.n for r in judged), max(r.budget for r in judged)
    smaller = [r for r in runs if r.function == function and r.n < n and r.learned(at)]
    slowest = max((r.steps for r in smaller), default=0)
    if slowest * 2 <= budget:
        return ""
    return (f"all {len(unlearned)} unlearned runs at N = {n} stayed at the constant predictor (best test loss ≥ 0.9) "
            f"for the whole {budget}-step budget, while at N = {max(r.n for r in smaller if r.steps == slowest)} it took "
            f"up to {slowest} steps to learn: the budget does not separate failing to learn from failing to start")


def _units(mine: list[TrainedRun], where: str, at: float) -> list[Obs]:
    """A run per seed at one N (a seed is one initialisation), per seed learned at every N (`every`), or every
    (seed, N) run as its own unit (`all`, the v2 reading). The other functions' runs of the same seeds come
    along as context groups (the panel's grey bars): the same initialisations, so no new units."""
    if where == "every":
        return [Obs(f"s{s}", float(all(r.learned(at) for r in rs)), None, f)
                for (f, s), rs in group_by(mine, lambda r: (r.function, r.seed)).items()]
    return [Obs(f"s{r.seed}/N{r.n}", float(r.learned(at)), None, r.function) for r in mine]


def trained_evidence(function: str, default: float) -> Callable[[StudyResults, Choices], Evidence]:
    """Evidence on `function`'s runs at the largest N; learned: agreement ≥ `default` (choices: another
    N, another `learned_at`)."""
    def evidence(results: StudyResults, choices: Choices) -> Evidence:
        label = TRAINED_FUNCTIONS[function]
        if results.plan is not None and function not in results.params.trained_functions:
            return Evidence(not_run=f"this plan does not train {label} (its deviations say why)")
        runs, where = trained_runs(results), choices.get("n", "largest")
        at = float(choices.get("learned_at", default))
        ns = sorted({r.n for r in runs if r.function == function})
        if not ns:
            return Evidence(missing=f"no finished training runs of {label}")
        n = {"largest": ns[-1], "smallest": ns[0], "middle": ns[len(ns) // 2]}.get(where)
        judged = [r for r in runs if n in (None, r.n)]  # every function's runs at the judged N(s)
        mine = [r for r in judged if r.function == function]
        others = [f"{TRAINED_FUNCTIONS[fn]} {sum(r.learned(at) for r in same)}/{len(same)}"
                  for fn, same in group_by(judged, lambda r: r.function).items() if fn != function]
        control = f"N = {'all' if n is None else n}, same pipeline and budget: {', '.join(others) or 'none'}"
        majority = [r.learned(0.95) for r in judged if r.function == "majority"]
        if function != "majority" and majority and sum(majority) * 2 < len(majority):
            return Evidence(pipeline=f"MAJORITY, through the same pipeline and budget, is learned by only "
                            f"{sum(majority)}/{len(majority)} seeds", control=control)
        if function != "majority" and (still := [r for r in mine if not r.learned(at) and not r.plateaued]):
            return Evidence(pipeline=f"{len(still)} unlearned runs were still improving when the budget ran "
                            "out: 'fails' would mean 'ran out of steps'", control=control)
        tight = _tight_budget(runs, mine, function, at)
        if tight and choices.get("start_check", "budget vs smaller N") == "budget vs smaller N":
            return Evidence(pipeline=tight, control=control)
        stuck = sum(1 for r in mine if not r.left_start)
        notes = (f"N = {where if n is None else n}, learned = agreement ≥ {at:g} on all 2^N strings; steps used "
                 f"{sorted(r.steps for r in mine)}; {stuck} of {len(mine)} runs never left the constant predictor "
                 f"(best test loss ≥ 0.9); {label} learned by N: {_steps_to_learn(runs, function, at)}")
        seeds = {r.seed for r in mine}  # the same seeds at the judged N(s): context, not new units
        context = [r for r in judged if r.function != function and r.seed in seeds]
        return Evidence(_units(mine + context, where, at), notes=notes, control=control)

    return evidence


def first_learned_regime(results: StudyResults) -> RegimeCheck | None:
    """The test of the regime "N beyond the largest N at which FIRST is learned": the plan's largest N
    lies inside it only when FIRST is *not* learned there (a minority of its seeds reach agreement
    0.99). None when the plan trains no FIRST (nothing to observe)."""
    runs = [r for r in trained_runs(results) if r.function == "first"]
    if not runs:
        return None
    top = max(r.n for r in runs)
    at_top = [r for r in runs if r.n == top]
    learned = sum(r.learned(0.99) for r in at_top)
    steps = sorted(r.steps for r in at_top if r.learned(0.99))
    seen = f"FIRST learned at N = {top} (the largest trained) by {learned} of {len(at_top)} seeds" + (
        f" in {steps} steps" if steps else ""
    )
    return RegimeCheck(learned * 2 < len(at_top), seen)
