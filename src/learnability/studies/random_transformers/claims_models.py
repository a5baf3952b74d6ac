"""Study `random`: claims beyond the algorithmic tasks — memorisation capacity, language modelling against
smaller fully trained models, and imitation of random target circuits."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from learnability.claims import (
    AllOf,
    Alternative,
    Band,
    Choice,
    Claim,
    Contrast,
    Control,
    Evidence,
    Mean,
    Obs,
    Revision,
    Trend,
    Units,
    above,
    below,
)
from learnability.studies.base import Plan, StudyResults
from learnability.studies.random_transformers import records as R
from learnability.studies.random_transformers.plans import RandomParams

PRE_ENGINE = "2026-11-29"
PAPER_BITS = 2.88  # bits per parameter of the paper's fully trained model
SEEDS = Units(
    "initialisation (seed)",
    min_per_cell=2,
    note="random and fully trained models of one seed share their data order: a matched pair",
)


def _memorise_evidence(results: StudyResults, choices: Mapping[str, Any]) -> Evidence:
    runs = R.runs(results, "memorise")
    key = (
        "bits_per_param"
        if choices.get("bits", "chance-corrected") == "chance-corrected"
        else "bits_per_param_raw"
    )
    full = [r for r in runs if R.condition(r) == "full"]
    rnd = [r for r in runs if R.condition(r) == "random"]
    if not full or not rnd:
        return Evidence(missing="no finished memorisation runs of both conditions")
    cap = R.mean(R.metric(r, "cap_bits_per_param") for r in full)
    if not cap > PAPER_BITS:
        return Evidence(
            pipeline=f"the table is too small: a perfect fully trained model could store at most "
            f"{cap:.2f} bits per trainable parameter, not more than the paper's {PAPER_BITS}"
        )
    obs = [
        Obs(R.seed(r), y, group=R.condition(r))
        for r in full + rnd
        if (y := R.metric(r, key)) is not None
    ]
    notes = (
        f"bits per trainable parameter (chance-corrected): random {R.fmt(R.metric(r, 'bits_per_param') for r in rnd)}, "
        f"fully trained {R.fmt(R.metric(r, 'bits_per_param') for r in full)}; uncorrected: random "
        f"{R.fmt(R.metric(r, 'bits_per_param_raw') for r in rnd)}, fully trained "
        f"{R.fmt(R.metric(r, 'bits_per_param_raw') for r in full)}; table recalled: random "
        f"{R.fmt(R.metric(r, 'test_acc') for r in rnd)}, fully trained {R.fmt(R.metric(r, 'test_acc') for r in full)}; "
        f"chance hits {R.mean(R.metric(r, 'chance_hits') for r in rnd):.0f} of {R.mean(R.metric(r, 'items') for r in rnd):.0f}; "
        f"the most a perfect fully trained model could store: {cap:.2f} bits per parameter"
    )
    return Evidence(obs, notes=notes, details={"cap_bits_per_param": cap})


def _memorisation(plan: Plan[RandomParams]) -> Claim:
    labels = {"full": "fully trained", "random": "random"}
    ratio = "bits per trainable parameter"
    v1 = Contrast(
        "full",
        "random",
        above(math.log10(2) - 1e-6, math.log10(2)),
        kind_of="log10_ratio",
        what=ratio,
        labels=labels,
        version=1,
        date=PRE_ENGINE,
    )
    return Claim(
        slug="memorisation",
        title="Random transformers memorise less efficiently",
        statement=(
            "On a random lookup table in the published token format (x, y + n → value), fully trained "
            "transformers store at least twice as many chance-corrected bits per trainable parameter as random "
            "transformers of the same shape (paired by seed)."
        ),
        paper_statement="Random transformers store 0.41 bits per trainable parameter, fully trained ones 2.88 "
        "(Zhong & Andreas 2024, §5.1).",
        evidence=_memorise_evidence,
        rule=Contrast(
            "full",
            "random",
            above(math.log10(1.5), math.log10(2)),
            kind_of="log10_ratio",
            what=ratio,
            labels=labels,
            version=2,
        ),
        units=SEEDS,
        control=Control("the random transformer of the same seed and shape", group="random"),
        choices=(
            Choice(
                "bits",
                "chance-corrected",
                ("raw",),
                "hits at chance (table / n_values) carry no stored information",
            ),
        ),
        alternatives=(
            Alternative(
                "ratio ≥ 4",
                rule=Contrast(
                    "full",
                    "random",
                    above(math.log10(3), math.log10(4)),
                    kind_of="log10_ratio",
                    what=ratio,
                    labels=labels,
                ),
            ),
        ),
        history=(
            Revision(
                v1,
                PRE_ENGINE,
                "pre-engine rule (stop 9): ratio ≥ 2 of uncorrected bits",
                {"bits": "raw"},
            ),
        ),
    )


def _matched(full: list[Any], budget: float, ratio: float) -> int | None:
    """The widest fully trained width with at most budget / ratio trainable parameters."""
    sizes: dict[int, float] = {}
    for r in full:
        sizes.setdefault(R.width(r), R.metric(r, "n_trainable") or math.inf)
    fits = [w for w, n in sizes.items() if n * ratio <= budget]
    return max(fits) if fits else None


def _language_evidence(results: StudyResults, choices: Mapping[str, Any]) -> Evidence:
    rnd, full = R.runs(results, "lm-random"), R.runs(results, "lm-full")
    if not rnd or not full:
        return Evidence(missing="no finished language-modelling runs of both conditions")
    budget = R.mean(R.metric(r, "n_trainable") for r in rnd)
    ratio = float(str(choices.get("matched", "4x")).rstrip("x"))
    w = _matched(full, budget, ratio)
    if w is None:
        return Evidence(
            missing=f"no fully trained width has {ratio:g}× fewer trainable parameters than the random model"
        )
    small = [r for r in full if R.width(r) == w]
    obs = [
        Obs(R.seed(r), y, group="random")
        for r in rnd
        if (y := R.metric(r, "test_loss")) is not None
    ]
    obs += [
        Obs(R.seed(r), y, group="unigram")
        for r in rnd
        if (y := R.metric(r, "unigram_ce")) is not None
    ]
    obs += [
        Obs(R.seed(r), y, group="full")
        for r in small
        if (y := R.metric(r, "test_loss")) is not None
    ]
    by_width: dict[int, list[Any]] = {}
    for r in full:
        by_width.setdefault(R.width(r), []).append(r)
    listing = "; ".join(
        f"full width {fw} ({R.mean(R.metric(r, 'n_trainable') for r in rs):,.0f} params): "
        f"{R.fmt(R.metric(r, 'test_loss') for r in rs)}"
        for fw, rs in sorted(by_width.items())
    )
    notes = (
        f"random width {R.width(rnd[0])} ({budget:,.0f} trainable params): validation CE "
        f"{R.fmt(R.metric(r, 'test_loss') for r in rnd)} (training windows {R.fmt(R.metric(r, 'train_ce') for r in rnd)}); "
        f"{listing}; matched width {w}; epochs {R.mean(R.metric(r, 'epochs') for r in rnd):.2f}"
    )
    return Evidence(obs, notes=notes, details={"matched_width": w, "random_params": budget})


def _language(plan: Plan[RandomParams]) -> Claim:
    lm = plan.params.language
    labels = {
        "random": f"random width {lm.random_width}",
        "unigram": "unigram",
        "full": "smaller fully trained",
    }
    ce = "validation cross-entropy (nats/token)"
    rule = AllOf(
        (
            Contrast("random", "unigram", below(-0.1, 0.0), what=ce, labels=labels),
            Contrast("full", "random", below(0.05, 0.15), what=ce, labels=labels),
        ),
        version=2,
    )
    v1 = AllOf(
        (
            Contrast("random", "unigram", below(-0.1, -0.0999), what=ce, labels=labels),
            Contrast("full", "random", below(0.0, 1e-9), what=ce, labels=labels),
        ),
        version=1,
        date=PRE_ENGINE,
    )
    return Claim(
        slug="language",
        title="Random transformers model language, matched by much smaller trained models",
        statement=(
            f"A random transformer of width {lm.random_width} beats the unigram cross-entropy by more than 0.1 "
            "nats, and a fully trained transformer with at least 4× fewer trainable parameters matches it "
            "(cross-entropy at most 0.05 nats higher), paired by seed."
        ),
        paper_statement="A random width-512 transformer reaches cross-entropy 2.64 on TinyStories, matched by "
        "a fully trained model with ~15× fewer trainable parameters (Zhong & Andreas 2024, §5.2).",
        evidence=_language_evidence,
        rule=rule,
        units=SEEDS,
        control=Control(
            "the unigram model of the training text, and the smaller fully trained model",
            group="unigram",
        ),
        choices=(
            Choice(
                "matched",
                "4x",
                ("2x", "8x"),
                "how many times fewer parameters the matching model has",
            ),
        ),
        history=(
            Revision(
                v1,
                PRE_ENGINE,
                "pre-engine rule (stop 9): CE < unigram − 0.1 and a fully trained "
                "model with ≥ 2× fewer parameters at least as good",
                {"matched": "2x"},
            ),
        ),
    )


def _circuit_evidence(results: StudyResults, choices: Mapping[str, Any]) -> Evidence:
    runs = R.runs(results, "circuit")
    if not runs:
        return Evidence(missing="no finished circuit-imitation runs")
    relative = choices.get("kl", "relative") == "relative"
    endpoints = choices.get("view", "trend") == "endpoints"
    widths = sorted({int(r.config["task"]["target_width"]) for r in runs})
    obs = []
    for r in runs:
        kl, base = R.metric(r, "test_loss"), R.metric(r, "baseline_kl")
        if kl is None or (relative and not base):
            continue
        y = kl / base if relative and base else kl
        tw = int(r.config["task"]["target_width"])
        cond = R.condition(r)
        if endpoints:  # the pre-engine rule's view: narrowest and widest targets only
            if tw in (widths[0], widths[-1]):
                obs.append(
                    Obs(
                        R.seed(r),
                        y,
                        group=f"{cond} {'widest' if tw == widths[-1] else 'narrowest'}",
                    )
                )
        else:
            obs.append(Obs(R.seed(r), y, x=math.log2(tw), group=cond))
    notes = "; ".join(
        f"{cond} student, relative KL by target width: "
        + ", ".join(
            f"{w}: {R.fmt((R.metric(r, 'test_loss') or math.nan) / (R.metric(r, 'baseline_kl') or math.nan) for r in runs if R.condition(r) == cond and int(r.config['task']['target_width']) == w)}"
            for w in widths
        )
        for cond in ("random", "full")
    )
    return Evidence(obs, notes=notes)


def _circuit(plan: Plan[RandomParams]) -> Claim:
    labels = {"random": "random student", "full": "fully trained student"}
    y = "relative KL (KL / KL of the mean-distribution guess)"

    def trend(band: Band, version: int = 1) -> Trend:
        return Trend(
            "random", band, x="log2 target width", y=y, controls=("full",),
            control_band=above(0.0, 0.01), labels=labels, version=version,
        )  # fmt: skip

    rule = trend(above(0.0, 0.02), version=2)
    v1 = AllOf(
        (
            Contrast(
                "random widest",
                "random narrowest",
                above(math.log10(2) - 1e-6, math.log10(2)),
                kind_of="log10_ratio",
                what=y,
            ),
            Mean("random widest", above(0.1999, 0.2), what=y),
            Contrast("random widest", "full widest", above(-1e-9, 0.0), what=y),
        ),
        version=1,
        date=PRE_ENGINE,
    )
    return Claim(
        slug="circuit",
        title="Circuit imitation needs low-dimensional targets",
        statement=(
            "The relative KL of a random student imitating a random target transformer grows with the target's "
            "width (per doubling), faster than that of a fully trained student of the same shape."
        ),
        paper_statement="Embedding-only students imitate random targets only when the target is "
        "low-dimensional: KL jumps between target widths 12, 16 and 32 (Zhong & Andreas 2024, §5.3).",
        evidence=_circuit_evidence,
        rule=rule,
        units=SEEDS,
        control=Control("a fully trained student of the same shape", group="full"),
        choices=(
            Choice(
                "kl",
                "relative",
                ("absolute",),
                "KL relative to the input-independent guess, or raw",
            ),
        ),
        alternatives=(
            Alternative(
                "stricter slope band (> 0.05 per doubling)",
                rule=trend(above(0.02, 0.05)),
            ),
        ),
        history=(
            Revision(
                v1,
                PRE_ENGINE,
                "pre-engine rule (stop 9): widest target ≥ 2× the narrowest, above "
                "0.2 and above the fully trained student",
                {"view": "endpoints"},
            ),
        ),
    )


def claims(plan: Plan[RandomParams]) -> list[Claim]:
    return [_memorisation(plan), _language(plan), _circuit(plan)]


__all__ = ["claims"]
