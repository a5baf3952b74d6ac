"""Study `sparse_xor`, evidence: from a record to the quantity a claim judges (success at each step size
under a criterion, the smallest working step size, m*, n*, the FFNN's smallest width), then one
observation per independent unit (a draw: one seed at one d; for m* and the FFNN's width, one d pooling
its seeds) under the analysis choices the claim declares (`choices`). No statistics here: the claims'
rules do that through `learnability.stats`."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from learnability.claims import Choices, Evidence, Obs
from learnability.models.two_head_steps import Criterion
from learnability.studies.base import StudyResults
from learnability.studies.common import group_by, median, num
from learnability.studies.sparse_xor.plan import SEED_FRACTION, SUCCESS
from learnability.studies.sparse_xor.sweeps import S

Record = Any  # a stored run: .config, .metrics, .status, .sweep, .run_id

# fmt: off


def criterion(choices: Choices) -> Criterion:
    """The success criterion under a claim's choices (its defaults are the study's `SUCCESS`)."""
    return Criterion(float(choices.get("success_loss", SUCCESS.loss)),
                     float(choices.get("success_mass", SUCCESS.mass)))


def succeeded(loss: Sequence[float | None], spec: Sequence[float], crit: Criterion) -> list[bool]:
    """Success at each grid point; a missing (non-finite) loss is a failure."""
    return [v is not None and v <= crit.loss and sp >= crit.mass for v, sp in zip(loss, spec)]


def step_ok(r: Record, crit: Criterion) -> list[bool]:
    """Success of a one-step record at each point of its step-size grid."""
    return succeeded(r.metrics["loss"], r.metrics["spec"], crit)


def draw(r: Record) -> str:
    """The independent unit: one seed's draw (embeddings, initial θ, support) at one d."""
    return f"d={r.config['d']}/seed={r.config['seed']}"


def by_d(records: Sequence[Record]) -> dict[int, list[Record]]:
    return group_by(records, lambda r: int(r.config["d"]))


class Window(NamedTuple):
    """Where one draw's step succeeds on the grid (log10 units): the smallest working step size, the
    working set's width in decades, whether it is one interval and whether it reaches the top."""

    lo: float | None
    decades: float | None
    contiguous: bool
    open_top: bool


def window(ok: Sequence[bool], grid: Sequence[float]) -> Window:
    if not (idx := [i for i, v in enumerate(ok) if v]):
        return Window(None, None, True, False)
    lo, hi = idx[0], idx[-1]
    return Window(grid[lo], grid[hi] - grid[lo], hi - lo + 1 == len(idx), hi == len(ok) - 1)


def shared_index(success: Sequence[Sequence[bool]]) -> int | None:
    """The grid point where most draws succeed (one step size for all of them): the centre of the longest
    run of grid points reaching the maximum count (robust to a plateau); None when no draw succeeds."""
    counts = [sum(col) for col in zip(*success)]
    if not counts or max(counts) == 0:
        return None
    top, best, start = max(counts), (0, 0), None  # (length, -start) of the longest run at the maximum
    for i, c in enumerate([*counts, -1]):
        if c == top and start is None:
            start = i
        elif c != top and start is not None:
            best, start = max(best, (i - start, -start)), None
    return -best[1] + (best[0] - 1) // 2


# -- m* ------------------------------------------------------------------------------------------------------
def m_fractions(records: Sequence[Record], crit: Criterion, shared: bool = True, cap: bool = True) -> dict[int, float]:
    """For the draws (seeds) of one d: the fraction that succeeds at each m — at one step size shared by
    all seeds (`shared`) or at each draw's own best step size; only m ≤ d with `cap` (at m > d the d
    embeddings are linearly independent: outside the paper's m ≪ d)."""
    out: dict[int, float] = {}
    for j, m in enumerate(records[0].metrics["m_grid"] if records else []):
        if cap and m > records[0].config["d"]:
            continue
        ok = [succeeded(r.metrics["loss"][j], r.metrics["spec"][j], crit) for r in records]
        i = shared_index(ok)
        out[m] = (0.0 if i is None else sum(o[i] for o in ok) / len(ok)) if shared else sum(map(any, ok)) / len(ok)
    return out


def m_star(fractions: Mapping[int, float], tau: float = SEED_FRACTION, rule: str = "stays") -> int | None:
    """The smallest m whose fraction reaches tau — `stays`: and every larger m on the grid too (a lucky
    small m does not count); `first`: the first m that reaches it. None: no m on the grid does."""
    ms = sorted(fractions)
    for k, m in enumerate(ms):
        if fractions[m] >= tau and (rule == "first" or all(fractions[x] >= tau for x in ms[k:])):
            return m
    return None


def m_stars(results: StudyResults, crit: Criterion, tau: float, rule: str = "stays", shared: bool = True,
            cap: bool = True) -> dict[int, int | None]:
    """m* per d (None: no m on the grid reaches the fraction); `cap=False` reads m > d too (ffnn v3)."""
    return {d: m_star(m_fractions(rs, crit, shared, cap), tau, rule) for d, rs in by_d(results.of("min_m")).items()}


# -- n*, the FFNN's width ------------------------------------------------------------------------------------
def n_star(rows: Sequence[Mapping[str, Any]], crit: Criterion, rule: str = "stable") -> int | None:
    """The smallest n at which the finite-sample step succeeds — `stable`: and at every larger n the ladder
    evaluated; `first`: the first success. None: no n on the ladder (censored at the budget)."""
    ok = succeeded([r["loss"] for r in rows], [r["spec"] for r in rows], crit)
    return next((int(row["n"]) for k, row in enumerate(rows) if ok[k] and (rule == "first" or all(ok[k:]))), None)


def population_ok(r: Record, crit: Criterion) -> bool:
    return any(succeeded(r.metrics["population_loss"], r.metrics["population_spec"], crit))


@dataclass(frozen=True)
class Width:
    d: int
    width: int | None  # smallest width reaching the seed fraction (None: none on the grid)
    params: int | None  # its trainable parameters
    fractions: dict[int, float]  # width -> fraction of seeds with test MSE ≤ the loss threshold
    strings: float | None  # median strings seen until the bar at that width (converged step × batch)

    @property
    def censored(self) -> str | None:
        """Where the grid fails to bracket w*: "above" (no width keeps the fraction: w* > the largest width),
        "below" (the smallest width already does: w* ≤ it, not equal to it); None: bracketed on the grid."""
        if self.width is None:
            return "above"
        return "below" if self.width == min(self.fractions) else None

    def text(self) -> str:
        """w* as the grid brackets it: '3', '> 4' or '≤ 2'."""
        if self.width is None:
            return f"> {max(self.fractions)}"
        return f"≤ {self.width}" if self.censored else str(self.width)


def ffnn_widths(records: Sequence[Record], loss_max: float, tau: float) -> list[Width]:
    """Per d: the smallest width whose seeds reach test MSE ≤ loss_max in a fraction ≥ tau (and every
    larger width too). A run that diverged counts as a failure."""
    out = []
    for d, rs in group_by(records, lambda r: int(r.config["task"]["n"])).items():
        widths = group_by(rs, lambda r: int(r.config["model"]["width"]))
        frac = {w: sum(r.status == "ok" and num(r.metrics.get("test_loss")) <= loss_max for r in x)
                / len(x) for w, x in widths.items()}
        best = m_star(frac, tau, "stays")
        params = strings = None
        if best is not None:
            params = int(widths[best][0].metrics.get("trainable_params") or best * (d + 2) + 1)
            strings = median([strings_seen(r) for r in widths[best] if r.status == "ok"])
        out.append(Width(d, best, params, frac, strings))
    return out


def strings_seen(r: Record) -> float:
    """Training strings an FFNN run drew before it stopped (its convergence check or its budget)."""
    t = r.config["train"]
    return float(r.metrics.get("converged_step") or r.metrics.get("steps") or t["steps"]) * t["batch_size"]


def ffnn_records(results: StudyResults) -> list[Record]:
    """The FFNN baseline's runs (one sweep per d and seed); a diverged run is a failed one."""
    return [r for r in results.records if r.sweep.startswith(f"{S}/ffnn_d") and r.status in ("ok", "diverged")]


def finite_sample(results: StudyResults, crit: Criterion) -> dict[int, tuple[int, float, float]]:
    """Per d of the samples sweep, over the draws whose population step succeeds (the samples claim's
    protocol): (2m, median n* — a draw that never succeeds within the ladder counts as twice its budget —,
    the fraction of draws that succeed within the ladder)."""
    out = {}
    for d, rs in by_d(results.of("samples")).items():
        if ns := [n_star(r.metrics["rows"], crit) or 2 * r.metrics["n_max"] for r in rs if population_ok(r, crit)]:
            out[d] = (2 * int(rs[0].metrics["m"]), median(ns), sum(n <= rs[0].metrics["n_max"] for n in ns) / len(ns))
    return out


# -- evidence of each claim ----------------------------------------------------------------------------------
def one_step(results: StudyResults, choices: Choices) -> Evidence:
    """Success of one softmax step on each judged draw at one constant c* (chosen on the other seeds) and,
    as the control, the same draw before the step (η = 0); details: success against c at every grid point."""
    recs = results.of("one_step")
    if not recs:
        return Evidence(missing="no finished one-step runs")
    grid, crit = recs[0].metrics["log10_grid"], criterion(choices)
    if start := [r for r in recs if r.metrics["loss0"] <= crit.loss and r.metrics["spec0"] >= crit.mass]:
        return Evidence(pipeline=f"{len(start)} draws already meet the criterion before any step")
    ok = {r.run_id: step_ok(r, crit) for r in recs}
    half = (results.params.one_step_seeds if results.plan else 1 + max(r.config["seed"] for r in recs)) // 2
    judged = [r for r in recs if r.config["seed"] >= half]
    if choices["eta"] == "per_d":  # per d, the step size most of that d's draws share, chosen on themselves
        picks = {d: shared_index([ok[r.run_id] for r in rs]) for d, rs in by_d(recs).items()}
        judged, head = recs, "step size chosen per d on the judged draws themselves"
    elif choices["eta"].startswith("c="):  # a fixed constant on the theorem's scale, no calibration
        i = grid.index(math.log10(float(choices["eta"][2:])))
        picks, head = dict.fromkeys(by_d(recs), i), f"c fixed at 10^{grid[i]:g} for every d"
    else:  # one c for every d: the centre of the plateau of the calibration half of the seeds
        i = shared_index([ok[r.run_id] for r in recs if r.config["seed"] < half])
        picks = dict.fromkeys(by_d(recs), i)
        head = "no c works on the calibration seeds" if i is None else (
            f"c* = 10^{grid[i]:.2f} (the centre of the calibration plateau: one c for every d, seeds 0..{half - 1})")
    obs = []
    for r in judged:
        i = picks[r.config["d"]]
        obs += [Obs(draw(r), 0.0 if i is None else float(ok[r.run_id][i]), r.config["d"], "step"),
                Obs(draw(r), 0.0, r.config["d"], "init")]
    hits = {d: sum(ok[r.run_id][i] for r in rs) if (i := picks[d]) is not None else 0 for d, rs in by_d(judged).items()}
    curve = [sum(ok[r.run_id][i] for r in judged) for i in range(len(grid))]
    at = ", ".join(f"{curve[grid.index(c)]}/{len(judged)} at c = 10^{c:g}" for c in (0.0, 1.0) if c in grid)
    notes = (f"{head}; success per d: " + ", ".join(f"d={d}: {k}/{len(by_d(judged)[d])}" for d, k in hits.items())
             + f"; success against c (judged draws, all d): {at}")
    details = {"log10_c_star": {d: None if i is None else grid[i] for d, i in picks.items()},
               "success_by_c": {"log10_c": grid, "succeeded": curve, "draws": len(judged), "unit": "c = η/(d²·ln d)"}}
    return Evidence(obs, notes=notes, details=details)


def step_size(results: StudyResults, choices: Choices) -> Evidence:
    """log10 of the smallest working c = η/(d²·ln d) of each draw with a working step size, at log10 d."""
    recs = [r for r in results.of("one_step") if r.config["d"] >= int(choices.get("d_min", 0))]
    if not recs:
        return Evidence(missing="no finished one-step runs")
    crit, grid = criterion(choices), recs[0].metrics["log10_grid"]
    wins = [(r, window(step_ok(r, crit), grid)) for r in recs]
    if not (have := [(r, w) for r, w in wins if w.lo is not None]):
        return Evidence(missing="no draw has a working step size")
    obs = [Obs(draw(r), float(w.lo or 0), math.log10(r.config["d"]), "softmax") for r, w in have]
    none, top = len(wins) - len(have), sum(w.open_top for _, w in have)
    notes = (f"{none} of {len(wins)} draws have no working step size (excluded); working window: median "
             f"{median([w.decades for _, w in have]):.2f} decades, {top} of {len(have)} reach the grid's top c = "
             f"10^{grid[-1]:g}, {sum(not w.contiguous for _, w in have)} are not one interval")
    return Evidence(obs, notes=notes, details={"no_working_step": none, "open_top": top})


def _kinds(results: StudyResults, sweep: str, d: int) -> dict[str, list[Record]] | Evidence:
    recs = [r for r in results.of(sweep) if r.config["d"] == d]
    return group_by(recs, lambda r: r.config["attention"]) if recs else Evidence(missing=f"no {sweep} runs at d = {d}")


def kinds_one_step(results: StudyResults, choices: Choices) -> Evidence:
    """Per kind and draw (same seeds for every kind), at one d: does one step succeed at any step size of the
    grid (the most generous to every kind; `eta=shared`, the pre-engine reading: at one shared by its draws)."""
    if isinstance(kinds := _kinds(results, "kinds", int(choices["d"])), Evidence):
        return kinds
    obs, crit = [], criterion(choices)
    for kind, rs in kinds.items():
        ok = [step_ok(r, crit) for r in rs]
        i = shared_index(ok)
        obs += [Obs(draw(r), float(i is not None and o[i] if choices.get("eta") == "shared" else any(o)), None, kind)
                for r, o in zip(rs, ok)]
    return Evidence(obs, notes=f"d = {choices['d']}, m = {rs[0].metrics['m']}")


def steps_to_success(r: Record, per_decade: float | None = None) -> int | None:
    """A many-step record's fewest steps to success over its η grid — over every point, or (`per_decade`) only
    over the grid points of a coarser grid on the same range (log10 η a multiple of 1/per_decade): the v2
    reading of stop 31, whose grid had 1 point a decade, recomputed from the 4-a-decade grid's own points."""
    first, grid = r.metrics["first_success"], r.metrics["log10_eta"]
    keep = [f for f, g in zip(first, grid) if per_decade is None or abs(g * per_decade - round(g * per_decade)) < 1e-9]
    return min((f for f in keep if f is not None), default=None)


def kinds_many_steps(results: StudyResults, choices: Choices) -> Evidence:
    """Per kind and draw, at one d: did population gradient descent succeed within K steps at its best η (over
    the whole η grid; `eta_grid=1_per_decade`: only at its integer log10 η, the grid before issue 34)."""
    if isinstance(kinds := _kinds(results, "many_steps", int(choices["d"])), Evidence):
        return kinds
    k, coarse = int(choices["within"]), 1.0 if choices.get("eta_grid") == "1_per_decade" else None
    steps = {r.run_id: steps_to_success(r, coarse) for rs in kinds.values() for r in rs}
    obs = [Obs(draw(r), float((n := steps[r.run_id]) is not None and n <= k), None, kind)
           for kind, rs in kinds.items() for r in rs]
    rs0 = next(iter(kinds.values()))
    n_eta = sum(coarse is None or abs(g - round(g)) < 1e-9 for g in rs0[0].metrics["log10_eta"])
    found = ", ".join(f"{kind}: {sum(steps[r.run_id] is not None for r in rs)}/{len(rs)}" for kind, rs in kinds.items())
    return Evidence(obs, notes=f"d = {choices['d']}, budget {rs0[0].config['steps']} steps, {n_eta} step sizes; draws "
                    f"that succeed within the budget at any of them: {found}",
                    details={"eta_points": n_eta, "succeeded_within_budget": {
                        kind: sum(steps[r.run_id] is not None for r in rs) for kind, rs in kinds.items()}})


# The m* analyses the v3 polylog rule must all pass: the headline (group "transformer") and each analysis
# choice v2 declared as an alternative — (seed fraction, m rule, loss bar).
M_VARIANTS = {"transformer": (SEED_FRACTION, "stays", SUCCESS.loss), "τ=0.5": (0.5, "stays", SUCCESS.loss),
              "τ=0.875": (0.875, "stays", SUCCESS.loss), "first m": (SEED_FRACTION, "first", SUCCESS.loss),
              "loss ≤ 0.01": (SEED_FRACTION, "stays", 0.01)}


def polylog_m(results: StudyResults, choices: Choices) -> Evidence:
    """ln m* at each d ≥ max(64, d_min) (one unit per d, pooling its seeds), for every m* analysis of
    `M_VARIANTS` (a group each); a variant with no m* at some d gives no points (its fit cannot run)."""
    seeds = {d: len(rs) for d, rs in by_d(results.of("min_m")).items()}
    need = results.params.m_seeds if results.plan else 1
    if not seeds:
        return Evidence(missing="no finished min-m runs")
    if short := [d for d, n in seeds.items() if n < need]:
        return Evidence(missing=f"fewer than {need} seeds at d = {short}")
    obs, gaps, stars_of = [], [], {}
    shared, d_min = choices.get("step", "shared") == "shared", max(64, int(choices.get("d_min", 0)))
    upper = choices.get("fit") == "upper_half"  # the pre-engine fit: power law over the upper half of d
    for group, (tau, rule, loss) in M_VARIANTS.items():
        found = m_stars(results, Criterion(loss, criterion(choices).mass), tau, rule, shared)
        stars = stars_of[group] = {d: m for d, m in found.items() if d >= d_min}
        if upper:
            stars = dict(list(stars.items())[len(stars) // 2 :])
        if over := [d for d, m in stars.items() if m is None]:
            gaps.append(f"{group}: no m ≤ d on the grid reaches the fraction at d = {over}")
            continue
        obs += [Obs(f"d={d}", math.log(m), math.log(d) if upper else float(d), group) for d, m in stars.items() if m]
    head = ", ".join(f"{m or '>grid'} (2^{round(math.log2(d))})" for d, m in stars_of["transformer"].items())
    notes = f"m* (τ = {SEED_FRACTION}, stays) = {head}; {need} seeds per d" + "".join(f"; {t}" for t in gaps)
    return Evidence(obs, notes=notes, details={"m_star": {g: {str(d): m for d, m in s.items()}
                                                          for g, s in stars_of.items()}})


def samples(results: StudyResults, choices: Choices) -> Evidence:
    """log10 n* per draw at log10 d; a draw that never succeeds within the ladder is right-censored at
    n_max (kept), unless the pre-engine choice drops it."""
    recs = [r for r in results.of("samples") if r.config["d"] >= int(choices.get("d_min", 0))]
    if not recs:
        return Evidence(missing="no finished sample-size runs")
    crit, obs, excluded, censored = criterion(choices), [], 0, 0
    for r in recs:
        n_max, x, pop = r.metrics["n_max"], math.log10(r.config["d"]), population_ok(r, crit)
        if not pop and choices["population_failures"] == "excluded":
            excluded += 1
            continue
        n = n_star(r.metrics["rows"], crit, choices["n_rule"]) if pop else None
        censored += n is None
        if n is not None or choices.get("censored") != "drop":
            obs.append(Obs(draw(r), math.log10(n or n_max), x, "softmax", censored=n is None))
    medians = {d: median([o.y for o in obs if o.x == math.log10(d)]) for d in by_d(recs)}
    kept = "dropped" if choices.get("censored") == "drop" else "kept, censored"
    notes = ("median n* (censored at the budget count as the budget): "
             + ", ".join(f"d={d}: {10**v:.0f}" if v == v else f"d={d}: n/a" for d, v in medians.items())
             + f"; {censored} draws never succeed within the budget ({kept}), {excluded} draws fail even on the "
             "population loss (excluded)")
    return Evidence(obs, notes=notes, details={"censored": censored, "population_failures": excluded})


VACUOUS_PER_BIT = ("a dense first layer has width·d weights, so any MLP of width ≥ 1 has ≥ 1 parameter per input "
                   "bit: the rule is decided by the architecture (and width 2 suffices at every d), not by the data")
V4_WIDTHS = 2  # the FFNN's width grid before issue 34 started at 2: the v4 reading ignores width 1


def ffnn(results: StudyResults, choices: Choices) -> Evidence:
    """The FFNN's minimal width w* per d (the smallest width whose seeds reach the loss bar in the fraction τ,
    every larger width too) against the transformer's minimal m at the same d under the same loss bar and τ —
    its population step's m* (`data=population`) or its finite-sample step's m (`data=finite_sample`); log10 of
    each at log10 d. A d where the grid cannot bracket w* (every width, the smallest included, succeeds, or
    none does) is reported as censored and the claim has no slope. `y=parameters` (v1–v4): the trainable
    parameters at w* (w*·(d+2)+1) and the transformer's 2m, on widths ≥ 2 (the grid those rules read). Both
    axes (parameters, strings) are in notes and details."""
    if choices.get("ffnn_rule") == "per_bit":
        return Evidence(vacuous=VACUOUS_PER_BIT)
    loss, tau, finite = criterion(choices).loss, float(choices["fraction"]), choices.get("data") == "finite_sample"
    params_y = choices.get("y") == "parameters"
    if not (recs := ffnn_records(results)):
        return Evidence(missing="no finished FFNN runs")
    if params_y:
        recs = [r for r in recs if int(r.config["model"]["width"]) >= V4_WIDTHS]
    widths = ffnn_widths(recs, loss, tau)
    grid = sorted({int(r.config["model"]["width"]) for r in recs})
    if params_y and (failed := [w.d for w in widths if w.width is None]):
        return Evidence(pipeline=f"the FFNN reaches test MSE ≤ {loss} in {tau:.0%} of seeds at no width on the grid "
                        f"at d = {failed} (its training budget, not the claim)")
    if fit := [f"d = {w.d}: {w.fractions[1]:.0%}" for w in widths if w.fractions.get(1, 0.0) > 0]:
        return Evidence(pipeline=f"width 1 reaches test MSE ≤ {loss} in some seeds ({', '.join(fit)}), but one ReLU "
                        "cannot fit XOR (its output is monotone in one linear score): the task or the metric is wrong")
    if not params_y and (cens := [w for w in widths if w.censored]):
        return Evidence(missing="the width grid " + "/".join(map(str, grid)) + " does not bracket the FFNN's minimal "
                        f"width (τ = {tau:g}, MSE ≤ {loss}) at " + ", ".join(f"d = {w.d}: w* {w.text()}" for w in cens)
                        + " (censored: no minimum to fit)")
    budget = max(float(r.config["train"]["steps"] * r.config["train"]["batch_size"]) for r in recs)
    stars = m_stars(results, Criterion(loss, 0.0), tau, cap=choices.get("m_cap", "d") == "d")
    fs = finite_sample(results, Criterion(loss, 0.0))
    tf = {d: m2 for d, (m2, _, frac) in fs.items() if frac >= tau} if finite else {d: 2 * m for d, m in stars.items() if m}
    if missing := [w.d for w in widths if w.d not in tf]:
        what = "finite-sample step (learned within the ladder)" if finite else "m*"
        return Evidence(missing=f"the transformer's {what} is undefined at d = {missing}: no m, or too few draws, "
                        "keeps the seed fraction")
    if params_y:
        obs = [Obs(f"d={w.d}", math.log10(w.params or 0), math.log10(w.d), "ffnn") for w in widths]
        obs += [Obs(f"d={w.d}", math.log10(tf[w.d]), math.log10(w.d), "transformer") for w in widths]
    else:  # the sizes themselves: the FFNN's hidden width, the transformer's m (its 2 query vectors have m each)
        obs = [Obs(f"d={w.d}", math.log10(w.width or 0), math.log10(w.d), "ffnn") for w in widths]
        obs += [Obs(f"d={w.d}", math.log10(tf[w.d] / 2), math.log10(w.d), "transformer") for w in widths]
    if choices.get("all_d"):  # the pre-engine rules' transformer part: 2m* over every d of the m sweep
        obs += [Obs(f"d={d}", math.log10(p), math.log10(d), "transformer_all") for d, p in tf.items() if d >= 64]
    low = min(grid)
    notes = ("FFNN minimal width w* (fraction of seeds at each width " + "/".join(map(str, grid)) + "): "
             + ", ".join(f"d={w.d}: {w.text()} (" + "/".join(f"{w.fractions.get(x, math.nan):.2g}" for x in grid) + ")"
                         for w in widths)
             + f"; width {low} reaches the bar in at most {max(w.fractions.get(low, 0.0) for w in widths):.0%} of seeds"
             + ("" if low > 1 else " (one ReLU cannot fit XOR: the lower bracket and a pipeline check)")
             + "; parameters / strings — FFNN at w*: "
             + ", ".join(f"d={w.d}: {w.params} / {w.strings:,.0f}" for w in widths)
             + f" (budget {budget:,.0f}); transformer's population step (exact gradient): "
             + ", ".join(f"d={w.d}: {2 * (stars.get(w.d) or 0)} / ∞" for w in widths)
             + "; transformer's finite-sample step at m = ⌈log2(d)²/2⌉: "
             + ", ".join(f"d={d}: {v[0]} / {v[1]:,.0f} (median n*; {v[2]:.0%} of draws within the ladder)"
                         for d, v in fs.items()))
    details = {"ffnn": {str(w.d): {"width": w.width, "params": w.params, "strings": w.strings,
                                   "fractions": {str(k): v for k, v in w.fractions.items()}} for w in widths},
               "ffnn_widths": grid,
               "transformer_population": {str(d): 2 * m for d, m in stars.items() if m},
               "transformer_finite_sample": {str(d): {"params": v[0], "median_n_star": v[1], "within_ladder": v[2]}
                                             for d, v in fs.items()}, "ffnn_budget_strings": budget}
    return Evidence(obs, notes=notes, details=details)


__all__ = [
    "M_VARIANTS", "V4_WIDTHS", "VACUOUS_PER_BIT", "Width", "Window", "by_d", "criterion", "draw", "ffnn",
    "ffnn_widths", "finite_sample", "kinds_many_steps", "kinds_one_step", "m_fractions", "m_star",
    "m_stars", "n_star", "one_step", "polylog_m", "population_ok", "samples", "shared_index",
    "step_ok", "step_size", "steps_to_success", "strings_seen", "succeeded", "window",
]
