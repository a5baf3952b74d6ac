"""Claims about what transformers learn: sharpness and blowup rising as PARITY is learned (Fig. 3), the
bias to low-sensitivity, flat solutions when generalising from part of a truth table (Fig. 4), and the
mechanism's consequences the paper discusses in §6 — length generalisation (the project's own
extension) and the autoregressive scratchpad."""

from __future__ import annotations

import statistics
from typing import Any

from learnability.claims import (
    AllOf,
    Choice,
    Choices,
    Claim,
    Contrast,
    Control,
    Evidence,
    Mean,
    Obs,
    Rate,
    Revision,
    Units,
    above,
    below,
)  # fmt: skip
from learnability.studies.base import Plan
from learnability.studies.sensitivity.history import PRE, units_revision
from learnability.studies.sensitivity.plan import SensitivityParams
from learnability.studies.sensitivity.records import log10, num

GEN_LABELS = {"learned": "the learned function", "completions": "random completions"}
ALIGN = 0.01  # the paper aligns training curves at the first step with loss < 0.01 (0/1 scale)
PLATEAU = 0.2  # the constant predictor's MSE is 0.25: loss ≥ 0.2 is still the plateau


# -- dynamics -------------------------------------------------------------------------------------------
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


def _dynamics(results: Any, choices: Choices) -> Evidence:
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


# -- generalisation -------------------------------------------------------------------------------------
def _gen_unit(r: Any, choices: Choices) -> str:
    """The random function: its training sizes share the initial weights and nested training strings
    (the first engine rule counted each (function, size) run as a unit)."""
    unit = f"function{r.config['function_seed']}"
    return f"{unit}:m{r.config['train_size']}" if choices.get("units") == "run" else unit


def _generalisation(results: Any, choices: Choices) -> Evidence:
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


def _flatness(results: Any, choices: Choices) -> Evidence:
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


def _rise_rule(version: int, date: str = "2026-11-30") -> AllOf:
    band = above(0.0, 0.04)  # a rise of at least ×1.1 matters
    return AllOf(
        (
            Mean("sharpness", band, what="log10(after / before)"),
            Mean("blowup", band, what="log10(after / before)"),
        ),
        version=version,
        date=date,
    )


def _gen_rule(version: int, date: str = "2026-11-30") -> Contrast:
    return Contrast(
        "learned",
        "completions",
        below(-0.25, 0.0),
        what="as",
        labels=GEN_LABELS,
        version=version,
        date=date,
    )


def _flat_rule(version: int, date: str = "2026-11-30") -> Contrast:
    return Contrast(
        "completions", "learned", above(0.0, 0.05), kind_of="log10_ratio", what="refit sharpness",
        version=version, date=date,
    )  # fmt: skip


def claims(plan: Plan[SensitivityParams]) -> list[Claim]:
    p = plan.params
    both = Rate(
        "both",
        above(0.25, 0.5),
        what="share of aligned runs in which sharpness and blowup both rose",
    )
    return [
        Claim(
            slug="dynamics-rise",
            title="Sharpness and blowup rise as PARITY is learned",
            statement=f"Training PARITY at n = {p.dyn_n} without early stop, the published (Gaussian) sharpness "
            "and the LayerNorm blowup on a fixed batch, averaged from the first step with loss < 0.01 on, "
            "exceed their values at initialisation.",
            paper_statement="During training on PARITY, sharpness and LayerNorm blowup increase as the loss "
            "falls (Fig. 3).",
            evidence=_dynamics,
            rule=_rise_rule(4),
            units=Units(
                "seed", 3, "the weight decays of a seed share its initial weights and data"
            ),
            control=Control(
                "the same run before it fits",
                value="its reference point (initialisation or plateau)",
            ),
            choices=(
                Choice(
                    "reference",
                    "initialisation",
                    ("plateau",),
                    "the plateau is where the loss still sits near 0.25, after the first steps",
                ),
                Choice("sharpness", "gaussian", ("sphere",)),
            ),
            history=(
                units_revision(_rise_rule(3), "the runs of a seed at its several weight decays"),
                Revision(
                    AllOf((both,), version=1, date=PRE),
                    PRE,
                    "pre-engine rule (stop 9) as first written: the value at alignment against the mean "
                    "over the first quarter of the run, both rise in every aligned run",
                    {"reference": "first quarter", "after": "at alignment"},
                ),
                Revision(
                    AllOf((both,), version=2, date=PRE),
                    PRE,
                    "pre-engine rule (stop 9) after the data were seen: the mean from alignment on "
                    "against the plateau",
                    {"reference": "plateau"},
                ),
            ),
        ),
        Claim(
            slug="generalisation-low-sensitivity",
            title="Transformers generalise to low-sensitivity functions",
            statement=f"Trained on part of a random function's truth table (n = {p.gen_n}), the learned function "
            "(thresholded on all strings) has a lower average sensitivity than random completions of the "
            "same training data.",
            paper_statement="A transformer trained on part of a random function's truth table learns a function "
            "of lower sensitivity than random completions of the same data (Fig. 4).",
            evidence=_generalisation,
            rule=_gen_rule(3),
            units=Units(
                "random function", 3, "its training sizes share the weights and nested strings"
            ),
            control=Control(
                "random completions of the same training strings, per run", group="completions"
            ),
            choices=(
                Choice("filter", "fit", ("all",), "runs that fit ≥ 95% of their training strings"),
            ),
            history=(
                units_revision(
                    _gen_rule(2), "the runs of a random function at its several training sizes"
                ),
                Revision(
                    Rate(
                        "below-5th",
                        above(0.5, 0.8),
                        what="share of runs below the completions' 5th percentile",
                        version=1,
                        date=PRE,
                    ),
                    PRE,
                    "pre-engine rule (stop 9): learned as below the 5th percentile in ≥ 80% of runs",
                ),
            ),
        ),
        Claim(
            slug="flatter-minima",
            title="Low-sensitivity solutions sit in flatter minima",
            statement="A model refitted to the learned (low-sensitivity) function's full truth table has a "
            "lower published (Gaussian) sharpness than the same model refitted to random completions of the "
            "same training data.",
            paper_statement="Refitting a transformer to the function it learned gives a flatter minimum than "
            "refitting it to random completions of the same data (Fig. 4).",
            evidence=_flatness,
            rule=_flat_rule(3),
            units=Units(
                "random function", 3, "its training sizes share the weights and nested strings"
            ),
            control=Control("the refitted learned function of the same run", group="learned"),
            choices=(
                Choice("sharpness", "gaussian", ("sphere",)),
                Choice(
                    "refits", "fitted", ("all",), "refits that reach accuracy ≥ 0.99 on their table"
                ),
            ),
            history=(
                units_revision(
                    _flat_rule(2), "the runs of a random function at its several training sizes"
                ),
                Revision(
                    Rate(
                        "flatter-all",
                        above(0.5, 0.8),
                        what="share of runs flatter than every refitted completion",
                        version=1,
                        date=PRE,
                    ),
                    PRE,
                    "pre-engine rule (stop 9): flatter than every completion in ≥ 80% of runs (it used "
                    "sphere sharpness at ρ = 0.1; ε√P stands in here)",
                    {"sharpness": "sphere"},
                ),
            ),
        ),
    ]


__all__ = ["ALIGN", "claims", "levels", "rise"]
