"""From stored runs to a study's report: pick the plan, read the records, judge every claim, draw the
exhibits. The CLI's `report` and `reproduce` call `analyse_study`; nothing here trains or plots by hand."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from learnability.claims import ClaimResult, evaluate
from learnability.report import render
from learnability.report.panels import Figure, Table
from learnability.report.study_report import StudyReport
from learnability.studies.base import SCALES, Plan, Study, StudyResults
from learnability.studies.legacy import FigureSink, LegacyStudy

AnyStudy = Study[Any] | LegacyStudy


def sweeps_of(study: AnyStudy, scale_or_plan: str | Plan[Any]) -> list[Any]:
    if isinstance(study, LegacyStudy):
        scale = scale_or_plan.scale if isinstance(scale_or_plan, Plan) else scale_or_plan
        return study.sweeps(scale)
    plan = scale_or_plan if isinstance(scale_or_plan, Plan) else study.plan(scale_or_plan)
    return study.sweeps(plan)


def run_ids(study: AnyStudy, scale_or_plan: str | Plan[Any]) -> set[str]:
    return {spec.run_id for sweep in sweeps_of(study, scale_or_plan) for spec in sweep.expand()}


def pick_scale(study: AnyStudy, store: Any) -> str:
    """The scale whose runs the store holds most of (quick first on ties)."""
    stored = {r.run_id for r in store.records(study=study.name)}
    hits = {scale: len(run_ids(study, scale) & stored) for scale in SCALES}
    return max(SCALES, key=lambda s: (hits[s], -SCALES.index(s)))


def analyse_study(
    study: AnyStudy,
    store: Any,
    scale: str | Plan[Any] | None,
    out_dir: Path,
    seconds: float = 0.0,
) -> StudyReport:
    """Judge a study's claims on its stored records and draw its exhibits into `out_dir/figures`."""
    t0 = time.perf_counter()
    if scale is None:
        scale = pick_scale(study, store)
    plan = scale if isinstance(scale, Plan) else None
    scale_name = plan.scale if plan is not None else str(scale)
    ids = run_ids(study, plan or scale_name)
    records = store.records(study=study.name, run_ids=ids)
    figures_dir = Path(out_dir) / "figures"
    if isinstance(study, LegacyStudy):
        report = _legacy(study, records, scale_name, figures_dir)
    else:
        plan = plan or study.plan(scale_name)
        report = analyse_records(study, records, plan, figures_dir)
    report.run_counts = _counts(records, sweeps_of(study, plan or scale_name))
    report.seconds = seconds or (time.perf_counter() - t0)
    return report


def analyse_records(
    study: Study[Any], records: list[Any], plan: Plan[Any], figures_dir: Path
) -> StudyReport:
    """The analysis proper, on records already read (tests call this with synthetic records)."""
    results = StudyResults(records, plan, study.name)
    claims = [
        evaluate(c, results, study.name, plan.scale, plan.note_for(c.slug))
        for c in study.claims(plan)
    ]
    report = StudyReport(
        study.name, study.title, study.paper, study.protocol_note, plan.scale, claims
    )
    for item in study.exhibits(results, plan):
        if isinstance(item, Figure):
            report.figures.append(render.save(item, figures_dir, study.name))
        elif isinstance(item, Table):
            report.tables.append(item)
        else:
            report.notes.append(str(item))
    for claim in claims:
        if claim.panel is not None:
            name = f"claim_{claim.id.split('/', 1)[1]}"
            caption = f"Claim '{claim.title}': the data its rule judged (mean and 95% interval per unit cell)."
            report.figures.append(
                render.save(Figure(name, caption, [claim.panel]), figures_dir, study.name)
            )
            claim.figure = name
    return report


def _counts(records: list[Any], sweeps: list[Any]) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {s.name: {} for s in sweeps}
    for r in records:
        bucket = counts.setdefault(r.sweep, {})
        bucket[r.status] = bucket.get(r.status, 0) + 1
    return counts


def _legacy(study: LegacyStudy, records: list[Any], scale: str, figures_dir: Path) -> StudyReport:
    """Adapt a pre-engine study: its hand-judged verdicts are marked as such, never robust."""
    sink = FigureSink(figures_dir, study.name)
    old = study.analyse(StudyResults(records, scale, study.name), sink)
    claims = []
    for i, c in enumerate(old):
        claims.append(
            ClaimResult(
                id=f"{study.name}/legacy-{i + 1}",
                title=c.claim,
                statement=c.claim,
                paper_statement=c.paper_statement,
                verdict=c.verdict,
                rule={
                    "id": f"{study.name}/legacy-{i + 1}:legacy",
                    "version": 0,
                    "text": "hand-written rule inside `measured` (pre-engine study)",
                },
                control={"name": "none", "value": "none: pre-engine study declares no control"},
                units={"kind": "run", "count": 0, "min_per_cell": 1, "note": ""},
                robustness=[],
                robust=False,
                history=[],
                scale=c.scale,
                scale_note="",
                measured=c.measured,
                details=c.details,
            )
        )
    figures = [render.FigureFile(f.name, f.caption, f.png, f.pdf) for f in sink.figures]
    return StudyReport(
        study.name, study.title, study.paper, study.protocol_note, scale, claims, figures,
        sink.tables, sink.notes,
    )  # fmt: skip


def error_report(study: AnyStudy, scale: str, message: str, seconds: float) -> StudyReport:
    return StudyReport(
        study.name, getattr(study, "title", study.name), getattr(study, "paper", ""),
        getattr(study, "protocol_note", ""), scale, [], notes=[message], seconds=seconds, error=message,
    )  # fmt: skip


__all__ = [
    "StudyReport",
    "analyse_records",
    "analyse_study",
    "error_report",
    "pick_scale",
    "run_ids",
]
