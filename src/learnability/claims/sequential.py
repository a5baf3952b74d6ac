"""The sequential design of `reproduce --budget`: verdicts that stay honest when units are added
until a verdict is reached.

Re-judging a claim with 95% intervals after every added seed and stopping at the first decision
inflates the error rate (each look is another 5% chance). The design here is a group-sequential
plan with alpha spending over a fixed grid of looks (Lan & DeMets 1983; repeated confidence
intervals, Jennison & Turnbull 1989), with the looks combined by the union (Bonferroni) bound:

- look j is taken at n_j = n0 · 2^j units (n0: the plan's units), i.e. after a_j = n0 (2^j − 1)
  added seeds on each of the claim's `replicate` sweeps; look 0 is the fixed plan itself;
- look j spends α_j = α / 2^(j+1) (Σ α_j = α over all looks, however many are taken), so each look
  judges the rule with intervals at level 1 − α_j: 97.5%, 98.75%, 99.375%, ...;
- the verdict is the first look's that decides, else the last look's.

For every fixed j the look-j interval (on the first n_j units) covers with probability 1 − α_j,
whatever the data chose to do before, so P(any look errs) ≤ Σ α_j = α for any rule of stopping or
skipping looks, and for every rule kind (t, Wilson, Newcombe, profile likelihood): the bound needs no
joint distribution of the looks. The price is conservatism: the exact group-sequential boundaries
would be narrower. BestFit (an AIC margin, no error rate to spend) takes no part.

The engine only judges; `learnability.studies.adaptive` decides which units to add and hands the
looks in as results objects restricted to each look's units (`Looks`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from learnability import stats
from learnability.claims.rules import DECIDED, AllOf, BestFit, Rule, Verdict

ALPHA = 0.05
METHOD = (
    "group-sequential alpha spending α/2^(j+1) at n0·2^j units, union bound "
    "(Lan & DeMets 1983; Jennison & Turnbull 1989)"
)


def alpha_at(j: int, alpha: float = ALPHA) -> float:
    """The error probability look j may spend."""
    return alpha / 2 ** (j + 1)


def level_at(j: int, alpha: float = ALPHA) -> float:
    """The confidence level of look j's intervals."""
    return 1 - alpha_at(j, alpha)


def added_at(j: int, n0: int) -> int:
    """Seeds added per replicate sweep by look j (the grid n0 · 2^j)."""
    return n0 * (2**j - 1)


def eligible(rule: Rule) -> bool:
    """Whether the rule's verdict has an error rate to spend (not an AIC margin)."""
    if isinstance(rule, BestFit):
        return False
    if isinstance(rule, AllOf):
        return all(eligible(p) for p in rule.parts)
    return True


@dataclass
class Look:
    j: int  # the look's index on the grid (0: the fixed plan)
    results: Any  # what the claim's evidence function reads, restricted to this look's units
    units_added: int  # seeds added per replicate sweep at this look


class Looks(Protocol):
    """What the driver hands the engine: per claim, its looks in order (or None: not in the design)."""

    alpha: float

    def looks(self, claim: Any) -> Sequence[Look] | None: ...


def apply(
    design: Looks, claim: Any, fixed: Verdict, qualifier: str | None, measured: str
) -> tuple[Verdict, str | None, str, dict[str, Any] | None]:
    """The sequential verdict of `claim`, or the fixed one where the claim is not in the design."""
    from learnability.claims.claim import judge  # claim.py imports this module

    looks = design.looks(claim)
    if not looks:
        return fixed, qualifier, measured, None
    if len(looks) == 1 and looks[0].j == 0 and not claim.replicate:
        # not replicated: judged on the plan's own units at the fixed 95%, as a plain reproduce does
        (only,) = looks
        j0 = judge(claim.rule, claim.evidence(only.results, claim.defaults()), claim.units)
        return j0.verdict, j0.qualifier, _notes(j0, j0.measured), None
    chosen = None
    for look in looks:
        with stats.confidence(level_at(look.j, design.alpha)):
            jd = judge(claim.rule, claim.evidence(look.results, claim.defaults()), claim.units)
        chosen = (look, jd)
        if jd.verdict in DECIDED:
            break
    assert chosen is not None
    look, jd = chosen
    if look.units_added == 0 and jd.verdict == fixed:
        return fixed, qualifier, measured, None  # the plan alone decided, at the stricter level too
    level = level_at(look.j, design.alpha)
    text = (
        f"sequential look {look.j} ({look.units_added} added seeds per replicate sweep; "
        f"{level:.2%} intervals): {_notes(jd, jd.measured)}; fixed-sample 95% verdict on all "
        f"units: {fixed}"
    )
    info = {
        "method": METHOD,
        "rounds": look.j,
        "units_added": look.units_added,
        "fixed_sample_verdict": fixed,
        "level": level,
    }
    return jd.verdict, jd.qualifier, text, info


def _notes(j: Any, measured: str) -> str:
    return f"{measured}. {j.evidence.notes}" if j.evidence.notes else measured


__all__ = [
    "ALPHA", "METHOD", "Look", "Looks", "added_at", "alpha_at", "apply", "eligible", "level_at",
]  # fmt: skip
