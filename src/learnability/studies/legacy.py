"""The study interface before the claims engine: a study with an `analyse` method that returns
hand-judged `ClaimResult`s. Kept only while the four studies move to declarations
(`learnability.studies.base`); the pipeline adapts these results to the engine's `ClaimResult`."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from learnability.errors import check_choice
from learnability.report.panels import Table
from learnability.studies.base import StudyResults

if TYPE_CHECKING:
    import matplotlib.figure

    from learnability.sweep.spec import Sweep

Scale = Literal["quick", "paper"]
SCALES: tuple[str, ...] = ("quick", "paper")
Verdict = Literal["reproduced", "not reproduced", "inconclusive"]
VERDICTS: tuple[str, ...] = ("reproduced", "not reproduced", "inconclusive")
__all__ = [
    "VERDICTS",
    "ClaimResult",
    "FigureRecord",
    "FigureSink",
    "LegacyStudy",
    "StudyResults",
    "Table",
]


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


class LegacyStudy(ABC):
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
