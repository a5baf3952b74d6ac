"""A study's report as data: its judged claims, rendered figures, tables and notes (what
`learnability.report.html` writes out)."""

from __future__ import annotations

from dataclasses import dataclass, field

from learnability.claims import ClaimResult
from learnability.report.panels import Table
from learnability.report.render import FigureFile


@dataclass
class StudyReport:
    study: str
    title: str
    paper: str
    protocol_note: str
    scale: str
    claims: list[ClaimResult]
    figures: list[FigureFile] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    run_counts: dict[str, dict[str, int]] = field(default_factory=dict)
    seconds: float = 0.0
    error: str | None = None
    # the plan's distinct runs (a count, or a count per sweep) and how many of them are finished in
    # the store: fewer stored than expected is an incomplete study (an interrupted reproduce),
    # which the report's headline and `report` / `reproduce` say
    expected_runs: int | dict[str, int] | None = None
    runs_stored: int = 0
    # where the judged runs trained: "CPU model · torch version" -> runs (a run's last bits, and so a
    # verdict at its band's edge, can differ between machines)
    machines: dict[str, int] = field(default_factory=dict)

    @property
    def runs_expected(self) -> int:
        expected = self.expected_runs
        return sum(expected.values()) if isinstance(expected, dict) else int(expected or 0)

    @property
    def incomplete(self) -> bool:
        return self.runs_stored < self.runs_expected


__all__ = ["StudyReport"]
