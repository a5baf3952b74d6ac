"""What a claim is judged on: observations tagged with their independent unit, and the frame that
collapses them to one value per unit before any statistics.

An `Obs` is one number from one run: `y`, optionally at a position `x` on a trend axis, in a `group`
(a task, a condition, "control"), from an independent `unit` (a seed, an initialisation, a model's
weights). Two observations with the same (group, x, unit) are not independent — the same weights
profiled under two eps values, say — and the `Frame` averages them into one cell before a rule sees
them, recording how many it merged.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Collection, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Unit = Hashable


@dataclass(frozen=True)
class Obs:
    """One observation. `censored` means the true y exceeds the recorded y (a budget ran out)."""

    unit: Unit
    y: float
    x: float | None = None
    group: str = ""
    censored: bool = False


@dataclass
class Evidence:
    """What a claim's evidence function hands to its rule.

    Exactly one of the short-circuits may be set: `missing` (nothing to judge: no finished runs),
    `pipeline` (a sanity baseline failed, so the pipeline, not the claim, is at fault), `vacuous`
    (the parameters alone decide the check) or `not_run` (this plan does not run the check at this
    scale: verdict "not run", counted apart). `notes` adds measured numbers to the claim's text;
    `details` is machine-readable and goes to claims.json as is. `control` is the control's measured
    value in words, for a control the rule does not read as a group (a same-balance probability, the
    other functions through the same pipeline); it is printed beside the measured value.
    """

    obs: list[Obs] = field(default_factory=list)
    missing: str | None = None
    pipeline: str | None = None
    vacuous: str | None = None
    not_run: str | None = None
    notes: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    control: str = ""


@dataclass(frozen=True)
class Row:
    unit: Unit
    x: float | None
    y: float
    censored: bool
    merged: int  # raw observations averaged into this cell


class Frame:
    """Observations collapsed to one row per (group, x, unit); the only view rules get."""

    def __init__(self, obs: Iterable[Obs]) -> None:
        cells: dict[tuple[str, Any, Unit], list[Obs]] = defaultdict(list)
        for o in obs:
            y = float(o.y) if o.y is not None else math.nan
            if not math.isfinite(y):
                continue  # a diverged run has no value; it is counted by the evidence, not here
            cells[(o.group, o.x, o.unit)].append(o)
        self._rows: dict[str, list[Row]] = defaultdict(list)
        self.merged = 0
        for (group, x, unit), members in cells.items():
            y = float(np.mean([m.y for m in members]))
            self._rows[group].append(
                Row(unit, x, y, all(m.censored for m in members), len(members))
            )
            self.merged += len(members) - 1

    def groups(self) -> list[str]:
        return sorted(self._rows)

    def rows(self, group: str) -> list[Row]:
        return list(self._rows.get(group, []))

    def values(self, group: str) -> np.ndarray:
        return np.asarray([r.y for r in self.rows(group)], dtype=float)

    def xy(self, group: str) -> tuple[np.ndarray, np.ndarray]:
        rows = [r for r in self.rows(group) if r.x is not None]
        return (
            np.asarray([r.x for r in rows], dtype=float),
            np.asarray([r.y for r in rows], dtype=float),
        )

    def units(self, group: str | None = None) -> set[Unit]:
        groups = [group] if group is not None else self.groups()
        return {r.unit for g in groups for r in self.rows(g)}

    def xs(self, group: str) -> list[float]:
        return sorted({r.x for r in self.rows(group) if r.x is not None})

    def cell_counts(self, group: str) -> dict[float | None, int]:
        """Distinct units per x (one entry, key None, when the group has no x)."""
        counts: dict[float | None, set[Unit]] = defaultdict(set)
        for r in self.rows(group):
            counts[r.x].add(r.unit)
        return {x: len(u) for x, u in counts.items()}

    def paired(self, a: str, b: str) -> tuple[np.ndarray, np.ndarray]:
        """Values of the (x, unit) cells present in both groups, aligned."""
        left = {(r.x, r.unit): r.y for r in self.rows(a)}
        right = {(r.x, r.unit): r.y for r in self.rows(b)}
        keys = [k for k in left if k in right]
        return (
            np.asarray([left[k] for k in keys], dtype=float),
            np.asarray([right[k] for k in keys], dtype=float),
        )

    def is_paired(self, a: str, b: str) -> bool:
        """True when the two groups share their units: at least two (x, unit) cells are measured
        both ways and the shared cells are at least half of each group's (a filter that drops a few
        runs of one group leaves the rest paired). The paired analysis then reads the shared cells
        only (`paired`); units seen in one group alone are left out of it."""
        return shares_units(
            {(r.x, r.unit) for r in self.rows(a)}, {(r.x, r.unit) for r in self.rows(b)}
        )


def shares_units(left: Collection[Any], right: Collection[Any]) -> bool:
    """Whether two groups' units (cells) overlap enough to be analysed as pairs (`Frame.is_paired`)."""
    a, b = set(left), set(right)
    if a and a == b:
        return True
    shared = len(a & b)
    return shared >= 2 and 2 * shared >= max(len(a), len(b))


def observe(
    records: Sequence[Any],
    y: str | Callable[[Any], float | None],
    *,
    unit: str | Callable[[Any], Unit] = "config.seed",
    x: str | Callable[[Any], float | None] | None = None,
    group: str | Callable[[Any], str] = "",
    censored: Callable[[Any], bool] | None = None,
) -> list[Obs]:
    """Observations from run records; each of y/unit/x/group is a dotted path or a function of a record.

    Dotted paths start at the record: 'config.task.n', 'metrics.test_acc'. A record whose y is missing
    (None) is skipped. A literal group name is given as a string without a dot.
    """
    out = []
    for r in records:
        yv = _pick(r, y)
        if yv is None:
            continue
        gv = group if isinstance(group, str) and "." not in group else _pick(r, group)
        out.append(
            Obs(
                unit=_pick(r, unit),
                y=float(yv),
                x=None if x is None else _pick(r, x),
                group=str(gv),
                censored=bool(censored(r)) if censored else False,
            )
        )
    return out


def _pick(record: Any, what: str | Callable[[Any], Any]) -> Any:
    if callable(what):
        return what(record)
    head, _, rest = what.partition(".")
    value: Any = record.get(head) if isinstance(record, dict) else getattr(record, head, None)
    for key in rest.split(".") if rest else []:
        if isinstance(value, dict):
            value = value.get(key)
        elif isinstance(value, (list, tuple)) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
        else:
            return None
    return value


__all__ = ["Evidence", "Frame", "Obs", "Row", "Unit", "observe"]
