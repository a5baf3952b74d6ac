"""Study `volume`: Kövér, Butoi, Svete, Hahn, Cotterell (ICML 2026), "Understanding the Parameter Space
Geometry (Volume) of Transformers Encoding Boolean Functions" (arXiv 2606.08768).

The declaration, in the layout every study shares; jobs in `learnability.jobs.volume`, the same-balance
control in `learnability.boolean.balance`, recogniser measurements in `learnability.measure.recogniser`.
"""

from __future__ import annotations

from learnability.studies.base import Study
from learnability.studies.volume import claims, exhibits, sweeps
from learnability.studies.volume.plan import PLANS, PROTOCOL, VolumeParams

STUDY: Study[VolumeParams] = Study(
    name="volume",
    title="Parameter-space volume of transformers encoding Boolean functions",
    paper="Kövér, Butoi, Svete, Hahn, Cotterell. Understanding the Parameter Space Geometry (Volume) "
    "of Transformers Encoding Boolean Functions. ICML 2026, arXiv 2606.08768.",
    protocol_note=PROTOCOL,
    plans=PLANS,
    sweeps=sweeps.sweeps,
    claims=claims.claims,
    exhibits=exhibits.exhibits,
)

__all__ = ["STUDY"]
