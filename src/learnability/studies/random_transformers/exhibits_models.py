"""Study `random`: exhibits beyond the accuracy tables — memorisation, language modelling, the subspace probe
with its nulls, and circuit imitation (figures as `panels` data, tables)."""

from __future__ import annotations

import math

from learnability.report.panels import Figure, Panel, Table, mean_series
from learnability.studies.base import StudyResults
from learnability.studies.random_transformers import records as R
from learnability.studies.random_transformers.exhibits_tasks import series_of
from learnability.studies.random_transformers.plans import LABELS, RandomParams


def memorisation(results: StudyResults, p: RandomParams) -> list[Figure | Table]:
    rows = []
    for cond in ("random", "full"):
        these = [r for r in R.runs(results, "memorise") if R.condition(r) == cond]
        if these:
            cells = [
                R.fmt(R.metric(r, k) for r in these)
                for k in (
                    "n_trainable",
                    "test_acc",
                    "hits",
                    "chance_hits",
                    "bits_per_param_raw",
                    "bits_per_param",
                    "cap_bits_per_param",
                )
            ]
            rows.append([cond, p.memorise.width, *cells])
    if not rows:
        return []
    return [
        Table(
            "Memorisation capacity (published token format: y offset by n)",
            [
                "model",
                "width",
                "trainable params",
                "table recalled",
                "hits",
                "chance hits",
                "bits/param (raw)",
                "bits/param (chance-corrected)",
                "perfect model's bits/param",
            ],
            rows,
            "Bits = (hits − table size / n_values) × log2 n_values; paper: 2.88 (fully trained) vs 0.41.",
        )
    ]


def language(results: StudyResults, p: RandomParams) -> list[Figure | Table]:
    groups = [
        ("random", R.runs(results, "lm-random")),
        ("full", R.runs(results, "lm-full")),
        ("depth", R.runs(results, "lm-depth")),
    ]
    rows, series = [], []
    unigram = R.mean(R.metric(r, "unigram_ce") for _, rs in groups for r in rs)
    for label, rs in groups:
        for key in sorted(
            {(R.condition(r), R.width(r), r.config["model"]["n_layers"]) for r in rs}
        ):
            these = [
                r for r in rs if (R.condition(r), R.width(r), r.config["model"]["n_layers"]) == key
            ]
            rows.append(
                [
                    key[0],
                    key[1],
                    key[2],
                    R.fmt(R.metric(r, "n_trainable") for r in these),
                    R.fmt(R.metric(r, "test_loss") for r in these),
                    R.fmt(R.metric(r, "train_ce") for r in these),
                    R.fmt(R.metric(r, "epochs") for r in these),
                ]
            )
        if label != "depth" and rs:
            series.append(
                series_of(
                    [(R.metric(r, "n_trainable"), R.metric(r, "test_loss")) for r in rs], label
                )
            )
    if not rows:
        return []
    samples = [
        [f"{R.condition(r)} {R.width(r)}", s["prompt"], s["text"]]
        for _, rs in groups[:2]
        for r in rs[:1]
        for s in r.metrics.get("samples") or []
    ]
    out: list[Figure | Table] = [
        Table(
            "Language modelling (KJV): cross-entropy",
            [
                "model",
                "width",
                "layers",
                "trainable params",
                "validation CE",
                "CE on training windows",
                "epochs",
            ],
            rows,
            f"Unigram CE {unigram:.3f} nats.",
        ),
        Figure(
            "lm_ce_vs_params",
            "Validation cross-entropy against trainable parameters, random vs fully "
            "trained, with the unigram line.",
            [
                Panel(
                    "Language modelling (KJV)",
                    "trainable parameters",
                    "validation CE (nats/token)",
                    series=series,
                    hlines=[(unigram, "unigram")] if math.isfinite(unigram) else [],
                    logx=True,
                )
            ],
        ),
    ]
    if samples:
        out.append(
            Table(
                "Greedy samples", ["model", "prompt", "continuation"], samples, "32 tokens, greedy."
            )
        )
    return out


def subspace(results: StudyResults, p: RandomParams) -> list[Figure | Table]:
    panels, rows = [], []
    for task, t in p.tasks.items():
        runs = R.runs(results, f"acc-{task}", "random", t.wide) + R.runs(results, f"full-{task}")
        series: dict[str, list[tuple[int, float]]] = {}
        for r in runs:
            for e in r.metrics.get("subspace") or []:
                i = min(range(len(e["k"])), key=lambda j: abs(e["k"][j] - 10))
                cond = f"{R.condition(r)} {R.width(r)}"
                for name, key in (
                    (f"{cond}: PCs", "pca"),
                    (f"{cond}: neurons", "neurons"),
                    (f"{cond} at init: PCs", "init_pca"),
                    (f"{cond}: isotropic null of its shape", "null_pca"),
                ):
                    series.setdefault(name, []).append((e["layer"], e[key][i]))
        if series:
            panels.append(
                Panel(
                    f"{LABELS[task]}",
                    "layer (0 = embedding output, excluded from the claim)",
                    "variance fraction, top 10",
                    series=[mean_series(v, k) for k, v in series.items()],
                    ylim=(0, 1.02),
                    xticks=sorted({float(x) for v in series.values() for x, _ in v}),
                )
            )
            rows += [
                [LABELS[task], k, ", ".join(f"{y:.3f}" for y in mean_series(v).y)]
                for k, v in series.items()
            ]
    if not panels:
        return []
    return [
        Figure(
            "subspace",
            "Top-10 principal components vs top-10 neurons per layer, with the same model at "
            "initialisation and an isotropic sample of the same shape (the finite-sample null).",
            panels,
            ncols=2,
        ),
        Table(
            "Subspace probe (top-10 variance fractions by layer)",
            ["task", "series", "by layer"],
            rows,
        ),
    ]


def circuit(results: StudyResults, p: RandomParams) -> list[Figure | Table]:
    runs = R.runs(results, "circuit")
    if not runs:
        return []
    series = [
        series_of(
            [
                (
                    int(r.config["task"]["target_width"]),
                    (R.metric(r, "test_loss") or math.nan)
                    / (R.metric(r, "baseline_kl") or math.nan),
                )
                for r in runs
                if R.condition(r) == cond
            ],
            f"{cond} student",
        )
        for cond in ("random", "full")
    ]
    return [
        Figure(
            "circuit_kl",
            "Circuit imitation: KL relative to the mean-distribution guess against the "
            "target's width; 1 = learned nothing.",
            [
                Panel(
                    "Circuit imitation",
                    "target width",
                    "KL / KL of mean guess",
                    series=series,
                    logx=True,
                    hlines=[(1.0, "no better than the mean guess")],
                )
            ],
        )
    ]


__all__ = ["circuit", "language", "memorisation", "subspace"]
