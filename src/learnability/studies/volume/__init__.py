"""Study `volume`: Kövér, Butoi, Svete, Hahn, Cotterell (ICML 2026), "Understanding the Parameter Space
Geometry (Volume) of Transformers Encoding Boolean Functions" (arXiv 2606.08768).

A declaration: plans (`plans`), sweeps (`sweeps`), claims (`claims_random`, `claims_other`) and
exhibits (`exhibits`). Jobs live in `learnability.jobs.volume`, the same-balance control in
`learnability.boolean.balance`, the recogniser measurements in `learnability.measure.recogniser`.
The protocol is the project's own: the paper's is not public in text form and it has no code.
"""

from __future__ import annotations

from learnability.claims import Claim
from learnability.studies.base import Plan, Study
from learnability.studies.volume.claims_other import other_claims
from learnability.studies.volume.claims_random import random_claims
from learnability.studies.volume.exhibits import PROTOCOL, exhibits
from learnability.studies.volume.plans import PLANS, VolumeParams
from learnability.studies.volume.sweeps import sweeps


def claims(plan: Plan[VolumeParams]) -> list[Claim]:
    return random_claims(plan) + other_claims(plan)


STUDY: Study[VolumeParams] = Study(
    name="volume",
    title="Parameter-space volume of transformers encoding Boolean functions",
    paper="Kövér, Butoi, Svete, Hahn, Cotterell. Understanding the Parameter Space Geometry (Volume) "
    "of Transformers Encoding Boolean Functions. ICML 2026, arXiv 2606.08768.",
    protocol_note=PROTOCOL,
    plans=PLANS,
    sweeps=sweeps,
    claims=claims,
    exhibits=exhibits,
)

__all__ = ["STUDY", "claims"]
