"""Stored runs as a pandas DataFrame, column look-up by short names, and "learned in k of m units".

    import learnability
    df = learnability.results(sweep="demo/parity_scaling")           # ./results, every status
    df.groupby("config.task.n")["metrics.sharpness"].mean()
    learnability.rate(3, 5)                 # Rate(k=3, m=5, value=0.6, lo=0.231, hi=0.882)
    learnability.rates(df, by=["config.task.function", "config.task.n"], success="metrics.converged")

`results(...)` has one row per run and the columns of `learnability results`: run_id, study, sweep, job,
status, seed, seconds, attempts, error, then the resolved config as `config.<dotted key>` and the job's
metrics as `metrics.<dotted key>` (nested mappings become dotted columns; lists stay Python lists, e.g.
`metrics.history` is a list of row dicts and `metrics.model_counts` a list of ints). Metrics a job stored as
"inf" / "-inf" (JSON has no infinity) come back as floats; a missing value is None / NaN.

`column(frame, name)` finds a column by its full name or by a unique dotted suffix (`n` → `config.task.n`,
`sharpness` → `metrics.sharpness`), with a one-line error naming near matches or the candidates.

`rate(k, m)` is a proportion with its 95% Wilson interval (`learnability.stats.proportion`); `rates(frame,
by, success)` counts, per group, the runs that succeeded — each run one independent unit, and a group
holding two runs of the same unit (`unit`, default the run's seed) is refused rather than counted twice.
"""

from __future__ import annotations

import difflib
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from learnability.errors import UserError, check_choice, did_you_mean
from learnability.paths import check_regular_file
from learnability.report.panels import Figure, Panel, Series, SeriesKind, mean_series
from learnability.stats import proportion

BASE_COLUMNS = ("run_id", "study", "sweep", "job", "status", "seed", "seconds", "attempts", "error")
# a run's config or metrics nested deeper than this is not what a job returns but a damaged or
# planted store row: refused in one line rather than recursed into (Python's stack ends near 1,000)
MAX_DEPTH = 100


# -- the frame ------------------------------------------------------------------------------------------
def check_nesting(value: Any, what: str) -> None:
    """UserError when `value` (a run's config or metrics) nests lists or mappings more than
    `MAX_DEPTH` levels deep. Walked without recursion, so any depth is measured safely."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            if depth > MAX_DEPTH:
                raise UserError(
                    f"{what} is nested more than {MAX_DEPTH} levels deep; learnability reads at "
                    "most that many (a damaged or foreign store row?): delete that run, or use "
                    "another --results folder"
                )
            children = node.values() if isinstance(node, dict) else node
            stack.extend((child, depth + 1) for child in children)


def read_records(store: Any, **filters: Any) -> list[Any]:
    """`store.records(**filters)`, each run's config and metrics checked by `check_nesting`: a row
    too deep for the JSON reader itself is the same one-line error."""
    try:
        records = store.records(**filters)
    except RecursionError:
        raise UserError(
            f"the results store {str(getattr(store, 'path', ''))!r} holds a run whose JSON is nested "
            f"more than {MAX_DEPTH} levels deep (a damaged or foreign store row?); delete that "
            "run, or use another --results folder"
        ) from None
    for r in records:
        check_nesting(r.config, f"run {r.run_id!r}: its config")
        check_nesting(r.metrics, f"run {r.run_id!r}: its metrics")
    return records


def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, dict) and value:
        for k, v in value.items():
            _flatten(f"{prefix}.{k}", v, out)
    else:
        out[prefix] = value


def _number(value: Any) -> Any:
    # a job's metrics keep ±inf as text (see learnability.jsonsafe): give the number back
    if isinstance(value, str) and value in ("inf", "-inf"):
        return float(value)
    return value


def frame(records: Sequence[Any]) -> pd.DataFrame:
    """The DataFrame of store records (`Store.records`): the columns of the module docstring."""
    rows: list[dict[str, Any]] = []
    config_cols: dict[str, None] = {}
    metric_cols: dict[str, None] = {}
    for r in records:
        row = {k: getattr(r, k, None) for k in BASE_COLUMNS}
        flat_config: dict[str, Any] = {}
        flat_metrics: dict[str, Any] = {}
        _flatten("config", r.config or {}, flat_config)
        _flatten("metrics", r.metrics or {}, flat_metrics)
        flat_config.pop("config", None)  # an empty config
        flat_metrics.pop("metrics", None)
        row.update(flat_config)
        row.update({k: _number(v) for k, v in flat_metrics.items()})
        config_cols.update(dict.fromkeys(flat_config))
        metric_cols.update(dict.fromkeys(flat_metrics))
        rows.append(row)
    columns = [*BASE_COLUMNS, *config_cols, *metric_cols]
    # object columns keep lists as lists; pandas infers numbers where a column holds only numbers
    df = pd.DataFrame.from_records(rows, columns=columns)
    return df.infer_objects()


def results(
    sweep: str | None = None,
    study: str | None = None,
    status: str | None = None,
    results: str | Path = "results",
) -> pd.DataFrame:
    """Stored runs of the results directory `results` (default ./results) as a DataFrame, optionally only
    those of one sweep, one study or one status (ok, failed, diverged, running). An unknown sweep or
    study, or a folder without a store, is a UserError naming what there is."""
    from learnability.sweep.store import STATUSES, open_existing

    if status is not None:
        check_choice("status", status, STATUSES)
    store_file = Path(results) / "learnability.db"
    if os.path.lexists(store_file):  # a FIFO there would make SQLite wait forever
        check_regular_file(store_file, "results store", "a folder holding a learnability.db")
    with open_existing(results) as store:
        if sweep is not None and sweep not in store.sweeps():
            _unknown("sweep", sweep, store.sweeps(), results)
        if study is not None and study not in store.studies():
            _unknown("study", study, store.studies(), results)
        records = read_records(store, sweep=sweep, study=study, status=status)
    return frame(records)


def _unknown(what: str, name: str, known: list[str], where: str | Path) -> None:
    listed = ", ".join(known[:20]) + (f" (+{len(known) - 20} more)" if len(known) > 20 else "")
    raise UserError(
        f"no {what} {name!r} in the store at {str(where)!r}{did_you_mean(name, known)}; "
        f"stored: {listed or 'none'}"
    )


# -- columns by short name ---------------------------------------------------------------------------------
def column(df: pd.DataFrame, name: str, what: str = "column") -> str:
    """The column `name` names: itself, or the one column whose dotted name ends in `.name`
    (`n` → `config.task.n`, `task.n` → `config.task.n`). UserError for none or several."""
    columns = [str(c) for c in df.columns]
    if name in columns:
        return name
    hits = [c for c in columns if c.endswith("." + name)]
    if len(hits) == 1:
        return hits[0]
    if len(hits) > 1:
        raise UserError(
            f"{what} {name!r} is ambiguous: {', '.join(hits)}; give the full name of one of them"
        )
    near = _near(name, columns)
    raise UserError(
        f"unknown {what} {name!r}; "
        + (f"near matches: {', '.join(near)}" if near else f"columns: {', '.join(columns[:12])}")
    )


def _near(name: str, columns: list[str]) -> list[str]:
    """Columns whose full name or last part looks like `name` (best first, at most 5)."""
    last = {c: c.rsplit(".", 1)[-1] for c in columns}
    score = {
        c: max(
            difflib.SequenceMatcher(None, name, c).ratio(),
            difflib.SequenceMatcher(None, name, last[c]).ratio(),
            0.9 if name in c else 0.0,
        )
        for c in columns
    }
    return [c for c in sorted(columns, key=lambda c: -score[c]) if score[c] >= 0.6][:5]


# -- learned in k of m units -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Rate:
    """k successes of m independent units: the proportion and its 95% Wilson interval."""

    k: int
    m: int
    value: float
    lo: float
    hi: float

    def __str__(self) -> str:
        if self.m == 0:
            return "no units"
        return (
            f"{self.k} of {self.m} units ({100 * self.value:.0f}%, 95% CI "
            f"{100 * self.lo:.0f}–{100 * self.hi:.0f}%)"
        )


def rate(k: int, m: int) -> Rate:
    """k of m independent units succeeded: the proportion k/m with its 95% Wilson interval."""
    if isinstance(k, bool) or isinstance(m, bool) or int(k) != k or int(m) != m:
        raise UserError(f"rate({k!r}, {m!r}): give whole numbers of units")
    k, m = int(k), int(m)
    if m < 0 or not 0 <= k <= m:
        raise UserError(f"rate({k}, {m}) is not allowed; need 0 ≤ k ≤ m")
    if m == 0:
        return Rate(0, 0, math.nan, math.nan, math.nan)
    e = proportion(k, m)
    return Rate(k, m, e.value, e.lo, e.hi)


Success = str | Callable[[pd.DataFrame], Any]


def rates(
    df: pd.DataFrame,
    by: str | Sequence[str],
    success: Success,
    unit: str = "seed",
) -> pd.DataFrame:
    """Per group of `by` (column names, short names allowed), how many units succeeded: columns
    by..., k, m, rate, lo, hi (95% Wilson). `success` is a column of booleans / 0-1 values (e.g.
    "converged") or a function of the frame returning one (e.g. `lambda d: d["metrics.test_acc"] >= 0.99`).
    Each row is one unit; two rows of one group with the same `unit` value (the same seed under other
    settings) would count one unit twice, so they are a UserError: group by the setting that differs."""
    keys = [column(df, b, "group column") for b in ([by] if isinstance(by, str) else list(by))]
    if callable(success):
        hit = pd.Series(success(df), index=df.index)
    else:
        hit = df[column(df, success, "success column")]
    values = set(hit.dropna().unique().tolist())
    if not values <= {0, 1}:  # (True == 1 and False == 0)
        shown = ", ".join(repr(v) for v in sorted(values, key=str)[:4])
        raise UserError(f"success must be booleans or 0/1 per run; got {shown}")
    unit_col = column(df, unit, "unit column") if unit else None
    work = df[keys].copy()
    work["_hit"] = hit.astype("float")
    work["_unit"] = df[unit_col] if unit_col else range(len(df))
    rows = []
    for group, part in work.groupby(keys, sort=True, dropna=False):
        part = part[part["_hit"].notna()]
        dup = part["_unit"][part["_unit"].duplicated()]
        if len(dup):
            label = ", ".join(
                f"{_short(k)}={_key(v)}"
                for k, v in zip(keys, group if isinstance(group, tuple) else (group,))
            )
            raise UserError(
                f"group {label} holds two runs of unit {unit_col}={_key(dup.iloc[0])!r}: they differ in a "
                "setting not in `by`; add it to `by` (or filter the frame) so each unit counts once"
            )
        r = rate(int(part["_hit"].sum()), len(part))
        rows.append(
            [*(group if isinstance(group, tuple) else (group,)), r.k, r.m, r.value, r.lo, r.hi]
        )
    return pd.DataFrame(rows, columns=[*keys, "k", "m", "rate", "lo", "hi"])


# -- a figure of any sweep -----------------------------------------------------------------------------------
@dataclass
class SweepFigure:
    """What `sweep_figure` builds: the figure, the x categories (None for numeric x) and counts."""

    figure: Figure
    xcategories: list[str] | None
    runs: int
    units: int


def _numbers(df: pd.DataFrame, col: str) -> tuple[pd.Series, bool]:
    """(the column as floats, whether it is Boolean); UserError when it holds anything but numbers."""
    values = df[col]
    if pd.api.types.is_bool_dtype(values):
        return values.astype("float64"), True
    if pd.api.types.is_numeric_dtype(values):
        return values.astype("float64"), False
    present = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    odd = [v for v in present if not isinstance(v, (bool, int, float, np.number, np.bool_))]
    if odd:
        shown = repr(odd[0]) if len(repr(odd[0])) <= 40 else repr(odd[0])[:37] + "..."
        raise UserError(
            f"--y {col!r} holds {type(odd[0]).__name__} values (e.g. {shown}), not numbers; "
            "choose a numeric column"
        )
    boolean = bool(present) and all(isinstance(v, (bool, np.bool_)) for v in present)
    numbers = [math.nan if v is None else _float(v) for v in values]
    return pd.Series(numbers, index=values.index, dtype="float64"), boolean


def _float(value: Any) -> float:
    try:
        return float(value)
    except OverflowError:  # an integer beyond any float: as far off the axis as infinity
        return math.inf if value > 0 else -math.inf


def _key(value: Any) -> Any:
    # lists (a freeze spec) and dicts are settings too: group them by their text; numpy scalars
    # (what pandas hands out) become plain numbers, so 8 and 8.0 sort and compare as numbers
    if isinstance(value, (list, dict)):
        return str(value)
    if isinstance(value, (np.generic,)):
        return value.item()
    return value


def sweep_figure(
    df: pd.DataFrame,
    x: str,
    y: str,
    hue: str | None = None,
    by: str = "mean-ci",
    unit: str = "seed",
    logx: bool = False,
    logy: bool = False,
    title: str = "",
) -> SweepFigure:
    """One panel of `y` against `x` (short column names allowed), one colour per `hue` value: with
    by="mean-ci" the mean over independent units (`unit`, default the run's seed) with a 95% interval
    (t for numbers, Wilson for a Boolean y such as converged), with by="seed" one line per unit.
    Two runs of one unit at one (hue, x) point differ in a setting not on the plot: a UserError names it
    (pick it as hue, or filter the frame), so no point averages over conditions."""
    check_choice("--by", by, ("mean-ci", "seed"))
    if df.empty:
        raise UserError("there are no runs to plot")
    xc, yc = column(df, x, "--x column"), column(df, y, "--y column")
    hc = column(df, hue, "--hue column") if hue else None
    uc = column(df, unit, "unit column") if unit else None
    ys, boolean = _numbers(df, yc)
    work = pd.DataFrame(
        {
            "x": df[xc].map(_key),
            "y": ys,
            "hue": df[hc].map(_key) if hc else "",
            "unit": df[uc] if uc and df[uc].notna().any() else df["run_id"],
        }
    )
    keep = work["y"].notna() & work["x"].notna()
    if not keep.any():
        raise UserError(f"no run has both {xc!r} and a number in {yc!r}")
    work, rest = work[keep], df[keep]
    # an infinite value has no place on an axis (and makes a mean infinite): such runs are left
    # out and counted in the caption; a plot with nothing finite left is refused
    finite = work["y"].map(math.isfinite) & work["x"].map(_finite_or_category)
    left_out = int((~finite).sum())
    if not finite.any():
        raise UserError(
            f"every run's {yc!r} or {xc!r} is infinite ({left_out} runs): there is nothing to "
            "draw; choose another column"
        )
    work, rest = work[finite], rest[finite]
    _one_run_per_unit(work, rest, xc, hc)
    xs = sorted(set(work["x"]), key=_order)
    categorical = not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in xs)
    _check_log_axes(work, xc, yc, logx, logy, categorical)
    position = {v: float(i) for i, v in enumerate(xs)} if categorical else None
    groups = sorted(set(work["hue"]), key=_order)
    series: list[Series] = []
    for i, g in enumerate(groups):
        part = work[work["hue"] == g].copy()
        if position is not None:  # side by side around each category, so intervals do not hide
            dodge = 0.25 * (i - (len(groups) - 1) / 2) / max(len(groups), 1)
            part["x"] = part["x"].map(position) + dodge
        label = _drawn(f"{_short(hc)} = {g}") if hc else None
        color = f"C{i % 10}"
        if by == "mean-ci":
            # categories are not a continuum: points with error bars, not joined up
            kind: SeriesKind = "points" if categorical else "line"
            series.append(mean_series(zip(part["x"], part["y"]), label, kind, color, boolean))
            continue
        lines = sorted(part.groupby("unit"), key=lambda t: _order(t[0]))
        for j, (_, one) in enumerate(lines):
            one = one.sort_values("x")
            series.append(
                Series(label if j == 0 else None, list(one["x"]), list(one["y"]), color=color)
            )
    units = int(work["unit"].nunique())
    what = "Wilson" if boolean else "t"
    how = (
        f"mean ± 95% CI ({what}) over independent units ({_short(uc) if uc else 'runs'})"
        if by == "mean-ci"
        else f"one line per unit ({_short(uc) if uc else 'run'})"
    )
    panel = Panel(
        _drawn(title or f"{yc} vs {xc}"), _drawn(_short(xc)), _drawn(_short(yc)), series=series,
        logx=logx, logy=logy,
        ylim=(0.0, 1.0) if boolean and not logy else None,
        xticks=[float(i) for i in range(len(xs))] if categorical else None,
    )  # fmt: skip
    caption = f"{len(work)} runs, {units} units; {how}."
    if left_out:
        caption += f" {left_out} runs with an infinite {_short(yc)} or {_short(xc)} left out."
    name = "".join(ch if ch.isalnum() else "_" for ch in f"{_short(yc)}_vs_{_short(xc)}")
    return SweepFigure(
        Figure(name, caption, [panel]), [_drawn(v) for v in xs] if categorical else None,
        len(work), units,
    )  # fmt: skip


def _drawn(text: object) -> str:
    """`text` (a sweep's name, a column, a setting's value) as matplotlib must be given it to draw
    it as typed: a '$' would start its math notation (and a bad formula is an exception)."""
    return str(text).replace("$", r"\$")


def _finite_or_category(value: Any) -> bool:
    return not isinstance(value, float) or math.isfinite(value)


def _check_log_axes(
    work: pd.DataFrame, xc: str, yc: str, logx: bool, logy: bool, categorical: bool
) -> None:
    """A logarithmic axis shows positive values only: a plot whose values are not all positive
    would show a part of the data (or a band with no data) as if it were all, so it is refused."""
    if logy and (work["y"] <= 0).any():
        low = work["y"][work["y"] <= 0]
        raise UserError(
            f"--logy needs positive values, but {yc!r} is ≤ 0 in {len(low)} of {len(work)} runs "
            f"(smallest {work['y'].min():.4g}); drop --logy"
        )
    if logx and categorical:
        raise UserError(f"--logx needs a numeric x, but {xc!r} holds categories; drop --logx")
    if logx and (work["x"].map(float) <= 0).any():
        low = work["x"][work["x"].map(float) <= 0]
        raise UserError(
            f"--logx needs positive values, but {xc!r} is ≤ 0 in {len(low)} of {len(work)} runs "
            f"(smallest {min(map(float, work['x'])):.4g}); drop --logx"
        )


def _short(col: str | None) -> str:
    if not col:
        return ""
    for prefix in ("config.", "metrics."):
        if col.startswith(prefix):
            return col[len(prefix) :]
    return col


def _one_run_per_unit(work: pd.DataFrame, rest: pd.DataFrame, xc: str, hc: str | None) -> None:
    cells = work.groupby(["hue", "x", "unit"], dropna=False).size()
    if (cells <= 1).all():
        return
    (h, xv, u) = cells[cells > 1].index[0]
    rows = rest[(work["hue"] == h) & (work["x"] == xv) & (work["unit"] == u)]
    config = [c for c in rest.columns if str(c).startswith("config.")]
    differ = [c for c in config if rows[c].map(_key).nunique(dropna=False) > 1]
    where = f"{_short(xc)}={xv}" + (f", {_short(hc)}={h}" if hc else "")
    hint = (
        f"they differ in {', '.join(differ[:3])}: add it as --hue or filter with --where "
        f"{differ[0]}=VALUE"
        if differ
        else "they are runs of different sweeps or jobs: filter them"
    )
    raise UserError(
        f"{len(rows)} runs of one unit (seed {u}) at {where} would be averaged as one; {hint}"
    )


def _order(value: Any) -> tuple[int, float, str]:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, float(value), "")
    return (1, 0.0, str(value))


__all__ = [
    "BASE_COLUMNS", "MAX_DEPTH", "Rate", "SweepFigure", "check_nesting", "column", "frame", "rate",
    "rates", "read_records", "results", "sweep_figure",
]  # fmt: skip
