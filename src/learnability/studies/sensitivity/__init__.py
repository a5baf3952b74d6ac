"""Study `sensitivity`: Hahn & Rofin (ACL 2024), "Why are Sensitive Functions Hard for Transformers?"
(arXiv 2402.09963). Protocol, claims and verdicts: docs/studies/sensitivity.md.

- `plan`: the parameters and the `quick` / `paper` plans (with what quick changes, per claim)
- `sweeps`: the seven sweeps (jobs in `learnability.jobs.sensitivity`)
- `mechanism`: claims about sharpness, blowup, norm, the trade-off, the §5 bound and Corollary 5
- `behaviour`: claims about dynamics, generalisation, length generalisation and the scratchpad
- `exhibits`: figures (as panels) and tables
"""

from __future__ import annotations

from learnability.claims import Claim
from learnability.studies.base import Plan, Study
from learnability.studies.sensitivity import behaviour, extensions, mechanism, theorems
from learnability.studies.sensitivity.exhibits import exhibits
from learnability.studies.sensitivity.plan import PAPER, PLANS, QUICK, SensitivityParams
from learnability.studies.sensitivity.sweeps import NAME, sweeps


def claims(plan: Plan[SensitivityParams]) -> list[Claim]:
    return (
        mechanism.claims(plan)
        + theorems.claims(plan)
        + behaviour.claims(plan)
        + extensions.claims(plan)
    )


STUDY: Study[SensitivityParams] = Study(
    name=NAME,
    title="Why are Sensitive Functions Hard for Transformers?",
    paper="Hahn & Rofin, ACL 2024 (arXiv 2402.09963)",
    protocol_note=(
        "The paper's protocol and model recipe (its published code): a fixed training budget with no "
        "early stop, runs filtered afterwards by final MSE < 0.001, every run counted; sharpness "
        "directions independent across batches; sharpness and sensitivity in ±1 output units. Length "
        "generalisation is the project's own extension; the scratchpad is the published autoregressive "
        "protocol in decoder-only form."
    ),
    plans=PLANS,
    sweeps=sweeps,
    claims=claims,
    exhibits=exhibits,
)

__all__ = ["PAPER", "PLANS", "QUICK", "STUDY", "SensitivityParams", "claims", "sweeps"]
