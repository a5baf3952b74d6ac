"""A claim, declared: what it states, what the paper states, how it is judged, on which units, against
which control, under which alternative analyses, and how its rule has changed.

    Claim(
        slug="blowup-grows",
        title="PARITY's LayerNorm blowup grows with n",
        statement="...", paper_statement="...",
        evidence=blowup_evidence,                 # (results, choices) -> Evidence
        rule=Trend("parity", above(0.0, 0.05), controls=("majority",), control_band=above(0, 0.02)),
        units=Units("seed", min_per_cell=3),
        control=Control("MAJORITY and FIRST, same pipeline", group="majority"),
        choices=(Choice("budget", "fixed", ("until_fit",), "early stopping changes norm and blowup"),),
        history=(Revision(old_rule, "2026-11-02", "why it changed", choices={...}),),
    )

`evaluate(claim, results, scale)` judges the claim under its default choices, then under every
alternative (one choice changed at a time, and each declared rule variant), then under every earlier
revision of its rule; the `ClaimResult` carries all of it. `robust` is true only when every
alternative gives the headline verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from learnability import stats
from learnability.claims.evidence import Evidence, Frame
from learnability.claims.rules import Decision, Rule, Verdict
from learnability.report.panels import Panel

Choices = Mapping[str, Any]
EvidenceFn = Callable[[Any, Choices], Evidence]


@dataclass(frozen=True)
class Units:
    """The independent unit of replication and how many a cell needs before anything is judged."""

    kind: str  # "seed", "initialisation", "model weights", ...
    min_per_cell: int = 3
    note: str = ""  # what is merged into one unit, e.g. "eps values of the same weights"

    def __post_init__(self) -> None:
        if self.min_per_cell < 1:
            raise ValueError("min_per_cell must be ≥ 1")


@dataclass(frozen=True)
class Control:
    """The comparison the claim is judged against. `group` names the frame group holding it (its value
    is printed beside the measured one); `value` gives a fixed null's value in words instead. A claim
    with no meaningful control says why with `no_control(reason)`."""

    name: str
    group: str | None = None
    value: str = ""
    why: str = ""


def _unjudged_control(control: Control, frame: Frame | None) -> str:
    """The control's value for a claim whose rule never ran (too few units, vacuous, missing runs)."""
    if control.group is not None and frame is not None and control.group in frame.groups():
        return f"{control.group}: {stats.mean_ci(frame.values(control.group)).fmt()} (the rule did not run)"
    return "not measured: the claim stopped before its rule ran (see measured)"


def no_control(reason: str) -> Control:
    return Control("none", value=f"none: {reason}", why=reason)


@dataclass(frozen=True)
class Choice:
    """An analysis choice a reasonable reviewer could make differently: its default and alternatives."""

    name: str
    default: Any
    alternatives: tuple[Any, ...]
    why: str = ""


@dataclass(frozen=True)
class Alternative:
    """A named robustness alternative: changed choices and/or a rule variant (e.g. a stricter band)."""

    label: str
    choices: Mapping[str, Any] = field(default_factory=dict)
    rule: Rule | None = None


@dataclass(frozen=True)
class Revision:
    """An earlier version of the claim's rule, kept so the report shows what it gave."""

    rule: Rule
    date: str
    why: str
    choices: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Claim:
    slug: str
    title: str
    statement: str
    paper_statement: str
    evidence: EvidenceFn
    rule: Rule
    units: Units
    control: Control
    choices: tuple[Choice, ...] = ()
    alternatives: tuple[Alternative, ...] = ()
    history: tuple[Revision, ...] = ()
    figure: str | None = None  # a study figure that shows this claim; default: the rule's own panel

    def __post_init__(self) -> None:
        versions = [r.rule.version for r in self.history]
        if any(v >= self.rule.version for v in versions):
            raise ValueError(
                f"claim {self.slug!r}: rule version {self.rule.version} must exceed every earlier "
                f"revision's ({versions})"
            )
        if not self.all_alternatives():
            raise ValueError(
                f"claim {self.slug!r}: declare at least one robustness alternative (a Choice or an "
                "Alternative) — robustness cannot be shown without one"
            )
        names = [c.name for c in self.choices]
        if len(set(names)) != len(names):
            raise ValueError(f"claim {self.slug!r}: duplicate choice names {names}")

    def defaults(self) -> dict[str, Any]:
        return {c.name: c.default for c in self.choices}

    def all_alternatives(self) -> list[Alternative]:
        """Each choice's alternatives one at a time, then the declared rule variants."""
        out = [
            Alternative(f"{c.name}={value}", {c.name: value})
            for c in self.choices
            for value in c.alternatives
        ]
        return out + list(self.alternatives)


@dataclass
class ClaimResult:
    """A judged claim: the row of claims.json (see `as_json`)."""

    id: str
    title: str
    statement: str
    paper_statement: str
    verdict: Verdict
    rule: dict[str, Any]
    control: dict[str, Any]
    units: dict[str, Any]
    robustness: list[dict[str, Any]]
    robust: bool
    history: list[dict[str, Any]]
    scale: str
    scale_note: str
    measured: str
    details: dict[str, Any]
    figure: str | None = None
    panel: Panel | None = field(default=None, repr=False)

    def as_json(self) -> dict[str, Any]:
        keys = (
            "id", "title", "statement", "paper_statement", "verdict", "rule", "control", "units",
            "robustness", "robust", "history", "scale", "scale_note", "measured", "details", "figure",
        )  # fmt: skip
        return {k: getattr(self, k) for k in keys}


@dataclass
class Judgement:
    verdict: Verdict
    measured: str
    decision: Decision | None
    frame: Frame | None
    evidence: Evidence


def judge(rule: Rule, evidence: Evidence, units: Units) -> Judgement:
    """The verdict of one rule on one piece of evidence, short-circuits and unit checks first."""
    if evidence.missing:
        return Judgement("inconclusive", f"inconclusive: {evidence.missing}", None, None, evidence)
    if evidence.pipeline:
        return Judgement(
            "inconclusive", f"inconclusive — pipeline: {evidence.pipeline}", None, None, evidence
        )
    if evidence.vacuous:
        return Judgement("vacuous", f"vacuous: {evidence.vacuous}", None, None, evidence)
    frame = Frame(evidence.obs)
    short = []
    for group in rule.groups():
        counts = frame.cell_counts(group)
        if not counts:
            short.append(f"group {group or 'all'!r} has no observations")
            continue
        low = {x: n for x, n in counts.items() if n < units.min_per_cell}
        if low:
            cells = ", ".join(
                f"{'' if x is None else f'x={x}: '}{n}"
                for x, n in sorted(low.items(), key=lambda kv: str(kv[0]))
            )
            short.append(
                f"group {group or 'all'!r} has fewer than {units.min_per_cell} {units.kind}s in a cell ({cells})"
            )
    if short:
        return Judgement("inconclusive", "inconclusive: " + "; ".join(short), None, frame, evidence)
    decision = rule.decide(frame)
    return Judgement(decision.verdict, decision.measured, decision, frame, evidence)


def evaluate(
    claim: Claim, results: Any, study: str, scale: str, scale_note: str = ""
) -> ClaimResult:
    """Judge `claim` on `results` (whatever its evidence function reads) with robustness and history."""
    defaults = claim.defaults()
    head = judge(claim.rule, claim.evidence(results, defaults), claim.units)
    robustness = []
    for alt in claim.all_alternatives():
        j = judge(
            alt.rule or claim.rule,
            claim.evidence(results, {**defaults, **alt.choices}),
            claim.units,
        )
        robustness.append({"alternative": alt.label, "verdict": j.verdict, "measured": j.measured})
    history = [
        {
            "version": claim.rule.version,
            "date": claim.rule.date,
            "why": "current rule",
            "verdict": head.verdict,
        }
    ]
    for rev in sorted(claim.history, key=lambda r: -r.rule.version):
        j = judge(rev.rule, claim.evidence(results, {**defaults, **rev.choices}), claim.units)
        history.append(
            {
                "version": rev.rule.version,
                "date": rev.date,
                "why": rev.why,
                "verdict": j.verdict,
                "rule": rev.rule.text(),
                "measured": j.measured,
            }
        )
    control_value = head.evidence.control or claim.control.value
    measured_control = head.decision.control_value if head.decision is not None else ""
    if measured_control and (claim.control.group is not None or not control_value):
        control_value = measured_control
    if not control_value:  # the rule did not run: say what the control measured, or that it was not
        control_value = _unjudged_control(claim.control, head.frame)
    units_count = len(head.frame.units()) if head.frame is not None else 0
    measured = head.measured
    if head.evidence.notes:
        measured = f"{measured}. {head.evidence.notes}"
    if head.frame is not None and head.frame.merged:
        measured += f" ({head.frame.merged} observations merged into their unit's cell)"
    details: dict[str, Any] = dict(head.evidence.details)
    if head.decision is not None:
        details.setdefault("rule", head.decision.details)
    panel = None
    if claim.figure is None and head.frame is not None:
        panel = claim.rule.panel(head.frame, claim.title)
    return ClaimResult(
        id=f"{study}/{claim.slug}",
        title=claim.title,
        statement=claim.statement,
        paper_statement=claim.paper_statement,
        verdict=head.verdict,
        rule={
            "id": f"{study}/{claim.slug}:{claim.rule.kind}",
            "version": claim.rule.version,
            "text": claim.rule.text(),
        },
        control={"name": claim.control.name, "value": control_value},
        units={
            "kind": claim.units.kind,
            "count": units_count,
            "min_per_cell": claim.units.min_per_cell,
            "note": claim.units.note,
        },
        robustness=robustness,
        robust=all(r["verdict"] == head.verdict for r in robustness),
        history=history,
        scale=scale,
        scale_note=scale_note,
        measured=measured,
        details=details,
        figure=claim.figure,
        panel=panel,
    )


__all__ = [
    "Alternative", "Choice", "Choices", "Claim", "ClaimResult", "Control", "Judgement", "Revision",
    "Units", "evaluate", "judge", "no_control",
]  # fmt: skip
