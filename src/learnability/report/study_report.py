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


__all__ = ["StudyReport"]
