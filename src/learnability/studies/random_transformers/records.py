"""Study `random`: reading run records — which condition a run is, its accuracy under an analysis choice,
its chance line, and the sanity gate of the fully trained baseline (shared by claims and exhibits)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping
from typing import Any

from learnability.studies.base import StudyResults
from learnability.studies.random_transformers.plans import ABLATIONS, RandomParams


def metric(record: Any, key: str) -> float | None:
    value = (record.metrics or {}).get(key)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


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
        key = {
            (False, True): "acc_published",
            (False, False): "acc_full",
            (True, True): "fresh_acc_published",
            (True, False): "fresh_acc",
        }[(fresh, published)]
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


def mean(values: Iterable[float | None]) -> float:
    xs = [v for v in values if v is not None and math.isfinite(v)]
    return statistics.fmean(xs) if xs else math.nan


def fmt(values: Iterable[float | None], digits: int = 3) -> str:
    xs = [v for v in values if v is not None and math.isfinite(v)]
    if not xs:
        return "—"
    if len(xs) == 1:
        return f"{xs[0]:.{digits}f}"
    return f"{statistics.fmean(xs):.{digits}f} [{min(xs):.{digits}f}–{max(xs):.{digits}f}] (n={len(xs)})"


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


__all__ = [
    "accuracy",
    "chance",
    "condition",
    "fmt",
    "gate",
    "mean",
    "metric",
    "runs",
    "seed",
    "solved_tasks",
    "width",
]
