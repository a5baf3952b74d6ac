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
from learnability.studies.sensitivity.plan import SensitivityParams
from learnability.studies.sensitivity.records import log10, num

PRE = "2026-11-29"
GEN_LABELS = {"learned": "the learned function", "completions": "random completions"}
ALIGN = 0.01  # the paper aligns training curves at the first step with loss < 0.01 (0/1 scale)
PLATEAU = 0.2  # the constant predictor's MSE is 0.25: loss ≥ 0.2 is still the plateau


# -- dynamics -------------------------------------------------------------------------------------------
def rise(trajectory: list[dict[str, Any]], key: str, reference: str, after: str) -> float | None:
    """log10 of `key` after PARITY is learned over `key` before, aligned at the first probe loss < 0.01.

    reference: "initialisation" (step 0), "plateau" (steps after 0 and before alignment with loss ≥ 0.2,
    else every step before it), "first quarter" (steps up to a quarter of the alignment step);
    after: "mean from alignment" or "at alignment". None when the run never reaches the loss."""
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
    b = statistics.fmean(num(r.get(key)) for r in before)
    a = statistics.fmean(num(r.get(key)) for r in later)
    return log10(a / b) if b > 0 else None


def _dynamics(results: Any, choices: Choices) -> Evidence:
    runs = results.of("dynamics")
    if not runs:
        return Evidence(missing="no finished dynamics runs")
    ref, after = (
        choices.get("reference", "initialisation"),
        choices.get("after", "mean from alignment"),
    )
    sharp = "sharpness_sphere" if choices.get("sharpness") == "sphere" else "sharpness_gauss"
    obs, unaligned = [], 0
    for r in runs:
        unit = f"wd{r.config['train']['weight_decay']:g}:seed{r.config['seed']}"
        traj = r.metrics.get("trajectory") or []
        s, b = rise(traj, sharp, ref, after), rise(traj, "blowup_paper", ref, after)
        if s is None or b is None:
            unaligned += 1
            continue
        obs += [Obs(unit, s, None, "sharpness"), Obs(unit, b, None, "blowup"),
                Obs(unit, float(s > 0 and b > 0), None, "both")]  # fmt: skip
    return Evidence(obs, notes=f"{len(runs) - unaligned}/{len(runs)} runs reached probe loss < {ALIGN}; "
                    f"reference: {ref}; after: {after}")  # fmt: skip


# -- generalisation -------------------------------------------------------------------------------------
def _gen_unit(r: Any) -> str:
    return f"f{r.config['function_seed']}:m{r.config['train_size']}"


def _generalisation(results: Any, choices: Choices) -> Evidence:
    runs = results.of("generalisation")
    if not runs:
        return Evidence(missing="no finished generalisation runs")
    kept = [
        r for r in runs if choices.get("filter") == "all" or num(r.metrics.get("train_acc")) >= 0.95
    ]
    obs = []
    for r in kept:
        u = _gen_unit(r)
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
        u, learned = _gen_unit(r), r.metrics.get("refit_learned") or {}
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


def claims(plan: Plan[SensitivityParams]) -> list[Claim]:
    p = plan.params
    rise_band = above(0.0, 0.04)  # a rise of at least ×1.1 matters
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
            rule=AllOf(
                (
                    Mean("sharpness", rise_band, what="log10(after / before)"),
                    Mean("blowup", rise_band, what="log10(after / before)"),
                ),
                version=3,
            ),
            units=Units("run (weight decay × seed)", 3),
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
            rule=Contrast(
                "learned", "completions", below(-0.25, 0.0), what="as", labels=GEN_LABELS, version=2
            ),
            units=Units("run (function × training size)", 3),
            control=Control(
                "random completions of the same training strings, per run", group="completions"
            ),
            choices=(
                Choice("filter", "fit", ("all",), "runs that fit ≥ 95% of their training strings"),
            ),
            history=(
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
            rule=Contrast(
                "completions",
                "learned",
                above(0.0, 0.05),
                kind_of="log10_ratio",
                what="refit sharpness",
                version=2,
            ),
            units=Units("run (function × training size)", 3),
            control=Control("the refitted learned function of the same run", group="learned"),
            choices=(
                Choice("sharpness", "gaussian", ("sphere",)),
                Choice(
                    "refits", "fitted", ("all",), "refits that reach accuracy ≥ 0.99 on their table"
                ),
            ),
            history=(
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


__all__ = ["ALIGN", "claims", "rise"]
