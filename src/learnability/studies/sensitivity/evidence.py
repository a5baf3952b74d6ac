"""Study `sensitivity`, evidence: reading run records under the analysis choices every mechanistic claim
shares, and one evidence function per claim.

- `budget`: "fixed" reads what a run measured at the end of its fixed budget (the paper's protocol);
  "until_fit" reads what it measured at its first evaluation with test MSE < 0.001 (`at_fit`): an
  early-stopped run is the same run cut there, so this is what early stopping would have reported. A run
  that never fits reads its end state under both (an early-stopped run would have used the whole budget).
- `filter`: "converged" keeps runs whose test MSE < 0.001 in the state read (the paper filters its plots
  so); "fitted" also keeps Boolean-target runs with test accuracy ≥ 0.99 (the pre-engine study's lenient
  filter); "all" keeps every finished run.

The mechanistic unit is the seed (or trade-off draw): the same initial weights at every n, so slopes are
per-unit slopes (the engine's repeated-measures rule), with pooled OLS over runs as an alternative.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from typing import Any

from learnability.measure.bounds import bound_radius
from learnability.measure.length import REFERENCE
from learnability.studies import Choices, Evidence, Obs, metric, num
from learnability.studies.sensitivity.plan import FIT_LOSS

# -- reading records ---------------------------------------------------------------------------------
LABELS = {"parity": "PARITY", "majority": "MAJORITY", "first": "FIRST", "mean": "MEAN",
          "sparse_half": "sparse parity (k = ⌈n/2⌉)", "focus": "PARITY"}  # fmt: skip
FIT_ACC = 0.99
REAL_VALUED = ("mean",)  # targets in [0, 1]: accuracy means nothing, only the MSE criterion applies


def task_of(record: Any) -> str:
    """The task's short name: a sparse parity spec is "sparse_half", else the zoo spec."""
    spec = str(record.config.get("task", {}).get("function", "?"))
    return "sparse_half" if spec.startswith("sparse_parity") else spec


def n_of(record: Any) -> int:
    return int(record.config.get("task", {}).get("n", record.config.get("n", 0)))


def state(record: Any, budget: str) -> dict[str, Any]:
    """The measurements a run reports under `budget` (module doc)."""
    if budget == "until_fit" and isinstance(record.metrics.get("at_fit"), dict):
        return dict(record.metrics["at_fit"])
    return dict(record.metrics)


def keep(record: Any, st: dict[str, Any], how: str) -> bool:
    loss = num(st.get("test_loss"))
    if how == "all":
        return math.isfinite(loss)
    if loss < FIT_LOSS:
        return True
    return (
        how == "fitted"
        and task_of(record) not in REAL_VALUED
        and num(st.get("test_acc")) >= FIT_ACC
    )


def mechanistic(
    records: list[Any],
    choices: dict[str, Any],
    value: Callable[[Any, dict[str, Any]], float | None],
) -> tuple[list[tuple[Any, float]], str]:
    """(record, value) of the runs that pass the choices' filter, and a note counting what was kept."""
    budget, how = choices.get("budget", "fixed"), choices.get("filter", "converged")
    kept, dropped = [], 0
    for r in records:
        st = state(r, budget)
        if not keep(r, st, how):
            dropped += 1
            continue
        v = value(r, st)
        if v is not None and math.isfinite(v):
            kept.append((r, float(v)))
    return (
        kept,
        f"{len(kept)} runs kept, {dropped} left out by the '{how}' filter (budget '{budget}')",
    )


def log10(x: float) -> float | None:
    return math.log10(x) if x > 0 and math.isfinite(x) else None


def seed_unit(record: Any) -> str:
    """The independent unit of a mechanistic run: its sweep's seed or trade-off draw (the same initial
    weights at every n and task of that sweep)."""
    return f"{record.sweep.rsplit('/', 1)[-1]}:{record.config.get('seed')}"


# -- sharpness, blowup, norm and the trade-off against n (scaling and tradeoff sweeps) ---------------
CONTROLS = ("majority", "first")


def _pipeline(runs: list[Any]) -> str | None:
    """MAJORITY and FIRST are learnable at every n here: if most of them do not converge, the pipeline
    (budget, lr), not the claim, has failed."""
    for task in CONTROLS:
        mine = [r for r in runs if task_of(r) == task]
        ok = sum(num(r.metrics.get("test_loss")) < 1e-3 for r in mine)
        if mine and ok < len(mine) / 2:
            return f"only {ok}/{len(mine)} {LABELS[task]} runs converged (MSE < 0.001) at the fixed budget"
    return None


def growth(sweep: str, value: Callable[[Any, dict[str, Any], dict[str, Any]], float | None]) -> Any:
    """Evidence function: one observation per kept run, y = value(record, state, choices) vs n."""

    def evidence(results: Any, choices: Choices) -> Evidence:
        runs = [r for s in sweep.split("+") for r in results.of(s)]
        if not runs:
            return Evidence(missing=f"no finished {sweep} runs")
        bad = _pipeline(runs)
        if bad:
            return Evidence(pipeline=bad)
        kept, note = mechanistic(runs, dict(choices), lambda r, st: value(r, st, dict(choices)))
        obs = [Obs(seed_unit(r), v, n_of(r), task_of(r)) for r, v in kept]
        fits = [num(r.metrics.get("fit_step")) for r in runs if task_of(r) == "parity"]
        reached = [f for f in fits if math.isfinite(f)]
        steps = f"; PARITY fitted within the budget in {len(reached)}/{len(fits)} runs" + (
            f" (median step {statistics.median(reached):.0f})" if reached else "")  # fmt: skip
        return Evidence(obs, notes=note + steps)

    return evidence


def _scale(v: float, choices: dict[str, Any]) -> float | None:
    return v if choices.get("scale") == "linear" else log10(v)


def _sharpness(r: Any, st: dict[str, Any], c: dict[str, Any]) -> float | None:
    key = "sharpness_sphere" if c.get("sharpness") == "sphere" else "sharpness_gauss"
    return _scale(num(st.get(key)), c)


def _blowup(r: Any, st: dict[str, Any], c: dict[str, Any]) -> float | None:
    return _scale(num(st.get(f"blowup_{c.get('definition', 'paper')}")), c)


def _norm(r: Any, st: dict[str, Any], c: dict[str, Any]) -> float | None:
    norm, init = num(st.get("param_norm")), num(r.metrics.get("init", {}).get("param_norm"))
    if c.get("scale") == "linear":
        return norm
    return log10(norm) if c.get("norm") == "absolute" else log10(norm / init)


def _size(r: Any, st: dict[str, Any], c: dict[str, Any]) -> float | None:
    """The trade-off coordinate: log10(‖θ‖/‖θ₀‖) + log10 Blowup (norm or blowup must grow)."""
    norm = _norm(r, st, {**c, "scale": "log10"})
    blow = log10(num(st.get(f"blowup_{c.get('definition', 'paper')}")))
    return None if norm is None or blow is None else norm + blow


def frontier(results: Any, choices: Choices) -> Evidence:
    sweep = "tradeoff" if choices.get("runs") == "trade-off draws only" else "scaling+tradeoff"
    ev = growth(sweep, _size)(results, choices)
    if ev.obs and choices.get("frontier") == "lower half per cell":
        cells: dict[tuple[str, Any], list[float]] = {}
        for o in ev.obs:
            cells.setdefault((o.group, o.x), []).append(o.y)
        ev.obs = [o for o in ev.obs if o.y <= statistics.median(cells[(o.group, o.x)])]
    return ev


# -- the sharpness bound of §5 and Corollary 5 -------------------------------------------------------
def _radius(r: Any, st: dict[str, Any], c: dict[str, Any]) -> tuple[float, str] | None:
    """log10 of the radius at which L_ρ reaches the bound's level, and where it lies on the grid."""
    n = n_of(r)
    own = num(st.get("model_as_real")) / (2 * n)
    focus = task_of(r) == c.get("focus", "parity")
    level = own if focus or c.get("level") == "own as(T)/(2n)" else 0.5
    radii, values = st.get("radii"), st.get("sharpness_profile")
    if not radii or not values or not level > 0:
        return None
    if c.get("statistic") == "ratio":
        ratio = num(st.get("sharpness_sphere")) / level
        return (math.log10(ratio), "crossed") if ratio > 0 else None
    hit = bound_radius([float(x) for x in radii], [num(v) for v in values], level)
    return math.log10(hit.radius), hit.status


def bound(results: Any, choices: Choices) -> Evidence:
    runs = results.of("scaling")
    if not runs:
        return Evidence(missing="no finished scaling runs")
    if choices.get("statistic") == "pre-engine":  # every function pooled, one radius
        kept, note = mechanistic(runs, dict(choices), lambda r, st: float(
            num(st.get("sharpness_sphere")) >= num(st.get("model_as_real")) / (2 * n_of(r))))  # fmt: skip
        return Evidence([Obs(f"{task_of(r)}:{seed_unit(r)}", v, n_of(r), "pooled") for r, v in kept],
                        notes=note)  # fmt: skip
    focus = choices.get("focus", "parity")
    if not any(task_of(r) == focus for r in runs):
        return Evidence(missing=f"no {LABELS.get(focus, focus)} runs at this scale")
    status: dict[str, int] = {}
    obs = []
    kept, note = mechanistic([r for r in runs if task_of(r) in (focus, *CONTROLS)], dict(choices),
                             lambda r, st: 0.0)  # fmt: skip
    for r, _ in kept:
        got = _radius(r, state(r, choices.get("budget", "fixed")), dict(choices))
        if got is None:
            continue
        status[got[1]] = status.get(got[1], 0) + 1
        group = "focus" if task_of(r) == focus else task_of(r)
        obs.append(Obs(seed_unit(r), got[0], n_of(r), group, censored=got[1] == "beyond_largest"))
    grid = ", ".join(f"{k}: {v}" for k, v in sorted(status.items()))
    return Evidence(obs, notes=f"{note}; radius on the grid — {grid}. Out of the theorem's scope "
                    "(as(f)/n → 0): MAJORITY, FIRST, MEAN, used as controls at PARITY's level ½",
                    details={"radius_status": status})  # fmt: skip


def corollary(results: Any, choices: Choices) -> Evidence:
    form = choices.get("form", "inequality")
    if form in ("pre-engine", "pre-engine+power"):
        return _pre_corollary(results, choices, power=form == "pre-engine+power")
    runs = results.of("scaling")
    if not runs:
        return Evidence(missing="no finished scaling runs")
    key = "log10_C_unscaled" if choices.get("C") == "unscaled" else "log10_C"
    parity = [r for r in runs if task_of(r) == "parity"]
    if form == "inequality" and parity:
        # C·E[B²] ≥ c·as(f)/√(n log n) with c free: decided at initialisation if it already holds there
        gaps = []
        for r in parity:
            n, init = n_of(r), r.metrics.get("init", {})
            lhs = num(init.get(key)) + math.log10(num(init.get("blowup_paper_sq")))
            rhs = math.log10(num(r.metrics.get("target_as")) / math.sqrt(n * math.log(n)))
            gaps.append(lhs - rhs)
        ns = sorted({n_of(r) for r in parity})
        span = 0.5 * math.log10(ns[-1] / math.log(ns[-1])) - 0.5 * math.log10(
            ns[0] / math.log(ns[0])
        )
        if gaps and min(gaps) > 0:
            return Evidence(vacuous=(
                f"at initialisation, before any training, log10 C·E[Blowup²] exceeds log10 as(f)/√(n log n) "
                f"by {min(gaps):.2f}–{max(gaps):.2f} decades in every PARITY run (n = {ns[0]}–{ns[-1]}), so "
                f"the inequality holds with constant 1 whatever training does; its right side moves by only "
                f"{span:.2f} decades over these n, and the constant is free"))  # fmt: skip
    return growth("scaling", lambda r, st, c: (
        num(st.get(key)) + math.log10(num(st.get("blowup_paper_sq")))
        if num(st.get("blowup_paper_sq")) > 0 else None))(results, choices)  # fmt: skip


def _pre_corollary(results: Any, choices: Choices, power: bool) -> Evidence:
    """The pre-engine check: constant fitted at the smallest n on PARITY runs, then the share of runs at
    larger n for which log10 C + 2·log10 E[B] ≥ log10 c + log10 as/√(n log n); with `power`, inconclusive
    when the left side scatters by more than 10× the right side's change."""
    kept, note = mechanistic([r for r in results.of("scaling") if task_of(r) == "parity"], dict(choices),
                             lambda r, st: num(st.get("log10_C_unscaled")) + 2 * math.log10(num(st.get("blowup_paper"))))  # fmt: skip

    def rhs(r: Any) -> float:
        return math.log10(n_of(r) / math.sqrt(n_of(r) * math.log(n_of(r))))

    if len({n_of(r) for r, _ in kept}) < 2:
        return Evidence(missing="fitted PARITY runs at fewer than 2 distinct n")
    n0 = min(n_of(r) for r, _ in kept)
    c = min(v - rhs(r) for r, v in kept if n_of(r) == n0)
    later = [(r, v) for r, v in kept if n_of(r) > n0]
    spread = statistics.stdev([v for _, v in kept]) if len(kept) > 2 else math.inf
    delta = max(rhs(r) for r, _ in kept) - min(rhs(r) for r, _ in kept)
    if power and spread > 10 * max(delta, 1e-12):
        return Evidence(missing=f"no power: log10 C·E[B]² scatters by {spread:.3g} decades (sd), the "
                        f"right side moves by {delta:.3g}")  # fmt: skip
    return Evidence([Obs(seed_unit(r) + f":{n_of(r)}", float(v >= c + rhs(r)), None, "holds")
                     for r, v in later], notes=note)  # fmt: skip


# -- dynamics and generalisation ---------------------------------------------------------------------
ALIGN = 0.01  # the paper aligns training curves at the first step with loss < 0.01 (0/1 scale)
PLATEAU = 0.2  # the constant predictor's MSE is 0.25: loss ≥ 0.2 is still the plateau


def levels(
    trajectory: list[dict[str, Any]], key: str, reference: str, after: str
) -> tuple[float, float] | None:
    """(before, after) means of `key` around the first step with probe loss < 0.01; None when the run
    never reaches that loss.

    reference: "initialisation" (step 0), "plateau" (steps after 0 and before alignment with loss ≥ 0.2,
    else every step before it), "first quarter" (steps up to a quarter of the alignment step);
    after: "mean from alignment" or "at alignment"."""
    hit = [i for i, row in enumerate(trajectory) if num(row.get("probe_loss")) < ALIGN]
    if not hit:
        return None
    t0 = trajectory[hit[0]]["step"]
    before = {
        "initialisation": trajectory[:1],
        "plateau": [
            r for r in trajectory if 0 < r["step"] < t0 and num(r.get("probe_loss")) >= PLATEAU
        ]
        or [r for r in trajectory if r["step"] < t0],
        "first quarter": [r for r in trajectory if r["step"] <= t0 / 4] or trajectory[:1],
    }[reference]
    later = (
        trajectory[hit[0] :] if after == "mean from alignment" else trajectory[hit[0] : hit[0] + 1]
    )
    return statistics.fmean(num(r.get(key)) for r in before), statistics.fmean(
        num(r.get(key)) for r in later
    )


def rise(trajectory: list[dict[str, Any]], key: str, reference: str, after: str) -> float | None:
    """log10(after / before) (see `levels`); None when the run never aligns or `before` ≤ 0 (the
    Gaussian sharpness, a mean loss increase, can be ≤ 0 away from a minimum, e.g. at initialisation)."""
    got = levels(trajectory, key, reference, after)
    return log10(got[1] / got[0]) if got is not None and got[0] > 0 else None


def dynamics(results: Any, choices: Choices) -> Evidence:
    runs = results.of("dynamics")
    if not runs:
        return Evidence(missing="no finished dynamics runs")
    ref = choices.get("reference", "initialisation")
    after = choices.get("after", "mean from alignment")
    sharp = "sharpness_sphere" if choices.get("sharpness") == "sphere" else "sharpness_gauss"
    obs, aligned, undefined = [], 0, 0
    for r in runs:
        unit = f"seed{r.config['seed']}"  # the weight decays of a seed share its initial weights
        if choices.get("units") == "run":  # the first engine rule: every run its own unit
            unit = f"wd{r.config['train']['weight_decay']:g}:{unit}"
        traj = r.metrics.get("trajectory") or []
        s_lv, b_lv = levels(traj, sharp, ref, after), levels(traj, "blowup_paper", ref, after)
        if s_lv is None or b_lv is None:
            continue
        aligned += 1
        s, b = rise(traj, sharp, ref, after), rise(traj, "blowup_paper", ref, after)
        if s is None:
            undefined += 1  # no ratio: the sharpness at the reference point is ≤ 0
        else:
            obs.append(Obs(unit, s, None, "sharpness"))
        if b is not None:
            obs.append(Obs(unit, b, None, "blowup"))
        both = s_lv[1] > s_lv[0] and b_lv[1] > b_lv[0]
        obs.append(Obs(unit, float(both), None, "both"))
    notes = (
        f"{aligned}/{len(runs)} runs reached probe loss < {ALIGN}; reference: {ref}; after: {after}"
    )
    if undefined:
        notes += (f"; in {undefined} of them the sharpness ({sharp}) at the reference is ≤ 0 (the loss "
                  "falls under perturbation there), so they have no sharpness ratio and are left out of it")  # fmt: skip
    return Evidence(obs, notes=notes)


def _gen_unit(r: Any, choices: Choices) -> str:
    """The random function: its training sizes share the initial weights and nested training strings
    (the first engine rule counted each (function, size) run as a unit)."""
    unit = f"function{r.config['function_seed']}"
    return f"{unit}:m{r.config['train_size']}" if choices.get("units") == "run" else unit


def generalisation(results: Any, choices: Choices) -> Evidence:
    runs = results.of("generalisation")
    if not runs:
        return Evidence(missing="no finished generalisation runs")
    kept = [
        r for r in runs if choices.get("filter") == "all" or num(r.metrics.get("train_acc")) >= 0.95
    ]
    obs = []
    for r in kept:
        u = _gen_unit(r, choices)
        obs += [Obs(u, num(r.metrics.get("learned_as")), None, "learned"),
                Obs(u, num(r.metrics.get("completion_as_mean")), None, "completions"),
                Obs(u, float(num(r.metrics.get("learned_as_quantile")) < 0.05), None, "below-5th")]  # fmt: skip
    return Evidence(obs, notes=f"{len(kept)}/{len(runs)} runs fit their training strings (≥ 95%)")


def flatness(results: Any, choices: Choices) -> Evidence:
    runs = results.of("generalisation")
    if not runs:
        return Evidence(missing="no finished generalisation runs")
    key = "sharpness_sphere" if choices.get("sharpness") == "sphere" else "sharpness_gauss"
    strict = choices.get("refits", "fitted") == "fitted"
    refits = [
        x
        for r in runs
        for x in [r.metrics.get("refit_learned") or {}, *(r.metrics.get("refit_completions") or [])]
    ]
    fit = sum(num(x.get("acc")) >= 0.99 for x in refits)
    if refits and fit < len(refits) / 2:
        return Evidence(
            pipeline=f"only {fit}/{len(refits)} refits fit their truth table (accuracy ≥ 0.99)"
        )
    obs = []
    for r in runs:
        u, learned = _gen_unit(r, choices), r.metrics.get("refit_learned") or {}
        comps = [
            c
            for c in r.metrics.get("refit_completions") or []
            if not strict or num(c.get("acc")) >= 0.99
        ]
        if not comps or (strict and num(learned.get("acc")) < 0.99):
            continue
        obs.append(Obs(u, num(learned.get(key)), None, "learned"))
        obs += [Obs(u, num(c.get(key)), None, "completions") for c in comps]
        obs.append(
            Obs(
                u,
                float(all(num(learned.get(key)) < num(c.get(key)) for c in comps)),
                None,
                "flatter-all",
            )
        )
    return Evidence(
        obs, notes=f"{fit}/{len(refits)} refits fit their truth table; sharpness: {key} (±1 units)"
    )


# -- length generalisation and the scratchpad --------------------------------------------------------
FIT = "fit the training lengths"  # PARITY runs with ≥ 0.95 on the training lengths


def length(results: Any, choices: Choices) -> Evidence:
    runs = [r for r in results.of("length")
            if r.config["model"]["positions"] == choices.get("positions", "none")]  # fmt: skip
    if not runs:
        return Evidence(
            missing=f"no finished length runs with positions={choices.get('positions', 'none')}"
        )
    obs: list[Obs] = []
    ins: dict[str, list[float]] = {"parity": [], "majority": []}
    for r in runs:
        acc = r.metrics.get("length_acc") or {}
        buckets = sorted(acc, key=lambda b: int(b.split("-")[0]))
        inside, beyond = num(acc[buckets[0]]), statistics.fmean(num(acc[b]) for b in buckets[1:])
        task = task_of(r)
        ins.setdefault(task, []).append(inside)
        if task == "parity" and choices.get("parity_runs", FIT) == FIT and inside < 0.95:
            continue
        unit = f"seed{r.config['seed']}"
        obs += [Obs(unit, beyond, None, task), Obs(unit, inside - beyond, None, f"{task}-drop")]
    majority_in = statistics.fmean(ins["majority"]) if ins["majority"] else math.nan
    if majority_in < 0.95:
        return Evidence(pipeline=f"MAJORITY reaches only {majority_in:.2f} on its training lengths")
    if choices.get("parity_runs", FIT) == FIT and not any(o.group == "parity" for o in obs):
        return Evidence(missing=(
            f"no PARITY run fits its training lengths (accuracy there {statistics.fmean(ins['parity']):.2f} "
            "on average, threshold 0.95): there is nothing to generalise beyond them"))  # fmt: skip
    r0 = runs[0]
    ref = "; ".join(
        f"{LABELS[t]} {' / '.join(f'{a:g}' for a in REFERENCE.accuracy[t])}"
        for t in ("parity", "majority")
    )
    notes = (f"accuracy on the training lengths: PARITY {statistics.fmean(ins['parity']):.3f}, MAJORITY "
             f"{majority_in:.3f}; {r0.metrics.get('training_space')} strings of the training lengths, "
             f"~{num(r0.metrics.get('training_distinct')):.0f} distinct ones drawn per run. For orientation "
             f"only, {REFERENCE.source}, buckets {' / '.join(REFERENCE.buckets)}: {ref}")  # fmt: skip
    return Evidence(obs, notes=notes)


def scratchpad(results: Any, choices: Choices) -> Evidence:
    runs = results.of("scratchpad")
    if not runs:
        return Evidence(missing="no finished scratchpad runs")
    largest = max(int(r.config["n"]) for r in runs)
    key = (
        "teacher_forced_final_acc"
        if choices.get("decoding") == "teacher-forced"
        else "final_bit_acc"
    )
    obs = []
    for r in runs:
        n = int(r.config["n"])
        if choices.get("n") == "largest" and n != largest:
            continue
        mode = r.config["mode"]
        group = "scratchpad" if mode == "autoregressive" else "plain"
        value = r.metrics.get(key if mode == "autoregressive" else "final_bit_acc")
        # one unit per seed and mode: its runs at several n share the initial weights (merged here);
        # the first engine rule counted each (n, seed) run as a unit
        if choices.get("units") == "run":
            obs.append(Obs(f"{mode}:seed{r.config['seed']}", num(value), n, group))
        else:
            obs.append(Obs(f"{mode}:seed{r.config['seed']}", num(value), None, group))
    return Evidence(obs, notes=f"decoding: {choices.get('decoding', 'autoregressive')}; n = "
                    f"{sorted({int(r.config['n']) for r in runs})}")  # fmt: skip


sharpness_growth = growth("scaling", _sharpness)
blowup_growth = growth("scaling", _blowup)
norm_growth = growth("scaling", _norm)

__all__ = [
    "ALIGN", "CONTROLS", "FIT", "FIT_ACC", "LABELS", "REAL_VALUED", "blowup_growth", "bound", "corollary",
    "dynamics", "flatness", "frontier", "generalisation", "growth", "keep", "length", "levels", "log10",
    "mechanistic", "metric", "n_of", "norm_growth", "num", "rise", "scratchpad", "seed_unit",
    "sharpness_growth", "state", "task_of",
]  # fmt: skip
