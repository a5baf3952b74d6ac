"""Study `volume`, exhibits: figures (as panel data), tables and notes — the initialisation (constant fraction and
acceptance rate per scheme), the eps pairing, the labelled Theorem 4.5 cells, spectra against the
same-balance control, one-bit changes on fixed weights, and the trained runs."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from learnability import stats
from learnability.studies import (
    Figure,
    Histogram,
    Panel,
    Plan,
    Series,
    StudyResults,
    Table,
    group_by,
    mean_series,
)
from learnability.studies.volume.evidence import (
    Row,
    dictator,
    informative,
    rows,
    select,
    trained_runs,
)
from learnability.studies.volume.plan import BOUND_SHARE, INIT_SCHEMES, PROTOCOL, TRAINED_FUNCTIONS
from learnability.studies.volume.sweeps import BOUND, CONTROL, LENGTHS, RANDOM


# fmt: off
def _q(values: list[float], q: float) -> str:
    return f"{float(np.quantile(values, q)):.3f}" if values else "–"


def init_exhibits(random: list[Row]) -> list[Any]:
    """Constant fraction vs N and acceptance rates per scheme and variant (eps = 0), and how often eps
    changes a model's function at all (the same weights under each eps, every N)."""
    base = [r for r in random if r.margin == 0]
    if not base:
        return []
    top, later = max(r.n for r in base), sorted({r.eps for r in base})[1:]
    series, hists, table = [], [], []
    for (variant, init), mine in group_by(base, lambda r: (r.variant, r.init)).items():
        zero = [r for r in mine if r.eps == 0]
        series.append(mean_series([(r.n, float(r.constant)) for r in zero], f"{init} ({variant})", rate=True))
        acc = [r.acceptance for r in zero if not r.constant and r.n == top]
        hists.append(Histogram(f"{init} ({variant})", acc, bins=[i / 20 for i in range(21)]))
        at = [r for r in zero if r.n == top]
        changed = [f"{sum(r.changed_vs_first_eps > 0 for r in mine if r.eps == e)}/{sum(r.eps == e for r in mine)}"
                   for e in later]
        table.append([variant, init, len(at), f"{sum(r.constant for r in at)}/{len(at)}", _q(acc, 0.25), _q(acc, 0.5),
                      _q(acc, 0.75), _q([r.min_abs_logit / r.logit_std for r in at if r.logit_std > 0], 0.5), *changed])
    figure = Figure(
        "init", "Random recognisers per initialisation scheme and variant (eps = 0; 'project': the project's "
        "post-LN two-head recogniser, LayerNorm 1/0 and zero biases; 'drawn': every parameter from the scheme; "
        "'cited': Bhattamishra et al.'s pre-LN one-head code). Left: fraction computing a constant function "
        f"(Wilson 95%). Right: acceptance rate of the non-constant ones at N = {top}.",
        [Panel("constant functions", "string length N", "fraction of models that are constant", series=series,
               ylim=(-0.02, 1.02)),
         Panel(f"acceptance rate, N = {top}", "fraction of strings accepted", "density", histograms=hists)],
        claims=("skew", "measure-zero", "k0-positive"))
    return [figure, Table(
        f"Initialisation at N = {top}, eps = 0, and the same weights under each LayerNorm eps (every N)",
        ["variant", "init", "models", "constant", "acceptance q25", "median", "q75", "median min|T| / std T",
         *(f"function changed, eps 0 → {e:g}" for e in later)],
        table, "Quartiles over non-constant models; min|T| / std T is a model's own decision margin. A model "
        "profiled under several eps is one unit in every claim.")]


def _cell_label(r: Row) -> str:
    big = f"bound > {BOUND_SHARE:.0%} of 2^N"
    return "vacuous" if r.bound < 1 else "impossible" if r.bound > 2**r.n else big if r.bound > BOUND_SHARE * 2**r.n else "judged"


def bound_table(bound: list[Row]) -> Table | None:
    base = [r for r in bound if r.margin == 0 and r.eps == 0]
    if not base:
        return None
    out = []
    for (depth, width, n), rs in group_by(base, lambda r: (r.depth, r.width, r.n)).items():
        nc = [r for r in rs if not r.constant]
        stds = [r.ln_min_std for r in rs if math.isfinite(r.ln_min_std)]
        norms = [r.ln_max_normaliser for r in rs if math.isfinite(r.ln_max_normaliser)]
        out.append([depth, width, n, f"{rs[0].bound:.3g}", _cell_label(rs[0]), len(rs), len(nc),
                    f"{sum(r.meets_bound for r in nc)}/{len(nc)}", _q([r.ctrl_meets_bound for r in nc], 0.5),
                    _q(stds, 0.5), _q(norms, 0.5), sum(r.ln_degenerate for r in rs)])
    return Table("Theorem 4.5 at eps = 0: every (L, D, N) cell labelled (D = d_model)",
                 ["L", "D", "N", "bound N^((D−1)/(2L)−5)", "label", "models", "non-constant", "K_0 ≥ bound (non-constant)",
                  "median same-balance P(K_0 ≥ bound)", "median min LN-input std", "median max LN normaliser",
                  "degenerate LN rows"], out, f"vacuous: bound < 1; impossible: bound > 2^N; only cells with 1 ≤ bound ≤ "
                 f"{BOUND_SHARE:.0%} of 2^N are judged (v3; v2 judged every 1 ≤ bound ≤ 2^N). The LayerNorm columns are "
                 "over every input row the forward met at eps = 0.")


def spectra_figure(random: list[Row], results: StudyResults) -> Figure | None:
    kept = select(random)  # non-constant, eps = 0, ξ = 0, project variant, every N
    if not kept:
        return None
    top = max(r.n for r in kept)
    at = [r for r in kept if r.n == top]
    bins = [i / 20 for i in range(21)]
    hist = Panel(f"mean s/N per model, N = {top}", "mean sensitivity s/N", "density", histograms=[
        Histogram("random transformers", [r.s_mean for r in at], bins),
        Histogram("same-balance random functions (exact mean)", [r.ctrl_s_mean for r in at], bins),
    ])
    pos = [mean_series([(r.n, float(r.k0 > 0)) for r in kept], "random transformers", rate=True),
           mean_series([(r.n, r.ctrl_k0_positive) for r in kept], "same-balance random functions", kind="dashed")]
    balanced = [(int(m.metrics["n"]), float(k > 0)) for m in results.of(CONTROL) for k in m.metrics["k0"]]
    if balanced:
        pos.append(mean_series(balanced, "uniformly random functions", kind="dashed", rate=True))
    ns = sorted({r.n for r in kept})
    growth = [mean_series([(r.n, math.log2(r.k0 + 1)) for r in kept], "random transformers"),
              mean_series([(r.n, math.log2(r.ctrl_k0_mean + 1)) for r in kept], "same-balance random functions", kind="dashed"),
              Series("all strings (log2 2^N = N)", ns, [float(n) for n in ns], kind="dashed", color="grey")]
    return Figure(
        "spectra", "Non-constant random transformers (eps = 0, project variant) against random "
        "functions with each model's exact acceptance counts: mean s/N, the fraction with K_0 > 0 "
        "(uniformly random functions: the pre-engine null) and log2(K_0 + 1); means with 95% intervals.",
        [hist, Panel("zero-sensitivity strings exist", "string length N", "fraction with K_0 > 0",
                     series=pos, ylim=(-0.02, 1.02)),
         Panel("growth of K_0", "string length N", "log2(K_0 + 1)", series=growth)],
        claims=("skew", "k0-positive", "k0-excess-trend", "k0-growth"))


def _diff(rs: list[Row], model: Any, null: Any) -> stats.Estimate:
    """The paired difference model − null over `rs` (one model, one unit): mean and 95% interval."""
    return stats.mean_ci([model(r) - null(r) for r in rs])


def k0_positive_table(random: list[Row], room: float) -> Table | None:
    """k0-positive and k0-excess-trend per N and per architecture (issue 34): informative non-constant project
    models (same-balance P(K_0 > 0) ≤ `room`, eps = 0, ξ = 0); for each N every model, then each (L, D), then
    each (L, D, init)."""
    kept = informative(select(random), room)
    if not kept:
        return None
    out = []
    for n, at in sorted(group_by(kept, lambda r: r.n).items()):
        groups = [("all", "all", at)]
        groups += [(f"L{d}D{w}", "all", rs) for (d, w), rs in sorted(group_by(at, lambda r: (r.depth, r.width)).items())]
        groups += [(f"L{d}D{w}", init, rs) for (d, w, init), rs in
                   sorted(group_by(at, lambda r: (r.depth, r.width, r.init)).items())]
        for arch, init, rs in groups:
            out.append([n, arch, init, len(rs), f"{sum(r.k0 > 0 for r in rs)}/{len(rs)}",
                        f"{np.mean([r.ctrl_k0_positive for r in rs]):.3f}",
                        _diff(rs, lambda r: float(r.k0 > 0), lambda r: r.ctrl_k0_positive)])
    return Table("k0-positive per N and architecture: K_0 > 0 against the same-balance null",
                 ["N", "(L, D)", "init", "informative models", "K_0 > 0", "same-balance mean P(K_0 > 0)",
                  "paired difference [95%]"], out,
                 f"Non-constant project models, eps = 0, ξ = 0, whose same-balance P(K_0 > 0) ≤ {room:g} (the models "
                 "k0-positive reads; it judges the largest N, k0-excess-trend the slope of the paired difference over "
                 "N). Each model is one unit at one N; the difference is the mean of 1[K_0 > 0] − same-balance "
                 "P(K_0 > 0) over the row's models, with its t interval.")


def measure_zero_table(random: list[Row]) -> Table | None:
    """measure-zero per N (and per (L, D)): non-constant project models at eps = 0, ξ = 0 — how many compute
    K_0 = 0, how many of those are dictators, the same-balance null's P(K_0 = 0) and the paired difference."""
    kept = select(random)
    if not kept:
        return None
    out = []
    for n, at in sorted(group_by(kept, lambda r: r.n).items()):
        groups = [("all", at)]
        groups += [(f"L{d}D{w}", rs) for (d, w), rs in sorted(group_by(at, lambda r: (r.depth, r.width)).items())]
        for arch, rs in groups:
            hits = [r for r in rs if r.k0 == 0]
            out.append([n, arch, len(rs), f"{len(hits)}/{len(rs)}", sum(dictator(r) for r in hits),
                        f"{np.mean([1 - r.ctrl_k0_positive for r in rs]):.3f}",
                        _diff(rs, lambda r: float(r.k0 == 0), lambda r: 1 - r.ctrl_k0_positive)])
    return Table("measure-zero per N: K_0 = 0 against the same-balance null",
                 ["N", "(L, D)", "non-constant models", "K_0 = 0", "of which dictators",
                  "same-balance mean P(K_0 = 0)", "paired difference [95%]"], out,
                 "Non-constant project models, eps = 0, ξ = 0, every init; measure-zero judges the largest N. A "
                 "dictator is a function with s = 1 on every string (x_i or its negation). The difference is the "
                 "mean of 1[K_0 = 0] − same-balance P(K_0 = 0), with its t interval.")


def lengths_figure(lengths: list[Row]) -> Figure | None:
    if not lengths:
        return None
    eps = 1e-5 if any(r.eps == 1e-5 for r in lengths) else max(r.eps for r in lengths)
    panels = []
    for value, label in (("max_flip", "N · max one-bit change of T"), ("mean_flip", "N · mean one-bit change of T"),
                         ("lipschitz_theta", "Lipschitz constant in θ")):
        series = []
        for init in INIT_SCHEMES:
            pts = [(r.n, getattr(r, value) * (r.n if value.endswith("flip") else 1))
                   for r in lengths if r.init == init and r.eps == eps and r.margin == 0]
            pts = [(n, math.log10(v)) for n, v in pts if math.isfinite(v) and v > 0]
            if pts:
                series.append(mean_series(pts, init))
        panels.append(Panel(label, "string length N", f"log10 {label}", series=series, logx=True))
    return Figure("lengths", f"The same random weights at every N (sinusoidal positions, eps = {eps:g}): N·max|ΔT| "
                  "and N·mean|ΔT| (bounded if one-bit changes are O(1/N)) and the finite-difference Lipschitz constant "
                  "in θ; mean over models per init, 95% intervals.", panels, claims=("one-bit-change", "lipschitz-theta"))


def trained_table(results: StudyResults) -> Table | None:
    runs = trained_runs(results)
    if not runs:
        return None
    out = [[TRAINED_FUNCTIONS[fn], n, len(rs), sum(r.learned(0.99) for r in rs), f"{np.mean([r.agreement for r in rs]):.3f}",
            int(np.median([r.steps for r in rs])), sum(r.plateaued for r in rs if not r.learned(0.99)),
            sum(r.left_start for r in rs), f"{np.nanmean([r.model_k0 for r in rs]):.0f}", f"{rs[0].target_k0:.0f}"]
           for (fn, n), rs in group_by(runs, lambda r: (r.function, r.n)).items()]
    return Table("Trained recognisers (train job, ±1 targets, EOS read-out)",
                 ["function", "N", "seeds", "learned (≥ 0.99)", "mean agreement", "median steps",
                  "unlearned and plateaued", "left the constant predictor", "learned K_0 (mean)",
                  "target K_0"], out,
                 "Runs stop at full test accuracy or at the step budget; a run has plateaued when "
                 "its best test loss did not improve over the second half of its evaluations.")


def exhibits(results: StudyResults, plan: Plan[Any]) -> list[Any]:
    random, bound, lengths = rows(results, RANDOM), rows(results, BOUND), rows(results, LENGTHS)
    units = sum(len({r.unit for r in rs}) for rs in (random, bound, lengths))
    out: list[Any] = [PROTOCOL, f"{units} random models, each drawn once and profiled exactly on all 2^N strings "
                      "under every eps and margin of its cell; the same-balance control of each is computed from "
                      "its own accept/reject counts.", *init_exhibits(random)]
    items = (bound_table(bound), spectra_figure(random, results),
             k0_positive_table(random, float(plan.params.informative)), measure_zero_table(random),
             lengths_figure(lengths), trained_table(results))
    return out + [item for item in items if item is not None]
