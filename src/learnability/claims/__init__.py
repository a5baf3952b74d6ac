"""The claims engine: declared claims, rules that decide and state themselves, units, controls,
robustness alternatives and rule history. See `docs/CLAIMS.md` for how to write a claim."""

from learnability.claims.claim import (
    Alternative,
    Choice,
    Choices,
    Claim,
    ClaimResult,
    Control,
    Regime,
    RegimeCheck,
    Revision,
    Units,
    evaluate,
    judge,
    no_control,
    pilot_power,
)
from learnability.claims.evidence import Evidence, Frame, Obs, observe
from learnability.claims.power import Power
from learnability.claims.rules import (
    DECIDED,
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
    "DECIDED", "VERDICTS", "AllOf", "Alternative", "Band", "BestFit", "CensoredTrend", "Choice",
    "Choices", "Claim", "ClaimResult", "Contrast", "Control", "Decision", "Evidence", "Frame", "Mean",
    "Obs", "Power", "Rate", "Regime", "RegimeCheck", "Revision", "Rule", "Trend", "Units", "Verdict", "above", "below", "evaluate", "judge",
    "no_control", "observe", "pilot_power", "within",
]  # fmt: skip
