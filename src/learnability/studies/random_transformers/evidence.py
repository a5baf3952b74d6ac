"""Study `random`, evidence: reading run records — which condition a run is, its accuracy under an
analysis choice, its chance line, the sanity gate of the fully trained baseline (shared by claims and
exhibits) — and one evidence function per claim."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from learnability.studies import Evidence, Obs, StudyResults, common, observe
from learnability.studies.common import mean
from learnability.studies.common import spread as fmt
from learnability.studies.random_transformers.plan import ABLATIONS, PARTIAL, RandomParams

Choices = Mapping[str, Any]
PAPER_BITS = 2.88  # bits per parameter of the paper's fully trained model


def metric(record: Any, key: str) -> float | None:
    """A metric of a record when it is a finite number, else None."""
    return common.finite(common.metric(record, key))


def condition(record: Any) -> str:
    """'random' (embedding-only), 'full', 'lstm' or the ablation variant's name."""
    if record.config["model"].get("arch") == "lstm":
        return "lstm"
    freeze = record.config["train"]["freeze"]
    if freeze in ("embeddings", "full"):
        return "random" if freeze == "embeddings" else "full"
    for label, patterns in ABLATIONS.items():
        if sorted(patterns) == sorted(freeze):
            return label
    return "+".join(freeze)


def width(record: Any) -> int:
    return int(record.config["model"]["d_model"])


def seed(record: Any) -> int:
    return int(record.config["seed"])


def accuracy(record: Any, task: str, choices: Mapping[str, Any]) -> float | None:
    """The accuracy the claim reads: test set (held-out strings) or fresh draws of the training distribution;
    decimal addition under the published or the full scoring."""
    fresh = choices.get("metric", "test") == "fresh"
    if task == "decimal_add":
        published = choices.get("scoring", "published") == "published"
        key = {(False, True): "acc_published", (False, False): "acc_full", (True, True): "fresh_acc_published",
               (True, False): "fresh_acc"}[(fresh, published)]  # fmt: skip
        return metric(record, key)
    if (
        fresh and task != "mod_add"
    ):  # modular addition is a fixed split: every pair is in train or test
        return metric(record, "fresh_acc")
    return metric(record, "test_acc")


def chance(record: Any, task: str, choices: Mapping[str, Any]) -> float | None:
    """The line a model that learned nothing useful reaches on the same rows: 1/p (modular addition), the
    copy-a-random-value baseline E[1/m] (needle), the majority answer (brackets), 0.1 per digit (decimal)."""
    fresh = choices.get("metric", "test") == "fresh"
    if task == "mod_add":
        return metric(record, "chance")
    if task == "needle":
        return metric(record, "fresh_copy_baseline" if fresh else "copy_baseline")
    if task == "parens":
        return metric(record, "fresh_majority_rate" if fresh else "majority_rate")
    return 0.1


def runs(
    results: StudyResults, sweep: str, cond: str | None = None, at: int | None = None
) -> list[Any]:
    """Finished records of a sweep, optionally of one condition and width."""
    out = results.of(sweep)
    if cond is not None:
        out = [r for r in out if condition(r) == cond]
    if at is not None:
        out = [r for r in out if width(r) == at]
    return out


def gate(
    results: StudyResults, p: RandomParams, task: str, choices: Mapping[str, Any]
) -> tuple[str | None, str]:
    """(problem, summary) of the fully trained baseline on `task`: problem is None when at some width its
    mean accuracy (the claim's metric) reaches the plan's gate; otherwise the reason the pipeline, not the
    random model, is in question."""
    full = runs(results, f"full-{task}")
    if not full:
        return "no finished fully trained baseline run", "no fully trained baseline"
    by_width: dict[int, list[float | None]] = {}
    for r in full:
        by_width.setdefault(width(r), []).append(accuracy(r, task, choices))
    best_width = max(by_width, key=lambda w: mean(by_width[w]))
    best = mean(by_width[best_width])
    summary = f"fully trained baseline (width {best_width}): {fmt(by_width[best_width])}"
    if not best >= p.gate:
        return (
            f"the fully trained baseline reached only {best:.3f} < {p.gate:g} on {task} "
            f"(best width {best_width}, {choices.get('metric', 'test')} accuracy), so the pipeline, not the "
            "random model, is in question",
            summary,
        )
    return None, summary


def solved_tasks(
    results: StudyResults, p: RandomParams, choices: Mapping[str, Any], level: float = 0.9
) -> list[str]:
    """Tasks whose baseline passes the gate and whose widest random models reach `level` on average."""
    out = []
    for task, t in p.tasks.items():
        problem, _ = gate(results, p, task, choices)
        wide = runs(results, f"acc-{task}", "random", t.wide)
        if problem is None and mean(accuracy(r, task, choices) for r in wide) >= level:
            out.append(task)
    return out


# -- the algorithmic tasks ---------------------------------------------------------------------------
def solves(p: RandomParams, task: str) -> Callable[[StudyResults, Mapping[str, Any]], Evidence]:
    t = p.tasks[task]

    def evidence(results: StudyResults, choices: Mapping[str, Any]) -> Evidence:
        wide = runs(results, f"acc-{task}", "random", t.wide)
        if not wide:
            return Evidence(missing=f"no finished random run of width {t.wide} on {task}")
        problem, baseline = gate(results, p, task, choices)
        if problem:
            return Evidence(pipeline=problem)
        narrow = runs(results, f"acc-{task}", "random", t.narrow)
        obs = observe(wide, lambda r: accuracy(r, task, choices), unit=seed, group="random")
        obs += observe(wide, lambda r: chance(r, task, choices), unit=seed, group="chance")
        notes = [
            baseline,
            f"random width {t.narrow}: {fmt(accuracy(r, task, choices) for r in narrow)}",
        ]
        details: dict[str, Any] = {
            "rejection_rate": mean(metric(r, "rejection_rate") for r in wide)
        }
        if task == "needle":
            by_m: dict[str, list[float]] = {}
            for r in wide:
                for m, acc in (r.metrics.get("acc_by_m") or {}).items():
                    by_m.setdefault(m, []).append(acc)
            notes.append(
                "random accuracy by pairs m (chance 1/m): "
                + ", ".join(
                    f"m={m}: {mean(v):.3f} (1/m {1 / int(m):.3f})" for m, v in sorted(by_m.items())
                )
            )
            details["acc_by_m"] = {m: mean(v) for m, v in by_m.items()}
        if task == "decimal_add":
            digits = [r.metrics.get("digit_acc") or [] for r in wide]
            per = [
                mean(d[i] for d in digits if i < len(d))
                for i in range(max(map(len, digits), default=0))
            ]
            notes.append(
                "random per-digit accuracy (least significant first, chance 0.1): "
                + ", ".join(f"{v:.3f}" for v in per)
                + f"; whole-sum exact match {fmt(metric(r, 'exact_match') for r in wide)}; published "
                f"scoring {fmt(metric(r, 'acc_published') for r in wide)}, full scoring "
                f"{fmt(metric(r, 'acc_full') for r in wide)}"
            )
            details["digit_acc"] = per
        if task in ("needle", "decimal_add", "parens"):
            notes.append(
                f"fresh-draw accuracy {fmt(metric(r, 'fresh_acc') for r in wide)}; training draws "
                f"redrawn because they fall in the test set: {details['rejection_rate']:.1%}"
            )
        return Evidence(obs, notes="; ".join(notes), details=details)

    return evidence


def width_matters(p: RandomParams) -> Callable[[StudyResults, Mapping[str, Any]], Evidence]:
    def evidence(results: StudyResults, choices: Mapping[str, Any]) -> Evidence:
        if choices.get("tasks", "gated") == "solved":
            tasks = solved_tasks(results, p, choices)
        else:
            tasks = [t for t in p.tasks if gate(results, p, t, choices)[0] is None]
        if not tasks:
            return Evidence(pipeline="no task has a fully trained baseline that solves it")
        obs, notes = [], []
        for task in tasks:
            t = p.tasks[task]
            for group, w in (("wide", t.wide), ("narrow", t.narrow)):
                these = runs(results, f"acc-{task}", "random", w)
                obs += [
                    Obs(f"{task}:{seed(r)}", y, group=group)
                    for r in these
                    if (y := accuracy(r, task, choices)) is not None
                ]
            notes.append(
                f"{task}: width {t.wide} {fmt(accuracy(r, task, choices) for r in runs(results, f'acc-{task}', 'random', t.wide))}"
                f" vs width {t.narrow} {fmt(accuracy(r, task, choices) for r in runs(results, f'acc-{task}', 'random', t.narrow))}"
            )
        return Evidence(obs, notes="; ".join(notes), details={"tasks": tasks})

    return evidence


def ablation(p: RandomParams) -> Callable[[StudyResults, Mapping[str, Any]], Evidence]:
    def evidence(results: StudyResults, choices: Mapping[str, Any]) -> Evidence:
        if not p.ablation_tasks:
            return Evidence(missing="the ablation is not run at this scale (see the scale note)")
        partial = {"partial": PARTIAL, "single": ("token", "position", "unembedding")}.get(
            choices.get("partials", "partial"), tuple(ABLATIONS)
        )
        obs, notes = [], []
        for task in p.ablation_tasks:
            t = p.tasks[task]
            full3 = {
                seed(r): accuracy(r, task, choices)
                for r in runs(results, f"acc-{task}", "random", t.wide)
            }
            if gate(results, p, task, choices)[0] or not mean(full3.values()) >= 0.9:
                continue  # only tasks where training all three solves the task say which ones are needed
            variants: dict[int, dict[str, float]] = {}
            for r in runs(results, f"ablation-{task}"):
                if (acc := accuracy(r, task, choices)) is not None:
                    variants.setdefault(seed(r), {})[condition(r)] = acc
            for s, accs in variants.items():
                best = max((accs[v] for v in partial if v in accs), default=None)
                three = full3.get(s)
                if best is not None and three is not None:
                    obs += [
                        Obs(f"{task}:{s}", three, group="all three"),
                        Obs(f"{task}:{s}", best, group="best partial"),
                    ]
            notes.append(
                f"{task}: "
                + ", ".join(
                    f"{v} {mean(a.get(v) for a in variants.values()):.3f}" for v in ABLATIONS
                )
                + f", all three {mean(full3.values()):.3f}"
            )
        if not obs:
            return Evidence(
                missing="no ablated task where all three matrices reach 0.9 beside a working baseline"
            )
        return Evidence(obs, notes="; ".join(notes))

    return evidence


def subspace(p: RandomParams) -> Callable[[StudyResults, Mapping[str, Any]], Evidence]:
    def evidence(results: StudyResults, choices: Mapping[str, Any]) -> Evidence:
        k = int(choices.get("k", 10))
        tasks = (
            solved_tasks(results, p, choices)
            if choices.get("tasks", "solved") == "solved"
            else [t for t in p.tasks if gate(results, p, t, choices)[0] is None]
        )
        if not tasks:
            return Evidence(
                missing="no task solved by the widest random models beside a working baseline"
            )
        obs, rows_seen = [], set()
        for task in tasks:
            for r in runs(results, f"acc-{task}", "random", p.tasks[task].wide):
                layers = [e for e in r.metrics.get("subspace") or [] if e["layer"] >= 1]
                if choices.get("layers", "all") == "last":
                    layers = layers[-1:]
                if not layers:
                    continue
                i = min(range(len(layers[0]["k"])), key=lambda j: abs(layers[0]["k"][j] - k))
                unit = f"{task}:{seed(r)}"
                val = {
                    key: mean(e[key][i] for e in layers)
                    for key in ("pca", "neurons", "init_pca", "null_pca", "null_neurons")
                }
                obs += [
                    Obs(unit, val["pca"], group="trained"),
                    Obs(unit, val["init_pca"], group="init"),
                    Obs(unit, val["null_pca"], group="null"),
                    Obs(unit, val["pca"] / val["neurons"], group="trained ratio"),
                    Obs(unit, val["null_pca"] / val["null_neurons"], group="null ratio"),
                ]
                rows_seen.add(layers[0]["rows"])
        if not obs:
            return Evidence(missing="no subspace probe in the solved tasks' runs")
        return Evidence(
            obs,
            notes=f"tasks {', '.join(tasks)}; top-{k} PCs, layers ≥ 1 (layer 0, the embedding "
            f"output, excluded); {', '.join(map(str, sorted(rows_seen)))} rows per probe",
        )

    return evidence


# -- memorisation, language, circuits ---------------------------------------------------------------
def memorisation(results: StudyResults, choices: Mapping[str, Any]) -> Evidence:
    recs = runs(results, "memorise")
    key = (
        "bits_per_param"
        if choices.get("bits", "chance-corrected") == "chance-corrected"
        else "bits_per_param_raw"
    )
    full = [r for r in recs if condition(r) == "full"]
    rnd = [r for r in recs if condition(r) == "random"]
    if not full or not rnd:
        return Evidence(missing="no finished memorisation runs of both conditions")
    cap = mean(metric(r, "cap_bits_per_param") for r in full)
    if not cap > PAPER_BITS:
        return Evidence(
            pipeline=f"the table is too small: a perfect fully trained model could store at most "
            f"{cap:.2f} bits per trainable parameter, not more than the paper's {PAPER_BITS}"
        )
    obs = observe(full + rnd, lambda r: metric(r, key), unit=seed, group=condition)
    notes = (
        f"bits per trainable parameter (chance-corrected): random {fmt(metric(r, 'bits_per_param') for r in rnd)}, "
        f"fully trained {fmt(metric(r, 'bits_per_param') for r in full)}; uncorrected: random "
        f"{fmt(metric(r, 'bits_per_param_raw') for r in rnd)}, fully trained "
        f"{fmt(metric(r, 'bits_per_param_raw') for r in full)}; table recalled: random "
        f"{fmt(metric(r, 'test_acc') for r in rnd)}, fully trained {fmt(metric(r, 'test_acc') for r in full)}; "
        f"chance hits {mean(metric(r, 'chance_hits') for r in rnd):.0f} of {mean(metric(r, 'items') for r in rnd):.0f}; "
        f"the most a perfect fully trained model could store: {cap:.2f} bits per parameter"
    )
    return Evidence(obs, notes=notes, details={"cap_bits_per_param": cap})


def _matched(full: list[Any], budget: float, ratio: float) -> int | None:
    """The widest fully trained width with at most budget / ratio trainable parameters."""
    sizes: dict[int, float] = {}
    for r in full:
        sizes.setdefault(width(r), metric(r, "n_trainable") or math.inf)
    fits = [w for w, n in sizes.items() if n * ratio <= budget]
    return max(fits) if fits else None


def language(results: StudyResults, choices: Mapping[str, Any]) -> Evidence:
    rnd, full = runs(results, "lm-random"), runs(results, "lm-full")
    if not rnd or not full:
        return Evidence(missing="no finished language-modelling runs of both conditions")
    budget = mean(metric(r, "n_trainable") for r in rnd)
    ratio = float(str(choices.get("matched", "4x")).rstrip("x"))
    w = _matched(full, budget, ratio)
    if w is None:
        return Evidence(
            missing=f"no fully trained width has {ratio:g}× fewer trainable parameters than the random model"
        )
    small = [r for r in full if width(r) == w]
    obs = observe(rnd, lambda r: metric(r, "test_loss"), unit=seed, group="random")
    obs += observe(rnd, lambda r: metric(r, "unigram_ce"), unit=seed, group="unigram")
    obs += observe(small, lambda r: metric(r, "test_loss"), unit=seed, group="full")
    by_width: dict[int, list[Any]] = {}
    for r in full:
        by_width.setdefault(width(r), []).append(r)
    listing = "; ".join(
        f"full width {fw} ({mean(metric(r, 'n_trainable') for r in rs):,.0f} params): "
        f"{fmt(metric(r, 'test_loss') for r in rs)}"
        for fw, rs in sorted(by_width.items())
    )
    notes = (
        f"random width {width(rnd[0])} ({budget:,.0f} trainable params): validation CE "
        f"{fmt(metric(r, 'test_loss') for r in rnd)} (training windows {fmt(metric(r, 'train_ce') for r in rnd)}); "
        f"{listing}; matched width {w}; epochs {mean(metric(r, 'epochs') for r in rnd):.2f}"
    )
    return Evidence(obs, notes=notes, details={"matched_width": w, "random_params": budget})


def circuit(results: StudyResults, choices: Mapping[str, Any]) -> Evidence:
    recs = runs(results, "circuit")
    if not recs:
        return Evidence(missing="no finished circuit-imitation runs")
    relative = choices.get("kl", "relative") == "relative"
    endpoints = choices.get("view", "trend") == "endpoints"
    widths = sorted({int(r.config["task"]["target_width"]) for r in recs})
    obs = []
    for r in recs:
        kl, base = metric(r, "test_loss"), metric(r, "baseline_kl")
        if kl is None or (relative and not base):
            continue
        y = kl / base if relative and base else kl
        tw = int(r.config["task"]["target_width"])
        cond = condition(r)
        if endpoints:  # the pre-engine rule's view: narrowest and widest targets only
            if tw in (widths[0], widths[-1]):
                obs.append(
                    Obs(
                        seed(r),
                        y,
                        group=f"{cond} {'widest' if tw == widths[-1] else 'narrowest'}",
                    )
                )
        else:
            obs.append(Obs(seed(r), y, x=math.log2(tw), group=cond))
    notes = "; ".join(
        f"{cond} student, relative KL by target width: "
        + ", ".join(
            f"{w}: {fmt((metric(r, 'test_loss') or math.nan) / (metric(r, 'baseline_kl') or math.nan) for r in recs if condition(r) == cond and int(r.config['task']['target_width']) == w)}"
            for w in widths
        )
        for cond in ("random", "full")
    )
    return Evidence(obs, notes=notes)


__all__ = [
    "PAPER_BITS",
    "ablation",
    "accuracy",
    "chance",
    "circuit",
    "condition",
    "fmt",
    "gate",
    "language",
    "mean",
    "memorisation",
    "metric",
    "runs",
    "seed",
    "solved_tasks",
    "solves",
    "subspace",
    "width",
    "width_matters",
]  # fmt: skip
