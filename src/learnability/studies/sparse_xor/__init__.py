"""Study `sparse_xor`: Han & Ghoshdastidar (2025), "Transformers Provably Learn Sparse XOR with
Polylogarithmic Parameters" (arXiv 2502.07553). See docs/studies/sparse_xor.md.

The paper publishes no code and no experimental numbers in text form: every protocol here is the
project's own. The package holds only the declaration: `params` (plans per scale), `sweeps`, `claims`
(with their evidence functions in `evidence` and the per-record bookkeeping in `reduce`) and `exhibits`.
The model and its closed forms live in `learnability.models.two_head*`, the jobs in
`learnability.jobs.sparse_xor`.
"""

from __future__ import annotations

from learnability.studies.base import Study

# imported under other names so that `sparse_xor.claims`, `.exhibits`, `.sweeps` stay the modules
from learnability.studies.sparse_xor.claims import claims as declared_claims
from learnability.studies.sparse_xor.exhibits import exhibits as study_exhibits
from learnability.studies.sparse_xor.params import PLANS, SparseXorParams
from learnability.studies.sparse_xor.sweeps import sweeps as study_sweeps

STUDY: Study[SparseXorParams] = Study(
    name="sparse_xor",
    title="Transformers learn sparse XOR with polylogarithmic parameters",
    paper=(
        "Han & Ghoshdastidar, Transformers Provably Learn Sparse XOR with Polylogarithmic Parameters "
        "(arXiv 2502.07553, 2025)"
    ),
    protocol_note=(
        "The paper publishes no experimental code or numbers: grids, seeds, the success rule (population "
        "loss ≤ 0.05 and each head ≥ 0.9 of its weight on a distinct target), the scalings of the other "
        "attention kinds, the m and sample-size searches and the FFNN protocol are the project's own."
    ),
    plans=PLANS,
    sweeps=study_sweeps,
    claims=declared_claims,
    exhibits=study_exhibits,
)

__all__ = ["STUDY"]
