"""What a study is: a declaration of sweeps to run, and an analysis that turns their records into
figures and claim verdicts. Studies never carry their own training loop, data path or plotting code."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from learnability.errors import check_choice

if TYPE_CHECKING:
    import matplotlib.figure

    from learnability.sweep.spec import Sweep
    from learnability.sweep.store import RunRecord

Scale = Literal["quick", "paper"]
SCALES: tuple[str, ...] = ("quick", "paper")
Verdict = Literal["reproduced", "not reproduced", "inconclusive"]
VERDICTS: tuple[str, ...] = ("reproduced", "not reproduced", "inconclusive")


@dataclass
class ClaimResult:
    """One row of a study's claims table."""

    claim: str  # short name, e.g. "PARITY sharpness grows with n"
    paper_statement: str  # what the paper says
    measured: str  # what was measured: numbers, seeds, confidence intervals
    verdict: Verdict
    scale: str  # the scale it was checked at ("quick" / "paper")
    details: dict[str, Any] = field(
        default_factory=dict
    )  # machine-readable numbers behind `measured`

    def __post_init__(self) -> None:
        check_choice("verdict", self.verdict, VERDICTS)


@dataclass
class FigureRecord:
    name: str
    caption: str
    png: Path
    pdf: Path


@dataclass
class Table:
    """A small table for the report (e.g. an accuracy table, greedy text samples)."""

    title: str
    columns: list[str]
    rows: list[list[Any]]
    caption: str = ""


class FigureSink:
    """Where a study's analysis puts its figures: each is saved as PNG and PDF under `out_dir`."""

    def __init__(self, out_dir: Path, prefix: str) -> None:
        self.out_dir = Path(out_dir)
        self.prefix = prefix
        self.figures: list[FigureRecord] = []
        self.tables: list[Table] = []
        self.notes: list[str] = []

    def add(self, name: str, figure: matplotlib.figure.Figure, caption: str) -> FigureRecord:
        import matplotlib.pyplot as plt

        self.out_dir.mkdir(parents=True, exist_ok=True)
        stem = f"{self.prefix}_{name}"
        png, pdf = self.out_dir / f"{stem}.png", self.out_dir / f"{stem}.pdf"
        figure.savefig(png, dpi=130, bbox_inches="tight")
        figure.savefig(pdf, bbox_inches="tight")
        plt.close(figure)
        record = FigureRecord(name=name, caption=caption, png=png, pdf=pdf)
        self.figures.append(record)
        return record

    def table(self, table: Table) -> None:
        self.tables.append(table)

    def note(self, text: str) -> None:
        self.notes.append(text)


class StudyResults:
    """The finished records of a study's sweeps, grouped by sweep name."""

    def __init__(self, records: list[RunRecord], scale: str) -> None:
        self.scale = scale
        self.records = records

    def of(self, sweep: str, status: str | None = "ok") -> list[RunRecord]:
        """Records of one sweep (by its full name), optionally only those with the given status."""
        return [
            r for r in self.records if r.sweep == sweep and (status is None or r.status == status)
        ]

    def status_counts(self, sweep: str) -> dict[str, int]:
        counts: dict[str, int] = {}
        for r in self.of(sweep, status=None):
            counts[r.status] = counts.get(r.status, 0) + 1
        return counts


@dataclass
class StudyReport:
    study: str
    title: str
    paper: str
    protocol_note: str
    scale: str
    claims: list[ClaimResult]
    figures: list[FigureRecord]
    tables: list[Table]
    notes: list[str]
    run_counts: dict[str, dict[str, int]]
    seconds: float = 0.0


class Study(ABC):
    """A paper reproduction, declared: what to run (`sweeps`) and what it shows (`analyse`)."""

    name: str
    title: str
    paper: str
    protocol_note: str = ""

    @abstractmethod
    def sweeps(self, scale: str) -> list[Sweep]:
        """The sweeps to run at `scale` ("quick" or "paper"). Sweep names start with f"{self.name}/"."""

    @abstractmethod
    def analyse(self, results: StudyResults, out: FigureSink) -> list[ClaimResult]:
        """Draw the figures into `out` and return one ClaimResult per claim."""

    def estimate(self, scale: str) -> str:
        """A human-readable cost estimate printed before a run (override for expensive scales)."""
        n = sum(len(s.expand()) for s in self.sweeps(scale))
        return f"{n} runs"
