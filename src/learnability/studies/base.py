"""What a study is: a declaration. Per scale a typed `Plan`; from a plan, the sweeps to run, the claims
to judge and the exhibits (figures, tables, notes) to show. Nothing else: training, measuring,
statistics, verdicts and drawing are shared machinery (jobs, `claims`, `stats`, `report`).

    STUDY = Study(
        name="sparse_xor", title=..., paper=..., protocol_note=...,
        plans={"quick": Plan("quick", SparseXorParams(...), deviations={...}),
               "paper": Plan("paper", SparseXorParams(...))},
        sweeps=sweeps,        # (plan) -> list[Sweep]
        claims=claims,        # (plan) -> list[Claim]
        exhibits=exhibits,    # (results, plan) -> list[Figure | Table | str]
    )

Tests pass a tiny `Plan` straight to `sweeps`/`analyse` instead of patching module globals.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from learnability.errors import check_choice

if TYPE_CHECKING:
    from learnability.claims import Claim
    from learnability.report.panels import Figure, Table
    from learnability.sweep.spec import Sweep
    from learnability.sweep.store import RunRecord

SCALES: tuple[str, ...] = (
    "quick",
    "paper",
)  # the built-in studies' scales; a study may name others
DEFAULT_SCALE = "quick"
P = TypeVar("P")


@dataclass(frozen=True)
class Plan(Generic[P]):
    """Everything a scale fixes. `params` is the study's own typed dataclass; `deviations` says, per
    claim slug ("*" for all), what this scale changes relative to the published protocol."""

    scale: str
    params: P
    deviations: Mapping[str, str] = field(default_factory=dict)
    cost: str = ""  # a cost estimate printed before the run (e.g. "about 41 GPU-hours")

    def note_for(self, slug: str) -> str:
        parts = [self.deviations.get("*", ""), self.deviations.get(slug, "")]
        return " ".join(p for p in parts if p)


class StudyResults:
    """A study's finished records, by sweep, and the plan they were run under."""

    def __init__(self, records: list[RunRecord], plan: Plan[Any] | str, study: str = "") -> None:
        self._records = records
        self._reads: list[set[str]] = []
        self.plan = plan if isinstance(plan, Plan) else None
        self.scale = plan.scale if isinstance(plan, Plan) else str(plan)
        self.study = study

    @property
    def records(self) -> list[RunRecord]:
        """Every record (an analysis reading these cannot say which runs it used: "*")."""
        for seen in self._reads:
            seen.add("*")
        return self._records

    @contextmanager
    def reading(self) -> Iterator[set[str]]:
        """The run ids that `of` hands out inside the block: which runs an analysis read (the
        claims engine tells an alternative that read other runs from a no-op this way)."""
        seen: set[str] = set()
        self._reads.append(seen)
        try:
            yield seen
        finally:
            self._reads.remove(seen)

    @property
    def params(self) -> Any:
        """The plan's own parameters (what the evidence functions read)."""
        if self.plan is None:
            raise ValueError("these results were built from a scale name, not a Plan: no params")
        return self.plan.params

    def _full(self, sweep: str) -> str:
        # a short name may hold "/" itself (`random/L1D16/project`): only the study prefix marks a full name
        return (
            sweep
            if not self.study or sweep.startswith(f"{self.study}/")
            else f"{self.study}/{sweep}"
        )

    def of(self, sweep: str, status: str | tuple[str, ...] | None = "ok") -> list[RunRecord]:
        """Records of one sweep (its full name or, with a study set, the part after 'study/')."""
        name = self._full(sweep)
        wanted = (status,) if isinstance(status, str) else status
        out = [
            r for r in self._records if r.sweep == name and (wanted is None or r.status in wanted)
        ]
        for seen in self._reads:
            seen.update(r.run_id for r in out)
        return out

    def status_counts(self, sweep: str) -> dict[str, int]:
        counts: dict[str, int] = {}
        for r in self.of(sweep, status=None):
            counts[r.status] = counts.get(r.status, 0) + 1
        return counts


@dataclass(frozen=True)
class Study(Generic[P]):
    name: str
    title: str
    paper: str
    protocol_note: str
    plans: Mapping[str, Plan[P]]
    sweeps: Callable[[Plan[P]], list[Sweep]]
    claims: Callable[[Plan[P]], list[Claim]]
    exhibits: Callable[[StudyResults, Plan[P]], list[Figure | Table | str]] = field(
        default=lambda results, plan: []
    )

    def plan(self, scale: str | None = None) -> Plan[P]:
        """The plan of `scale` (default: `quick` when the study has it, else its first plan)."""
        scale = self.default_scale if scale is None else scale
        check_choice("scale", scale, list(self.plans))
        return self.plans[scale]

    @property
    def default_scale(self) -> str:
        return DEFAULT_SCALE if DEFAULT_SCALE in self.plans else next(iter(self.plans))

    def estimate(self, plan: Plan[P]) -> str:
        n = sum(len(s.expand()) for s in self.sweeps(plan))
        return f"{n} runs" + (f"; {plan.cost}" if plan.cost else "")


__all__ = ["DEFAULT_SCALE", "SCALES", "Plan", "Study", "StudyResults"]
