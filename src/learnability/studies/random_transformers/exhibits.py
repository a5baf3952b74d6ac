"""Study `random`: every exhibit of a run, in report order (notes, tables and figures as `panels` data)."""

from __future__ import annotations

from learnability.report.panels import Figure, Table
from learnability.studies.base import Plan, StudyResults
from learnability.studies.random_transformers import exhibits_models as M
from learnability.studies.random_transformers import exhibits_tasks as T
from learnability.studies.random_transformers.plans import RandomParams, sizes


def exhibits(results: StudyResults, plan: Plan[RandomParams]) -> list[Figure | Table | str]:
    p = plan.params
    out: list[Figure | Table | str] = [f"{plan.scale.capitalize()} scale: {sizes(p)}."]
    for part in (
        T.accuracy,
        T.needle_by_m,
        T.decimal,
        T.ablation,
        M.memorisation,
        M.language,
        M.subspace,
        M.circuit,
        T.pictures,
    ):
        out += part(results, p)
    return out


__all__ = ["exhibits"]
