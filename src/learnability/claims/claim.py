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
revision of its rule; the `ClaimResult` carries all of it. Each alternative's `effect` says whether
it changed anything: `no-op` (the same rule on the same collapsed evidence from the same runs), `not evaluated` (it
stopped short, too few units or no runs, while the main analysis ran) or `changed`. `robust` is true
only when the verdict holds under every `changed` alternative and there was at least one, false when
one disagrees, None (untested) when none changed anything. `power` (see `claims.power`) says how
likely the plan is to decide the claim and how many units would; `regime` qualifies a verdict reached
outside the paper's regime, in either direction, as "— outside regime" (counted apart).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from learnability import stats
from learnability.claims import power as power_mod
from learnability.claims import sequential as sequential_mod
from learnability.claims.evidence import Evidence, Frame
from learnability.claims.rules import AllOf, Contrast, Decision, Mean, Rule, Verdict
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
    # False for a reading that is not independent evidence for the claim (fresh draws of the training
    # distribution, which mostly score training items): shown beside the verdict, never counted
    counts: bool = True


@dataclass(frozen=True)
class Alternative:
    """A named robustness alternative: changed choices and/or a rule variant (e.g. a stricter band)."""

    label: str
    choices: Mapping[str, Any] = field(default_factory=dict)
    rule: Rule | None = None
    counts: bool = True  # see Choice.counts


@dataclass(frozen=True)
class Revision:
    """An earlier version of the claim's rule, kept so the report shows what it gave."""

    rule: Rule
    date: str
    why: str
    choices: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RegimeCheck:
    """What the plan's own data say about a regime: `inside` (whether the checked cells lie inside the
    claimed regime, as far as the data show) and the `observation` that says so."""

    inside: bool
    observation: str


@dataclass(frozen=True)
class Regime:
    """Where the paper makes the claim and where this plan checks it. `inside`: whether the checked
    regime lies inside the claimed one; `needs`: the scale or regime step that would test it (e.g.
    "width 1024"). A regime must be falsifiable: `falsified_by` states the observation that would show
    `inside` wrong, and a regime defined by the data rather than by the plan's parameters ("N beyond
    where FIRST is learned") carries a `test` of that observation on the results; when the plan's own
    data contradict the declared `inside`, the engine refuses the declaration and judges the claim by
    what the data show (`ClaimResult.regime["status"]`)."""

    claimed: str
    checked: str
    inside: bool
    needs: str = ""
    falsified_by: str = ""
    test: Callable[[Any], RegimeCheck | None] | None = field(
        default=None, compare=False, hash=False
    )

    def __post_init__(self) -> None:
        if not self.inside and not self.needs.strip():
            raise ValueError(
                f"regime {self.claimed!r}: a plan outside the claimed regime must name the regime "
                "step that would test it (needs=...)"
            )

    def as_json(self) -> dict[str, Any]:
        return {
            "claimed": self.claimed, "checked": self.checked, "inside": self.inside,
            "needs": self.needs, "falsified_by": self.falsified_by,
        }  # fmt: skip


def regime_status(regime: Regime | None, results: Any) -> tuple[bool | None, dict[str, Any] | None]:
    """(inside, claims.json `regime` entry): the declared regime, checked against the plan's data when
    it has a `test`. A declaration the data contradict is refused: the data's reading is used and the
    entry says so (`status` "refused: ..."); otherwise `status` is "declared" or "checked: ...".
    A test that raises is a study bug and propagates."""
    if regime is None:
        return None, None
    entry = regime.as_json()
    inside, entry["status"] = regime.inside, "declared"
    if regime.test is not None:
        check = regime.test(results)
        if check is not None:
            entry["observation"] = check.observation
            if check.inside != regime.inside:
                inside = check.inside
                entry["status"] = (
                    f"refused: declared {'inside' if regime.inside else 'outside'} the claimed "
                    f"regime, but the plan's own data show otherwise ({check.observation})"
                )
            else:
                entry["status"] = f"checked: {check.observation}"
    entry["inside"] = inside
    return inside, entry


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
    regime: Regime | None = None
    # short names of the study's sweeps whose seeds are this claim's independent units: the
    # adaptive driver adds units by running them with fresh seeds; the power analysis prices them
    replicate: tuple[str, ...] = ()
    prior_sd: float | None = None  # between-unit spread for the power analysis when < 2 units
    # slugs of this study's claims whose values, on the same runs, this claim's value is built from
    # (a sum, a ratio): not independent evidence; the headline counts it apart ("not independent")
    restates: tuple[str, ...] = ()

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
        if self.prior_sd is not None and not self.prior_sd > 0:
            raise ValueError(f"claim {self.slug!r}: prior_sd must be > 0, got {self.prior_sd}")
        groups = self.rule.groups()
        if self.control.group is not None and self.control.group not in groups:
            # the card prints that group's value as the control: a group the rule does not read
            # would put one group's number under another's name
            raise ValueError(
                f"claim {self.slug!r}: Control(group={self.control.group!r}) is not a group the rule "
                f"reads; allowed: {', '.join(map(repr, groups))}"
            )
        if isinstance(self.replicate, str):
            raise ValueError(
                f"claim {self.slug!r}: replicate is a tuple of sweep names, not a text"
            )
        if isinstance(self.restates, str) or self.slug in self.restates:
            raise ValueError(
                f"claim {self.slug!r}: restates is a tuple of other claims' slugs, got "
                f"{self.restates!r}"
            )

    def defaults(self) -> dict[str, Any]:
        return {c.name: c.default for c in self.choices}

    def all_alternatives(self) -> list[Alternative]:
        """Each choice's alternatives one at a time, then the declared rule variants."""
        out = [
            Alternative(f"{c.name}={value}", {c.name: value}, counts=c.counts)
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
    robust: bool | None
    history: list[dict[str, Any]]
    scale: str
    scale_note: str
    measured: str
    details: dict[str, Any]
    figure: str | None = None
    panel: Panel | None = field(default=None, repr=False)
    # inconclusive: "pipeline" | "units" | "missing" (why it stopped short); reproduced and not
    # reproduced: "outside regime" (reached outside the paper's regime, counted apart)
    qualifier: str | None = None
    robustness_summary: dict[str, int] = field(default_factory=dict)
    power: dict[str, Any] | None = None
    regime: dict[str, Any] | None = None
    adaptive: dict[str, Any] | None = None
    robustness_reason: str = ""  # the sentence behind `robust`, generated from the same fields
    # what the engine's rules before issue 33 gave on the same evidence (one-sided regime: only a
    # negative outside the regime moved, to "inconclusive — scale"; every changed alternative counted,
    # inconclusive verdicts too), kept beside the current label: {"label", "robust"}
    engine_before: dict[str, Any] | None = None
    # ids of the claims whose values this claim's value is built from on the same runs (Claim.restates)
    restates: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        """The verdict as the headline counts it: "reproduced — outside regime" apart from
        "reproduced"; an inconclusive verdict with why it stopped short."""
        return f"{self.verdict} — {self.qualifier}" if self.qualifier else self.verdict

    def as_json(self) -> dict[str, Any]:
        keys = (
            "id", "title", "statement", "paper_statement", "verdict", "qualifier", "label", "rule",
            "control", "units", "robustness", "robust", "robustness_reason", "robustness_summary",
            "history", "scale", "scale_note", "measured", "details", "figure", "power", "regime",
            "adaptive", "engine_before", "restates",
        )  # fmt: skip
        return {k: getattr(self, k) for k in keys}


@dataclass
class Judgement:
    verdict: Verdict
    measured: str
    decision: Decision | None
    frame: Frame | None
    evidence: Evidence
    qualifier: str | None = None  # why an inconclusive verdict stopped short (see ClaimResult)
    sources: frozenset[str] = frozenset()  # the run ids its evidence read ("*": all, unknown)

    @property
    def short_circuit(self) -> str:
        """Why the rule did not run ('' when it did)."""
        if self.decision is not None:
            return ""
        e = self.evidence
        return e.not_run or e.missing or e.pipeline or e.vacuous or self.measured


def judge(rule: Rule, evidence: Evidence, units: Units) -> Judgement:
    """The verdict of one rule on one piece of evidence, short-circuits and unit checks first."""
    if evidence.not_run:
        return Judgement("not run", f"not run: {evidence.not_run}", None, None, evidence)
    if evidence.missing:
        return Judgement(
            "inconclusive", f"inconclusive: {evidence.missing}", None, None, evidence, "missing"
        )
    if evidence.pipeline:
        return Judgement(
            "inconclusive", f"inconclusive — pipeline: {evidence.pipeline}", None, None, evidence,
            "pipeline",
        )  # fmt: skip
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
        return Judgement(
            "inconclusive", "inconclusive: " + "; ".join(short), None, frame, evidence, "units"
        )
    decision = rule.decide(frame)
    return Judgement(decision.verdict, decision.measured, decision, frame, evidence)


def judge_on(claim: Claim, rule: Rule, results: Any, choices: Mapping[str, Any]) -> Judgement:
    """`judge` on the claim's evidence under `choices`, noting which runs the evidence read (when
    `results` can tell: `StudyResults.reading`)."""
    reading = getattr(results, "reading", None)
    if reading is None:
        return judge(rule, claim.evidence(results, choices), claim.units)
    with reading() as seen:
        evidence = claim.evidence(results, choices)
    return replace(judge(rule, evidence, claim.units), sources=frozenset(seen))


def _same_runs(a: Judgement, b: Judgement) -> bool:
    """False only when both know which runs they read and the sets differ: an alternative on
    other runs (a second width, more seeds) is a replication even when its values come out equal."""
    known = a.sources and b.sources and "*" not in a.sources and "*" not in b.sources
    return not known or a.sources == b.sources


def _signature(j: Judgement, groups: list[str] | None = None) -> tuple[Any, ...]:
    """What an alternative could change: its short-circuit and its collapsed evidence, row by row,
    in the groups the rule reads (`groups`; all when None) — context groups drawn beside them, which
    no verdict reads, cannot make an alternative effective."""
    stop = (j.verdict, j.measured) if j.decision is None and j.frame is None else ()
    rows: list[tuple[str, ...]] = []
    if j.frame is not None:
        rows = sorted(
            (g, repr(r.x), repr(r.unit), repr(r.y), repr(r.censored))
            for g in (j.frame.groups() if groups is None else groups)
            for r in j.frame.rows(g)
        )
    return (stop, tuple(rows))


def effect(
    head: Judgement, alt: Judgement, same_rule: bool, groups: list[str] | None = None
) -> str:
    """`no-op`, `not evaluated` or `changed` (see the module docstring); `groups` are the frame
    groups the (shared) rule reads."""
    same = _same_runs(head, alt) and _signature(alt, groups) == _signature(head, groups)
    if same and (same_rule or (head.decision is None and alt.decision is None)):
        # (another rule on evidence that short-circuits before any rule runs changes nothing either)
        return "no-op"
    if alt.decision is None and alt.verdict != "vacuous":
        return (
            "not evaluated"  # stopped short (units, missing runs, not run): it agrees with nothing
        )
    return "changed"


POWER_TO_COUNT = 0.5  # an alternative counts for robustness only with this much power at its units
DECIDED_VERDICTS = ("reproduced", "not reproduced", "vacuous")


def robustness_of(
    head: Verdict, rows: list[dict[str, Any]]
) -> tuple[bool | None, dict[str, int], str]:
    """`robust`, `robustness_summary` and the sentence behind them, from the alternatives' verdicts
    and effects. Only `changed` alternatives count (effective: they changed the evidence, and powered:
    ≥ 50% power at their own units, or a decided verdict without a power model); an inconclusive or
    not-run headline is never robust or fragile: there is no verdict to hold."""
    changed = [r for r in rows if r["effect"] == "changed"]
    agree = sum(r["verdict"] == head for r in changed)
    summary = {
        "effective": len(changed),
        "agree": agree,
        "no_op": sum(r["effect"] == "no-op" for r in rows),
        "not_evaluated": sum(r["effect"] == "not evaluated" for r in rows),
        "underpowered": sum(r["effect"] == "underpowered" for r in rows),
        "not_counted": sum(r["effect"] == "not counted" for r in rows),
    }
    if head not in DECIDED_VERDICTS or not changed:
        robust = None
    else:
        robust = agree == len(changed)
    return robust, summary, robustness_sentence(head, robust, summary)


def robustness_sentence(verdict: str, robust: bool | None, summary: Mapping[str, int]) -> str:
    """The words behind `robust`, generated from the same fields (the report renders them from the
    row, never from stored text, so the card cannot contradict its fields)."""
    k, j = int(summary.get("effective", 0)), int(summary.get("agree", 0))
    if verdict not in DECIDED_VERDICTS:
        why = "a not-run" if verdict == "not run" else "an inconclusive"
        return f"not judged: {why} verdict has nothing to hold under alternatives"
    if robust is None:
        return "untested: no alternative both changed the evidence and had the power to decide"
    if robust:
        return f"robust: the verdict holds under all {k} effective alternatives"
    return f"fragile: {k - j} of {k} effective alternatives give another verdict"


def seconds_per_unit(
    results: Any, replicate: tuple[str, ...], units_now: int = 0
) -> tuple[float | None, str]:
    """Run seconds one more independent unit costs: per replicate sweep, the mean over its seeds of
    the summed run times of that seed; summed over the sweeps; divided by the units a seed brings
    per cell when there are more units than seeds (a seed that draws a batch of random models).
    (None, why) when unknown."""
    if not replicate:
        return None, "cost unknown: no replicate sweeps declared"
    of = getattr(results, "of", None)
    if of is None:
        return None, "cost unknown: the results carry no run records"
    total, seeds = 0.0, 1
    for short in replicate:
        per_seed: dict[Any, float] = {}
        for r in of(short, status=None):
            if r.seconds is not None:
                per_seed[r.seed] = per_seed.get(r.seed, 0.0) + float(r.seconds)
        if not per_seed:
            return None, f"cost unknown: no run times recorded for sweep {short!r}"
        total += sum(per_seed.values()) / len(per_seed)
        seeds = max(seeds, len(per_seed))
    return total / max(1.0, units_now / seeds), ""


def power_of(
    claim: Claim, head: Judgement, results: Any, rule: Rule | None = None
) -> power_mod.Power:
    """The power analysis of a judged claim under `rule` (default: the claim's own; an alternative
    passes its variant), none where it short-circuited before any data."""
    rule = rule or claim.rule
    why_not = ""
    if head.frame is None:
        why_not = f"the rule did not run ({head.short_circuit})"
    units_now = 0 if head.frame is None else power_mod.min_cell(head.frame, rule.groups())
    cost, note = seconds_per_unit(results, claim.replicate, units_now)
    try:
        normal = power_mod.analyse(
            rule, head.frame, kind=claim.units.kind, min_n=claim.units.min_per_cell,
            prior_sd=claim.prior_sd, seconds_per_unit=cost, cost_note=note, why_not=why_not,
            units_total=len(head.frame.units()) if head.frame is not None else None,
        )  # fmt: skip
        if head.frame is not None and not why_not and _bounded(rule) and units_now < RESAMPLE_BELOW:
            return resampled_power(claim, rule, head, normal)
        return normal
    except (ArithmeticError, ValueError, IndexError) as exc:  # a power model that cannot be
        # fitted to odd data (a degenerate design) must not take the claim's verdict down with it
        return power_mod.Power(
            None, 0, None, None, f"no power estimate: {type(exc).__name__}: {exc}"
        )


class Resampler:
    """Experiments of n units drawn with replacement from observed evidence, each judged by `rule`:
    a unit is drawn with all its observations (paired cells stay paired), per stratum of units seen in
    the same groups (independent groups get n each, as a plan with n units per cell gives them)."""

    def __init__(self, rule: Rule, evidence: Evidence, units: Units, seed: int = 0) -> None:
        self.rule, self.evidence, self.units = rule, evidence, units
        self.by_unit: dict[Any, list[Any]] = {}
        for o in evidence.obs:
            self.by_unit.setdefault(o.unit, []).append(o)
        strata: dict[frozenset[str], list[Any]] = {}
        for unit in sorted(self.by_unit, key=str):
            strata.setdefault(frozenset(o.group for o in self.by_unit[unit]), []).append(unit)
        self.pools = list(strata.values())
        self.pool = len(self.by_unit)
        self.seed = seed

    def shares(self, n: int, draws: int) -> dict[str, float]:
        """The share of each verdict over `draws` resampled n-unit experiments (a fixed stream per n,
        so a power curve read at n twice gives the same number)."""
        rng = np.random.default_rng([self.seed, n])
        counts: dict[str, int] = {}
        for _ in range(draws):
            picked = [
                (s, int(k)) for s, pool in enumerate(self.pools) for k in rng.choice(len(pool), n)
            ]
            obs = [
                replace(o, unit=(i, self.pools[s][k]))
                for i, (s, k) in enumerate(picked)
                for o in self.by_unit[self.pools[s][k]]
            ]
            verdict = judge(self.rule, replace(self.evidence, obs=obs), self.units).verdict
            counts[verdict] = counts.get(verdict, 0) + 1
        return {v: c / draws for v, c in sorted(counts.items())}


def _bounded(rule: Rule) -> bool:
    """Whether the rule reads a bounded, rate-like outcome (an accuracy): a normal model of its few
    units misreads one that is bimodal (a seed generalises or only memorises)."""
    if isinstance(rule, AllOf):
        return any(_bounded(p) for p in rule.parts)
    return isinstance(rule, (Mean, Contrast)) and getattr(rule, "bounds", None) is not None


RESAMPLE_DRAWS = 200
# a rate-like outcome is resampled only on few units, where a bimodal spread (a seed generalises or only
# memorises) misleads the normal model; from this many units a cell's mean is near normal (and
# resampling thousands of units — volume's models — cost minutes of analysis for the same answer)
RESAMPLE_BELOW = 30


def resampled_power(
    claim: Claim, rule: Rule, head: Judgement, normal: power_mod.Power
) -> power_mod.Power:
    """The power of a rate-like claim by resampling its observed units (model-free) instead of the
    normal model: the share of resampled experiments that give the verdict the estimate points to,
    at the units now and on a doubling grid for 80% (`RESAMPLE_DRAWS` draws per point)."""
    side = head.verdict if head.verdict in ("reproduced", "not reproduced") else normal.side
    n0 = normal.units_now or power_mod.min_cell(head.frame, rule.groups()) if head.frame else 0
    if side is None or n0 < 1:
        return normal
    resample = Resampler(rule, head.evidence, claim.units, seed=20261203)

    @functools.cache
    def at(n: int) -> float:
        return resample.shares(n, RESAMPLE_DRAWS).get(side, 0.0)

    now, need, n, cap = at(n0), None, n0, max(64, 4 * n0)
    while n <= cap:
        if at(n) >= power_mod.TARGET:
            need = n
            break
        n *= 2
    kind = power_mod.plural(claim.units.kind, n0)
    total = len(head.frame.units()) if head.frame is not None else n0
    where = f" in the smallest cell (of {total} in all)" if total > n0 else ""
    text = f"{n0} {kind}{where} give {now:.0%} power (resampled from the observed units: a rate-like outcome)"
    if need is None:
        text += f"; more than {cap} would be needed for 80%"
    else:
        text += f"; {need} would {'already ' if need <= n0 else ''}give 80% (on a doubling grid)"
    text += f"; a normal model would say: {normal.text}"
    cost = normal.cost_cpu_min if need is not None and need > n0 else None
    return power_mod.Power(now, n0, need, cost, text, side)


@dataclass(frozen=True)
class PilotPower:
    """`shares[n][verdict]`: the share of resampled n-unit experiments with that verdict; `pool`: the
    pilot's independent units they were drawn from."""

    pool: int
    shares: dict[int, dict[str, float]]


def pilot_power(
    claim: Claim, results: Any, units: list[int], draws: int = 400, seed: int = 0
) -> PilotPower:
    """How often the claim's fixed-sample rule would decide on `n` units, for each n in `units`,
    estimated from a pilot by resampling: n of the pilot's units drawn with replacement (each draw a
    new unit, with all its observations, so paired cells stay paired), judged `draws` times. Units
    are drawn per stratum — the units seen in the same set of groups — so independent groups (a
    Welch contrast) get n each, as a plan with n units per cell would give them, and paired ones n.

    Model-free where `power_of` assumes normal estimates and reads its spread off the plan's own few
    units; it is how a plan's unit count is chosen from a larger pilot store before a confirmatory run
    on fresh seeds (a plan chosen because its own seeds read well would be a post-hoc replication).
    Raises ValueError when the pilot has no units to draw from."""
    evidence = claim.evidence(results, claim.defaults())
    head = judge(
        claim.rule, evidence, claim.units
    )  # its short-circuits say why there is nothing to draw
    if head.frame is None or not evidence.obs:
        raise ValueError(
            f"claim {claim.slug!r}: the pilot has no units to resample ({head.measured})"
        )
    resample = Resampler(claim.rule, evidence, claim.units, seed)
    out = {n: resample.shares(n, draws) for n in units}
    return PilotPower(resample.pool, out)


def _apply_regime(
    inside: bool | None,
    regime: dict[str, Any] | None,
    verdict: Verdict,
    qualifier: str | None,
    measured: str,
) -> tuple[Verdict, str | None, str]:
    """A verdict reached outside the claimed regime, in either direction, keeps its direction and is
    qualified "outside regime" (counted apart from verdicts inside it), naming the step that would
    decide it. Inconclusive, vacuous and not-run verdicts are unchanged."""
    if regime is None or inside is not False or verdict not in ("reproduced", "not reproduced"):
        return verdict, qualifier, measured
    needs = regime.get("needs") or "the paper's regime"
    lean = "for" if verdict == "reproduced" else "against"
    text = (
        f"{verdict} — outside regime: the evidence goes {lean} the claim, but it was checked at "
        f"{regime.get('checked')}, outside the paper's regime ({regime.get('claimed')}); {needs} "
        f"would decide it. Measured: {measured}"
    )
    return verdict, "outside regime", text


def evaluate(
    claim: Claim,
    results: Any,
    study: str,
    scale: str,
    scale_note: str = "",
    sequential: Any = None,
) -> ClaimResult:
    """Judge `claim` on `results` (whatever its evidence function reads) with robustness and history.

    `sequential` (a `claims.sequential.Looks`) re-judges the claim under the adaptive design of
    `reproduce --budget`: the verdict becomes the sequential one, the fixed-sample one beside it."""
    defaults = claim.defaults()
    head = judge_on(claim, claim.rule, results, defaults)
    robustness = []
    for alt in claim.all_alternatives():
        rule = alt.rule or claim.rule
        j = judge_on(claim, rule, results, {**defaults, **alt.choices})
        row: dict[str, Any] = {
            "alternative": alt.label,
            "verdict": j.verdict,
            "measured": j.measured,
            "effect": effect(head, j, rule == claim.rule, claim.rule.groups()),
        }
        if row["effect"] == "changed" and not alt.counts:
            row["effect"] = "not counted"  # not independent evidence: shown, never counted
        elif row["effect"] == "changed" and j.verdict not in DECIDED_VERDICTS:
            # an undecided alternative without the power to decide at its own units cannot disagree.
            # (A decided one cleared its band edge at its units: its observed power is ≥ 50% by
            # construction, so it counts; the power model would misread a zero-spread one as 0%.)
            alt_power = power_of(claim, j, results, rule)
            row["power"] = alt_power.as_json()
            if alt_power.current is None or alt_power.current < POWER_TO_COUNT:
                row["effect"] = "underpowered"
        robustness.append(row)
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
        panel = claim.rule.panel(head.frame, claim.title, head.decision)
    pw = power_of(claim, head, results)
    verdict, qualifier, adaptive = head.verdict, head.qualifier, None
    if sequential is not None:
        verdict, qualifier, measured, adaptive = sequential_mod.apply(
            sequential, claim, verdict, qualifier, measured
        )
    inside, regime = regime_status(claim.regime, results)
    verdict, qualifier, measured = _apply_regime(inside, regime, verdict, qualifier, measured)
    robust, summary, reason = robustness_of(verdict, robustness)
    before = _engine_before(inside, verdict, qualifier, robustness)
    return ClaimResult(
        id=f"{study}/{claim.slug}",
        title=claim.title,
        statement=claim.statement,
        paper_statement=claim.paper_statement,
        verdict=verdict,
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
        robust=robust,
        history=history,
        scale=scale,
        scale_note=scale_note,
        measured=measured,
        details=details,
        figure=claim.figure,
        panel=panel,
        qualifier=qualifier if verdict == "inconclusive" or qualifier == "outside regime" else None,
        robustness_summary=summary,
        power=pw.as_json(),
        regime=regime,
        adaptive=adaptive,
        robustness_reason=reason,
        engine_before=before,
        restates=[f"{study}/{slug}" for slug in claim.restates],
    )


def _engine_before(
    inside: bool | None, verdict: Verdict, qualifier: str | None, robustness: list[dict[str, Any]]
) -> dict[str, Any]:
    """The label and `robust` the engine gave before issue 33 on the same evidence (see
    `ClaimResult.engine_before`)."""
    label = f"{verdict} — {qualifier}" if qualifier and qualifier != "outside regime" else verdict
    if inside is False and verdict == "not reproduced":
        label = "inconclusive — scale"
    shown = label.split(" — ")[0]
    changed = [r for r in robustness if r["effect"] in ("changed", "underpowered", "not counted")]
    robust = None
    if shown != "not run" and changed and label != "inconclusive — scale":
        robust = all(r["verdict"] == shown for r in changed)
    return {"label": label, "robust": robust}


__all__ = [
    "Alternative",
    "Choice",
    "Choices",
    "Claim",
    "ClaimResult",
    "Control",
    "Judgement",
    "Regime",
    "RegimeCheck",
    "Revision",
    "Units",
    "effect",
    "evaluate",
    "judge",
    "no_control",
    "power_of",
    "regime_status",
    "robustness_of",
    "robustness_sentence",
    "seconds_per_unit",
]  # fmt: skip
