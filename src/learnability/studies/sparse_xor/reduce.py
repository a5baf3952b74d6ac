"""From a record to the quantity a claim judges: success at each step size under a criterion, the
smallest working step size, m*, n*, the FFNN's smallest width. Bookkeeping only: no statistics here (the
claims' rules do that through `learnability.stats`)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from learnability.models.two_head_steps import Criterion
from learnability.studies.sparse_xor.params import SEED_FRACTION, SUCCESS

Record = Any  # a stored run: .config, .metrics, .status, .sweep, .run_id


def criterion(choices: Mapping[str, Any]) -> Criterion:
    """The success criterion under a claim's choices (its defaults are the study's `SUCCESS`)."""
    return Criterion(
        float(choices.get("success_loss", SUCCESS.loss)),
        float(choices.get("success_mass", SUCCESS.mass)),
    )


def succeeded(loss: Sequence[float | None], spec: Sequence[float], crit: Criterion) -> list[bool]:
    """Success at each grid point; a missing (non-finite) loss is a failure."""
    return [
        loss_i is not None and loss_i <= crit.loss and spec_i >= crit.mass
        for loss_i, spec_i in zip(loss, spec)
    ]


def draw(r: Record) -> str:
    """The independent unit: one seed's draw (embeddings, initial θ, support) at one d."""
    return f"d={r.config['d']}/seed={r.config['seed']}"


@dataclass(frozen=True)
class Window:
    """Where one draw's step succeeds on the grid (log10 units of the grid): the smallest and largest
    working step size, whether the working set is one interval, and whether it reaches the grid's top."""

    lo: float | None
    hi: float | None
    contiguous: bool
    open_top: bool

    @property
    def decades(self) -> float | None:
        return None if self.lo is None or self.hi is None else self.hi - self.lo


def window(ok: Sequence[bool], grid: Sequence[float]) -> Window:
    idx = [i for i, v in enumerate(ok) if v]
    if not idx:
        return Window(None, None, True, False)
    contiguous = idx[-1] - idx[0] + 1 == len(idx)
    return Window(grid[idx[0]], grid[idx[-1]], contiguous, idx[-1] == len(ok) - 1)


def shared_index(success: Sequence[Sequence[bool]]) -> int | None:
    """The grid point where most draws succeed (one step size for all of them): the centre of the longest
    run of grid points reaching the maximum count (robust to a plateau); None when no draw succeeds."""
    if not success:
        return None
    counts = [sum(col) for col in zip(*success)]
    top = max(counts)
    if top == 0:
        return None
    best: tuple[int, int] = (0, 0)  # (length, start) of the longest run at the maximum
    start = None
    for i, c in enumerate([*counts, -1]):
        if c == top and start is None:
            start = i
        elif c != top and start is not None:
            best = max(best, (i - start, -start))
            start = None
    length, neg_start = best
    return -neg_start + (length - 1) // 2


# -- m* ------------------------------------------------------------------------------------------------------
def m_fractions(
    records: Sequence[Record], crit: Criterion, shared: bool = True
) -> dict[int, float]:
    """For the draws (seeds) of one d: the fraction that succeeds at each m — at one step size shared
    by all seeds (`shared`) or at each draw's own best step size."""
    out: dict[int, float] = {}
    if not records:
        return out
    grid_m = records[0].metrics["m_grid"]
    for j, m in enumerate(grid_m):
        ok = [succeeded(r.metrics["loss"][j], r.metrics["spec"][j], crit) for r in records]
        if shared:
            i = shared_index(ok)
            out[m] = 0.0 if i is None else sum(o[i] for o in ok) / len(ok)
        else:
            out[m] = sum(any(o) for o in ok) / len(ok)
    return out


def m_star(
    fractions: Mapping[int, float], tau: float = SEED_FRACTION, rule: str = "stays"
) -> int | None:
    """The smallest m whose fraction reaches tau — `stays`: and every larger m on the grid too (a lucky
    small m does not count); `first`: the first m that reaches it. None: no m on the grid does."""
    ms = sorted(fractions)
    for k, m in enumerate(ms):
        if fractions[m] >= tau and (rule == "first" or all(fractions[x] >= tau for x in ms[k:])):
            return m
    return None


def by_d(records: Sequence[Record]) -> dict[int, list[Record]]:
    out: dict[int, list[Record]] = defaultdict(list)
    for r in records:
        out[int(r.config["d"])].append(r)
    return dict(sorted(out.items()))


# -- n* ------------------------------------------------------------------------------------------------------
def n_star(rows: Sequence[Mapping[str, Any]], crit: Criterion, rule: str = "stable") -> int | None:
    """The smallest n at which the finite-sample step succeeds — `stable`: and at every larger n the ladder
    evaluated; `first`: the first success. None: no n on the ladder (censored at the budget)."""
    ok = [r["loss"] is not None and r["loss"] <= crit.loss and r["spec"] >= crit.mass for r in rows]
    for k, row in enumerate(rows):
        if ok[k] and (rule == "first" or all(ok[k:])):
            return int(row["n"])
    return None


def population_ok(r: Record, crit: Criterion) -> bool:
    return any(succeeded(r.metrics["population_loss"], r.metrics["population_spec"], crit))


# -- FFNN ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Width:
    d: int
    width: int | None  # smallest width reaching the seed fraction (None: none on the grid)
    params: int | None  # its trainable parameters
    fractions: dict[int, float]  # width -> fraction of seeds with test MSE ≤ the loss threshold
    seeds: int


def ffnn_widths(records: Sequence[Record], loss_max: float, tau: float) -> list[Width]:
    """Per d: the smallest width whose seeds reach test MSE ≤ loss_max in a fraction ≥ tau (and every
    larger width too). A run that diverged counts as a failure."""
    cells: dict[int, dict[int, list[Record]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        cells[int(r.config["task"]["n"])][int(r.config["model"]["width"])].append(r)
    out = []
    for d, widths in sorted(cells.items()):
        frac = {}
        for w, rs in sorted(widths.items()):
            hits = [_num(r.metrics.get("test_loss")) <= loss_max for r in rs if r.status == "ok"]
            frac[w] = sum(hits) / len(rs)
        best = m_star(frac, tau, "stays")
        params = None
        if best is not None:
            params = int(widths[best][0].metrics.get("trainable_params") or best * (d + 2) + 1)
        out.append(Width(d, best, params, frac, min(len(rs) for rs in widths.values())))
    return out


def _num(v: Any) -> float:
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else math.inf


__all__ = [
    "Width", "Window", "by_d", "criterion", "draw", "ffnn_widths", "m_fractions", "m_star", "n_star",
    "population_ok", "shared_index", "succeeded", "window",
]  # fmt: skip
