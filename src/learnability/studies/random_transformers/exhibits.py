"""Study `random`, exhibits, in report order: each task's accuracy against width with its chance lines and
gate, needle by m, decimal scorings, ablation, memorisation, language, subspace, circuits, attention and
embeddings; every figure names the claims it shows."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from learnability.studies import Figure, Matrix, Panel, Plan, Series, StudyResults, Table, mean_series  # isort: skip  # fmt: skip
from learnability.report.panels import Ref
from learnability.studies.random_transformers import evidence as R
from learnability.studies.random_transformers.claims import SLUGS
from learnability.studies.random_transformers.plan import ABLATIONS, LABELS, RandomParams, sizes

# fmt: off
TEST, FRESH = {"metric": "test"}, {"metric": "fresh"}  # the two readings of `evidence.accuracy`
Item = Figure | Table


def series_of(points: Iterable[tuple[Any, float | None]], label: str, kind: Any = "line", bounds: Any = (0.0, 1.0)) -> Series:
    """Mean and t interval per x; accuracies by default, so the interval stops at 0 and 1 (never a rate's)."""
    return mean_series([(x, y) for x, y in points if y is not None], label, kind=kind, bounds=bounds)


# -- the algorithmic tasks ---------------------------------------------------------------------------------
def accuracy(results: StudyResults, p: RandomParams) -> list[Item]:
    rows, out = [], []
    for task in p.tasks:
        acc, full, lstm = (R.runs(results, f"{k}-{task}") for k in ("acc", "full", "lstm"))
        chance = R.mean(R.chance(r, task, TEST) for r in acc)
        # the line the rule compares against is drawn as its control; needle's lower blind line as a plain chance line
        lines = [Ref(chance, "chance line: the best input-blind predictor", "control")]
        if task == "needle":  # the rule's line is the higher copy line; draw both
            lines = [Ref(chance, "chance line: copy a random value in context", "control"),
                     Ref(R.mean(R.metric(r, "blind_acc") for r in acc), "best input-blind predictor", "chance")]
        for label, group in (("random", acc), ("full", full), ("lstm", lstm)):
            verdict = "" if label == "random" else f"solves it (≥ {p.gate:g})" if R.gate(
                results, p, task, TEST, label)[0] is None else "unsolved: below the gate, not evidence"
            for w, these in R.common.group_by(group, R.width).items():
                rows.append([LABELS[task], f"{label} {w}", R.est(R.accuracy(r, task, TEST) for r in these),
                             R.est(R.accuracy(r, task, FRESH) for r in these), f"{chance:.3f}", verdict])
        series = [series_of([(R.width(r), R.accuracy(r, task, TEST)) for r in acc], "random (embedding-only)"),
                  Series("random, each restart", [R.width(r) for r in acc], [R.accuracy(r, task, TEST) or math.nan for r in acc], kind="points"),
                  series_of([(R.width(r), R.accuracy(r, task, TEST)) for r in full], "fully trained", "points"),
                  series_of([(R.width(r), R.accuracy(r, task, TEST)) for r in lstm], "LSTM (2 layers)", "points")]
        hlines: list[tuple[float, str] | Ref] = [line for line in lines if math.isfinite(line.at)]
        widths = sorted({float(R.width(r)) for r in acc + full + lstm})
        out.append(Figure(f"solves_{task}", f"{LABELS[task].capitalize()}: test accuracy against width — random models "
                          "(mean and 95% interval, each restart), the fully trained baseline (the gate) and LSTMs, with "
                          "the chance line the rule compares against and the band edge 0.9.",
                          [Panel(LABELS[task], "width d_model", "test accuracy", series=[s for s in series if s.x],
                                 hlines=[*hlines, Ref(0.9, "band edge: accuracy 0.9", "band")], logx=True, xticks=widths,
                                 ylim=(-0.03, 1.03))], claims=(SLUGS[task], "width-matters")))
    table = Table("Test accuracy by condition, beside the chance line and each baseline's gate",
                  ["task", "model, width", "test (held out)", "fresh draws", "chance", "baseline gate"], rows,
                  "Mean [95% interval] over restarts (the interval the claim cards print). Test: the task's held-out rows; fresh: the training distribution. "
                  "Chance: the best input-blind predictor under the claim's scoring (for needle copying a random value "
                  "in context, which is higher). Decimal accuracy is the published scoring (first answer digit "
                  "unscored). A fully trained or LSTM baseline below the gate is a recipe that did not solve the task "
                  "at this budget, not evidence about the architecture.")
    return [table, *out]


def needle_by_m(results: StudyResults, p: RandomParams) -> list[Item]:
    runs = R.runs(results, "acc-needle") + R.runs(results, "full-needle")
    if not runs:
        return []
    t, series = p.tasks["needle"], []
    cells = [("random", t.wide), ("random", t.narrow), ("full", max(t.full_widths))]
    for cond, w in dict.fromkeys(cells):  # once each, in this order (a set's order varies by run)
        pts = [(int(m), a) for r in runs if R.condition(r) == cond and R.width(r) == w
               for m, a in (r.metrics.get("acc_by_m") or {}).items()]
        if pts:
            series.append(series_of(pts, f"{cond} width {w}"))
    ms = sorted({x for s in series for x in s.x})
    series.append(Series("copy baseline E[1/m] (copy a random value in context)", ms, [1 / m for m in ms], kind="dashed"))
    return [Figure("needle_by_m", "Needle accuracy by the number of pairs m against 1/m, the accuracy of copying a "
                   "random value in context.", [Panel("Needle: accuracy by pairs", "pairs m", "test accuracy",
                                                      series=series, xticks=[float(m) for m in ms], ylim=(0, 1.03))],
                   claims=("solves-needle",))]


def decimal(results: StudyResults, p: RandomParams) -> list[Item]:
    rows = []
    for sweep in ("acc-decimal_add", "full-decimal_add", "lstm-decimal_add"):
        for w, these in R.common.group_by(R.runs(results, sweep), R.width).items():
            digits = [r.metrics.get("digit_acc") or [] for r in these]
            per = [R.mean(d[i] for d in digits if i < len(d)) for i in range(max(map(len, digits), default=0))]
            rows.append([f"{R.condition(these[0])} {w}", *(R.est(R.metric(r, k) for r in these) for k in
                         ("acc_published", "blind_published", "acc_full", "blind_full")), ", ".join(f"{v:.3f}" for v in per),
                         R.est(R.metric(r, "exact_match") for r in these)])
    if not rows:
        return []
    return [Table("Decimal addition: published and full scoring beside the best input-blind predictor, per digit, exact match",
                  ["model, width", "published scoring", "input-blind (published)", "full scoring", "input-blind (full)",
                   "per digit (least significant first)", "whole-sum exact match"], rows,
                  "Published scoring skips the first answer digit and scores the carry, the stop and the padding after "
                  "it — positions a predictor that never reads the addends gets mostly right; full scoring scores every "
                  "answer digit and the stop. Per-digit chance is about 0.1.")]


def ablation(results: StudyResults, p: RandomParams) -> list[Item]:
    rows = [[LABELS[task], *(R.est(R.accuracy(r, task, TEST) for r in R.runs(results, f"ablation-{task}") if R.condition(r) == v)
                             for v in ABLATIONS),
             R.est(R.accuracy(r, task, TEST) for r in R.runs(results, f"acc-{task}", "random", p.tasks[task].wide))]
            for task in p.ablation_tasks]
    return [Table("Which embedding matrices train (test accuracy)", ["task", *ABLATIONS, "all three"], rows)] if rows else []


def _best(runs: list[Any], cond: str) -> Any:
    """The widest model of a condition (its best test accuracy on ties)."""
    return max((r for r in runs if R.condition(r) == cond), key=lambda r: (R.width(r), R.metric(r, "test_acc") or 0),
               default=None)


def pictures(results: StudyResults, p: RandomParams) -> list[Item]:
    out: list[Item] = []
    att = [r for r in R.runs(results, "acc-needle") + R.runs(results, "full-needle") if r.metrics.get("attention")]
    panels = []
    for best in filter(None, (_best(att, c) for c in ("random", "full"))):
        for layer, heads in enumerate(best.metrics["attention"]["maps"]):
            avg = [[sum(h[i][j] for h in heads) / len(heads) for j in range(len(heads[0][0]))] for i in range(len(heads[0]))]
            panels.append(Panel(f"{R.condition(best)} {R.width(best)}, layer {layer}", "key position", "query position",
                                matrix=Matrix(avg, "attention (head mean)")))
    if panels:
        out.append(Figure("needle_attention", "Needle attention of one test sequence (head mean); the last row is "
                          "the query, which must attend to the value after its marker.", panels, ncols=2))
    emb = [r for r in R.runs(results, "acc-mod_add") + R.runs(results, "full-mod_add") if r.metrics.get("embedding_pcs")]
    panels = [Panel(f"{R.condition(b)} {R.width(b)}", "PC 1", "PC 2", series=[Series("token embeddings", [c[0] for c in xy],
                                                                              [c[1] for c in xy], kind="points")])
              for b in filter(None, (_best(emb, c) for c in ("random", "full"))) if (xy := b.metrics["embedding_pcs"]["coords"])]
    if panels:
        out.append(Figure("modadd_embedding_pcs", "Modular addition: token embeddings on their top two PCs.", panels))
    return out


# -- memorisation, language, the subspace probe ------------------------------------------------------------
def memorisation(results: StudyResults, p: RandomParams) -> list[Item]:
    keys = ("n_trainable", "test_acc", "hits", "bits_per_param_fano", "bits_per_param_raw", "bits_per_param",
            "per_key_hits", "cap_bits_per_param")
    rows = [[cond, p.memorise.width, f"{R.mean(R.metric(r, 'n_trainable') for r in these):,.0f}",
             R.est(R.loss_bits_per_param(r) for r in these),
             *(R.est(R.metric(r, k) for r in these) for k in keys[1:])] for cond in ("random", "full")
            if (these := [r for r in R.runs(results, "memorise") if R.condition(r) == cond])]
    if not rows:
        return []
    return [Table("Memorisation capacity (published token format: y offset by n)",
                  ["model", "width", "trainable params", "bits/param: cross-entropy (v4)", "recalled", "hits",
                   "bits/param: Fano (v3)", "bits/param: hits × log2 M", "bits/param: above chance (v2)",
                   "per-key hits", "bits/param at capacity"], rows,
                  "Bits per trainable parameter by four measures. Cross-entropy bound: I ≥ N·log2 M − Σ CE/ln 2 over the "
                  "table's N items, the headline (rule v4). At capacity: a perfect model's bits per parameter. "
                  "Fano: I ≥ N·(log2 M − h(e) − e·log2(M − 1)) at error rate e (rule v3); the published measure "
                  "credits every hit with log2 M bits. The per-key predictor stores only each x's (or y's) most common "
                  "value (at most n·log2 M bits): a model with fewer hits may store as little. Paper: 2.88 (fully "
                  "trained) vs 0.41 bits per parameter.")]


def language(results: StudyResults, p: RandomParams) -> list[Item]:
    groups = [("random", R.runs(results, "lm-random")), ("full", R.runs(results, "lm-full"))]
    rows, series = [], []
    unigram = R.mean(R.metric(r, "unigram_ce") for _, rs in groups for r in rs)
    for label, rs in groups:
        for w, these in R.common.group_by(rs, R.width).items():
            rows.append([label, w, *(R.est(R.metric(r, k) for r in these) for k in ("n_trainable", "test_loss", "train_ce", "epochs"))])
        if rs:
            ce = [(R.metric(r, "n_trainable"), R.metric(r, "test_loss")) for r in rs]
            series.append(series_of(ce, label, bounds=None))  # nats: no upper bound
    if not rows:
        return []
    samples = [[f"{R.condition(r)} {R.width(r)}", s["prompt"], s["text"]]
               for _, rs in groups for r in rs[:1] for s in r.metrics.get("samples") or []]
    out: list[Item] = [
        Table("Language modelling (KJV): cross-entropy", ["model", "width", "trainable params", "validation CE",
              "CE on training windows", "epochs"], rows, f"Unigram CE {unigram:.3f} nats."),
        Figure("lm_ce_vs_params", "Validation cross-entropy against trainable parameters, random vs fully trained, "
               "with the unigram line.", [Panel("Language modelling (KJV)", "trainable parameters",
                                                "validation CE (nats/token)", series=series, logx=True,
                                                hlines=[(unigram, "unigram")] if math.isfinite(unigram) else [])],
               claims=("language",)),
    ]
    return out + [Table("Greedy samples", ["model", "prompt", "continuation"], samples, "32 tokens, greedy.")] * bool(samples)


def subspace(results: StudyResults, p: RandomParams) -> list[Item]:
    panels, rows = [], []
    for task, t in p.tasks.items():
        series: dict[str, list[tuple[int, float]]] = {}
        for r in R.runs(results, f"acc-{task}", "random", t.wide) + R.runs(results, f"full-{task}"):
            for e in r.metrics.get("subspace") or []:
                i = min(range(len(e["k"])), key=lambda j: abs(e["k"][j] - 10))
                cond = "random" if R.condition(r) == "random" else "fully trained"
                for name, key in ((f"{cond}: PCs", "pca"), (f"{cond}: neurons", "neurons"), (f"{cond} at init: PCs", "init_pca"),
                                  (f"{cond} at init: neurons", "init_neurons"), (f"{cond}: isotropic null of its shape", "null_pca")):
                    series.setdefault(name, []).append((e["layer"], e[key][i]))
        if series:
            panels.append(Panel(LABELS[task], "layer (0 = embedding output, excluded from the claim)", "variance fraction, top 10",
                                series=[series_of(v, k) for k, v in series.items()], ylim=(0, 1.02),
                                xticks=sorted({float(x) for v in series.values() for x, _ in v})))
            rows += [[LABELS[task], k, ", ".join(f"{y:.3f}" for y in series_of(v, k).y)] for k, v in series.items()]
    if not panels:
        return []
    return [Figure("subspace", "Top-10 principal components vs top-10 neurons per layer, with the same model at "
                   "initialisation and an isotropic sample of the same shape (the finite-sample null); random models at each task's "
                   "widest width.", panels, ncols=2, claims=("subspace",)),
            Table("Subspace probe (top-10 variance fractions by layer)", ["task", "series", "by layer"], rows)]


def circuit(results: StudyResults, p: RandomParams) -> list[Item]:
    runs = R.runs(results, "circuit")
    series = [series_of([(int(r.config["task"]["target_width"]), R.relative_kl(r)) for r in runs if R.condition(r) == c],
                        f"{c} student", bounds=None) for c in ("random", "full")]
    return [Figure("circuit_kl", "Circuit imitation: KL relative to the mean-distribution guess against the target's "
                   "width (mean and 95% interval over seeds); 1 = learned nothing.",
                   [Panel("Circuit imitation", "target width", "KL / KL of mean guess", series=series, logx=True,
                          xticks=[float(w) for w in p.circuit.targets], hlines=[(1.0, "no better than the mean guess")])],
                   claims=("circuit",))] if runs else []


def exhibits(results: StudyResults, plan: Plan[RandomParams]) -> list[Figure | Table | str]:
    p = plan.params
    out: list[Figure | Table | str] = [f"{plan.scale.capitalize()} scale: {sizes(p)}."]
    for part in (accuracy, needle_by_m, decimal, ablation, memorisation, language, subspace, circuit, pictures):
        out += part(results, p)
    return out
# fmt: on
