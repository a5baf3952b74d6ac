"""From stored runs to a study's report: pick the plan, read the records, judge every claim, draw the
exhibits. The CLI's `report` and `reproduce` call `analyse_study`; nothing here trains or plots by hand."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from learnability.claims import evaluate
from learnability.paths import check_file_name
from learnability.report import render
from learnability.report.panels import Figure, Table
from learnability.report.study_report import StudyReport
from learnability.studies import adaptive
from learnability.studies.base import Plan, Study, StudyResults


def sweeps_of(study: Study[Any], scale_or_plan: str | Plan[Any]) -> list[Any]:
    plan = scale_or_plan if isinstance(scale_or_plan, Plan) else study.plan(scale_or_plan)
    return study.sweeps(plan)


def run_ids(study: Study[Any], scale_or_plan: str | Plan[Any]) -> set[str]:
    return {spec.run_id for sweep in sweeps_of(study, scale_or_plan) for spec in sweep.expand()}


def pick_scale(study: Study[Any], store: Any) -> str:
    """The scale whose runs the store holds most of (the default scale first on ties, then the
    order the study declares its plans in)."""
    stored = {r.run_id for r in store.records(study=study.name)}
    order = [study.default_scale, *(s for s in study.plans if s != study.default_scale)]
    hits = {scale: len(run_ids(study, scale) & stored) for scale in order}
    return max(order, key=lambda s: (hits[s], -order.index(s)))


def analyse_study(
    study: Study[Any],
    store: Any,
    scale: str | Plan[Any] | None,
    out_dir: Path,
    seconds: float = 0.0,
) -> StudyReport:
    """Judge a study's claims on its stored records and draw its exhibits into `out_dir/figures`."""
    t0 = time.perf_counter()
    if scale is None:
        scale = pick_scale(study, store)
    plan = scale if isinstance(scale, Plan) else study.plan(scale)
    # the runs `reproduce --budget` added (none without a design), judged by its sequential design
    expected = run_ids(study, plan)
    ids = expected | adaptive.added_run_ids(store, study, plan)
    records = store.records(study=study.name, run_ids=ids)
    design = adaptive.design(store, study, plan, records)
    report = analyse_records(study, records, plan, Path(out_dir) / "figures", design)
    report.run_counts = _counts(records, sweeps_of(study, plan))
    # the plan's runs, and how many are finished: fewer is an incomplete study (its headline says so)
    report.expected_runs = len(expected)
    report.runs_stored = sum(r.status != "running" and r.run_id in expected for r in records)
    report.machines = machines_of(records)
    report.seconds = seconds or (time.perf_counter() - t0)
    return report


def analyse_records(
    study: Study[Any],
    records: list[Any],
    plan: Plan[Any],
    figures_dir: Path,
    sequential: Any = None,
) -> StudyReport:
    """The analysis proper, on records already read (tests call this with synthetic records)."""
    results = StudyResults(records, plan, study.name)
    claims = [
        evaluate(c, results, study.name, plan.scale, plan.note_for(c.slug), sequential)
        for c in study.claims(plan)
    ]
    report = StudyReport(
        study.name, study.title, study.paper, study.protocol_note, plan.scale, claims
    )
    for item in study.exhibits(results, plan):
        if isinstance(item, Figure):
            # a study file's figure name becomes a file name: nothing that writes outside figures/
            check_file_name(f"study {study.name!r}: figure name", item.name)
            report.figures.append(render.save(item, figures_dir, study.name))
        elif isinstance(item, Table):
            report.tables.append(item)
        else:
            report.notes.append(str(item))
    for claim in claims:
        if claim.panel is not None:
            name = f"claim_{claim.id.split('/', 1)[1]}"
            caption = (
                f"Claim '{claim.title}': the estimates its rule judged, with its bands and control."
            )
            report.figures.append(
                render.save(Figure(name, caption, [claim.panel]), figures_dir, study.name)
            )
            claim.figure = name
    return report


def machines_of(records: list[Any]) -> dict[str, int]:
    """Finished runs per machine they trained on ("CPU model · torch version"; runs stored before the
    CPU was recorded count as "CPU not recorded")."""
    out: dict[str, int] = {}
    for r in records:
        if r.status == "running":
            continue
        v = r.versions or {}
        key = f"{v.get('cpu', 'CPU not recorded')} · torch {v.get('torch', '?')}"
        out[key] = out.get(key, 0) + 1
    return out


def _counts(records: list[Any], sweeps: list[Any]) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {s.name: {} for s in sweeps}
    for r in records:
        bucket = counts.setdefault(r.sweep, {})
        bucket[r.status] = bucket.get(r.status, 0) + 1
    return counts


def error_report(study: Study[Any], scale: str, message: str, seconds: float) -> StudyReport:
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
