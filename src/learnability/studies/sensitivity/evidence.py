"""Study `sensitivity`, evidence: reading run records under the analysis choices the mechanistic claims
share, and one evidence function per claim.

- `state`: "end of budget" (the headline since round 4): the end of the fixed budget, the same training step
  for every task at an n (the quick plan's budget is longer at its largest n); "fit+K": K steps after the first
  evaluation with test MSE < 0.001, the same time since the fit in every run but other training steps across
  tasks; "fit": at that evaluation (where an early-stopped run ends). A run without
  the state (not fitted within the cap) is left out and counted.
- `filter`: "converged" (test MSE < 0.001 in the state read, the paper's); "fitted" (pre-engine history):
  also Boolean-target runs with accuracy ≥ 0.99.
The unit is the seed (initial weights and data; the same weights at every n): per-unit slopes."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Callable
from typing import Any

from learnability.measure.bounds import bound_radius
from learnability.measure.length import REFERENCE
from learnability.studies import Choices, Evidence, Obs, group_by, mean, median, metric, num
from learnability.studies.common import finite
from learnability.studies.sensitivity.plan import FIT_LOSS, LEN_FIT

# fmt: off
# -- reading records ---------------------------------------------------------------------------------
LABELS = {"parity": "PARITY", "majority": "MAJORITY", "first": "FIRST", "mean": "MEAN",
          "sparse_half": "sparse parity (k = ⌈n/2⌉)", "focus": "PARITY"}
FIT_ACC = 0.99
REAL_VALUED = ("mean",)  # targets in [0, 1]: accuracy means nothing, only the MSE criterion applies
STATES = {"fit+K": "after_fit_state", "fit": "at_fit", "end of budget": ""}
CONTROLS = ("majority", "first")


def task_of(record: Any) -> str:
    """The task's short name: "sparse_half" for a sparse parity spec, else the zoo name (of "majority:ties=0")."""
    spec = str(metric(record.config, "task.function") or record.config.get("function", "?"))
    return "sparse_half" if spec.startswith("sparse_parity") else spec.split(":")[0]


def n_of(record: Any) -> int:
    return int(record.config.get("task", {}).get("n", record.config.get("n", 0)))


def state(record: Any, which: str = "fit+K") -> dict[str, Any] | None:
    """The measurements a run reports in state `which` (module doc); None when it has none."""
    got = record.metrics.get(STATES[which]) if STATES[which] else record.metrics
    return dict(got) if isinstance(got, dict) else None


def keep(record: Any, st: dict[str, Any], how: str) -> bool:
    if num(st.get("test_loss")) < FIT_LOSS:
        return True
    return how == "fitted" and task_of(record) not in REAL_VALUED and num(st.get("test_acc")) >= FIT_ACC


def mechanistic(records: list[Any], choices: Choices,
                value: Callable[[Any, dict[str, Any]], float | None]) -> tuple[list[tuple[Any, float]], str]:
    """(record, value) of the runs with the chosen state that pass the filter, and a note counting them."""
    which, how = choices.get("state", "fit+K"), choices.get("filter", "converged")
    read = [(r, st) for r in records if (st := state(r, which)) is not None]
    passed = [(r, st) for r, st in read if keep(r, st, how)]
    kept = [(r, v) for r, st in passed if (v := finite(value(r, st))) is not None]
    lag = f", K = {records[0].metrics.get('after_fit')} steps" if records and which == "fit+K" else ""
    if records and which == "end of budget":
        at = {n: int(num(r.metrics.get("budget"))) for r in records for n in [n_of(r)]}
        lag = ", at step " + ", ".join(f"{b:,} (n = {n})" for n, b in sorted(at.items()))
    return kept, (f"{len(kept)} runs kept (state '{which}'{lag}); {len(records) - len(read)} have no "
                  f"such state (not fitted within the cap), {len(read) - len(passed)} left out by the "
                  f"'{how}' filter")


def log10(x: float) -> float | None:
    return math.log10(x) if x > 0 and math.isfinite(x) else None


def seed_unit(record: Any) -> str:
    """A mechanistic run's unit: its sweep's seed or trade-off draw (the same weights at every n and task)."""
    return f"{record.sweep.rsplit('/', 1)[-1]}:{record.config.get('seed')}"


def fit_steps(runs: list[Any], task: str = "parity") -> str:
    """Median [range] fit step of `task` per n: how the time since the fit at the budget's end varies."""
    cells = group_by([r for r in runs if task_of(r) == task and r.metrics.get("fit_step") is not None], n_of)
    steps = {n: [num(r.metrics["fit_step"]) for r in rs] for n, rs in cells.items()}
    return ", ".join(f"n = {n}: {median(f):.0f} [{min(f):.0f}–{max(f):.0f}]" for n, f in steps.items())


# -- sharpness, blowup, norm and the trade-off against n (scaling and tradeoff sweeps) ---------------
def _pipeline(runs: list[Any]) -> str | None:
    """MAJORITY and FIRST are learnable at every n: most of them not fitting is a pipeline failure."""
    for task in CONTROLS:
        mine = [r for r in runs if task_of(r) == task]
        ok = sum(num(r.metrics.get("fit_step")) <= num(r.metrics.get("budget", math.inf)) for r in mine)
        if mine and ok < len(mine) / 2:
            return f"only {ok}/{len(mine)} {LABELS[task]} runs fit (MSE < 0.001) within the budget"
    return None


def growth(sweeps: str, value: Callable[[Any, dict[str, Any], Choices], float | None]) -> Any:
    """Evidence function: one observation per kept run, y = value(record, state, choices) vs n."""

    def evidence(results: Any, choices: Choices) -> Evidence:
        runs = [r for s in sweeps.split("+") for r in results.of(s)]
        if not runs or (bad := _pipeline(runs)):
            return Evidence(pipeline=bad) if runs else Evidence(missing=f"no finished {sweeps} runs")
        kept, note = mechanistic(runs, choices, lambda r, st: value(r, st, choices))
        obs = [Obs(seed_unit(r), v, n_of(r), task_of(r)) for r, v in kept]
        return Evidence(obs, notes=f"{note}; PARITY's fit step (median [range]) {fit_steps(runs)}"
                        + (noise(kept, choices) if value is _sharpness else ""))

    return evidence


def noise(kept: list[tuple[Any, float]], choices: Choices) -> str:
    """The measurement noise of the Gaussian sharpness: its median relative standard error per PARITY model."""
    if choices.get("sharpness", "gauss") != "gauss":
        return ""
    rel = [num(st.get("sharpness_gauss_se")) / abs(num(st.get("sharpness_gauss"))) for r, _ in kept
           if task_of(r) == "parity" and (st := state(r, choices.get("state", "fit+K"))) and num(st.get("sharpness_gauss"))]
    rel = [x for x in rel if math.isfinite(x)]
    return (f"; the Gaussian sharpness's standard error over its directions is {median(rel):.1%} of it per model "
            f"(median of {len(rel)} PARITY models)") if rel else ""


def _scaled(value: float, c: Choices) -> float | None:
    return value if c.get("scale") == "linear" else log10(value)  # linear: the pre-engine `scale`


def _read(prefix: str, choice: str, default: str) -> Callable[[Any, dict[str, Any], Choices], float | None]:
    """`<prefix>_<choices[choice]>` in the state read, scaled."""
    return lambda r, st, c: _scaled(num(st.get(f"{prefix}_{c.get(choice, default)}")), c)


_sharpness, _blowup = _read("sharpness", "sharpness", "gauss"), _read("blowup", "definition", "paper")


def _norm(r: Any, st: dict[str, Any], c: Choices) -> float | None:
    key = "param_norm_matrices" if c.get("norm") == "matrices" else "param_norm"
    norm, init = num(st.get(key)), num(r.metrics.get("init", {}).get(key))
    return _scaled(norm if c.get("norm") == "absolute" else norm / init, c)


sharpness_growth, blowup_growth = growth("scaling", _sharpness), growth("scaling", _blowup)
norm_growth = growth("scaling", _norm)


def _size(r: Any, st: dict[str, Any], c: Choices) -> float | None:
    """The trade-off coordinate: log10(‖θ‖/‖θ₀‖) + log10 Blowup (norm or blowup must grow)."""
    norm, blow = _norm(r, st, {**c, "scale": "log10"}), _blowup(r, st, {**c, "scale": "log10"})
    return None if norm is None or blow is None else norm + blow


def frontier(results: Any, choices: Choices) -> Evidence:
    sweep = "scaling+tradeoff" if results.of("tradeoff") else "scaling"
    ev = growth("tradeoff" if choices.get("runs") == "trade-off draws only" else sweep, _size)(results, choices)
    if ev.obs and choices.get("frontier") == "lower half per cell":
        cells = group_by(ev.obs, lambda o: (o.group, o.x))
        ev.obs = [o for o in ev.obs if o.y <= statistics.median(p.y for p in cells[(o.group, o.x)])]
    return ev


# -- the sharpness bound of §5 and Corollary 5 -------------------------------------------------------
def _radius(r: Any, st: dict[str, Any], c: Choices) -> tuple[float, str] | None:
    """log10 of the radius at which L_ρ reaches the bound's level, and where it lies on the grid."""
    own = num(st.get("model_as_real")) / (2 * n_of(r))
    level = own if task_of(r) == c.get("focus", "parity") or c.get("level") == "own as(T)/(2n)" else 0.5
    radii, values = st.get("radii"), st.get("sharpness_profile")
    if not radii or not values or not level > 0:
        return None
    if c.get("statistic") == "ratio":
        ratio = num(st.get("sharpness_sphere")) / level
        return (math.log10(ratio), "crossed") if ratio > 0 else None
    hit = bound_radius([float(x) for x in radii], [num(v) for v in values], level)
    return math.log10(hit.radius), hit.status


def bound(results: Any, choices: Choices) -> Evidence:
    runs = results.of("scaling") + results.of("scaling_sparse")
    if not runs:
        return Evidence(missing="no finished scaling runs")
    if choices.get("statistic") == "pre-engine":  # every function pooled, one radius
        kept, note = mechanistic(runs, choices, lambda r, st: float(
            num(st.get("sharpness_sphere")) >= num(st.get("model_as_real")) / (2 * n_of(r))))
        return Evidence([Obs(f"{task_of(r)}:{seed_unit(r)}", v, n_of(r), "pooled") for r, v in kept], notes=note)
    focus = choices.get("focus", "parity")
    if not any(task_of(r) == focus for r in runs):
        return Evidence(missing=f"no {LABELS.get(focus, focus)} runs at this scale")
    kept, note = mechanistic([r for r in runs if task_of(r) in (focus, *CONTROLS)], choices, lambda r, st: 0.0)
    which = choices.get("state", "fit+K")
    radii = [(r, got) for r, _ in kept if (got := _radius(r, state(r, which) or {}, choices))]
    obs = [Obs(seed_unit(r), x, n_of(r), "focus" if task_of(r) == focus else task_of(r),
               censored=where == "beyond_largest") for r, (x, where) in radii]
    status = dict(Counter(where for _, (_, where) in radii))
    grid = ", ".join(f"{k}: {v}" for k, v in sorted(status.items()))
    return Evidence(obs, notes=f"{note}; radius on the grid — {grid}. Out of the theorem's scope (as(f)/n → 0): "
                    "MAJORITY, FIRST, MEAN, used as controls at PARITY's level ½", details={"radius_status": status})


def _rhs(r: Any) -> float:
    """log10 as(f)/√(n log n), the right side of Corollary 5 with constant 1."""
    n = n_of(r)
    return math.log10(num(r.metrics.get("target_as")) / math.sqrt(n * math.log(n)))


def corollary(results: Any, choices: Choices) -> Evidence:
    form, which = choices.get("form", "inequality"), choices.get("state", "fit+K")
    if form in ("pre-engine", "pre-engine+power"):
        return _pre_corollary(results, choices, power=form == "pre-engine+power")
    runs = results.of("scaling")
    key = "log10_C_unscaled" if choices.get("C") == "unscaled" else "log10_C"

    def lhs(st: dict[str, Any]) -> float | None:
        sq = num(st.get("blowup_paper_sq"))
        return num(st.get(key)) + math.log10(sq) if sq > 0 else None

    parity = [r for r in runs if task_of(r) == "parity"]
    if form == "inequality" and parity:
        # C·E[B²] ≥ c·as(f)/√(n log n), c free: vacuous when it holds with c = 1 by decades in every model
        at_init = choices.get("vacuity") == "initialisation"
        rows = ([(r, r.metrics.get("init", {})) for r in parity] if at_init else
                [(r, st) for r in parity if (st := state(r, which)) is not None and keep(r, st, "converged")])
        gaps = [v - _rhs(r) for r, st in rows if (v := lhs(st)) is not None]
        cs = [num(st.get(key)) for _, st in rows]
        ns, span = sorted({n_of(r) for r in parity}), _rhs(max(parity, key=n_of)) - _rhs(min(parity, key=n_of))
        if gaps and min(gaps) > 0:
            where = ("at initialisation, before any training," if at_init else
                     f"in every trained PARITY model ({len(gaps)} runs, state '{which}')")
            return Evidence(vacuous=(
                f"{where} log10 C·E[Blowup²] exceeds log10 as(f)/√(n log n) by {min(gaps):.1f}–{max(gaps):.1f} "
                f"decades (n = {ns[0]}–{ns[-1]}): the inequality holds with constant 1 and says nothing unless the "
                f"free constant exceeds 10^{min(gaps):.1f}. log10 C alone ranges {min(cs):.1f}–{max(cs):.1f} across "
                f"these models while the right side moves by {span:.2f} decades over these n; the growth form, "
                "judged within each seed (per-unit slopes), is the alternative 'form=growth': its verdict is the "
                "robustness strip's, not stated here"))
    return growth("scaling", lambda r, st, c: lhs(st))(results, choices)


def _pre_corollary(results: Any, choices: Choices, power: bool) -> Evidence:
    """The pre-engine check: c fitted at the smallest n, then the share of PARITY runs at larger n with log10 C
    + 2·log10 E[B] ≥ log10 c·as/√(n log n); `power`: inconclusive if that scatters > 10× the right side's change."""
    kept, note = mechanistic([r for r in results.of("scaling") if task_of(r) == "parity"], choices,
                             lambda r, st: num(st.get("log10_C_unscaled")) + 2 * math.log10(num(st.get("blowup_paper"))))
    if len({n_of(r) for r, _ in kept}) < 2:
        return Evidence(missing="fitted PARITY runs at fewer than 2 distinct n")
    n0 = min(n_of(r) for r, _ in kept)
    c = min(v - _rhs(r) for r, v in kept if n_of(r) == n0)
    spread = statistics.stdev([v for _, v in kept]) if len(kept) > 2 else math.inf
    delta = max(_rhs(r) for r, _ in kept) - min(_rhs(r) for r, _ in kept)
    if power and spread > 10 * max(delta, 1e-12):
        return Evidence(missing=f"no power: log10 C·E[B]² scatters by {spread:.3g} decades (sd), the "
                        f"right side moves by {delta:.3g}")
    return Evidence([Obs(seed_unit(r) + f":{n_of(r)}", float(v >= c + _rhs(r)), None, "holds")
                     for r, v in kept if n_of(r) > n0], notes=note)


# -- dynamics and generalisation ---------------------------------------------------------------------
ALIGN = 0.01  # the paper aligns training curves at the first step with loss < 0.01 (0/1 scale)
PLATEAU = 0.2  # the constant predictor's MSE is 0.25: loss ≥ 0.2 is still the plateau


DRIFT = "fit level, drift removed"  # the after-level since round 6 (issue 34)
MEAN_AFTER = "mean from alignment"  # the after-level of rules v2–v5


def _drift_removed(rows: list[dict[str, Any]], key: str, t0: float) -> float:
    """The run's own level at the fit step t0 with its post-fit drift removed: the least-squares line of `key`
    against the step over the rows from alignment on, read at t0 (= their mean minus slope × (mean step − t0)).
    The mean from alignment on carries the drift of the steps after the fit (the blowup keeps rising under
    weight decay after any fit); the line's value at t0 keeps only what rose by the fit. One row: its value."""
    steps, values = [float(r["step"]) for r in rows], [num(r.get(key)) for r in rows]
    ms, mv = statistics.fmean(steps), statistics.fmean(values)
    sxx = sum((x - ms) ** 2 for x in steps)
    slope = sum((x - ms) * (y - mv) for x, y in zip(steps, values, strict=True)) / sxx if sxx > 0 else 0.0
    return mv - slope * (ms - t0)


def levels(trajectory: list[dict[str, Any]], key: str, reference: str, after: str) -> tuple[float, float] | None:
    """(before, after) levels of `key` around the first step with probe loss < 0.01 (None: never reached).
    before: "plateau" (0 < step < alignment with loss ≥ 0.2, else every step before it), "initialisation"
    (step 0) or "first quarter" (of the steps to alignment); after: DRIFT (the level at alignment of the
    least-squares line over the steps from alignment on: the run's own post-fit drift removed), "mean from
    alignment" (rules v2–v5: the mean over those steps, drift included) or "at alignment" (that step alone)."""
    hit = [i for i, row in enumerate(trajectory) if num(row.get("probe_loss")) < ALIGN]
    if not hit:
        return None
    t0 = trajectory[hit[0]]["step"]
    before = {
        "initialisation": trajectory[:1],
        "plateau": [r for r in trajectory if 0 < r["step"] < t0 and num(r.get("probe_loss")) >= PLATEAU]
        or [r for r in trajectory if r["step"] < t0],
        "first quarter": [r for r in trajectory if r["step"] <= t0 / 4] or trajectory[:1],
    }[reference]
    ref = statistics.fmean(num(r.get(key)) for r in before)
    if after == DRIFT:
        return ref, _drift_removed(trajectory[hit[0]:], key, t0)
    later = trajectory[hit[0]:] if after == MEAN_AFTER else trajectory[hit[0]:hit[0] + 1]
    return ref, statistics.fmean(num(r.get(key)) for r in later)


def rise(trajectory: list[dict[str, Any]], key: str, reference: str, after: str) -> float | None:
    """log10(after / before) (see `levels`); None when the run never aligns or `before` ≤ 0 (the
    Gaussian sharpness, a mean loss increase, can be ≤ 0 away from a minimum, e.g. at initialisation)."""
    got = levels(trajectory, key, reference, after)
    return log10(got[1] / got[0]) if got is not None and got[0] > 0 else None


def dynamics(results: Any, choices: Choices) -> Evidence:
    runs = results.of("dynamics")
    if not runs:
        return Evidence(missing="no finished dynamics runs")
    ref, after = choices.get("reference", "plateau"), choices.get("after", DRIFT)
    sharp, blow = f"sharpness_{choices.get('sharpness', 'gauss')}", f"blowup_{choices.get('definition', 'paper')}"
    obs, aligned, undefined = [], 0, 0
    drift: dict[str, list[float]] = {}
    for r in runs:
        unit = f"seed{r.config['seed']}"  # the weight decays of a seed share its initial weights
        if choices.get("units") == "run":  # the first engine rule: every run its own unit
            unit = f"wd{r.config['train']['weight_decay']:g}:{unit}"
        traj = r.metrics.get("trajectory") or []
        s_lv, b_lv = levels(traj, sharp, ref, after), levels(traj, blow, ref, after)
        if s_lv is None or b_lv is None:
            continue
        aligned += 1
        s, b = rise(traj, sharp, ref, after), rise(traj, blow, ref, after)
        undefined += s is None  # no ratio: the sharpness at the reference point is ≤ 0
        obs += [Obs(unit, v, None, g) for g, v in (("sharpness", s), ("blowup", b)) if v is not None]
        obs.append(Obs(unit, float(s_lv[1] > s_lv[0] and b_lv[1] > b_lv[0]), None, "both"))
        if after == DRIFT:  # the control: how much the mean from alignment on exceeds the drift-removed level
            for key, got in ((sharp, s_lv), (blow, b_lv)):
                mean_lv = levels(traj, key, ref, MEAN_AFTER)
                if mean_lv is not None and (d := log10(mean_lv[1] / got[1]) if got[1] > 0 else None) is not None:
                    drift.setdefault(key, []).append(d)
    notes = f"{aligned}/{len(runs)} runs reached probe loss < {ALIGN}; reference: {ref}; after: {after}; {blow}"
    if drift:
        notes += ("; the post-fit drift removed, log10(mean from alignment / fit level), median over runs: "
                  + ", ".join(f"{k} {median(v):+.3f}" for k, v in drift.items()))
    if undefined:
        notes += (f"; in {undefined} of them the sharpness ({sharp}) at the reference is ≤ 0 (the loss falls "
                  "under perturbation there), so they have no sharpness ratio and are left out of it")
    return Evidence(obs, notes=notes)


def _gen_runs(results: Any, choices: Choices) -> tuple[list[Any], Callable[[Any], str]]:
    """The runs read and their unit: the seed (function, strings and initialisation; its training sizes share
    them). The first engine rule counted each (seed, size) run as a unit."""
    runs = results.of("generalisation")
    if choices.get("size") == "smallest" and runs:
        runs = [r for r in runs if r.config["train_size"] == min(x.config["train_size"] for x in runs)]
    run_unit = choices.get("units") == "run"
    return runs, lambda r: f"seed{r.config['seed']}" + (f":m{r.config['train_size']}" if run_unit else "")


def generalisation(results: Any, choices: Choices) -> Evidence:
    runs, unit = _gen_runs(results, choices)
    if not runs:
        return Evidence(missing="no finished generalisation runs")
    kept = [r for r in runs if num(r.metrics.get("train_acc")) >= 0.95]
    obs = [Obs(unit(r), num(r.metrics.get(k)), None, g) for r in kept
           for g, k in (("learned", "learned_as"), ("completions", "completion_as_mean"))]
    obs += [Obs(unit(r), float(num(r.metrics.get("learned_as_quantile")) < 0.05), None, "below-5th") for r in kept]
    sizes = sorted({r.config["train_size"] for r in runs})
    return Evidence(obs, notes=f"{len(kept)}/{len(runs)} runs fit their training strings (≥ 95%); sizes {sizes}")


def flatness(results: Any, choices: Choices) -> Evidence:
    runs, unit = _gen_runs(results, choices)
    if not runs:
        return Evidence(missing="no finished generalisation runs")
    key, strict = f"sharpness_{choices.get('sharpness', 'gauss')}", choices.get("refits", "fitted") == "fitted"
    refits = [x for r in runs for x in [r.metrics.get("refit_learned") or {}, *(r.metrics.get("refit_completions") or [])]]
    fit = sum(num(x.get("acc")) >= 0.99 for x in refits)
    if refits and fit < len(refits) / 2:
        return Evidence(pipeline=f"only {fit}/{len(refits)} refits fit their truth table (accuracy ≥ 0.99)")
    obs = []
    for r in runs:
        learned = r.metrics.get("refit_learned") or {}
        comps = [c for c in r.metrics.get("refit_completions") or [] if not strict or num(c.get("acc")) >= 0.99]
        if not comps or (strict and num(learned.get("acc")) < 0.99):
            continue
        obs += [Obs(unit(r), num(learned.get(key)), None, "learned")]
        obs += [Obs(unit(r), num(c.get(key)), None, "completions") for c in comps]
        obs += [Obs(unit(r), float(all(num(learned.get(key)) < num(c.get(key)) for c in comps)), None, "flatter-all")]
    return Evidence(obs, notes=f"{fit}/{len(refits)} refits fit their truth table; sharpness: {key} (±1 units)")


# -- length generalisation and the scratchpad --------------------------------------------------------
FIT = "fit the training lengths"  # runs with accuracy ≥ LEN_FIT on the training lengths (the plan's criterion)
EVERY = "every task"  # since round 6 (issue 34) every task's runs are read only where they fit (v3–v4: PARITY's)
LEN_TASKS = ("parity", "majority", "first")


def length(results: Any, choices: Choices) -> Evidence:
    """Accuracy beyond the training lengths per run (group = task) and its drop from the training lengths
    (group "<task>-drop"). A run below LEN_FIT on its training lengths is refused, not read: beyond lengths it
    never fitted, its accuracy says nothing about generalising in length (`fitted` "parity only": the v3–v4
    rules' filter, PARITY's runs alone; `parity_runs` "all": the v2 rule's, none)."""
    pos = choices.get("positions", results.params.len_positions[0])
    runs = [r for r in results.of("length") + results.of("length_alt") if r.config["model"]["positions"] == pos]
    if not runs:
        return Evidence(missing=f"no finished length runs with positions={pos}")
    filtered = choices.get("parity_runs", FIT) == FIT
    every = choices.get("fitted", EVERY) == EVERY
    obs: list[Obs] = []
    ins: dict[str, list[float]] = {t: [] for t in LEN_TASKS}
    read: Counter[str] = Counter()
    for r in runs:
        acc = r.metrics.get("length_acc") or {}
        buckets = sorted(acc, key=lambda b: int(b.split("-")[0]))
        far = buckets[-1:] if choices.get("beyond") == "farthest bucket" else buckets[1:]
        inside, beyond, task = num(acc[buckets[0]]), statistics.fmean(num(acc[b]) for b in far), task_of(r)
        ins.setdefault(task, []).append(inside)
        if filtered and (every or task == "parity") and not inside >= LEN_FIT:
            continue
        read[task] += 1
        unit = f"seed{r.config['seed']}"
        obs += [Obs(unit, beyond, None, task), Obs(unit, inside - beyond, None, f"{task}-drop")]
    majority_in = mean(ins["majority"])
    if majority_in < LEN_FIT:
        return Evidence(pipeline=f"MAJORITY reaches only {majority_in:.2f} on its training lengths")
    if filtered and not read["parity"]:
        return Evidence(missing=(f"no PARITY run fits its training lengths (accuracy there {mean(ins['parity']):.2f} "
                                 f"on average, threshold {LEN_FIT}): there is nothing to generalise beyond them"))
    fits = ", ".join(f"{LABELS[t]} {mean(a):.3f} ({read[t]}/{len(a)} read)" for t, a in ins.items() if a)
    rule = (f"runs below {LEN_FIT} there are refused, not read ({'every task' if every else 'PARITY only'})"
            if filtered else "every run read")
    ref = "; ".join(f"{LABELS[t]} {' / '.join(f'{a:g}' for a in REFERENCE.accuracy[t])}" for t in ("parity", "majority"))
    return Evidence(obs, notes=(
        f"positions {pos}; accuracy on the training lengths: {fits}; {rule}; "
        f"{runs[0].metrics.get('training_space')} strings of the training lengths, "
        f"~{num(runs[0].metrics.get('training_distinct')):.0f} distinct ones drawn per run. "
        f"For orientation only, {REFERENCE.source}, buckets {' / '.join(REFERENCE.buckets)}: {ref}"))


def scratchpad(results: Any, choices: Choices) -> Evidence:
    judged = results.of("scratchpad")
    if not judged:
        return Evidence(missing="no finished scratchpad runs")
    largest = max(int(r.config["n"]) for r in judged)
    runs = judged + results.of("scratchpad_curve") if choices.get("n") == "all" else judged
    pad_key = {"teacher-forced": "teacher_forced_final_acc", "every step": "exact"}.get(
        choices.get("decoding") or choices.get("score", ""), "final_bit_acc")
    obs = []
    for r in runs:
        n, mode = int(r.config["n"]), r.config["mode"]
        if choices.get("n") == "largest" and n != largest:
            continue
        # one unit per seed and mode; the first engine rule counted each (n, seed) run as a unit
        unit = f"{mode}:seed{r.config['seed']}" + (f":n{n}" if choices.get("units") == "run" else "")
        value = num(r.metrics.get(pad_key if mode == "autoregressive" else "final_bit_acc"))
        obs.append(Obs(unit, value, None, "scratchpad" if mode == "autoregressive" else "plain"))
    return Evidence(obs, notes=f"scored: {pad_key}; n = {sorted({int(r.config['n']) for r in runs})}; "
                    f"Figure 11 (the scratchpad models against n): {figure11(results)}")


def figure11(results: Any) -> str:
    """Sharpness, blowup and ‖θ‖/‖θ₀‖ of the scratchpad models per n (medians over seeds)."""
    pads = [r for r in results.of("scratchpad") + results.of("scratchpad_curve") if r.config["mode"] == "autoregressive"]
    cells = group_by(pads, lambda r: int(r.config["n"]))
    cols = {"Gaussian sharpness": lambda r: num(r.metrics.get("sharpness_gauss")),
            "blowup": lambda r: num(r.metrics.get("blowup_paper")),
            "‖θ‖/‖θ₀‖": lambda r: num(r.metrics.get("param_norm")) / num(r.metrics.get("init_param_norm"))}
    return "; ".join(f"{k} " + " / ".join(f"{median(f(r) for r in rs):.3g}" for rs in cells.values())
                     for k, f in cols.items()) + f" at n = {' / '.join(map(str, cells))} (medians)"
# fmt: on
