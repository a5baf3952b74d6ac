"""Study `sparse_xor`: Han & Ghoshdastidar (2025), "Transformers Provably Learn Sparse XOR with
Polylogarithmic Parameters" (arXiv 2502.07553). See docs/studies/sparse_xor.md.

The paper publishes no code and no experimental numbers: every protocol here is the project's own. The
model and its closed forms live in `learnability.models.two_head*`, the jobs in
`learnability.jobs.sparse_xor`; this package is the declaration, in the layout every study shares
(`plan`, `sweeps`, `evidence`, `claims`, `exhibits`).
"""

from __future__ import annotations

from learnability.studies.base import Study
from learnability.studies.sparse_xor import claims, exhibits, sweeps
from learnability.studies.sparse_xor.plan import PLANS, SparseXorParams

STUDY: Study[SparseXorParams] = Study(
    name="sparse_xor",
    title="Transformers learn sparse XOR with polylogarithmic parameters",
    paper="Han & Ghoshdastidar, Transformers Provably Learn Sparse XOR with Polylogarithmic Parameters "
    "(arXiv 2502.07553, 2025)",
    protocol_note="The paper publishes no experimental code or numbers: grids, seeds, the success rule "
    "(population loss ≤ 0.05 and each head ≥ 0.9 of its weight on a distinct target), the scalings of the "
    "other attention kinds, the m and sample-size searches and the FFNN protocol are the project's own.",
    plans=PLANS,
    sweeps=sweeps.sweeps,
    claims=claims.claims,
    exhibits=exhibits.exhibits,
)

__all__ = ["STUDY"]
