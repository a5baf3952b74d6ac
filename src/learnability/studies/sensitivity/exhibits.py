"""Study `sensitivity`, exhibits: figures (as `panels` data) and tables. Proportions (accuracy, converged share) get
intervals inside [0, 1]: Wilson for counts, a bootstrap over runs for mean accuracies. Real-valued
targets (MEAN) get no accuracy panel."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from learnability import stats
from learnability.measure.bounds import bound_radius
from learnability.measure.length import REFERENCE
from learnability.studies import (
    Figure,
    Histogram,
    Panel,
    Plan,
    Series,
    StudyResults,
    Table,
    grouped_series,
)
from learnability.studies.sensitivity.evidence import ALIGN, LABELS, REAL_VALUED, n_of, num, task_of
from learnability.studies.sensitivity.plan import FIT_LOSS, SensitivityParams

ORDER = ["parity", "sparse_half", "majority", "first", "mean"]


def _tasks(records: list[Any]) -> list[str]:
    found = {task_of(r) for r in records}
    return [t for t in ORDER if t in found] + sorted(found - set(ORDER))


def _mean_accuracy(points: Iterable[tuple[Any, float]], label: str) -> Series:
    """Mean accuracy per x with a bootstrap interval over runs (stays inside [0, 1])."""
    by_x: dict[Any, list[float]] = defaultdict(list)
    for x, y in points:
        by_x[x].append(y)
    xs = sorted(by_x)
    est = [stats.bootstrap_ci(by_x[x], lambda v: statistics.fmean(v)) for x in xs]  # type: ignore[arg-type]
    return Series(label, xs, [e.value for e in est], [e.lo for e in est], [e.hi for e in est])


def _converged(r: Any) -> bool:
    return num(r.metrics.get("test_loss")) < FIT_LOSS


def scaling(results: StudyResults) -> list[Figure | Table]:
    runs = results.of("scaling")
    if not runs:
        return []
    tasks = _tasks(runs)
    rows = []
    for task in tasks:
        for n in sorted({n_of(r) for r in runs if task_of(r) == task}):
            cell = [r for r in runs if task_of(r) == task and n_of(r) == n]
            n_conv = sum(_converged(r) for r in cell)
            fits = [
                num(r.metrics.get("fit_step"))
                for r in cell
                if r.metrics.get("fit_step") is not None
            ]
            lo, hi = stats.wilson(n_conv, len(cell))
            acc = (
                "—"
                if task in REAL_VALUED
                else f"{statistics.fmean(num(r.metrics.get('test_acc')) for r in cell):.3f}"
            )
            rows.append([LABELS.get(task, task), n, len(cell), f"{n_conv}/{len(cell)} [{lo:.2f}, {hi:.2f}]",
                         f"{len(fits)}/{len(cell)}", f"{statistics.median(fits):.0f}" if fits else "—", acc])  # fmt: skip
    table = Table("Scaling: convergence at the fixed budget and steps to fit",
                  ["task", "n", "runs", "converged at the end (MSE < 0.001) [Wilson 95%]",
                   "fitted within the budget", "median steps to fit", "test accuracy"], rows,
                  "Steps to fit = the first evaluation with test MSE < 0.001 (where an early-stopped run "
                  "ends). MEAN is real-valued: no accuracy.")  # fmt: skip
    conv = [r for r in runs if _converged(r)]

    def series(key: Any, rs: list[Any]) -> list[Series]:
        return grouped_series([(task_of(r), n_of(r), key(r)) for r in rs if key(r) is not None],
                              order=tasks, labels=LABELS)  # fmt: skip

    boolean = [t for t in tasks if t not in REAL_VALUED]
    panels = [
        Panel("test accuracy (all runs)", "n", "accuracy", ylim=(0.4, 1.02), series=[
            _mean_accuracy([(n_of(r), num(r.metrics.get("test_acc"))) for r in runs if task_of(r) == t],
                           LABELS.get(t, t)) for t in boolean]),
        Panel("converged at the end (Wilson 95%)", "n", "share of runs", ylim=(-0.02, 1.02),
              series=grouped_series([(task_of(r), n_of(r), float(_converged(r))) for r in runs],
                                    order=tasks, labels=LABELS, rate=True)),
        Panel("Gaussian sharpness (converged)", "n", "loss increase, ±1 units", logy=True,
              series=series(lambda r: num(r.metrics.get("sharpness_gauss")) or None, conv)),
        Panel("LayerNorm blowup (converged)", "n", "Blowup (paper)", logy=True,
              series=series(lambda r: num(r.metrics.get("blowup_paper")), conv)),
        Panel("parameter norm / at initialisation", "n", "‖θ‖ / ‖θ₀‖",
              series=series(lambda r: num(r.metrics.get("param_norm")) / num(r.metrics["init"]["param_norm"]), conv)),
        Panel("the model's own as(T)", "n", "as(T), real-valued, ±1 units",
              series=series(lambda r: num(r.metrics.get("model_as_real")), conv)),
    ]  # fmt: skip
    figure = Figure("scaling", "Scaling with n at the fixed budget: accuracy and convergence of all runs, "
                    "then the mechanistic measurements of converged runs (mean and 95% interval over "
                    "seeds).", panels, ncols=3)  # fmt: skip
    return [table, figure, *bound(conv, tasks)]


def bound(conv: list[Any], tasks: list[str]) -> list[Figure]:
    """L_ρ against ρ, L_ρ/ρ² at the smallest radius, and where as(T)/(2n) is met, against n."""

    profile: dict[int, list[list[float]]] = defaultdict(list)
    radii: dict[int, list[float]] = {}
    curvature, radius = [], []
    for r in conv:
        rs, vs = r.metrics.get("radii"), r.metrics.get("sharpness_profile")
        if not rs or not vs:
            continue
        n, task = n_of(r), task_of(r)
        if task == "parity":
            profile[n].append([num(v) for v in vs])
            radii[n] = [num(x) for x in rs]
        curvature.append((task, n, num(vs[0]) / num(rs[0]) ** 2))
        level = (
            num(r.metrics.get("model_as_real")) / (2 * n)
            if task in ("parity", "sparse_half")
            else 0.5
        )
        if level > 0:
            radius.append(
                (task, n, bound_radius([num(x) for x in rs], [num(v) for v in vs], level).radius)
            )
    if not curvature:
        return []
    curves = [Series(f"n = {n}", radii[n], [statistics.fmean(col) for col in zip(*profile[n])])
              for n in sorted(profile)]  # fmt: skip
    panels = [
        Panel("PARITY: sharpness profile", "sphere radius ρ", "L_ρ (±1 units)", series=curves, logx=True,
              logy=True, hlines=[(0.5, "as(T)/(2n) of an exact PARITY model")]),
        Panel("small-radius curvature", "n", "L_ρ/ρ² at the smallest radius", logy=True,
              series=grouped_series(curvature, order=tasks, labels=LABELS)),
        Panel("radius where the bound's level is met", "n", "ρ* (log)", logy=True,
              series=grouped_series(radius, order=tasks, labels=LABELS),
              note="" if radius else "no profile"),
    ]  # fmt: skip
    return [Figure("bound", "The sharpness bound of §5 on converged models: L_ρ over the radius grid "
                   "(ρ in multiples of ε√P), L_ρ/ρ², and ρ* where L_ρ reaches as(T)/(2n) (PARITY, in scope) "
                   "or ½ (MAJORITY, FIRST: as/n → 0, out of scope, shown at PARITY's level).", panels)]  # fmt: skip


def tradeoff(results: StudyResults) -> list[Figure]:
    runs = [r for s in ("scaling", "tradeoff") for r in results.of(s) if _converged(r)]
    tasks = [t for t in _tasks(runs) if t != "sparse_half"]
    panels = []
    for task in tasks:
        mine = [r for r in runs if task_of(r) == task]
        series = [Series(f"n = {n}", [num(r.metrics["param_norm"]) / num(r.metrics["init"]["param_norm"])
                                      for r in mine if n_of(r) == n],
                         [num(r.metrics["blowup_paper"]) for r in mine if n_of(r) == n], kind="points")
                  for n in sorted({n_of(r) for r in mine})]  # fmt: skip
        panels.append(Panel(f"{LABELS.get(task, task)}: {len(mine)} converged runs", "‖θ‖ / ‖θ₀‖",
                            "Blowup (paper)", series=series, logy=True))  # fmt: skip
    if not panels:
        return []
    return [Figure("tradeoff", "Norm (relative to initialisation) against LayerNorm blowup of converged "
                   "runs, seeds and random (lr, weight decay) draws, by n.", panels)]  # fmt: skip


def dynamics(results: StudyResults) -> list[Figure]:

    runs = results.of("dynamics")
    keys = [("probe_loss", "MSE on the probe batch"), ("sharpness_gauss", "Gaussian sharpness (±1)"),
            ("blowup_paper", "Blowup (paper)"), ("param_norm", "‖θ‖")]  # fmt: skip
    panels = []
    for key, label in keys:
        series = []
        for r in sorted(runs, key=lambda r: (r.config["train"]["weight_decay"], r.config["seed"])):
            traj = r.metrics.get("trajectory") or []
            hit = [row["step"] for row in traj if num(row.get("probe_loss")) < ALIGN]
            t0 = hit[0] if hit else 0
            tag = f"wd {r.config['train']['weight_decay']:g}, seed {r.config['seed']}" + (
                "" if hit else " (never fit)"
            )
            series.append(Series(tag if key == "probe_loss" else None, [row["step"] - t0 for row in traj],
                                 [num(row.get(key)) for row in traj], kind="dashed"))  # fmt: skip
        panels.append(Panel(label, "steps after the first probe loss < 0.01", label, series=series,
                            logy=key != "param_norm", vlines=[(0.0, "")]))  # fmt: skip
    return [Figure("dynamics", "PARITY training on one fixed probe batch, aligned at the first step with "
                   "loss < 0.01 (Fig. 3).", panels, ncols=2)] if runs else []  # fmt: skip


def generalisation(results: StudyResults) -> list[Figure]:
    runs = results.of("generalisation")
    if not runs:
        return []
    panels = []
    for size in sorted({int(r.config["train_size"]) for r in runs}):
        mine = [r for r in runs if int(r.config["train_size"]) == size]
        comp = [num(v) for r in mine for v in r.metrics.get("completion_as") or []]
        panels.append(Panel(f"{size} training strings", "average sensitivity as(f)", "density",
                            histograms=[Histogram("random completions", comp)],
                            vlines=[(num(r.metrics["learned_as"]), "learned" if i == 0 else "")
                                    for i, r in enumerate(mine)]))  # fmt: skip
    learned = [
        (num(r.metrics["refit_learned"]["as"]), num(r.metrics["refit_learned"]["sharpness_gauss"]))
        for r in runs
    ]
    comps = [
        (num(c["as"]), num(c["sharpness_gauss"]))
        for r in runs
        for c in r.metrics.get("refit_completions") or []
    ]
    panels.append(Panel("refit sharpness", "as(f) of the refitted table", "Gaussian sharpness (±1)", logy=True,
                        series=[Series("learned function", [a for a, _ in learned], [s for _, s in learned], kind="points"),
                                Series("random completion", [a for a, _ in comps], [s for _, s in comps], kind="points")]))  # fmt: skip
    return [Figure("generalisation", "Learning a random function from part of its truth table: the "
                   "learned function's sensitivity against random completions of the same data, and the "
                   "sharpness of a model refitted to each full table (Fig. 4).", panels)]  # fmt: skip


def length(results: StudyResults) -> list[Figure]:

    runs = results.of("length")
    if not runs:
        return []
    points = []
    for r in runs:
        for bucket, acc in (r.metrics.get("length_acc") or {}).items():
            points.append(
                (f"{LABELS[task_of(r)]}, {r.config['model']['positions']}", bucket, num(acc))
            )
    series = []
    for label in sorted({p[0] for p in points}):
        mine = [(b, a) for g, b, a in points if g == label]
        buckets = sorted({b for b, _ in mine}, key=lambda b: int(b.split("-")[0]))
        s = _mean_accuracy([(buckets.index(b), a) for b, a in mine], label)
        series.append(s)
    ticks = sorted({p[1] for p in points}, key=lambda b: int(b.split("-")[0]))
    return [Figure("length", f"Accuracy per length bucket (the first holds the training lengths), CLS "
                   f"read-out; bootstrap 95% over seeds. For orientation ({REFERENCE.source}; "
                   f"{REFERENCE.model}; buckets {', '.join(REFERENCE.buckets)}): "
                   + "; ".join(f"{LABELS[t]} {' / '.join(map(str, v))}" for t, v in REFERENCE.accuracy.items()),
                   [Panel("length generalisation", "length bucket: " + ", ".join(ticks), "accuracy",
                          series=series, ylim=(0.3, 1.02), xticks=list(range(len(ticks))))])]  # fmt: skip


def scratchpad(results: StudyResults) -> list[Figure]:
    runs = results.of("scratchpad")
    if not runs:
        return []
    pad = [r for r in runs if r.config["mode"] == "autoregressive"]
    plain = [r for r in runs if r.config["mode"] == "plain"]
    series = [
        _mean_accuracy([(int(r.config["n"]), num(r.metrics.get("final_bit_acc"))) for r in pad], "scratchpad, own outputs fed back"),
        _mean_accuracy([(int(r.config["n"]), num(r.metrics.get("teacher_forced_final_acc"))) for r in pad], "scratchpad, teacher-forced last step"),
        _mean_accuracy([(int(r.config["n"]), num(r.metrics.get("final_bit_acc"))) for r in plain], "plain PARITY"),
    ]  # fmt: skip
    return [Figure("scratchpad", "The PARITY bit at the same budget: the autoregressive prefix-parity "
                   "scratchpad decoded on its own outputs, the same model's last step given the true "
                   "prefix, and plain PARITY; bootstrap 95% over seeds.",
                   [Panel("scratchpad vs plain PARITY", "n", "accuracy of the PARITY bit", series=series,
                          ylim=(0.3, 1.02), hlines=[(0.5, "chance")])])]  # fmt: skip


def exhibits(results: StudyResults, plan: Plan[SensitivityParams]) -> list[Figure | Table | str]:
    out: list[Figure | Table | str] = []
    if plan.deviations.get("*"):
        out.append(plan.deviations["*"])
    out.append("Training budget: every run trains its full budget (no early stop); 'until_fit' in the "
               "robustness strips reads the same runs at their first evaluation with MSE < 0.001, which is "
               "where an early-stopped run ends. Filters: 'converged' (final MSE < 0.001, the paper's), "
               "'fitted' (also accuracy ≥ 0.99: the pre-engine filter, which had turned Gaussian sharpness "
               "from inconclusive to reproduced), 'all'.")  # fmt: skip
    for part in (scaling, tradeoff, dynamics, generalisation, length, scratchpad):
        out += part(results)
    return out


__all__ = ["exhibits"]
