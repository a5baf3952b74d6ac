"""Study `random`: claims on the algorithmic tasks — each task solved at the widest width (beside a fully
trained baseline that solves it, against its chance line), width matters, every embedding matrix is needed,
and the solutions live in low-dimensional subspaces (against an isotropic null and the model at init)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
    Units,
    above,
    below,
)
from learnability.studies.base import Plan, StudyResults
from learnability.studies.random_transformers import records as R
from learnability.studies.random_transformers.plans import LABELS, RandomParams

PRE_ENGINE = "2026-11-29"
SLUGS = {
    "mod_add": "solves-mod-add",
    "needle": "solves-needle",
    "decimal_add": "solves-decimal",
    "parens": "solves-parens",
}
SEEDS = Units(
    "initialisation (seed)", min_per_cell=2, note="one model per seed; its data seed is its seed"
)
METRIC = Choice(
    "metric",
    "test",
    ("fresh",),
    "held-out strings (hash partition / fixed split) vs fresh draws of the training distribution",
)


def _solves_evidence(
    p: RandomParams, task: str
) -> Callable[[StudyResults, Mapping[str, Any]], Evidence]:
    t = p.tasks[task]

    def evidence(results: StudyResults, choices: Mapping[str, Any]) -> Evidence:
        wide = R.runs(results, f"acc-{task}", "random", t.wide)
        if not wide:
            return Evidence(missing=f"no finished random run of width {t.wide} on {task}")
        problem, baseline = R.gate(results, p, task, choices)
        if problem:
            return Evidence(pipeline=problem)
        narrow = R.runs(results, f"acc-{task}", "random", t.narrow)
        obs = [
            Obs(R.seed(r), y, group="random")
            for r in wide
            if (y := R.accuracy(r, task, choices)) is not None
        ]
        obs += [
            Obs(R.seed(r), y, group="chance")
            for r in wide
            if (y := R.chance(r, task, choices)) is not None
        ]
        notes = [
            baseline,
            f"random width {t.narrow}: {R.fmt(R.accuracy(r, task, choices) for r in narrow)}",
        ]
        details: dict[str, Any] = {
            "rejection_rate": R.mean(R.metric(r, "rejection_rate") for r in wide)
        }
        if task == "needle":
            by_m: dict[str, list[float]] = {}
            for r in wide:
                for m, acc in (r.metrics.get("acc_by_m") or {}).items():
                    by_m.setdefault(m, []).append(acc)
            notes.append(
                "random accuracy by pairs m (chance 1/m): "
                + ", ".join(
                    f"m={m}: {R.mean(v):.3f} (1/m {1 / int(m):.3f})"
                    for m, v in sorted(by_m.items())
                )
            )
            details["acc_by_m"] = {m: R.mean(v) for m, v in by_m.items()}
        if task == "decimal_add":
            digits = [r.metrics.get("digit_acc") or [] for r in wide]
            per = [
                R.mean(d[i] for d in digits if i < len(d))
                for i in range(max(map(len, digits), default=0))
            ]
            notes.append(
                "random per-digit accuracy (least significant first, chance 0.1): "
                + ", ".join(f"{v:.3f}" for v in per)
                + f"; whole-sum exact match {R.fmt(R.metric(r, 'exact_match') for r in wide)}; published "
                f"scoring {R.fmt(R.metric(r, 'acc_published') for r in wide)}, full scoring "
                f"{R.fmt(R.metric(r, 'acc_full') for r in wide)}"
            )
            details["digit_acc"] = per
        if task in ("needle", "decimal_add", "parens"):
            notes.append(
                f"fresh-draw accuracy {R.fmt(R.metric(r, 'fresh_acc') for r in wide)}; training draws "
                f"redrawn because they fall in the test set: {details['rejection_rate']:.1%}"
            )
        return Evidence(obs, notes="; ".join(notes), details=details)

    return evidence


def _solve_rule(
    accuracy: Band, over_chance: Band, labels: dict[str, str], version: int = 1
) -> AllOf:
    """Random models' accuracy in `accuracy`, and above the chance line by `over_chance`."""
    return AllOf(
        (
            Mean("random", accuracy, what="accuracy", labels=labels, bounds=(0.0, 1.0)),
            Contrast(
                "random", "chance", over_chance, what="accuracy", labels=labels, bounds=(0.0, 1.0)
            ),
        ),
        version=version,
    )


def _solves(plan: Plan[RandomParams], task: str) -> Claim:
    p = plan.params
    t = p.tasks[task]
    labels = {"random": f"random width {t.wide}", "chance": "chance line"}
    rule = _solve_rule(above(0.8, 0.9), above(0.1, 0.2), labels, version=2)
    strict = _solve_rule(above(0.9, 0.95), above(0.2, 0.3), labels)
    choices: tuple[Choice, ...] = (METRIC,)
    if task == "decimal_add":
        choices += (
            Choice(
                "scoring",
                "published",
                ("full",),
                "the published metric never scores the "
                "first answer digit; the full metric scores every digit and the stop",
            ),
        )
    v1 = Mean(
        "random", above(0.9499, 0.95), what="accuracy", labels=labels, version=1, date=PRE_ENGINE
    )
    return Claim(
        slug=SLUGS[task],
        title=f"Random transformers solve {LABELS[task]}",
        statement=(
            f"A random transformer of width {t.wide} (embeddings and unembedding trained, everything else frozen "
            f"at initialisation) solves {LABELS[task]} (mean accuracy over restarts above 0.9 and well above "
            "the chance line), beside a fully trained baseline that solves it in the same pipeline."
        ),
        paper_statement=(
            "At width 1024, random transformers reach 100% on modular addition, needle-in-a-haystack, decimal "
            "addition and parenthesis balancing (median of 10 restarts; Zhong & Andreas 2024, Fig. 2)."
        ),
        evidence=_solves_evidence(p, task),
        rule=rule,
        units=SEEDS,
        control=Control(
            "chance line of the same test rows (and the fully trained baseline's gate)",
            group="chance",
        ),
        choices=choices,
        alternatives=(
            Alternative("stricter band (accuracy above 0.95, 0.3 above chance)", rule=strict),
        ),
        history=(
            Revision(
                v1,
                PRE_ENGINE,
                "pre-engine rule (stop 9): median accuracy ≥ 0.95 at the largest width",
            ),
        ),
    )


def _width_evidence(p: RandomParams) -> Callable[[StudyResults, Mapping[str, Any]], Evidence]:
    def evidence(results: StudyResults, choices: Mapping[str, Any]) -> Evidence:
        if choices.get("tasks", "gated") == "solved":
            tasks = R.solved_tasks(results, p, choices)
        else:
            tasks = [t for t in p.tasks if R.gate(results, p, t, choices)[0] is None]
        if not tasks:
            return Evidence(pipeline="no task has a fully trained baseline that solves it")
        obs, notes = [], []
        for task in tasks:
            t = p.tasks[task]
            for group, w in (("wide", t.wide), ("narrow", t.narrow)):
                these = R.runs(results, f"acc-{task}", "random", w)
                obs += [
                    Obs(f"{task}:{R.seed(r)}", y, group=group)
                    for r in these
                    if (y := R.accuracy(r, task, choices)) is not None
                ]
            notes.append(
                f"{task}: width {t.wide} {R.fmt(R.accuracy(r, task, choices) for r in R.runs(results, f'acc-{task}', 'random', t.wide))}"
                f" vs width {t.narrow} {R.fmt(R.accuracy(r, task, choices) for r in R.runs(results, f'acc-{task}', 'random', t.narrow))}"
            )
        return Evidence(obs, notes="; ".join(notes), details={"tasks": tasks})

    return evidence


def _width(plan: Plan[RandomParams]) -> Claim:
    p = plan.params
    labels = {"wide": "widest random", "narrow": "width-16 random"}
    v1 = AllOf(
        (
            Mean("wide", above(0.9499, 0.95), what="accuracy", labels=labels),
            Mean("narrow", below(0.95, 0.9501), what="accuracy", labels=labels),
        ),
        version=1,
        date=PRE_ENGINE,
    )
    return Claim(
        slug="width-matters",
        title="Narrow random transformers do much worse",
        statement=(
            "On every task whose fully trained baseline works, random transformers at the widest width score "
            f"higher than at width {min(t.narrow for t in p.tasks.values())} (paired by task and restart)."
        ),
        paper_statement="At width 16 random transformers reach only 1.3–87.3% on the four tasks (Fig. 2).",
        evidence=_width_evidence(p),
        rule=Contrast(
            "wide",
            "narrow",
            above(0.05, 0.2),
            what="accuracy",
            labels=labels,
            bounds=(0.0, 1.0),
            version=2,
        ),
        units=Units("(task, seed)", min_per_cell=2),
        control=Control("the same tasks and restarts at width 16", group="narrow"),
        choices=(
            METRIC,
            Choice(
                "tasks",
                "gated",
                ("solved",),
                "pool every gated task, or only those the wide random models solved",
            ),
        ),
        history=(
            Revision(
                v1,
                PRE_ENGINE,
                "pre-engine rule (stop 9): every task ≥ 0.95 at the largest "
                "width and < 0.95 at the smallest (medians per task → means over units)",
            ),
        ),
    )


def claims(plan: Plan[RandomParams]) -> list[Claim]:
    return [*(_solves(plan, task) for task in plan.params.tasks), _width(plan)]


__all__ = ["METRIC", "PRE_ENGINE", "SLUGS", "claims"]
