"""Study `sparse_xor`, exhibits: figures (as `panels` data), tables and notes. Captions are written from
the data they show (what each curve is, where it starts and ends), never from what the curves should show."""

from __future__ import annotations

import math

import numpy as np

from learnability import stats
from learnability.models.two_head_steps import Criterion
from learnability.report.panels import Ref
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
from learnability.studies.sparse_xor import evidence as ev
from learnability.studies.sparse_xor.claims import POLYLOG
from learnability.studies.sparse_xor.plan import (
    KIND_LABELS,
    RIVALS,
    SEED_FRACTION,
    SUCCESS,
    SparseXorParams,
)

Item = Figure | Table | str
LOOSE = Criterion(SUCCESS.loss, 0.0)  # the FFNN comparison's bar: no attention-mass condition

# fmt: off


def _log(values: list[float | None], floor: float = 0.0) -> list[float]:
    return [math.log10(max(v, floor)) if v is not None and max(v, floor) > 0 and math.isfinite(v) else math.nan
            for v in values]


def _rates(label: str, x: list[float], hits: list[int], n: int) -> Series:
    cis = [stats.proportion(float(k), n) for k in hits]
    return Series(label, x, [e.value for e in cis], [e.lo for e in cis], [e.hi for e in cis])


def one_step(results: StudyResults) -> list[Item]:
    if not (recs := results.of("one_step")):
        return []
    e = ev.one_step(results, {"eta": "one_c"})
    grid, rows, lows, per_d = recs[0].metrics["log10_grid"], [], [], []
    for d, rs in ev.by_d(recs).items():
        ok = [ev.step_ok(r, SUCCESS) for r in rs]
        have = [w for w in (ev.window(o, grid) for o in ok) if w.lo is not None]
        lows += [(d, float(w.lo or 0)) for w in have]
        per_d.append(Series(f"d={d} (all draws)", grid, [sum(col) / len(ok) for col in zip(*ok)], kind="dashed"))
        open_top = "≥ " if have and all(w.open_top for w in have) else ""
        rows.append([d, rs[0].metrics["m"], f"{len(have)}/{len(rs)}", f"{median([w.lo for w in have]):.2f}",
                     f"{open_top}{median([w.decades for w in have]):.1f}",
                     f"{median([r.metrics['sign_accuracy'] for r in rs]):.3f}",
                     f"{median([r.metrics['worst_case_error'] for r in rs]):.3g}"])
    c_min = Panel("smallest working step size", "sequence length d", "log10 c_min = log10 η_min/(d²·ln d)",
                  series=[mean_series(lows, "mean and 95% CI over draws"),
                          Series("draws", [d for d, _ in lows], [c for _, c in lows], kind="points")],
                  hlines=[Ref(0.0, "c = 1")], logx=True)
    panels, caption = [c_min], ""
    if e.obs:
        curve, star = e.details["success_by_c"], next(iter(e.details["log10_c_star"].values()))
        n, k = curve["draws"], dict(zip(grid, curve["succeeded"]))
        marks = [(0.0, "c = 1: the theorem's order, constant 1")] + ([(star, f"c* = 10^{star:g}")] if star else [])
        panels.insert(0, Panel("success against the step size", "log10 c = log10 η/(d²·ln d)", "fraction that succeed",
                               series=[_rates(f"judged draws, all d (n = {n}; Wilson 95%)", grid, curve["succeeded"], n),
                                       *per_d], hlines=[Ref(0.0, "control: the same draws before the step", "control")],
                               vlines=marks, ylim=(-0.05, 1.05)))
        caption = (f"(left) The fraction of draws that succeed at each c = η/(d²·ln d) on the grid 10^{grid[0]:g}.."
                   f"10^{grid[-1]:g}: the judged draws pooled over d (the one-step claim's units) and every draw per d; "
                   f"judged draws succeed {k.get(0.0, 0)}/{n} at c = 1, {k.get(1.0, 0)}/{n} at c = 10"
                   + (f", {k.get(star, 0)}/{n} at c* = 10^{star:g}" if star is not None else "") + ", none before the "
                   "step. (right) ")
    caption += ("Each draw's smallest working c, with the mean and 95% CI per d (the step-size claim judges the slope "
                "of these points in log10 d); draws with no working step size are absent.")
    table = Table("One population step (softmax, m = ⌈log2(d)²/2⌉)",
                  ["d", "m", "draws with a working step size", "median log10 c_min", "median window (decades)",
                   "median sign accuracy at the lowest-loss step", "median worst-case |f − y| bound"], rows,
                  f"c_min is a draw's smallest working c on the grid 10^{grid[0]:g}..10^{grid[-1]:g}; '≥' marks windows "
                  "that reach the grid's top (their upper end lies beyond it).")
    return [Figure("one_step", "One softmax population step. " + caption, panels, claims=("one-step", "step-size")),
            table]


def kinds(results: StudyResults, plan: Plan[SparseXorParams]) -> list[Item]:
    d = plan.params.kinds_d[0]
    recs, many = ([r for r in results.of(s) if r.config["d"] == d] for s in ("kinds", "many_steps"))
    if not recs:
        return []
    grid, loss_s, spec_s, curve_s, rows = recs[0].metrics["log10_grid"], [], [], [], []
    for kind in ("softmax", *RIVALS):
        rs, label, ms = [r for r in recs if r.config["attention"] == kind], KIND_LABELS[kind], \
            [r for r in many if r.config["attention"] == kind]
        if not rs:
            continue
        med = np.median([[math.inf if v is None else v for v in r.metrics["loss"]] for r in rs], axis=0)
        loss_s.append(Series(label, grid, _log(list(med))))
        spec_s.append(Series(label, grid, list(np.clip(np.median([r.metrics["spec"] for r in rs], axis=0), -0.05, 1.05))))
        working = [grid[o.index(True)] for o in (ev.step_ok(r, SUCCESS) for r in rs) if any(o)]
        start, best = median([r.metrics["loss0"] for r in rs]), int(np.argmin(med))
        done = [s for s in (r.metrics["steps_to_success"] for r in ms) if s is not None]
        if ms:
            n = min(len(r.metrics["best_curve"]) for r in ms)
            c = np.median([[math.inf if v is None else v for v in r.metrics["best_curve"][:n]] for r in ms], axis=0)
            curve_s.append(Series(label, list(range(n)), _log(list(c), 1e-16)))
        helps = med[best] < start * (1 - 1e-3)  # does any step size lower the median loss by 0.1%?
        rows.append([label, f"{start:.3g}", f"{med[best]:.3g} at η = 10^{grid[best]:g}" if helps else "no step size lowers it",
                     f"{len(working)}/{len(rs)}", f"10^{min(working):g}" if working else "none (no working step size)",
                     f"{len(done)}/{len(ms)}" if ms else "—",
                     f"{median(done):.0f}" if done else (f"> {ms[0].metrics['steps_run']}" if ms else "—")])
    bar: list[tuple[float, str] | Ref] = [Ref(math.log10(SUCCESS.loss), "success bar", "band")]
    panels = [Panel(f"one step, d={d}", "log10 step size η", "log10 median population MSE", series=loss_s, hlines=bar),
              Panel(f"one step, d={d}", "log10 step size η", "weaker head's weight on its target (median)",
                    series=spec_s, hlines=[Ref(SUCCESS.mass, "success bar", "band")], ylim=(-0.1, 1.1))]
    if curve_s:
        panels.append(Panel("population gradient descent", "gradient step", "log10 median MSE at each run's best η",
                            series=curve_s, hlines=bar, vlines=[(10.0, "K = 10 steps")]))
    table = Table(f"Attention kinds (d = {d}, m = {recs[0].metrics['m']}, same draws and step-size grid)",
                  ["kind", "median loss at η = 0", "lowest median loss over η", "draws with a working step size",
                   "smallest working η", "many-step runs that succeed", "median steps to success"], rows,
                  "A kind whose draws never succeed at any step size on the grid has no working step size; its lowest "
                  "loss is shown instead.")
    return [Figure("attention_kinds", "Same draws, m and step-size grid for every kind (the rivals are the kind claims' "
                   "controls); medians over draws (MSE floored at 1e-16). The table gives each kind's numbers.", panels,
                   claims=("kinds-one-step", "kinds-many-steps")), table]


def min_m(results: StudyResults) -> list[Item]:
    if not (recs := results.of("min_m")):
        return []
    stars = ev.polylog_m(results, {}).details.get("m_star", {})
    head = {int(d): m for d, m in stars.get("transformer", {}).items() if m}
    series = [Series(f"m* ({g})", [int(d) for d, m in s.items() if m], [m for m in s.values() if m],
                     kind="points" if g == "transformer" else "dashed") for g, s in stars.items()]
    if len(head) >= 3:
        x = np.asarray(list(head), float)
        series += [Series(f"fit {f.name}: slope {f.fit.slope:.2f}, AIC {f.aic:.1f}", x.tolist(),
                          np.exp(f.fit.predict(POLYLOG[f.name](x))).tolist())
                   for f in stats.compare_fits(x, np.log(list(head.values())), POLYLOG)]
    groups = ev.by_d(recs)
    fractions = [Series(f"d=2^{round(math.log2(d))}", list(fr), list(fr.values()))
                 for d, rs in list(groups.items())[::2] for fr in [ev.m_fractions(rs, SUCCESS)]]
    fig = Figure("min_m", (
        f"(left) The smallest m ≤ d at which one step succeeds in ≥ {SEED_FRACTION:.0%} of seeds at one shared step "
        "size (and at every larger m on the grid), against d, with the polylog and power-law fits the claim compares "
        "(the power law is its control), and every other m* analysis its rule also requires; (right) the fraction of "
        "seeds that succeed at each m, every other d."),
        [Panel("smallest m", "sequence length d", "m*", series=series, logx=True, logy=True),
         Panel("success against m", "embedding dimension m", "fraction of seeds (shared step size)", series=fractions,
               logx=True, ylim=(-0.05, 1.05), hlines=[Ref(SEED_FRACTION, f"τ = {SEED_FRACTION}", "band")])], claims=("polylog-m",))
    rows = [[d, *(stars[g].get(str(d)) or "> grid" for g in stars), len(rs)] for d, rs in groups.items() if d >= 64]
    return [fig, Table("Smallest m under every m* analysis the rule requires", ["d", *stars, "seeds"], rows,
                       "One nested draw per seed: V_m and θ_m are prefixes of one Gaussian draw.")]


def samples(results: StudyResults) -> list[Item]:
    if not (recs := results.of("samples")):
        return []
    seen: list[tuple[int, float]] = []
    cens: list[tuple[int, float]] = []
    for r in (r for r in recs if ev.population_ok(r, SUCCESS)):
        n = ev.n_star(r.metrics["rows"], SUCCESS)
        (seen if n else cens).append((r.config["d"], math.log10(n or r.metrics["n_max"])))
    series = [mean_series(seen, "n* (mean of log10, 95% CI)"),
              Series("draws", [d for d, _ in seen], [y for _, y in seen], kind="points"),
              Series("never within the budget (censored)", [d for d, _ in cens], [y for _, y in cens], kind="points")]
    if seen:  # the slopes the rule's band names, through the smallest d's mean
        d0, ds = min(d for d, _ in seen), sorted({d for d, _ in seen + cens})
        y0 = float(np.mean([y for d, y in seen if d == d0]))
        series += [Series(f"slope {k:g} ({name})", ds, [y0 + k * math.log10(d / d0) for d in ds], kind="dashed")
                   for k, name in ((0.8, "band edge"), (1.6, "band edge"), (2.0, "d²"))]
    return [Figure("samples", (
        "Strings needed for one finite-sample step (step size chosen on the training strings, scored on the exact "
        "population loss): the first n on a doubling grid from which the step keeps succeeding, per draw; draws that "
        "never succeed within the budget are drawn at the budget and kept as censored in the fit. Dashed: the slopes "
        "of the rule's band (0.8, 1.6) and of d², through the smallest d's mean."),
        [Panel("samples needed", "sequence length d", "log10 n*", series=series, logx=True)], claims=("samples",))]


def ffnn(results: StudyResults) -> list[Item]:
    if not (recs := ev.ffnn_records(results)):
        return []
    widths = ev.ffnn_widths(recs, SUCCESS.loss, SEED_FRACTION)
    stars = {d: 2 * m for d, m in ev.m_stars(results, LOOSE, SEED_FRACTION).items() if m}
    budget = max(r.config["train"]["steps"] * r.config["train"]["batch_size"] for r in recs)
    fs = ev.finite_sample(results, LOOSE)
    net = [w for w in widths if w.params and not w.censored]  # a w* the grid does not bracket is no minimum
    cens = [f"d = {w.d}: w* {w.text()}" for w in widths if w.censored]
    sizes = [Series("FFNN minimal width w*", [w.d for w in net], [float(w.width or 0) for w in net]),
             Series("transformer m* (population step; the control)", list(stars), [v / 2 for v in stars.values()])]
    params = [Series("FFNN (smallest width)", [w.d for w in net], [float(w.params or 0) for w in net]),
              Series("transformer 2m* (population step; the control)", list(stars), list(stars.values())),
              Series("transformer 2m, finite-sample step", list(fs), [v[0] for v in fs.values()], kind="dashed")]
    strings = [Series("FFNN strings until its check (median)", [w.d for w in net], [w.strings or math.nan for w in net]),
               Series("transformer finite-sample n* (median)", list(fs), [v[1] for v in fs.values()])]
    fig = Figure("ffnn", (
        f"Both axes of the comparison, at MSE ≤ {SUCCESS.loss} in ≥ {SEED_FRACTION:.0%} of seeds: (first) the minimal "
        "sizes the claim judges, the FFNN's hidden width w* and the transformer's m*; (second) trainable "
        "parameters of the smallest two-layer ReLU FFNN (width·(d+2)+1), of the two-head transformer at its m* with the "
        "exact population gradient (the claim's control), and of its finite-sample step at m = ⌈log2(d)²/2⌉; (right) "
        f"the strings each used: the FFNN's online strings until its convergence check (budget {budget:,}) and the "
        "finite-sample step's n* (a draw that never succeeds counts as twice the ladder's budget)."
        + (" Not drawn, the width grid does not bracket w* (censored): " + "; ".join(cens) + "." if cens else "")),
        [Panel("minimal sizes", "sequence length d", "width w* / m*", series=sizes, logx=True, logy=True),
         Panel("parameters", "sequence length d", "trainable parameters", series=params, logx=True, logy=True),
         Panel("strings", "sequence length d", "training strings", series=strings, logx=True, logy=True,
               hlines=[Ref(float(budget), "FFNN budget")])], claims=("ffnn",))
    ws = sorted({w for x in widths for w in x.fractions})
    rows = [[x.d, *(f"{x.fractions.get(w, math.nan):.2f}" for w in ws), x.text(), x.params or "—",
             f"{x.strings:,.0f}" if x.strings else "—", stars.get(x.d, "—")] for x in widths]
    return [fig, Table("FFNN baseline against the transformer",
                       ["d", *(f"width {w}: seeds reaching MSE ≤ {SUCCESS.loss}" for w in ws), "smallest width",
                        "FFNN parameters", "FFNN strings (median)", "transformer 2m*"], rows,
                       f"A width counts when ≥ {SEED_FRACTION:.0%} of its seeds reach the bar, and every larger "
                       "width too; '≤ w' (every width on the grid counts) and '> w' (none does) mark a d where the "
                       "grid does not bracket the minimal width (censored).")]


def exhibits(results: StudyResults, plan: Plan[SparseXorParams]) -> list[Item]:
    note = ("Attention kinds: softmax normalises over positions; 'linear s' uses the scores as weights, 'erf(s)' applies "
            "erf element-wise, 'linear s/d' and 'erf(s)/d' divide those by d (weights of softmax's size), 'sigmoid(s − "
            "ln d)' is element-wise with a bias that starts it at ≈ 1/d. The population loss and its gradient are exact "
            "(closed form); no training loop other than the FFNN's shared Trainer.")
    return [note, *one_step(results), *kinds(results, plan), *min_m(results), *samples(results), *ffnn(results)]

# fmt: on


__all__ = ["exhibits"]
