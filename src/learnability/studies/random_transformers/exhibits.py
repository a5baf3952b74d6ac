"""Study `random`, exhibits, in report order: accuracy against width, needle accuracy by m, decimal scorings,
the ablation table, memorisation, language modelling, the subspace probe with its nulls, circuit imitation,
attention maps and embeddings (notes, tables and figures as `panels` data). Every random-model number
stands beside the fully trained baseline of the same task and its chance line."""

from __future__ import annotations

import math
from typing import Any

from learnability.studies import (
    Figure,
    Matrix,
    Panel,
    Plan,
    Series,
    StudyResults,
    Table,
    mean_series,
)
from learnability.studies.random_transformers import evidence as R
from learnability.studies.random_transformers.plan import ABLATIONS, LABELS, RandomParams, sizes

TEST = {"metric": "test"}
FRESH = {"metric": "fresh"}
Item = Figure | Table


def series_of(points: list[tuple[Any, float | None]], label: str, kind: Any = "line") -> Series:
    return mean_series([(x, y) for x, y in points if y is not None], label, kind=kind)


# -- the algorithmic tasks ---------------------------------------------------------------------------------
def accuracy(results: StudyResults, p: RandomParams) -> list[Item]:
    rows, panels = [], []
    for task in p.tasks:
        acc = R.runs(results, f"acc-{task}")
        full, lstm = R.runs(results, f"full-{task}"), R.runs(results, f"lstm-{task}")
        chance = R.mean(R.chance(r, task, TEST) for r in acc)
        gate_problem, gate_text = R.gate(results, p, task, TEST)
        gate = [gate_text, "ok" if gate_problem is None else "FAILS"]
        for label, group, gate_cols in (
            ("random", acc, gate),
            ("full", full, ["", ""]),
            ("LSTM", lstm, ["", ""]),
        ):
            for w in sorted({R.width(r) for r in group}):
                these = [r for r in group if R.width(r) == w]
                rows.append([LABELS[task], f"{label} {w}", R.fmt(R.accuracy(r, task, TEST) for r in these),
                             R.fmt(R.accuracy(r, task, FRESH) for r in these), f"{chance:.3f}", *gate_cols])  # fmt: skip
        series = [
            series_of([(R.width(r), R.accuracy(r, task, TEST)) for r in acc], "random (embedding-only)"),
            series_of([(R.width(r), R.accuracy(r, task, TEST)) for r in full], "fully trained", "points"),
            series_of([(R.width(r), R.accuracy(r, task, TEST)) for r in lstm], "LSTM (2 layers)", "points"),
        ]  # fmt: skip
        widths = sorted({R.width(r) for r in acc + full + lstm})
        panels.append(Panel(LABELS[task], "width d_model", "test accuracy", series=[s for s in series if s.x],
                            hlines=[(chance, "chance line")] if math.isfinite(chance) else [], logx=True,
                            xticks=[float(w) for w in widths], ylim=(-0.03, 1.03)))  # fmt: skip
    table = Table(
        "Test accuracy by condition, beside the fully trained baseline and the chance line",
        ["task", "model, width", "test (held out)", "fresh draws", "chance", "gate: baseline", "gate"], rows,
        "Mean [min–max] over restarts. Test: the task's held-out rows; fresh: new draws of the training "
        "distribution. Chance: 1/p (mod add), E[1/m] copy baseline (needle), majority answer (brackets), "
        "0.1 per digit (decimal). Decimal accuracy is the published scoring (first answer digit unscored).",
    )  # fmt: skip
    return [table, Figure("accuracy_vs_width", "Test accuracy against width: random (embedding-only) models, "
                          "fully trained baselines and LSTMs, with the chance line.", panels, ncols=2)]  # fmt: skip


def needle_by_m(results: StudyResults, p: RandomParams) -> list[Item]:
    runs = R.runs(results, "acc-needle") + R.runs(results, "full-needle")
    if not runs:
        return []
    t, series = p.tasks["needle"], []
    for label, cond, w in [
        ("random", "random", t.wide),
        ("random", "random", t.narrow),
        ("full", "full", max(t.full_widths)),
    ]:
        pts = [(int(m), a) for r in runs if R.condition(r) == cond and R.width(r) == w
               for m, a in (r.metrics.get("acc_by_m") or {}).items()]  # fmt: skip
        if pts:
            series.append(mean_series(pts, f"{label} width {w}"))
    ms = sorted({x for s in series for x in s.x})
    series.append(
        Series("chance 1/m (copy a random value)", ms, [1 / m for m in ms], kind="dashed")
    )
    return [Figure("needle_by_m", "Needle accuracy by the number of pairs m against 1/m, the accuracy of "
                   "copying a random value in context.",
                   [Panel("Needle: accuracy by pairs", "pairs m", "test accuracy", series=series,
                          xticks=[float(m) for m in ms], ylim=(0, 1.03))])]  # fmt: skip


def decimal(results: StudyResults, p: RandomParams) -> list[Item]:
    rows = []
    for sweep in ("acc-decimal_add", "full-decimal_add"):
        for w in sorted({R.width(r) for r in R.runs(results, sweep)}):
            these = [r for r in R.runs(results, sweep) if R.width(r) == w]
            digits = [r.metrics.get("digit_acc") or [] for r in these]
            per = [
                R.mean(d[i] for d in digits if i < len(d))
                for i in range(max(map(len, digits), default=0))
            ]
            rows.append([f"{R.condition(these[0])} {w}", R.fmt(R.metric(r, "acc_published") for r in these),
                         R.fmt(R.metric(r, "acc_full") for r in these), ", ".join(f"{v:.3f}" for v in per),
                         R.fmt(R.metric(r, "stop_acc") for r in these),
                         R.fmt(R.metric(r, "exact_match") for r in these)])  # fmt: skip
    if not rows:
        return []
    return [Table("Decimal addition: published and full scoring, per-digit accuracy, exact match",
                  ["model, width", "published scoring", "full scoring", "per digit (least significant first)", "stop",
                   "whole-sum exact match"], rows,
                  "Published scoring skips the first answer digit (and scores the padding after the stop); full "
                  "scoring scores every answer digit and the stop. Per-digit chance is 0.1.")]  # fmt: skip


def ablation(results: StudyResults, p: RandomParams) -> list[Item]:
    rows = []
    for task in p.ablation_tasks:
        runs = R.runs(results, f"ablation-{task}")
        three = R.runs(results, f"acc-{task}", "random", p.tasks[task].wide)
        rows.append([LABELS[task], *(R.fmt(R.accuracy(r, task, TEST) for r in runs if R.condition(r) == v) for v in ABLATIONS),
                     R.fmt(R.accuracy(r, task, TEST) for r in three)])  # fmt: skip
    if not rows:
        return []
    return [
        Table(
            "Which embedding matrices train (test accuracy)",
            ["task", *ABLATIONS, "all three"],
            rows,
        )
    ]


def _best(runs: list[Any], cond: str) -> Any:
    """The widest model of a condition (its best test accuracy on ties)."""
    mine = [r for r in runs if R.condition(r) == cond]
    return max(mine, key=lambda r: (R.width(r), R.metric(r, "test_acc") or 0), default=None)


def pictures(results: StudyResults, p: RandomParams) -> list[Item]:
    out: list[Item] = []
    att = [
        r
        for r in R.runs(results, "acc-needle") + R.runs(results, "full-needle")
        if r.metrics.get("attention")
    ]
    if att:
        panels = []
        for cond in ("random", "full"):
            best = _best(att, cond)
            for layer, heads in enumerate(best.metrics["attention"]["maps"] if best else []):
                avg = [[sum(h[i][j] for h in heads) / len(heads) for j in range(len(heads[0][0]))]
                       for i in range(len(heads[0]))]  # fmt: skip
                panels.append(Panel(f"{cond} {R.width(best)}, layer {layer}", "key position", "query position",
                                    matrix=Matrix(avg, "attention (head mean)")))  # fmt: skip
        out.append(Figure("needle_attention", "Needle attention of one test sequence (head mean); the last row is "
                          "the query, which must attend to the value after its marker.", panels, ncols=2))  # fmt: skip
    emb = [
        r
        for r in R.runs(results, "acc-mod_add") + R.runs(results, "full-mod_add")
        if r.metrics.get("embedding_pcs")
    ]
    panels = []
    for cond in ("random", "full"):
        best = _best(emb, cond)
        if best is not None:
            xy = best.metrics["embedding_pcs"]["coords"]
            panels.append(Panel(f"{cond} {R.width(best)}", "PC 1", "PC 2",
                                series=[Series("token embeddings", [c[0] for c in xy], [c[1] for c in xy], kind="points")]))  # fmt: skip
    if panels:
        out.append(
            Figure(
                "modadd_embedding_pcs",
                "Modular addition: token embeddings on their top two PCs.",
                panels,
            )
        )
    return out


# -- memorisation, language, the subspace probe, circuits --------------------------------------------------
def memorisation(results: StudyResults, p: RandomParams) -> list[Item]:
    keys = (
        "n_trainable",
        "test_acc",
        "hits",
        "chance_hits",
        "bits_per_param_raw",
        "bits_per_param",
        "cap_bits_per_param",
    )
    rows = []
    for cond in ("random", "full"):
        these = [r for r in R.runs(results, "memorise") if R.condition(r) == cond]
        if these:
            rows.append(
                [cond, p.memorise.width, *(R.fmt(R.metric(r, k) for r in these) for k in keys)]
            )
    if not rows:
        return []
    return [Table("Memorisation capacity (published token format: y offset by n)",
                  ["model", "width", "trainable params", "table recalled", "hits", "chance hits", "bits/param (raw)",
                   "bits/param (chance-corrected)", "perfect model's bits/param"], rows,
                  "Bits = (hits − table size / n_values) × log2 n_values; paper: 2.88 (fully trained) vs 0.41.")]  # fmt: skip


def language(results: StudyResults, p: RandomParams) -> list[Item]:
    groups = [("random", R.runs(results, "lm-random")), ("full", R.runs(results, "lm-full")),
              ("depth", R.runs(results, "lm-depth"))]  # fmt: skip
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
                    *key,
                    *(
                        R.fmt(R.metric(r, k) for r in these)
                        for k in ("n_trainable", "test_loss", "train_ce", "epochs")
                    ),
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
    samples = [[f"{R.condition(r)} {R.width(r)}", s["prompt"], s["text"]]
               for _, rs in groups[:2] for r in rs[:1] for s in r.metrics.get("samples") or []]  # fmt: skip
    out: list[Item] = [
        Table("Language modelling (KJV): cross-entropy",
              ["model", "width", "layers", "trainable params", "validation CE", "CE on training windows", "epochs"],
              rows, f"Unigram CE {unigram:.3f} nats."),
        Figure("lm_ce_vs_params", "Validation cross-entropy against trainable parameters, random vs fully "
               "trained, with the unigram line.",
               [Panel("Language modelling (KJV)", "trainable parameters", "validation CE (nats/token)", series=series,
                      hlines=[(unigram, "unigram")] if math.isfinite(unigram) else [], logx=True)]),
    ]  # fmt: skip
    if samples:
        out.append(
            Table(
                "Greedy samples", ["model", "prompt", "continuation"], samples, "32 tokens, greedy."
            )
        )
    return out


def subspace(results: StudyResults, p: RandomParams) -> list[Item]:
    panels, rows = [], []
    for task, t in p.tasks.items():
        runs = R.runs(results, f"acc-{task}", "random", t.wide) + R.runs(results, f"full-{task}")
        series: dict[str, list[tuple[int, float]]] = {}
        for r in runs:
            for e in r.metrics.get("subspace") or []:
                i = min(range(len(e["k"])), key=lambda j: abs(e["k"][j] - 10))
                cond = f"{R.condition(r)} {R.width(r)}"
                for name, key in ((f"{cond}: PCs", "pca"), (f"{cond}: neurons", "neurons"),
                                  (f"{cond} at init: PCs", "init_pca"), (f"{cond}: isotropic null of its shape", "null_pca")):  # fmt: skip
                    series.setdefault(name, []).append((e["layer"], e[key][i]))
        if series:
            panels.append(Panel(f"{LABELS[task]}", "layer (0 = embedding output, excluded from the claim)",
                                "variance fraction, top 10", series=[mean_series(v, k) for k, v in series.items()],
                                ylim=(0, 1.02), xticks=sorted({float(x) for v in series.values() for x, _ in v})))  # fmt: skip
            rows += [
                [LABELS[task], k, ", ".join(f"{y:.3f}" for y in mean_series(v).y)]
                for k, v in series.items()
            ]
    if not panels:
        return []
    return [Figure("subspace", "Top-10 principal components vs top-10 neurons per layer, with the same model at "
                   "initialisation and an isotropic sample of the same shape (the finite-sample null).", panels, ncols=2),
            Table("Subspace probe (top-10 variance fractions by layer)", ["task", "series", "by layer"], rows)]  # fmt: skip


def circuit(results: StudyResults, p: RandomParams) -> list[Item]:
    runs = R.runs(results, "circuit")
    if not runs:
        return []
    series = [series_of([(int(r.config["task"]["target_width"]),
                          (R.metric(r, "test_loss") or math.nan) / (R.metric(r, "baseline_kl") or math.nan))
                         for r in runs if R.condition(r) == cond], f"{cond} student") for cond in ("random", "full")]  # fmt: skip
    return [Figure("circuit_kl", "Circuit imitation: KL relative to the mean-distribution guess against the "
                   "target's width; 1 = learned nothing.",
                   [Panel("Circuit imitation", "target width", "KL / KL of mean guess", series=series, logx=True,
                          hlines=[(1.0, "no better than the mean guess")])])]  # fmt: skip


def exhibits(results: StudyResults, plan: Plan[RandomParams]) -> list[Figure | Table | str]:
    p = plan.params
    out: list[Figure | Table | str] = [f"{plan.scale.capitalize()} scale: {sizes(p)}."]
    for part in (
        accuracy,
        needle_by_m,
        decimal,
        ablation,
        memorisation,
        language,
        subspace,
        circuit,
        pictures,
    ):
        out += part(results, p)
    return out


__all__ = ["exhibits"]
