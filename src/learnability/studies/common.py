"""What studies share: reading stored records, summarising numbers for notes and tables, building
paired observations, and the pre-engine revisions every built-in study keeps in its rules' history.
Bookkeeping only: statistics behind verdicts live in `learnability.stats`, judging in
`learnability.claims`."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, TypeVar

from learnability.claims import Obs, Revision, Rule

T = TypeVar("T")

PRE_ENGINE = "2026-11-29"  # the date of the built-in studies' pre-engine rules (stop 9)


def pre_engine(rule: Rule, rest: str = "", choices: Mapping[str, Any] | None = None) -> Revision:
    """A claim's pre-engine rule (stop 9), kept in its history: `rest` continues the sentence
    "pre-engine rule (stop 9)" (e.g. ": at most half the seeds learn it"); `choices` are the
    analysis choices under which that rule read the data."""
    return Revision(rule, PRE_ENGINE, "pre-engine rule (stop 9)" + rest, dict(choices or {}))


# -- reading records ------------------------------------------------------------------------------------
def metric(obj: Any, key: str) -> Any:
    """A dotted key of a record's metrics (or of a plain dict); None when any part is absent."""
    value: Any = obj.metrics if hasattr(obj, "metrics") else obj
    for part in key.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def num(value: Any) -> float:
    """A stored number as float: None and non-numbers → NaN, the strings "inf" / "-inf" → ±inf."""
    if isinstance(value, str) and value in ("inf", "-inf"):
        return float(value)
    if isinstance(value, bool):
        return float(value)
    return float(value) if isinstance(value, (int, float)) else math.nan


def finite(value: Any) -> float | None:
    """A stored number as float when it is a finite number (not a bool), else None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def group_by(items: Iterable[T], key: Callable[[T], Any]) -> dict[Any, list[T]]:
    """Items grouped by `key`, groups in sorted key order, items in their original order."""
    out: dict[Any, list[T]] = defaultdict(list)
    for item in items:
        out[key(item)].append(item)
    return dict(sorted(out.items()))


# -- summaries for notes and tables ---------------------------------------------------------------------
def _finite(values: Iterable[Any]) -> list[float]:
    return [float(v) for v in values if v is not None and math.isfinite(float(v))]


def mean(values: Iterable[Any]) -> float:
    """The mean of the finite values (NaN when there are none)."""
    xs = _finite(values)
    return statistics.fmean(xs) if xs else math.nan


def median(values: Iterable[Any]) -> float:
    """The median of the finite values (NaN when there are none)."""
    xs = _finite(values)
    return statistics.median(xs) if xs else math.nan


def spread(values: Iterable[Any], digits: int = 3) -> str:
    """ "mean [min–max] (n=k)" of the finite values; one value alone; "—" when there are none."""
    xs = _finite(values)
    if not xs:
        return "—"
    if len(xs) == 1:
        return f"{xs[0]:.{digits}f}"
    return f"{statistics.fmean(xs):.{digits}f} [{min(xs):.{digits}f}–{max(xs):.{digits}f}] (n={len(xs)})"


# -- observations ---------------------------------------------------------------------------------------
def paired(
    items: Iterable[T],
    unit: Callable[[T], Hashable],
    values: Mapping[str, Callable[[T], float]],
    x: Callable[[T], float | None] | None = None,
) -> list[Obs]:
    """One observation per item and group: `values` maps each group (the claim's group and its matched
    control) to how an item gives its value, so every unit appears in every group."""
    out = []
    for item in items:
        at = None if x is None else x(item)
        out += [Obs(unit(item), value(item), at, group) for group, value in values.items()]
    return out


__all__ = [
    "PRE_ENGINE", "finite", "group_by", "mean", "median", "metric", "num", "paired", "pre_engine",
    "spread",
]  # fmt: skip
