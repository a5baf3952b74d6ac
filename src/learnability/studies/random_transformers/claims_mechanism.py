"""Study `random`: claims on how random transformers solve the algorithmic tasks — every embedding matrix is
needed (the ablation), and the solutions live in low-dimensional subspaces (against an isotropic null of the
same shape and the same network at initialisation)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from learnability.claims import (
    AllOf,
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
)
from learnability.studies.base import Plan, StudyResults
from learnability.studies.random_transformers import records as R
from learnability.studies.random_transformers.claims_tasks import METRIC, PRE_ENGINE
from learnability.studies.random_transformers.plans import ABLATIONS, PARTIAL, RandomParams


def _ablation_evidence(p: RandomParams) -> Callable[[StudyResults, Mapping[str, Any]], Evidence]:
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
                R.seed(r): R.accuracy(r, task, choices)
                for r in R.runs(results, f"acc-{task}", "random", t.wide)
            }
            if R.gate(results, p, task, choices)[0] or not R.mean(full3.values()) >= 0.9:
                continue  # only tasks where training all three solves the task say which ones are needed
            variants: dict[int, dict[str, float]] = {}
            for r in R.runs(results, f"ablation-{task}"):
                if (acc := R.accuracy(r, task, choices)) is not None:
                    variants.setdefault(R.seed(r), {})[R.condition(r)] = acc
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
                    f"{v} {R.mean(a.get(v) for a in variants.values()):.3f}" for v in ABLATIONS
                )
                + f", all three {R.mean(full3.values()):.3f}"
            )
        if not obs:
            return Evidence(
                missing="no ablated task where all three matrices reach 0.9 beside a working baseline"
            )
        return Evidence(obs, notes="; ".join(notes))

    return evidence


def _ablation(plan: Plan[RandomParams]) -> Claim:
    labels = {
        "all three": "all three trained",
        "best partial": "best variant without the unembedding or without every input embedding",
    }
    v1 = Contrast(
        "all three",
        "best partial",
        above(0.0999, 0.1),
        what="accuracy",
        labels=labels,
        version=1,
        date=PRE_ENGINE,
    )
    return Claim(
        slug="ablation",
        title="Embeddings and unembedding must both train",
        statement=(
            "On tasks that a random transformer solves with token embedding, position embedding and unembedding "
            "trained, every variant that trains only the unembedding or only input embeddings (token, position, "
            "token + position) does clearly worse (paired by task and restart)."
        ),
        paper_statement="In general, embedding and unembedding parameters must both be trained (Table 1).",
        evidence=_ablation_evidence(plan.params),
        rule=Contrast(
            "all three", "best partial", above(0.05, 0.1), what="accuracy", labels=labels, version=2
        ),
        units=Units("(task, seed)", min_per_cell=2),
        control=Control(
            "the best partial variant on the same task and restart", group="best partial"
        ),
        choices=(
            METRIC,
            Choice(
                "partials",
                "partial",
                ("every variant",),
                "token + unembedding trains an "
                "embedding and the unembedding, so it is not a partial variant by default",
            ),
        ),
        history=(
            Revision(
                v1,
                PRE_ENGINE,
                "pre-engine rule (stop 9): the best single matrix (token, position "
                "or unembedding) ≥ 0.1 below all three",
                {"partials": "single"},
            ),
        ),
    )


def _subspace_evidence(p: RandomParams) -> Callable[[StudyResults, Mapping[str, Any]], Evidence]:
    def evidence(results: StudyResults, choices: Mapping[str, Any]) -> Evidence:
        k = int(choices.get("k", 10))
        tasks = (
            R.solved_tasks(results, p, choices)
            if choices.get("tasks", "solved") == "solved"
            else [t for t in p.tasks if R.gate(results, p, t, choices)[0] is None]
        )
        if not tasks:
            return Evidence(
                missing="no task solved by the widest random models beside a working baseline"
            )
        obs, rows_seen = [], set()
        for task in tasks:
            for r in R.runs(results, f"acc-{task}", "random", p.tasks[task].wide):
                layers = [e for e in r.metrics.get("subspace") or [] if e["layer"] >= 1]
                if choices.get("layers", "all") == "last":
                    layers = layers[-1:]
                if not layers:
                    continue
                i = min(range(len(layers[0]["k"])), key=lambda j: abs(layers[0]["k"][j] - k))
                unit = f"{task}:{R.seed(r)}"
                val = {
                    key: R.mean(e[key][i] for e in layers)
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


def _subspace(plan: Plan[RandomParams]) -> Claim:
    labels = {
        "trained": "trained random model",
        "init": "same model at initialisation",
        "null": "isotropic null",
        "trained ratio": "trained random model",
        "null ratio": "isotropic null",
    }
    frac = "top-k PC variance fraction"
    rule = AllOf(
        (
            Contrast(
                "trained", "null", above(0.05, 0.1), what=frac, labels=labels, bounds=(0.0, 1.0)
            ),
            Contrast(
                "trained", "init", above(0.0, 0.05), what=frac, labels=labels, bounds=(0.0, 1.0)
            ),
            Contrast(
                "trained ratio",
                "null ratio",
                above(math.log10(1.2), math.log10(1.5)),
                kind_of="log10_ratio",
                what="PC/neuron ratio",
                labels=labels,
            ),
        ),
        version=2,
    )
    v1 = AllOf(
        (
            Mean("trained", above(0.4999, 0.5), what=frac, labels=labels),
            Mean("trained ratio", above(1.9999, 2.0), what="PC/neuron ratio", labels=labels),
        ),
        version=1,
        date=PRE_ENGINE,
    )
    return Claim(
        slug="subspace",
        title="Random transformers work in low-dimensional subspaces",
        statement=(
            "On the tasks they solve, trained random transformers' hidden states (layers ≥ 1) put more variance "
            "in their top-10 principal components than an isotropic sample of the same shape and than the same "
            "network at initialisation on the same rows, and far more in PCs than in the same number of neurons "
            "(subspace selection, not sparsification)."
        ),
        paper_statement="Embedding-only training works by selecting low-dimensional subspaces of the random "
        "network's representations rather than sparse sets of neurons (Zhong & Andreas 2024, §6).",
        evidence=_subspace_evidence(plan.params),
        rule=rule,
        units=Units("(task, seed)", min_per_cell=2, note="layers ≥ 1 averaged within a model"),
        control=Control(
            "isotropic Gaussian rows of the same shape, and the same network at init", group="null"
        ),
        choices=(
            Choice("k", 10, (4,), "how many components / neurons"),
            Choice(
                "tasks",
                "solved",
                ("all",),
                "only solved tasks say how a task is solved; all = every task whose baseline works",
            ),
            Choice("layers", "all", ("last",), "every layer ≥ 1, or only the last"),
        ),
        history=(
            Revision(
                v1,
                PRE_ENGINE,
                "pre-engine rule (stop 9): median top-10 PC fraction ≥ 0.5 and PC/neuron "
                "ratio ≥ 2 on solved tasks, no null",
            ),
        ),
    )


def claims(plan: Plan[RandomParams]) -> list[Claim]:
    return [_ablation(plan), _subspace(plan)]


__all__ = ["claims"]
