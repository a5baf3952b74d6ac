"""Study `sparse_xor`, exhibits: figures (as `panels` data), tables and notes. Captions are written from
the data they show (what each curve is, where it starts and ends), never from what the curves should show."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from learnability import stats
from learnability.models.two_head_steps import Criterion
from learnability.studies import (
    Figure,
    Panel,
    Plan,
    Series,
    StudyResults,
    Table,
    mean_series,
    median,
)
from learnability.studies.sparse_xor.evidence import (
    by_d,
    ffnn_records,
    ffnn_widths,
    m_fractions,
    m_stars,
    n_star,
    population_ok,
    step_ok,
    window,
)
from learnability.studies.sparse_xor.plan import (
    KIND_LABELS,
    RIVALS,
    SEED_FRACTION,
    SUCCESS,
    SparseXorParams,
)

Item = Figure | Table | str


def _loss(values: list[float | None]) -> np.ndarray:
    return np.asarray([math.inf if v is None else v for v in values], dtype=float)


# -- one step and step size ----------------------------------------------------------------------------------
def one_step(results: StudyResults) -> list[Item]:
    recs = results.of("one_step")
    if not recs:
        return []
    grid = recs[0].metrics["log10_grid"]
    rows, lows, fractions = [], [], []
    for d, rs in by_d(recs).items():
        ok = [step_ok(r, SUCCESS) for r in rs]
        wins = [window(o, grid) for o in ok]
        have = [w for w in wins if w.lo is not None]
        lows += [(d, float(w.lo)) for w in have if w.lo is not None]
        fractions.append(Series(f"d={d}", grid, [sum(col) / len(ok) for col in zip(*ok)]))
        rows.append([
            d, rs[0].metrics["m"], f"{len(have)}/{len(rs)}",
            f"{median([w.lo for w in have]):.2f}" if have else "none",
            f"≥ {median([w.decades for w in have]):.1f}" if have and all(w.open_top for w in have) else f"{median([w.decades for w in have]):.1f}",
            f"{median([r.metrics['sign_accuracy'] for r in rs]):.3f}",
            f"{median([r.metrics['worst_case_error'] for r in rs]):.3g}",
        ])  # fmt: skip
    table = Table(
        "One population step (softmax, m = ⌈log2(d)²/2⌉)",
        ["d", "m", "draws with a working step size", "median log10 c_min", "median window (decades)",
         "median sign accuracy at the lowest-loss step", "median worst-case |f − y| bound"], rows,
        f"c = η/(d²·ln d); c_min is a draw's smallest working c on the grid 10^{grid[0]:g}..10^{grid[-1]:g}; "
        "'≥' marks windows that reach the grid's top (their upper end lies beyond it).",
    )  # fmt: skip
    a = Panel("smallest working step size", "sequence length d", "log10 c_min = log10 η_min/(d²·ln d)",
              series=[mean_series(lows, "mean and 95% CI over draws"),
                      Series("draws", [d for d, _ in lows], [c for _, c in lows], kind="points")],
              logx=True)  # fmt: skip
    b = Panel("success against the step size", "log10 c", "fraction of draws that succeed",
              series=fractions, ylim=(-0.05, 1.05))  # fmt: skip
    fig = Figure("step_size", (
        "One softmax step: (left) each draw's smallest working step size in units of the theory's d²·ln d, "
        "with the mean and 95% CI per d (the claim judges the slope of these points in log10 d); "
        "(right) the fraction of draws that succeed at each c, per d. Draws with no working step size "
        "are absent from the left panel."), [a, b])  # fmt: skip
    return [fig, table]


# -- attention kinds -----------------------------------------------------------------------------------------
def kinds(results: StudyResults, plan: Plan[SparseXorParams]) -> list[Item]:
    recs, many = results.of("kinds"), results.of("many_steps")
    if not recs:
        return []
    grid = recs[0].metrics["log10_grid"]
    loss_series, spec_series, curve_series, rows, says = [], [], [], [], []
    for kind in ("softmax", *RIVALS):
        rs = [r for r in recs if r.config["attention"] == kind]
        if not rs:
            continue
        label = KIND_LABELS[kind]
        losses = np.asarray([_loss(r.metrics["loss"]) for r in rs])
        med = np.median(losses, axis=0)
        spec = np.median(np.asarray([r.metrics["spec"] for r in rs]), axis=0)
        loss_series.append(Series(label, grid, [float(np.log10(v)) if np.isfinite(v) and v > 0 else math.nan for v in med]))  # fmt: skip
        spec_series.append(Series(label, grid, [float(np.clip(v, -0.05, 1.05)) for v in spec]))
        ok = [step_ok(r, SUCCESS) for r in rs]
        working = [grid[o.index(True)] for o in ok if any(o)]
        start = median([r.metrics["loss0"] for r in rs])
        best = int(np.argmin(med))
        ms = [r for r in many if r.config["attention"] == kind]
        steps = [r.metrics["steps_to_success"] for r in ms]
        done = [s for s in steps if s is not None]
        if ms:
            curves = [r.metrics["best_curve"] for r in ms]
            length = min(len(c) for c in curves)
            c = np.median(np.asarray([_loss(x[:length]) for x in curves]), axis=0)
            curve_series.append(Series(label, list(range(length)),
                                       [float(np.log10(max(v, 1e-16))) if np.isfinite(v) else math.nan for v in c]))  # fmt: skip
        helps = med[best] < start * (1 - 1e-3)  # does any step size lower the median loss by 0.1%?
        rows.append([
            label, f"{start:.3g}", f"{med[best]:.3g} at η = 10^{grid[best]:g}" if helps else "no step size lowers it",
            f"{len(working)}/{len(rs)}",
            f"10^{min(working):g}" if working else "none (no working step size)",
            f"{len(done)}/{len(ms)}" if ms else "—", f"{median(done):.0f}" if done else (f"> {ms[0].metrics['steps_run']}" if ms else "—"),
        ])  # fmt: skip
        verdict = "succeeds" if working else f"never reaches the bar {SUCCESS.loss}"
        if not helps:  # the step never helps: say so, not "lowest loss 1"
            lowest = "no step size on the grid lowers it by 0.1%"
        else:
            lowest = f"lowest median {med[best]:.3g} at η ≈ 10^{grid[best]:g}"
        says.append(f"{label}: median loss {start:.3g} before the step, {lowest} ({verdict})")
    d, m = recs[0].metrics["d"], recs[0].metrics["m"]
    table = Table(f"Attention kinds (d = {d}, m = {m}, same draws and step-size grid)",
                  ["kind", "median loss at η = 0", "lowest median loss over η", "draws with a working step size",
                   "smallest working η", "many-step runs that succeed", "median steps to success"], rows,
                  "A kind whose draws never succeed at any step size on the grid has no working step size; "
                  "its lowest loss is shown instead.")  # fmt: skip
    panels = [
        Panel(f"one step, d={d}", "log10 step size η", "log10 median population MSE (floored at 1e-16)", series=loss_series, hlines=[(math.log10(SUCCESS.loss), "success bar")]),
        Panel(f"one step, d={d}", "log10 step size η", "weaker head's weight on its target (median, clipped)", series=spec_series, ylim=(-0.1, 1.1)),
    ]  # fmt: skip
    if curve_series:
        panels.append(Panel("population gradient descent", "gradient step",
                            "log10 median MSE at each run's best η (floored at 1e-16)", series=curve_series))  # fmt: skip
    caption = (
        "Same draws, m and step-size grid for every kind; curves are medians over draws. "
        + "; ".join(says)
        + "."
    )
    return [Figure("attention_kinds", caption, panels), table]  # fmt: skip


# -- m* ------------------------------------------------------------------------------------------------------
def min_m(results: StudyResults) -> list[Item]:
    recs = results.of("min_m")
    if not recs:
        return []
    stars, _ = m_stars(results, SUCCESS, SEED_FRACTION, "stays")
    found = [(d, m) for d, m in stars.items() if m is not None and d >= 64]
    series = [
        Series(
            f"m* (≥ {SEED_FRACTION:.0%} of seeds)",
            [d for d, _ in found],
            [m for _, m in found],
            kind="points",
        )
    ]
    if len(found) >= 3:
        x = np.asarray([d for d, _ in found], float)
        fams: dict[str, Callable[[np.ndarray], np.ndarray]] = {"polylog A·(ln d)^k": lambda v: np.log(np.log(v)),
                                                               "power A·d^α": np.log}  # fmt: skip
        for f in stats.compare_fits(x, np.log([m for _, m in found]), fams):
            t = fams[f.name](x)
            series.append(Series(f"{f.name}: slope {f.fit.slope:.2f}, AIC {f.aic:.1f}", x.tolist(),
                                 np.exp(f.fit.predict(t)).tolist(), kind="dashed"))  # fmt: skip
    fractions = []
    for d, rs in by_d(recs).items():
        fr = m_fractions(rs, SUCCESS)
        fractions.append(Series(f"d=2^{round(math.log2(d))}", list(fr), list(fr.values())))
    rows = [
        [d, m if m is not None else "> grid", len(rs)]
        for (d, m), rs in zip(stars.items(), by_d(recs).values())
    ]
    fig = Figure("min_m", (
        f"Smallest embedding dimension m* at which one step succeeds in ≥ {SEED_FRACTION:.0%} of seeds at one "
        "shared step size (and at every larger m on the grid), against d, with the polylog and power-law fits "
        "the claim compares (left); the fraction of seeds that succeed at each m, per d (right)."),
        [Panel("smallest m", "sequence length d", "m*", series=series, logx=True, logy=True),
         Panel("success against m", "embedding dimension m", "fraction of seeds (shared step size)", series=fractions, logx=True, ylim=(-0.05, 1.05), xticks=[float(m) for m in recs[0].metrics["m_grid"]])])  # fmt: skip
    return [
        fig,
        Table(
            "Smallest m",
            ["d", "m*", "seeds"],
            rows,
            "One nested draw per seed: V_m and θ_m are prefixes of one Gaussian draw.",
        ),
    ]


# -- samples -------------------------------------------------------------------------------------------------
def samples(results: StudyResults) -> list[Item]:
    recs = results.of("samples")
    if not recs:
        return []
    seen: list[tuple[int, float]] = []
    cens: list[tuple[int, float]] = []
    for r in recs:
        if not population_ok(r, SUCCESS):
            continue
        n = n_star(r.metrics["rows"], SUCCESS)
        (seen if n else cens).append((r.config["d"], math.log10(n or r.metrics["n_max"])))
    series = [mean_series(seen, "n* (mean of log10, 95% CI)"),
              Series("draws", [d for d, _ in seen], [y for _, y in seen], kind="points"),
              Series("never within the budget (censored)", [d for d, _ in cens], [y for _, y in cens], kind="points")]  # fmt: skip
    return [Figure("samples", (
        "Strings needed for one finite-sample step (step size chosen on the training strings, scored on the "
        "exact population loss): the first n on a doubling grid from which the step keeps succeeding, per draw; "
        "draws that never succeed within the budget are drawn at the budget and kept as censored in the fit."),
        [Panel("samples needed", "sequence length d", "log10 n*", series=series, logx=True)])]  # fmt: skip


# -- FFNN ----------------------------------------------------------------------------------------------------
def _twice(m: int | None) -> int | str:
    return 2 * m if m else "— (no stable m*)"


def ffnn(results: StudyResults) -> list[Item]:
    recs = ffnn_records(results)
    if not recs:
        return []
    widths = ffnn_widths(recs, SUCCESS.loss, SEED_FRACTION)
    stars, _ = m_stars(results, Criterion(SUCCESS.loss, 0.0), SEED_FRACTION, "stays")
    net = [(w.d, w.params) for w in widths if w.params]
    tf = [(d, 2 * m) for d, m in stars.items() if m]
    series = [Series("FFNN (smallest width)", [d for d, _ in net], [p for _, p in net]),
              Series("transformer 2m*", [d for d, _ in tf], [p for _, p in tf])]  # fmt: skip
    fig = Figure("ffnn", (
        f"Trainable parameters needed to reach MSE ≤ {SUCCESS.loss} in ≥ {SEED_FRACTION:.0%} of seeds: the smallest "
        "two-layer ReLU FFNN (width·(d+2)+1 parameters; Adam, shared Trainer, 2,048 test strings) and the "
        "two-head transformer's 2m* (one population step, same loss bar, no attention-mass condition; a d "
        "where no m on the grid keeps the fraction is absent)."),
        [Panel("parameters to learn sparse XOR", "sequence length d", "trainable parameters", series=series, logx=True, logy=True)])  # fmt: skip
    ws = sorted({w for x in widths for w in x.fractions})
    rows = [[x.d, *(f"{x.fractions.get(w, math.nan):.2f}" for w in ws), x.width or "none", x.params or "—",
             _twice(stars.get(x.d))] for x in widths]  # fmt: skip
    table = Table("FFNN baseline against the transformer",
                  ["d", *(f"width {w}: seeds reaching MSE ≤ {SUCCESS.loss}" for w in ws), "smallest width",
                   "FFNN parameters", "transformer 2m*"], rows,
                  f"A width counts when ≥ {SEED_FRACTION:.0%} of its seeds reach the bar, and every larger width too.")  # fmt: skip
    return [fig, table]


def exhibits(results: StudyResults, plan: Plan[SparseXorParams]) -> list[Item]:
    out: list[Item] = [
        "Attention kinds: softmax normalises over positions; 'linear s' uses the scores as weights, 'erf(s)' "
        "applies erf element-wise, 'linear s/d' and 'erf(s)/d' divide those by d (weights of softmax's size), "
        "'sigmoid(s − ln d)' is element-wise with a bias that starts it at ≈ 1/d. The population loss and its "
        "gradient are exact (closed form); no training loop other than the FFNN's shared Trainer."
    ]
    for part in (
        one_step(results),
        kinds(results, plan),
        min_m(results),
        samples(results),
        ffnn(results),
    ):
        out += part
    return out


__all__ = ["exhibits"]
