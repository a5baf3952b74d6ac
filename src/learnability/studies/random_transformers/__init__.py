"""Study `random`: Zhong & Andreas (NeurIPS 2024), "Algorithmic Capabilities of Random Transformers".

A *random transformer* is a GPT-2 (`learnability.models.GPT`: pre-LN, 4 heads, no unembedding bias) whose token
embedding, position embedding and unembedding train while everything else stays at its random initialisation
(the trainer's freeze spec "embeddings"). Beside it: the same network fully trained and a 2-layer LSTM, each with
its own recipe. The declaration, in the layout every study shares (`plan`, `sweeps`, `evidence`, `claims`,
`exhibits`); the job is `learnability.jobs.random_transformers`. See docs/studies/random.md.
"""

from __future__ import annotations

from learnability.studies.base import Study
from learnability.studies.random_transformers import claims, exhibits, sweeps
from learnability.studies.random_transformers.plan import PLANS, PROTOCOL, RandomParams

STUDY: Study[RandomParams] = Study(
    name="random",
    title="Algorithmic capabilities of random transformers",
    paper="Zhong & Andreas, Algorithmic Capabilities of Random Transformers, NeurIPS 2024 (arXiv 2410.04368)",
    protocol_note=PROTOCOL,
    plans=PLANS,
    sweeps=sweeps.sweeps,
    claims=claims.claims,
    exhibits=exhibits.exhibits,
)

__all__ = ["STUDY"]
