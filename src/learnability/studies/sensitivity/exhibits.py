"""Study `sensitivity`, exhibits: figures (as `panels` data) and tables. Mechanistic panels read runs K steps
after their fit; accuracies get t intervals over seeds cut to [0, 1]; MEAN (real-valued) no accuracy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from learnability import stats
from learnability.measure.length import REFERENCE
from learnability.report.panels import Figure, Histogram, Panel, Series, Table
from learnability.studies import Plan, StudyResults, group_by, grouped_series, mean_series, median
from learnability.studies.sensitivity import evidence as ev
from learnability.studies.sensitivity.evidence import LABELS, keep, n_of, num, state, task_of
from learnability.studies.sensitivity.plan import FIT_LOSS, SensitivityParams

# fmt: off
ORDER = ["parity", "sparse_half", "majority", "first", "mean"]
ACC = (0.0, 1.0)  # an accuracy's range: its t interval over seeds is cut to it (all at 1.0 give [1, 1])


def _headline(runs: list[Any]) -> list[tuple[Any, dict[str, Any]]]:
    """(run, its state K steps after the fit) for the runs converged there."""
    return [(r, st) for r in runs if (st := state(r)) is not None and keep(r, st, "converged")]


def scaling(results: StudyResults) -> list[Figure | Table]:
    runs = results.of("scaling") + results.of("scaling_sparse")
    if not runs:
        return []
    tasks, rows, head = [t for t in ORDER if t in {task_of(r) for r in runs}], [], _headline(runs)
    for (_, n), cell in group_by(runs, lambda r: (tasks.index(task_of(r)), n_of(r))).items():
        name, fits = task_of(cell[0]), [num(r.metrics["fit_step"]) for r in cell if r.metrics.get("fit_step") is not None]
        conv = sum(num(r.metrics.get("test_loss")) < FIT_LOSS for r in cell)
        lo, hi = stats.wilson(conv, len(cell))
        acc = "—" if name in ev.REAL_VALUED else f"{median(num(r.metrics.get('test_acc')) for r in cell):.3f}"
        rows.append([LABELS.get(name, name), n, len(cell), f"{len(fits)}/{len(cell)}", f"{median(fits):.0f}" if fits else "—",
                     f"{len(_headline(cell))}/{len(cell)}", f"{conv}/{len(cell)} [{lo:.2f}, {hi:.2f}]", acc])
    table = Table("Scaling: steps to fit, and convergence K steps after the fit and at the end of the budget",
                  ["task", "n", "runs", "fitted (within the cap)", "median steps to fit", "converged at fit + K",
                   "converged at the budget's end [Wilson 95%]", "median test accuracy at the budget's end"], rows,
                  "Steps to fit = the first evaluation with test MSE < 0.001 (where an early-stopped run ends); "
                  "the headline state is K steps later. MEAN is real-valued: no accuracy.")
    panels = [
        Panel("test accuracy at the budget's end (all runs)", "n", "accuracy", ylim=(0.4, 1.02), hlines=[(0.5, "chance")],
              series=grouped_series([(t, n_of(r), num(r.metrics.get("test_acc"))) for r in runs
                                     if (t := task_of(r)) not in ev.REAL_VALUED], tasks, LABELS, bounds=ACC)),
        Panel("the model's own as(T), K steps after the fit", "n", "as(T), real-valued, ±1 units", series=grouped_series(
            [(task_of(r), n_of(r), num(st.get("model_as_real"))) for r, st in head], order=tasks, labels=LABELS)),
        *drift([r for r in runs if task_of(r) == "parity" and r.metrics.get("fit_step") is not None]),
    ]
    figure = Figure("scaling", "Scaling with n: accuracy of all runs at the budget's end, the model's own "
                    "sensitivity K steps after its fit (converged runs; 95% over seeds; the claims' panels show "
                    "sharpness, blowup and norm), and PARITY's norm and blowup against the steps since its fit "
                    "(medians): what the end of a fixed budget adds where the fit comes early.", panels, ncols=2,
                    claims=("sharpness-grows", "blowup-grows", "norm-grows"))
    return [table, figure, *bound(head)]


def drift(parity: list[Any]) -> list[Panel]:
    """PARITY's ‖θ‖/‖θ₀‖ and blowup along training, aligned at the fit step, one curve per n (median)."""
    panels = []
    for key, label in (("param_norm", "‖θ‖ / ‖θ₀‖"), ("blowup_paper", "Blowup (paper)")):
        curves = []
        for n, rs in group_by(parity, n_of).items():
            ref = {id(r): num(r.metrics["init"]["param_norm"]) if key == "param_norm" else 1.0 for r in rs}
            at = group_by([(row["step"] - num(r.metrics["fit_step"]), num(row[key]) / ref[id(r)])
                           for r in rs for row in r.metrics.get("trajectory") or [] if key in row], lambda p: p[0])
            curves.append(Series(f"PARITY n = {n}", list(at), [median(v for _, v in ps) for ps in at.values()]))
        panels.append(Panel(f"PARITY {label} since the fit", "steps after the fit", label, series=curves,
                            vlines=[(0.0, "fit")]))
    return panels


def bound(head: list[tuple[Any, dict[str, Any]]]) -> list[Figure]:
    """PARITY's L_ρ against ρ per n (the claim's own panel draws ρ* against n)."""
    parity = group_by([(n_of(r), st) for r, st in head if task_of(r) == "parity" and st.get("sharpness_profile")],
                      lambda p: p[0])
    curves = [Series(f"n = {n}", [num(x) for x in ps[0][1]["radii"]], [median(num(v) for v in col) for col in
                     zip(*(st["sharpness_profile"] for _, st in ps))]) for n, ps in parity.items()]
    return [Figure("bound", "The sharpness bound of §5: PARITY's L_ρ over the radius grid (ρ in multiples of ε√P; "
                   "median over converged seeds, K steps after the fit) against as(T)/(2n) of an exact PARITY model.",
                   [Panel("PARITY: sharpness profile", "sphere radius ρ", "L_ρ (±1 units)", series=curves, logx=True,
                          logy=True, hlines=[(0.5, "as(T)/(2n) of an exact PARITY model")])], claims=("bound-radius",))] if curves else []


def tradeoff(results: StudyResults) -> list[Figure]:
    head = _headline(results.of("scaling") + results.of("tradeoff"))
    panels = []
    for task, mine in group_by(head, lambda p: task_of(p[0])).items():
        series = [Series(f"n = {n}", [num(st["param_norm"]) / num(r.metrics["init"]["param_norm"]) for r, st in cell],
                         [num(st["blowup_paper"]) for _, st in cell], kind="points")
                  for n, cell in group_by(mine, lambda p: n_of(p[0])).items()]
        panels.append(Panel(f"{LABELS.get(task, task)}: {len(mine)} runs", "‖θ‖ / ‖θ₀‖", "Blowup (paper)", series=series, logy=True))
    return [Figure("tradeoff", "Norm (relative to initialisation) against LayerNorm blowup, K steps after the fit "
                   "(converged runs: seeds and any random (lr, weight decay) draws), by n.", panels,
                   claims=("tradeoff-frontier",))] if panels else []


def dynamics(results: StudyResults) -> list[Figure]:
    runs = sorted(results.of("dynamics"), key=lambda r: (r.config["train"]["weight_decay"], r.config["seed"]))
    if not runs:
        return []
    wds, curves, named = sorted({r.config["train"]["weight_decay"] for r in runs}), [], set()
    for r in runs:  # one colour and legend entry per weight decay (its seeds), grey for a run that never fit
        traj, wd = r.metrics.get("trajectory") or [], r.config["train"]["weight_decay"]
        hit = [row["step"] for row in traj if num(row.get("probe_loss")) < ev.ALIGN]
        tag = f"wd {wd:g}" if hit else f"wd {wd:g}, seed {r.config['seed']} (never fit)"
        steps = [row["step"] - (hit[0] if hit else 0) for row in traj]
        curves.append((None if tag in named else tag, steps, traj, f"C{wds.index(wd)}" if hit else "grey"))
        named.add(tag)
    panels = []
    for key, label in (("probe_loss", "MSE on the probe batch"), ("sharpness_gauss", "Gaussian sharpness (±1)"),
                       ("blowup_paper", "Blowup (paper)"), ("param_norm", "‖θ‖")):
        series = [Series(tag, steps, [num(row.get(key)) for row in traj], kind="dashed", color=color,
                         legend=key == "probe_loss") for tag, steps, traj, color in curves]
        panels.append(Panel(label, "steps after the first probe loss < 0.01", label, series=series,
                            logy=key != "param_norm", vlines=[(0.0, "")],
                            hlines=[(ev.PLATEAU, "plateau (loss ≥ 0.2)")] if key == "probe_loss" else []))
    rises = [Series(f"{what}, against the plateau", [i + 0.15 * j for i in range(len(runs))],
                    [num(ev.rise(r.metrics.get("trajectory") or [], key, "plateau", "mean from alignment"))
                     for r in runs], kind="points")
             for j, (what, key) in enumerate((("sharpness", "sharpness_gauss"), ("blowup", "blowup_paper")))]
    panels.append(Panel("the rise per run (the claim)", "run (by weight decay, seed)", "log10(after / before)",
                        series=rises, hlines=[(0.0, "no rise"), (0.04, "band edge ×1.1")]))
    return [Figure("dynamics", "PARITY training on one fixed probe batch, aligned at the first step with loss < 0.01 "
                   "(Fig. 3), and each run's rise of sharpness and blowup from the plateau to the mean after alignment.", panels, ncols=3, claims=("dynamics-rise",))]


def generalisation(results: StudyResults) -> list[Figure]:
    runs = results.of("generalisation")
    if not runs:
        return []
    panels = [Panel(f"{size} training strings", "average sensitivity as(f)", "density",
                    histograms=[Histogram("random completions", [num(v) for r in mine for v in r.metrics.get("completion_as") or []])],
                    vlines=[(num(r.metrics["learned_as"]), "learned" if i == 0 else "") for i, r in enumerate(mine)])
              for size, mine in group_by(runs, lambda r: int(r.config["train_size"])).items()]
    refits = [("learned function", r.metrics["refit_learned"]) for r in runs] + [
        ("random completion", c) for r in runs for c in r.metrics.get("refit_completions") or []]
    panels.append(Panel("refit sharpness", "as(f) of the refitted table", "Gaussian sharpness (±1)", logy=True, series=[
        Series(name, [num(x["as"]) for _, x in pts], [num(x["sharpness_gauss"]) for _, x in pts], kind="points")
        for name, pts in group_by(refits, lambda p: p[0]).items()]))
    return [Figure("generalisation", "Learning a random function from part of its truth table: the learned "
                   "function's sensitivity against random completions of the same data, and the sharpness of a "
                   "model refitted to each full table (Fig. 4).", panels, claims=("generalisation-low-sensitivity", "flatter-minima"))]


def length(results: StudyResults) -> list[Figure]:
    runs = results.of("length") + results.of("length_alt")
    if not runs:
        return []
    points = [(f"{LABELS[task_of(r)]}, {r.config['model']['positions']}", b, num(a))
              for r in runs for b, a in (r.metrics.get("length_acc") or {}).items()]
    series = grouped_series(points, bounds=ACC)
    hi, buckets = results.params.len_train[1], sorted({p[1] for p in points}, key=lambda b: int(b.split("-")[0]))
    ref = "; ".join(f"{LABELS[t]} {' / '.join(map(str, v))}" for t, v in REFERENCE.accuracy.items())
    return [Figure("length", f"Accuracy per length bucket (trained on lengths up to {hi}), CLS "
                   f"read-out; 95% over seeds. For orientation ({REFERENCE.source}; {REFERENCE.model}; buckets "
                   f"{', '.join(REFERENCE.buckets)}): {ref}",
                   [Panel("length generalisation", "string lengths (bucket)", "accuracy", series=series, categories=buckets,
                          ylim=(0.3, 1.02), vlines=[(0.5, "longest training length")], hlines=[(0.5, "chance")])],
                   claims=("length-generalisation",))]


def scratchpad(results: StudyResults) -> list[Figure]:
    runs = results.of("scratchpad") + results.of("scratchpad_curve")
    if not runs:
        return []
    pad = [r for r in runs if r.config["mode"] == "autoregressive"]
    plain = [r for r in runs if r.config["mode"] == "plain"]

    def acc(rs: list[Any], key: str, label: str) -> Series:
        points = [(int(r.config["n"]), num(r.metrics.get(key))) for r in rs]
        return mean_series(points, label, "line" if rs is pad else "points", bounds=ACC)

    def curve(key: Callable[[Any], float], label: str) -> Panel:
        return Panel(label, "n", label, logy=True, series=grouped_series(
            [(m, int(r.config["n"]), v) for m, rs in (("scratchpad", pad), ("plain PARITY", plain)) for r in rs
             if (v := key(r)) > 0]))  # log axis: a Gaussian sharpness ≤ 0 (not a minimum) is not drawn

    panels = [Panel("the PARITY bit (the claim)", "n", "accuracy of the PARITY bit", ylim=(0.3, 1.02), hlines=[(0.5, "chance")],
                    series=[acc(pad, "final_bit_acc", "scratchpad, own outputs fed back"),
                            acc(pad, "teacher_forced_final_acc", "scratchpad, teacher-forced last step"),
                            acc(plain, "final_bit_acc", "plain PARITY (the control)")]),
              curve(lambda r: num(r.metrics.get("sharpness_gauss")), "Gaussian sharpness (±1)"),
              curve(lambda r: num(r.metrics.get("blowup_paper")), "Blowup (paper)"),
              curve(lambda r: num(r.metrics.get("param_norm")) / num(r.metrics.get("init_param_norm")), "‖θ‖ / ‖θ₀‖")]
    return [Figure("scratchpad", "The PARITY bit at the same budget — the autoregressive prefix-parity scratchpad decoded "
                   "on its own outputs, its last step given the true prefix, and plain PARITY (the control, at the "
                   "largest n) — and the scratchpad models' sharpness, blowup and norm against n (Fig. 11); 95% over "
                   "seeds.", panels, ncols=2, claims=("scratchpad",))]


def exhibits(results: StudyResults, plan: Plan[SensitivityParams]) -> list[Figure | Table | str]:
    p = plan.params
    out: list[Figure | Table | str] = [plan.deviations["*"]] if plan.deviations.get("*") else []
    out.append(f"Every run trains its fixed budget ({p.budget} steps, no early stop), on to K = {p.after_fit} steps "
               f"after a late fit (at most {p.max_steps}); claims read it K steps after its fit; 'state=fit' at the "
               "fit (where an early-stopped run ends), 'state=end of budget' where early fitters have drifted longest.")
    for part in (scaling, tradeoff, dynamics, generalisation, length, scratchpad):
        out += part(results)
    return out
# fmt: on
