"""Studies: a question declared as plans, sweeps, claims and exhibits — the four paper studies and any
study file a researcher writes (docs/STUDIES.md). Everything a study file needs imports from here:

    from learnability.studies import Study, Plan, Sweep, Claim, Choice, Units, Control, Rate, ...

- the declaration: `Study`, `Plan`, `StudyResults`, `Sweep`;
- the claims vocabulary (`learnability.claims`): `Claim`, `Choice`, `Alternative`, `Revision`,
  `Units`, `Control`, `no_control`, `Evidence`, `Obs`, the rules (`Mean`, `Rate`, `Contrast`,
  `Trend`, `CensoredTrend`, `BestFit`, `AllOf`), their bands (`above`, `below`, `within`) and
  `observe` (observations from records by dotted paths);
- exhibits as data (`learnability.report.panels`): `Figure`, `Panel`, `Series`, `Histogram`, `Matrix`,
  `Table`, `mean_series`, `grouped_series`;
- the helpers the studies share (`learnability.studies.common`): reading records (`num`, `metric`,
  `group_by`), summaries (`mean`, `spread`, `median`), `pre_engine` revisions, `paired` observations;
- `load_study_file(path)`: a researcher's file as a `Study`.

The built-in studies are found by name (`get_study`); each is a package laid out the same way
(`plan`, `sweeps`, `evidence`, `claims`, `exhibits`, `__init__` with `STUDY`; docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import importlib
from typing import Any

from learnability.claims import (
    AllOf,
    Alternative,
    Band,
    BestFit,
    CensoredTrend,
    Choice,
    Choices,
    Claim,
    Contrast,
    Control,
    Evidence,
    Mean,
    Obs,
    Rate,
    Regime,
    RegimeCheck,
    Revision,
    Rule,
    Trend,
    Units,
    above,
    below,
    no_control,
    observe,
    within,
)
from learnability.errors import check_choice
from learnability.report.panels import (
    Figure,
    Histogram,
    Matrix,
    Panel,
    Series,
    Table,
    grouped_series,
    mean_series,
)
from learnability.studies.base import Plan, Study, StudyResults
from learnability.studies.common import (
    PRE_ENGINE,
    group_by,
    mean,
    median,
    metric,
    num,
    paired,
    pre_engine,
    spread,
)
from learnability.studies.loader import load_study_file
from learnability.sweep.spec import Sweep

# name -> module defining `STUDY`; order is the report's order.
_MODULES = {
    "sensitivity": "learnability.studies.sensitivity",
    "volume": "learnability.studies.volume",
    "sparse_xor": "learnability.studies.sparse_xor",
    "random": "learnability.studies.random_transformers",
}


def builtin_studies() -> list[str]:
    """The built-in studies' names (imports nothing)."""
    return list(_MODULES)


def available_studies() -> list[str]:
    """Names of the studies whose module is present."""
    names = []
    for name, module in _MODULES.items():
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name == module:
                continue
            raise
        names.append(name)
    return names


def get_study(name: str) -> Study[Any]:
    check_choice("study", name, available_studies())
    return importlib.import_module(_MODULES[name]).STUDY


__all__ = [
    "PRE_ENGINE", "AllOf", "Alternative", "Band", "BestFit", "CensoredTrend", "Choice", "Choices",
    "Claim", "Contrast", "Control", "Evidence", "Figure", "Histogram", "Matrix", "Mean", "Obs", "Panel",
    "Plan", "Rate", "Regime", "RegimeCheck", "Revision", "Rule", "Series", "Study", "StudyResults", "Sweep", "Table", "Trend",
    "Units", "above", "available_studies", "below", "builtin_studies", "get_study", "group_by",
    "grouped_series", "load_study_file", "mean", "mean_series", "median", "metric", "no_control",
    "num", "observe", "paired", "pre_engine", "spread", "within",
]  # fmt: skip
