"""The paper studies, by name. Each module (or package) defines `STUDY`, a declarative `Study`."""

from __future__ import annotations

import importlib
from typing import Any

from learnability.errors import check_choice
from learnability.studies.base import Plan, Study, StudyResults

# name -> module defining `STUDY`; order is the report's order.
_MODULES = {
    "sensitivity": "learnability.studies.sensitivity",
    "volume": "learnability.studies.volume",
    "sparse_xor": "learnability.studies.sparse_xor",
    "random": "learnability.studies.random_transformers",
}


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


__all__ = ["Plan", "Study", "StudyResults", "available_studies", "get_study"]
