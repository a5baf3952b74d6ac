"""Study `sparse_xor`, evidence: from a record to the quantity a claim judges (success at each step size
under a criterion, the smallest working step size, m*, n*, the FFNN's smallest width), then one
observation per independent unit (a draw: one seed at one d; for m* and the FFNN's width, one d pooling
its seeds) under the analysis choices the claim declares (`choices`). No statistics here: the claims'
rules do that through `learnability.stats`."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from learnability.claims import Evidence, Obs
from learnability.models.two_head_steps import Criterion
from learnability.studies.base import StudyResults
from learnability.studies.common import finite, group_by
from learnability.studies.sparse_xor.plan import RIVALS, SEED_FRACTION, SUCCESS
from learnability.studies.sparse_xor.sweeps import S

Choices = Mapping[str, Any]

Record = Any  # a stored run: .config, .metrics, .status, .sweep, .run_id


def criterion(choices: Mapping[str, Any]) -> Criterion:
    """The success criterion under a claim's choices (its defaults are the study's `SUCCESS`)."""
    return Criterion(
        float(choices.get("success_loss", SUCCESS.loss)),
        float(choices.get("success_mass", SUCCESS.mass)),
    )


def succeeded(loss: Sequence[float | None], spec: Sequence[float], crit: Criterion) -> list[bool]:
    """Success at each grid point; a missing (non-finite) loss is a failure."""
    return [
        loss_i is not None and loss_i <= crit.loss and spec_i >= crit.mass
        for loss_i, spec_i in zip(loss, spec)
    ]


def step_ok(r: Record, crit: Criterion) -> list[bool]:
    """Success of a one-step record at each point of its step-size grid."""
    return succeeded(r.metrics["loss"], r.metrics["spec"], crit)


def draw(r: Record) -> str:
    """The independent unit: one seed's draw (embeddings, initial θ, support) at one d."""
    return f"d={r.config['d']}/seed={r.config['seed']}"


@dataclass(frozen=True)
class Window:
    """Where one draw's step succeeds on the grid (log10 units of the grid): the smallest and largest
    working step size, whether the working set is one interval, and whether it reaches the grid's top."""

    lo: float | None
    hi: float | None
    contiguous: bool
    open_top: bool

    @property
    def decades(self) -> float | None:
        return None if self.lo is None or self.hi is None else self.hi - self.lo


def window(ok: Sequence[bool], grid: Sequence[float]) -> Window:
    idx = [i for i, v in enumerate(ok) if v]
    if not idx:
        return Window(None, None, True, False)
    contiguous = idx[-1] - idx[0] + 1 == len(idx)
    return Window(grid[idx[0]], grid[idx[-1]], contiguous, idx[-1] == len(ok) - 1)


def shared_index(success: Sequence[Sequence[bool]]) -> int | None:
    """The grid point where most draws succeed (one step size for all of them): the centre of the longest
    run of grid points reaching the maximum count (robust to a plateau); None when no draw succeeds."""
    if not success:
        return None
    counts = [sum(col) for col in zip(*success)]
    top = max(counts)
    if top == 0:
        return None
    best: tuple[int, int] = (0, 0)  # (length, start) of the longest run at the maximum
    start = None
    for i, c in enumerate([*counts, -1]):
        if c == top and start is None:
            start = i
        elif c != top and start is not None:
            best = max(best, (i - start, -start))
            start = None
    length, neg_start = best
    return -neg_start + (length - 1) // 2


# -- m* ------------------------------------------------------------------------------------------------------
def m_fractions(
    records: Sequence[Record], crit: Criterion, shared: bool = True
) -> dict[int, float]:
    """For the draws (seeds) of one d: the fraction that succeeds at each m — at one step size shared
    by all seeds (`shared`) or at each draw's own best step size."""
    out: dict[int, float] = {}
    if not records:
        return out
    grid_m = records[0].metrics["m_grid"]
    for j, m in enumerate(grid_m):
        ok = [succeeded(r.metrics["loss"][j], r.metrics["spec"][j], crit) for r in records]
        if shared:
            i = shared_index(ok)
            out[m] = 0.0 if i is None else sum(o[i] for o in ok) / len(ok)
        else:
            out[m] = sum(any(o) for o in ok) / len(ok)
    return out


def m_star(
    fractions: Mapping[int, float], tau: float = SEED_FRACTION, rule: str = "stays"
) -> int | None:
    """The smallest m whose fraction reaches tau — `stays`: and every larger m on the grid too (a lucky
    small m does not count); `first`: the first m that reaches it. None: no m on the grid does."""
    ms = sorted(fractions)
    for k, m in enumerate(ms):
        if fractions[m] >= tau and (rule == "first" or all(fractions[x] >= tau for x in ms[k:])):
            return m
    return None


def by_d(records: Sequence[Record]) -> dict[int, list[Record]]:
    return group_by(records, lambda r: int(r.config["d"]))


# -- n* ------------------------------------------------------------------------------------------------------
def n_star(rows: Sequence[Mapping[str, Any]], crit: Criterion, rule: str = "stable") -> int | None:
    """The smallest n at which the finite-sample step succeeds — `stable`: and at every larger n the ladder
    evaluated; `first`: the first success. None: no n on the ladder (censored at the budget)."""
    ok = [r["loss"] is not None and r["loss"] <= crit.loss and r["spec"] >= crit.mass for r in rows]
    for k, row in enumerate(rows):
        if ok[k] and (rule == "first" or all(ok[k:])):
            return int(row["n"])
    return None


def population_ok(r: Record, crit: Criterion) -> bool:
    return any(succeeded(r.metrics["population_loss"], r.metrics["population_spec"], crit))


# -- FFNN ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Width:
    d: int
    width: int | None  # smallest width reaching the seed fraction (None: none on the grid)
    params: int | None  # its trainable parameters
    fractions: dict[int, float]  # width -> fraction of seeds with test MSE ≤ the loss threshold
    seeds: int


def ffnn_widths(records: Sequence[Record], loss_max: float, tau: float) -> list[Width]:
    """Per d: the smallest width whose seeds reach test MSE ≤ loss_max in a fraction ≥ tau (and every
    larger width too). A run that diverged counts as a failure."""
    cells: dict[int, dict[int, list[Record]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        cells[int(r.config["task"]["n"])][int(r.config["model"]["width"])].append(r)
    out = []
    for d, widths in sorted(cells.items()):
        frac = {}
        for w, rs in sorted(widths.items()):
            hits = [_num(r.metrics.get("test_loss")) <= loss_max for r in rs if r.status == "ok"]
            frac[w] = sum(hits) / len(rs)
        best = m_star(frac, tau, "stays")
        params = None
        if best is not None:
            params = int(widths[best][0].metrics.get("trainable_params") or best * (d + 2) + 1)
        out.append(Width(d, best, params, frac, min(len(rs) for rs in widths.values())))
    return out


def _num(v: Any) -> float:
    x = finite(v)
    return math.inf if x is None else x


def ffnn_records(results: StudyResults) -> list[Record]:
    """The FFNN baseline's runs (one sweep per d and seed); a diverged run is a failed one."""
    return [
        r
        for r in results.records
        if r.sweep.startswith(f"{S}/ffnn_d") and r.status in ("ok", "diverged")
    ]


# -- evidence of each claim ----------------------------------------------------------------------------------
def _seeds(results: StudyResults, name: str, default: int) -> int:
    plan = results.plan
    return int(getattr(plan.params, name)) if plan is not None else default


# -- one step ------------------------------------------------------------------------------------------------
def one_step(results: StudyResults, choices: Choices) -> Evidence:
    """Success of one softmax step on each judged draw at one constant c* (chosen on the other seeds) and,
    as the control, the same draw before the step (η = 0)."""
    recs = results.of("one_step")
    if not recs:
        return Evidence(missing="no finished one-step runs")
    crit = criterion(choices)
    grid = recs[0].metrics["log10_grid"]
    ok = {r.run_id: step_ok(r, crit) for r in recs}
    seeds = _seeds(results, "one_step_seeds", 1 + max(r.config["seed"] for r in recs))
    start_ok = [
        r for r in recs if r.metrics["loss0"] <= crit.loss and r.metrics["spec0"] >= crit.mass
    ]
    if start_ok:
        return Evidence(
            pipeline=f"{len(start_ok)} draws already meet the criterion before any step"
        )
    obs, picks = [], {}
    if choices["eta"] == "one_c":  # one c for every d, chosen on the calibration half of the seeds
        calib = [ok[r.run_id] for r in recs if r.config["seed"] < seeds // 2]
        i = shared_index(calib)
        judged = [r for r in recs if r.config["seed"] >= seeds // 2]
        picks = {d: i for d in by_d(recs)}
        head = (f"c* = 10^{grid[i]:.2f} (one c for every d, chosen on seeds 0..{seeds // 2 - 1})"
                if i is not None else "no c works on the calibration seeds")  # fmt: skip
    else:  # per d, the step size most of that d's draws share (chosen and judged on the same draws)
        picks = {d: shared_index([ok[r.run_id] for r in rs]) for d, rs in by_d(recs).items()}
        judged = recs
        head = "step size chosen per d on the judged draws themselves"
    for r in judged:
        i = picks[r.config["d"]]
        y = 0.0 if i is None else float(ok[r.run_id][i])
        obs += [Obs(draw(r), y, r.config["d"], "step"), Obs(draw(r), 0.0, r.config["d"], "init")]
    per_d = {d: f"{sum(o.y for o in obs if o.group == 'step' and o.x == d):.0f}/{len(rs)}"
             for d, rs in by_d(judged).items()}  # fmt: skip
    notes = f"{head}; success per d: " + ", ".join(f"d={d}: {v}" for d, v in per_d.items())
    stars = {d: None if i is None else grid[i] for d, i in picks.items()}
    return Evidence(obs, notes=notes, details={"log10_c_star": stars})


def step_size(results: StudyResults, choices: Choices) -> Evidence:
    """log10 of the smallest working c = η/(d²·ln d) of each draw with a working step size, at log10 d."""
    recs = results.of("one_step")
    if not recs:
        return Evidence(missing="no finished one-step runs")
    crit = criterion(choices)
    d_min = int(choices.get("d_min", 0))
    grid = recs[0].metrics["log10_grid"]
    obs, none, bottom, open_top, split, widths = [], 0, 0, 0, 0, []
    for r in recs:
        if r.config["d"] < d_min:
            continue
        w = window(step_ok(r, crit), grid)
        if w.lo is None:
            none += 1
            continue
        bottom += w.lo == grid[0]
        open_top += w.open_top
        split += not w.contiguous
        widths.append(w.decades)
        obs.append(Obs(draw(r), w.lo, math.log10(r.config["d"]), "softmax"))
    if not obs:
        return Evidence(missing="no draw has a working step size")
    widths.sort()
    notes = (f"{none} of {none + len(obs)} draws have no working step size (excluded); {bottom} start at the "
             f"grid's lowest c (10^{grid[0]:g}); working window: median {widths[len(widths) // 2]:.2f} decades, "
             f"{open_top} of {len(obs)} reach the grid's top c = 10^{grid[-1]:g} (the upper end lies beyond it), "
             f"{split} are not one interval")  # fmt: skip
    return Evidence(obs, notes=notes, details={"no_working_step": none, "open_top": open_top})


# -- attention kinds -----------------------------------------------------------------------------------------
def kinds_one_step(results: StudyResults, choices: Choices) -> Evidence:
    """Per kind and draw (same seeds for every kind): does one step succeed — at any step size of the grid
    (`per_draw`, the most generous to every kind) or at one step size shared by the kind's draws."""
    recs = results.of("kinds")
    if not recs:
        return Evidence(missing="no finished attention-kind runs")
    crit = criterion(choices)
    obs = []
    for kind in ("softmax", *RIVALS):
        rs = [r for r in recs if r.config["attention"] == kind]
        ok = [step_ok(r, crit) for r in rs]
        i = shared_index(ok)
        for r, o in zip(rs, ok):
            y = any(o) if choices["eta"] == "per_draw" else (i is not None and o[i])
            obs.append(Obs(r.config["seed"], float(y), None, kind))
    return Evidence(obs)


def kinds_many_steps(results: StudyResults, choices: Choices) -> Evidence:
    """Per kind and draw: did population gradient descent succeed within K steps at its best step size."""
    recs = results.of("many_steps")
    if not recs:
        return Evidence(missing="no finished many-step runs")
    obs = []
    for r in recs:
        k = r.metrics["steps_run"] if choices["within"] == "budget" else int(choices["within"])
        first = r.metrics["steps_to_success"]
        obs.append(
            Obs(
                r.config["seed"],
                float(first is not None and first <= k),
                None,
                r.config["attention"],
            )
        )
    return Evidence(obs, notes=f"budget {recs[0].config['steps']} steps")


# -- m* ------------------------------------------------------------------------------------------------------
def m_stars(
    results: StudyResults, crit: Criterion, tau: float, rule: str, shared: bool = True
) -> tuple[dict[int, int | None], dict[int, int]]:
    """m* per d (None: no m on the grid reaches the fraction), and the seeds each d has."""
    groups = by_d(results.of("min_m"))
    stars = {d: m_star(m_fractions(rs, crit, shared), tau, rule) for d, rs in groups.items()}
    return stars, {d: len(rs) for d, rs in groups.items()}


def polylog_m(results: StudyResults, choices: Choices) -> Evidence:
    """ln m* at each d ≥ 64 (one unit per d, pooling its seeds)."""
    crit = criterion(choices)
    stars, seeds = m_stars(results, crit, float(choices["fraction"]), choices["m_rule"])
    need = _seeds(results, "m_seeds", 1)
    if not stars:
        return Evidence(missing="no finished min-m runs")
    short = [d for d, n in seeds.items() if n < need]
    if short:
        return Evidence(missing=f"fewer than {need} seeds at d = {short}")
    stars = {d: m for d, m in stars.items() if d >= 64}
    text = "m* = " + ", ".join(
        f"{m if m is not None else '>grid'} (d=2^{round(math.log2(d))})" for d, m in stars.items()
    )
    over = [d for d, m in stars.items() if m is None]
    if over:
        return Evidence(missing=f"no m on the grid reaches the seed fraction at d = {over}; {text}")
    found = list(stars.items())
    if choices.get("fit") == "upper_half":  # the pre-engine fit: power law over the upper half of d
        found = found[len(found) // 2 :]
        obs = [Obs(f"d={d}", math.log(m), math.log(d), "transformer") for d, m in found if m]
    else:
        obs = [Obs(f"d={d}", math.log(m), float(d), "transformer") for d, m in found if m]
    return Evidence(obs, notes=text, details={"m_star": {str(d): m for d, m in stars.items()}})


# -- samples -------------------------------------------------------------------------------------------------
def samples(results: StudyResults, choices: Choices) -> Evidence:
    """log10 n* per draw at log10 d; a draw that never succeeds within the ladder is right-censored at
    n_max (kept), unless the pre-engine choice drops it."""
    recs = results.of("samples")
    if not recs:
        return Evidence(missing="no finished sample-size runs")
    crit = criterion(choices)
    obs, excluded, censored = [], 0, 0
    for r in recs:
        n_max, x = r.metrics["n_max"], math.log10(r.config["d"])
        if not population_ok(r, crit) and choices["population_failures"] == "excluded":
            excluded += 1
            continue
        n = n_star(r.metrics["rows"], crit, choices["n_rule"]) if population_ok(r, crit) else None
        if n is None:
            censored += 1
            if choices.get("censored") == "drop":
                continue
            obs.append(Obs(draw(r), math.log10(n_max), x, "softmax", censored=True))
        else:
            obs.append(Obs(draw(r), math.log10(n), x, "softmax"))
    medians = {}
    for d in by_d(recs):
        ys = sorted(o.y for o in obs if o.x == math.log10(d))
        medians[d] = f"{10 ** ys[len(ys) // 2]:.0f}" if ys else "n/a"
    notes = ("median n* (censored at the budget count as the budget): "
             + ", ".join(f"d={d}: {v}" for d, v in medians.items())
             + f"; {censored} draws never succeed within the budget ({'dropped' if choices.get('censored') == 'drop' else 'kept, censored'}), "
             f"{excluded} draws fail even on the population loss (excluded)")  # fmt: skip
    return Evidence(
        obs, notes=notes, details={"censored": censored, "population_failures": excluded}
    )


# -- FFNN ----------------------------------------------------------------------------------------------------
VACUOUS_PER_BIT = ("a dense first layer has width·d weights, so any MLP of width ≥ 1 has ≥ 1 parameter per input "
                   "bit: the rule is decided by the architecture (and width 2 suffices at every d), not by the data")  # fmt: skip


def ffnn(results: StudyResults, choices: Choices) -> Evidence:
    """log10 trainable parameters needed against log10 d: the FFNN's smallest width, and the transformer's
    2m* at the same d, under the same loss threshold and seed fraction (no attention-mass condition)."""
    if choices.get("ffnn_rule") == "per_bit":
        return Evidence(vacuous=VACUOUS_PER_BIT)
    loss, tau = float(choices["success_loss"]), float(choices["fraction"])
    recs = ffnn_records(results)
    if not recs:
        return Evidence(missing="no finished FFNN runs")
    widths = ffnn_widths(recs, loss, tau)
    failed = [w.d for w in widths if w.width is None]
    if failed:
        return Evidence(pipeline=f"the FFNN reaches test MSE ≤ {loss} in {tau:.0%} of seeds at no width on the grid at "
                        f"d = {failed} (its training budget, not the claim)")  # fmt: skip
    stars, _ = m_stars(results, Criterion(loss, 0.0), tau, "stays")
    obs = [Obs(f"d={w.d}", math.log10(w.params or 0), math.log10(w.d), "ffnn") for w in widths]
    unstable = [w.d for w in widths if w.d in stars and stars[w.d] is None]
    not_run = [w.d for w in widths if w.d not in stars]
    for w in widths:
        m = stars.get(w.d)
        if m is not None:
            obs.append(Obs(f"d={w.d}", math.log10(2 * m), math.log10(w.d), "transformer"))
    if unstable or not_run:
        why = []
        if unstable:
            why.append(f"no m on the grid keeps the seed fraction from there up at d = {unstable}")
        if not_run:
            why.append(f"no min-m runs at d = {not_run}")
        return Evidence(missing="the transformer's m* is undefined: " + "; ".join(why))
    obs += [
        Obs(f"d={d}", math.log10(2 * m), math.log10(d), "transformer_all")
        for d, m in stars.items()
        if m and d >= 64
    ]
    notes = "FFNN smallest width / parameters: " + ", ".join(
        f"d={w.d}: {w.width}/{w.params}" for w in widths
    )
    notes += "; transformer 2m*: " + ", ".join(f"d={w.d}: {2 * (stars[w.d] or 0)}" for w in widths)
    return Evidence(
        obs, notes=notes, details={"ffnn": {str(w.d): [w.width, w.params] for w in widths}}
    )


__all__ = [
    "VACUOUS_PER_BIT", "Width", "Window", "by_d", "criterion", "draw", "ffnn", "ffnn_widths", "kinds_many_steps",
    "kinds_one_step", "m_fractions", "m_star", "m_stars", "n_star", "one_step", "polylog_m", "population_ok",
    "samples", "shared_index", "step_size", "succeeded", "window",
]  # fmt: skip
