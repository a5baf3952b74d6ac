"""Study `sensitivity`: Hahn & Rofin (ACL 2024), "Why are Sensitive Functions Hard for Transformers?"
(arXiv 2402.09963), in the layout every study shares (`plan`, `sweeps`, `evidence`, `claims`, `exhibits`).
Protocol, claims and verdicts: docs/studies/sensitivity.md."""

from __future__ import annotations

from learnability.studies.base import Study
from learnability.studies.sensitivity import claims, exhibits, sweeps
from learnability.studies.sensitivity.plan import PAPER, PLANS, QUICK, SensitivityParams

STUDY: Study[SensitivityParams] = Study(
    name=sweeps.NAME,
    title="Why are Sensitive Functions Hard for Transformers?",
    paper="Hahn & Rofin, ACL 2024 (arXiv 2402.09963)",
    protocol_note=(
        "The paper's protocol and model recipe (its published code): a fixed training budget with no early "
        "stop, every run read at the end of the budget, the same training step for every task at an n (the "
        "quick plan lengthens the budget at its largest n, a deviation it names; 'K steps after each run's fit', "
        "this project's earlier reading and not the paper's, is an alternative), every run counted; "
        "sharpness directions independent across batches; sharpness and sensitivity in ±1 output units. Length "
        "generalisation is the project's own extension; the scratchpad is the published protocol, decoder-only."
    ),
    plans=PLANS,
    sweeps=sweeps.sweeps,
    claims=claims.claims,
    exhibits=exhibits.exhibits,
)

__all__ = ["PAPER", "PLANS", "QUICK", "STUDY", "SensitivityParams"]
