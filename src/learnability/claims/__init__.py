"""The claims engine: declared claims, rules that decide and state themselves, units, controls,
robustness alternatives and rule history. See `docs/CLAIMS.md` for how to write a claim."""

from learnability.claims.claim import (
    Alternative,
    Choice,
    Choices,
    Claim,
    ClaimResult,
    Control,
    Revision,
    Units,
    evaluate,
    judge,
    no_control,
)
from learnability.claims.evidence import Evidence, Frame, Obs, observe
from learnability.claims.rules import (
    VERDICTS,
    AllOf,
    Band,
    BestFit,
    CensoredTrend,
    Contrast,
    Decision,
    Mean,
    Rate,
    Rule,
    Trend,
    Verdict,
    above,
    below,
    within,
)

__all__ = [
    "VERDICTS", "AllOf", "Alternative", "Band", "BestFit", "CensoredTrend", "Choice", "Choices",
    "Claim", "ClaimResult", "Contrast", "Control", "Decision", "Evidence", "Frame", "Mean", "Obs",
    "Rate", "Revision", "Rule", "Trend", "Units", "Verdict", "above", "below", "evaluate", "judge",
    "no_control", "observe", "within",
]  # fmt: skip
