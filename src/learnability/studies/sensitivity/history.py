"""What the study's rule histories share: the pre-engine date and the one revision several claims had."""

from __future__ import annotations

from learnability.claims import Revision, Rule

PRE = "2026-11-29"  # the pre-engine study's rules (stop 9)


def units_revision(rule: Rule, shared: str) -> Revision:
    """The first engine rule of a claim whose runs were counted as units although `shared` (e.g. "the
    runs of a seed at its several n") share their initial weights: evaluated with every run a unit."""
    return Revision(
        rule,
        "2026-11-30",
        "first engine rule, revised after the first quick run: it counted every run as a unit, but "
        f"{shared} share their initial weights, so they are one unit (pseudo-replication)",
        {"units": "run"},
    )
