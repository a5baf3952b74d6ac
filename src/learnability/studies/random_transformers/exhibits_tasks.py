"""Study `random`: exhibits of the algorithmic tasks — accuracy against width, needle accuracy by m, decimal
scorings, the ablation table, attention maps and embeddings. Every random-model number stands beside the fully
trained baseline of the same task and its chance line."""

from __future__ import annotations

import math
from typing import Any

from learnability.report.panels import Figure, Matrix, Panel, Series, Table, mean_series
from learnability.studies.base import StudyResults
from learnability.studies.random_transformers import records as R
from learnability.studies.random_transformers.plans import ABLATIONS, LABELS, RandomParams

TEST = {"metric": "test"}
FRESH = {"metric": "fresh"}


def series_of(points: list[tuple[Any, float | None]], label: str, kind: Any = "line") -> Series:
    return mean_series([(x, y) for x, y in points if y is not None], label, kind=kind)


def accuracy(results: StudyResults, p: RandomParams) -> list[Figure | Table]:
    rows, panels = [], []
    for task, _t in p.tasks.items():
        acc = R.runs(results, f"acc-{task}")
        full, lstm = R.runs(results, f"full-{task}"), R.runs(results, f"lstm-{task}")
        chance = R.mean(R.chance(r, task, TEST) for r in acc)
        gate_problem, gate_text = R.gate(results, p, task, TEST)
        gate = [gate_text, "ok" if gate_problem is None else "FAILS"]
        for label, group, gate_cols in (("random", acc, gate), ("full", full, ["", ""]),
                                        ("LSTM", lstm, ["", ""])):  # fmt: skip
            for w in sorted({R.width(r) for r in group}):
                these = [r for r in group if R.width(r) == w]
                rows.append(
                    [
                        LABELS[task],
                        f"{label} {w}",
                        R.fmt(R.accuracy(r, task, TEST) for r in these),
                        R.fmt(R.accuracy(r, task, FRESH) for r in these),
                        f"{chance:.3f}",
                        *gate_cols,
                    ]
                )
        series = [
            series_of(
                [(R.width(r), R.accuracy(r, task, TEST)) for r in acc], "random (embedding-only)"
            )
        ]
        series.append(
            series_of(
                [(R.width(r), R.accuracy(r, task, TEST)) for r in full], "fully trained", "points"
            )
        )
        series.append(
            series_of(
                [(R.width(r), R.accuracy(r, task, TEST)) for r in lstm], "LSTM (2 layers)", "points"
            )
        )
        widths = sorted({R.width(r) for r in acc + full + lstm})
        panels.append(
            Panel(
                LABELS[task],
                "width d_model",
                "test accuracy",
                series=[s for s in series if s.x],
                hlines=[(chance, "chance line")] if math.isfinite(chance) else [],
                logx=True,
                xticks=[float(w) for w in widths],
                ylim=(-0.03, 1.03),
            )
        )
    table = Table(
        "Test accuracy by condition, beside the fully trained baseline and the chance line",
        [
            "task",
            "model, width",
            "test (held out)",
            "fresh draws",
            "chance",
            "gate: baseline",
            "gate",
        ],
        rows,
        "Mean [min–max] over restarts. Test: the task's held-out rows; fresh: new draws of the training "
        "distribution. Chance: 1/p (mod add), E[1/m] copy baseline (needle), majority answer (brackets), "
        "0.1 per digit (decimal). Decimal accuracy is the published scoring (first answer digit unscored).",
    )
    return [
        table,
        Figure(
            "accuracy_vs_width",
            "Test accuracy against width: random (embedding-only) models, "
            "fully trained baselines and LSTMs, with the chance line.",
            panels,
            ncols=2,
        ),
    ]


def needle_by_m(results: StudyResults, p: RandomParams) -> list[Figure | Table]:
    runs = R.runs(results, "acc-needle") + R.runs(results, "full-needle")
    if not runs:
        return []
    series = []
    for label, cond, w in [
        ("random", "random", p.tasks["needle"].wide),
        ("random", "random", p.tasks["needle"].narrow),
        ("full", "full", max(p.tasks["needle"].full_widths)),
    ]:
        pts = [
            (int(m), a)
            for r in runs
            if R.condition(r) == cond and R.width(r) == w
            for m, a in (r.metrics.get("acc_by_m") or {}).items()
        ]
        if pts:
            series.append(mean_series(pts, f"{label} width {w}"))
    ms = sorted({x for s in series for x in s.x})
    series.append(
        Series("chance 1/m (copy a random value)", ms, [1 / m for m in ms], kind="dashed")
    )
    return [
        Figure(
            "needle_by_m",
            "Needle accuracy by the number of pairs m against 1/m, the accuracy of "
            "copying a random value in context.",
            [
                Panel(
                    "Needle: accuracy by pairs",
                    "pairs m",
                    "test accuracy",
                    series=series,
                    xticks=[float(m) for m in ms],
                    ylim=(0, 1.03),
                )
            ],
        )
    ]


def decimal(results: StudyResults, p: RandomParams) -> list[Figure | Table]:
    rows = []
    for sweep in ("acc-decimal_add", "full-decimal_add"):
        for w in sorted({R.width(r) for r in R.runs(results, sweep)}):
            these = [r for r in R.runs(results, sweep) if R.width(r) == w]
            digits = [r.metrics.get("digit_acc") or [] for r in these]
            per = [
                R.mean(d[i] for d in digits if i < len(d))
                for i in range(max(map(len, digits), default=0))
            ]
            rows.append(
                [
                    f"{R.condition(these[0])} {w}",
                    R.fmt(R.metric(r, "acc_published") for r in these),
                    R.fmt(R.metric(r, "acc_full") for r in these),
                    ", ".join(f"{v:.3f}" for v in per),
                    R.fmt(R.metric(r, "stop_acc") for r in these),
                    R.fmt(R.metric(r, "exact_match") for r in these),
                ]
            )
    if not rows:
        return []
    return [
        Table(
            "Decimal addition: published and full scoring, per-digit accuracy, exact match",
            [
                "model, width",
                "published scoring",
                "full scoring",
                "per digit (least significant first)",
                "stop",
                "whole-sum exact match",
            ],
            rows,
            "Published scoring skips the first answer digit (and scores the padding after the stop); full "
            "scoring scores every answer digit and the stop. Per-digit chance is 0.1.",
        )
    ]


def ablation(results: StudyResults, p: RandomParams) -> list[Figure | Table]:
    rows = []
    for task in p.ablation_tasks:
        runs = R.runs(results, f"ablation-{task}")
        three = R.runs(results, f"acc-{task}", "random", p.tasks[task].wide)
        rows.append(
            [LABELS[task]]
            + [
                R.fmt(R.accuracy(r, task, TEST) for r in runs if R.condition(r) == v)
                for v in ABLATIONS
            ]
            + [R.fmt(R.accuracy(r, task, TEST) for r in three)]
        )
    if not rows:
        return []
    return [
        Table(
            "Which embedding matrices train (test accuracy)",
            ["task", *ABLATIONS, "all three"],
            rows,
        )
    ]


def pictures(results: StudyResults, p: RandomParams) -> list[Figure | Table]:
    out: list[Figure | Table] = []
    att = [
        r
        for r in R.runs(results, "acc-needle") + R.runs(results, "full-needle")
        if r.metrics.get("attention")
    ]
    if att:
        panels = []
        for cond in ("random", "full"):
            best = max(
                (r for r in att if R.condition(r) == cond),
                key=lambda r: (R.width(r), R.metric(r, "test_acc") or 0),
                default=None,
            )
            for layer, heads in enumerate(best.metrics["attention"]["maps"] if best else []):
                avg = [
                    [sum(h[i][j] for h in heads) / len(heads) for j in range(len(heads[0][0]))]
                    for i in range(len(heads[0]))
                ]
                panels.append(
                    Panel(
                        f"{cond} {R.width(best)}, layer {layer}",
                        "key position",
                        "query position",
                        matrix=Matrix(avg, "attention (head mean)"),
                    )
                )
        out.append(
            Figure(
                "needle_attention",
                "Needle attention of one test sequence (head mean); the last row is "
                "the query, which must attend to the value after its marker.",
                panels,
                ncols=2,
            )
        )
    emb = [
        r
        for r in R.runs(results, "acc-mod_add") + R.runs(results, "full-mod_add")
        if r.metrics.get("embedding_pcs")
    ]
    panels = []
    for cond in ("random", "full"):
        best = max(
            (r for r in emb if R.condition(r) == cond),
            key=lambda r: (R.width(r), R.metric(r, "test_acc") or 0),
            default=None,
        )
        if best is not None:
            xy = best.metrics["embedding_pcs"]["coords"]
            panels.append(
                Panel(
                    f"{cond} {R.width(best)}",
                    "PC 1",
                    "PC 2",
                    series=[
                        Series(
                            "token embeddings",
                            [c[0] for c in xy],
                            [c[1] for c in xy],
                            kind="points",
                        )
                    ],
                )
            )
    if panels:
        out.append(
            Figure(
                "modadd_embedding_pcs",
                "Modular addition: token embeddings on their top two PCs.",
                panels,
            )
        )
    return out


__all__ = ["ablation", "accuracy", "decimal", "needle_by_m", "pictures", "series_of"]
