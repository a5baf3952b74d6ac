"""Claims about what fitting a sensitive function does to the model: sharpness, LayerNorm blowup and
parameter norm against n (paper Fig. 1, 5–8), the norm–blowup trade-off (Fig. 2), the sharpness bound
of §5 and Corollary 5. Data: the `scaling` and `tradeoff` sweeps (`sensitivity.train` runs).

Every claim here shares the analysis choices of `records` (training budget, fit filter); the unit is the
seed (or trade-off draw): the same initial weights at every n, so slopes are per-unit slopes (the engine's
repeated-measures rule), with pooled OLS over runs as a robustness alternative.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from typing import Any

from learnability.claims import (
    Alternative,
    Choice,
    Choices,
    Claim,
    Control,
    Evidence,
    Obs,
    Revision,
    Trend,
    Units,
    above,
)  # fmt: skip
from learnability.studies.base import Plan
from learnability.studies.sensitivity.history import PRE
from learnability.studies.sensitivity.plan import SensitivityParams
from learnability.studies.sensitivity.records import (
    LABELS,
    log10,
    mechanistic,
    n_of,
    num,
    seed_unit,
    task_of,
)  # fmt: skip

CONTROLS = ("majority", "first")
BUDGET = Choice("budget", "fixed", ("until_fit",),
                "stopping at the first fit (MSE < 0.001) ends runs before weight decay trades norm "
                "for blowup; the paper trains a fixed 10,000 steps")  # fmt: skip
FILTER = Choice("filter", "converged", ("fitted", "all"),
                "the paper keeps runs with final MSE < 0.001; the pre-engine study also kept runs "
                "with accuracy ≥ 0.99 ('fitted'); 'all' keeps every run")  # fmt: skip
POOLED = "units=runs (pooled OLS)"


def _trend(y: str, band: Any, version: int = 2, **kw: Any) -> Trend:
    return Trend("parity", band, x="n", y=y, controls=CONTROLS, control_band=band, labels=LABELS,
                 version=version, **kw)  # fmt: skip


def _pooled(y: str, band: Any) -> Alternative:
    """The same trend with every run a unit and one OLS over all of them (the pre-engine analysis)."""
    return Alternative(POOLED, rule=_trend(y, band, per_unit=False))


def _pre_trend(y: str, controls: bool = True) -> Trend:
    """The pre-engine growth rule as the engine can state it: PARITY's slope CI above 0 (pooled OLS over
    runs) and, with controls, its excess over each control's slope above 0."""
    band = above(-1e-9, 0.0)
    if controls:
        return Trend("parity", band, x="n", y=y, controls=CONTROLS, control_band=band, per_unit=False,
                     labels=LABELS, version=1, date=PRE)  # fmt: skip
    return Trend("parity", band, x="n", y=y, per_unit=False, labels=LABELS, version=1, date=PRE)


PRE_CHOICES = {"budget": "until_fit", "filter": "fitted", "scale": "linear"}
PRE_WHY = ("pre-engine rule (stop 9): early stop at MSE < 0.001, 'fitted' filter, linear slope over all "
           "runs; the engine compares slopes by the interval of their difference, not by point estimates")  # fmt: skip


def _pipeline(runs: list[Any]) -> str | None:
    """MAJORITY and FIRST are learnable at every n here: if most of them do not converge, the pipeline
    (budget, lr), not the claim, has failed."""
    for task in CONTROLS:
        mine = [r for r in runs if task_of(r) == task]
        ok = sum(num(r.metrics.get("test_loss")) < 1e-3 for r in mine)
        if mine and ok < len(mine) / 2:
            return f"only {ok}/{len(mine)} {LABELS[task]} runs converged (MSE < 0.001) at the fixed budget"
    return None


def _growth(
    sweep: str, value: Callable[[Any, dict[str, Any], dict[str, Any]], float | None]
) -> Any:
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


def _frontier(results: Any, choices: Choices) -> Evidence:
    sweep = "tradeoff" if choices.get("runs") == "trade-off draws only" else "scaling+tradeoff"
    ev = _growth(sweep, _size)(results, choices)
    if ev.obs and choices.get("frontier") == "lower half per cell":
        cells: dict[tuple[str, Any], list[float]] = {}
        for o in ev.obs:
            cells.setdefault((o.group, o.x), []).append(o.y)
        ev.obs = [o for o in ev.obs if o.y <= statistics.median(cells[(o.group, o.x)])]
    return ev


def claims(plan: Plan[SensitivityParams]) -> list[Claim]:
    units = Units("seed", min_per_cell=3, note="the same initial weights at every n and task")
    control = Control("MAJORITY and FIRST, same sweep, budget and filter", group="majority")
    size = "log10(‖θ‖/‖θ₀‖·Blowup)"
    runs_choice: tuple[Choice, ...] = (
        Choice("runs", "scaling and trade-off draws", ("trade-off draws only",)),
    )
    if plan.params.tradeoff_draws < 3:  # fewer draws than the minimum units per cell: no power
        runs_choice = ()
    return [
        Claim(
            slug="sharpness-grows",
            title="PARITY's sharpness grows with n",
            statement="At the fixed training budget, the published (Gaussian) sharpness of converged PARITY "
            "models, in ±1 output units, grows with n faster than that of MAJORITY and FIRST models.",
            paper_statement="Sharpness of transformers fitted to PARITY grows with the input length; for "
            "MAJORITY, FIRST and MEAN it stays flat and small (Fig. 1, 5–8).",
            evidence=_growth("scaling", _sharpness),
            rule=_trend("log10 sharpness (±1 units)", above(0.0, 0.01)),
            units=units,
            control=control,
            choices=(
                BUDGET,
                FILTER,
                Choice(
                    "sharpness",
                    "gaussian",
                    ("sphere",),
                    "the sphere variant (paper's L_ρ) at the same radius ε√P",
                ),
            ),
            alternatives=(_pooled("log10 sharpness (±1 units)", above(0.0, 0.01)),),
            history=(Revision(_pre_trend("sharpness"), PRE, PRE_WHY, PRE_CHOICES),),
        ),
        Claim(
            slug="blowup-grows",
            title="PARITY's LayerNorm blowup grows with n",
            statement="At the fixed training budget, the LayerNorm blowup (paper definition) of converged "
            "PARITY models grows with n faster than that of MAJORITY and FIRST models.",
            paper_statement="Fitting PARITY needs a LayerNorm blowup that grows with n; other functions "
            "stay flat (Theorem 4, Fig. 1, 5–8).",
            evidence=_growth("scaling", _blowup),
            rule=_trend("log10 Blowup", above(0.0, 0.01)),
            units=units,
            control=control,
            choices=(
                BUDGET,
                FILTER,
                Choice(
                    "definition",
                    "paper",
                    ("published",),
                    "the published code's E_x Π max 1/std, last layer at the read-out only",
                ),
            ),
            alternatives=(_pooled("log10 Blowup", above(0.0, 0.01)),),
            history=(Revision(_pre_trend("Blowup"), PRE, PRE_WHY, PRE_CHOICES),),
        ),
        Claim(
            slug="norm-grows",
            title="PARITY's parameter norm (relative to initialisation) grows with n",
            statement="At the fixed training budget, ‖θ‖/‖θ₀‖ (positional parameters excluded; θ₀ the "
            "run's own initialisation) of converged PARITY models grows with n faster than MAJORITY's and "
            "FIRST's. The theory requires norm *or* blowup to grow (see tradeoff-frontier).",
            paper_statement="The parameter norm of transformers fitted to PARITY grows with n (Fig. 1).",
            evidence=_growth("scaling", _norm),
            rule=_trend("log10 ‖θ‖/‖θ₀‖", above(0.0, 0.004)),
            units=units,
            control=control,
            choices=(
                BUDGET,
                FILTER,
                Choice(
                    "norm",
                    "relative",
                    ("absolute",),
                    "LayerNorm gains alone give ~11 of ~18 at initialisation",
                ),
            ),
            alternatives=(_pooled("log10 ‖θ‖/‖θ₀‖", above(0.0, 0.004)),),
            history=(
                Revision(
                    _pre_trend("‖θ‖", controls=False),
                    PRE,
                    PRE_WHY + "; no control task",
                    {**PRE_CHOICES, "norm": "absolute"},
                ),
            ),
        ),
        Claim(
            slug="tradeoff-frontier",
            title="Fitting PARITY needs a larger norm or blowup as n grows",
            statement="Across seeds and random (lr, weight decay) draws, log10(‖θ‖/‖θ₀‖) + log10 Blowup of "
            "converged PARITY models — the frontier of norm against blowup — moves out with n faster than "
            "MAJORITY's and FIRST's.",
            paper_statement="Across learning rates and weight decays, PARITY solutions need a large parameter "
            "norm or a large LayerNorm blowup, and the frontier moves outward with n (Fig. 2).",
            evidence=_frontier,
            rule=_trend(size, above(0.0, 0.01)),
            units=Units(
                "seed or trade-off draw", 3, "one (lr, wd, seed) draw is used at every n and task"
            ),
            control=control,
            choices=(
                BUDGET,
                FILTER,
                Choice("norm", "relative", ("absolute",)),
                Choice("definition", "paper", ("published",)),
                *runs_choice,
            ),
            alternatives=(
                _pooled(size, above(0.0, 0.01)),
                Alternative(
                    "frontier=lower half per cell (runs nearest the origin; pooled OLS)",
                    {"frontier": "lower half per cell"},
                    _trend(size, above(0.0, 0.01), per_unit=False),
                ),
            ),
            history=(
                Revision(
                    _pre_trend("log10(‖θ‖·Blowup)", controls=False),
                    PRE,
                    PRE_WHY + "; no control task",
                    {
                        "budget": "until_fit",
                        "filter": "fitted",
                        "norm": "absolute",
                        "runs": "trade-off draws only",
                    },
                ),
            ),
        ),
    ]


__all__ = ["BUDGET", "CONTROLS", "FILTER", "POOLED", "PRE", "claims"]
