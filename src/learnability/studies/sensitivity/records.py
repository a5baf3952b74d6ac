"""Reading the study's run records under the analysis choices every mechanistic claim shares.

- `budget`: "fixed" reads what a run measured at the end of its fixed budget (the paper's protocol);
  "until_fit" reads what it measured at its first evaluation with test MSE < 0.001 (`at_fit`): an
  early-stopped run is the same run cut there, so this is what early stopping would have reported. A run
  that never fits reads its end state under both (an early-stopped run would have used the whole budget).
- `filter`: "converged" keeps runs whose test MSE < 0.001 in the state read (the paper filters its plots
  so); "fitted" also keeps Boolean-target runs with test accuracy ≥ 0.99 (the pre-engine study's lenient
  filter); "all" keeps every finished run.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from learnability.studies.sensitivity.plan import FIT_LOSS

LABELS = {"parity": "PARITY", "majority": "MAJORITY", "first": "FIRST", "mean": "MEAN",
          "sparse_half": "sparse parity (k = ⌈n/2⌉)", "focus": "PARITY"}  # fmt: skip
FIT_ACC = 0.99
REAL_VALUED = ("mean",)  # targets in [0, 1]: accuracy means nothing, only the MSE criterion applies


def metric(obj: Any, key: str) -> Any:
    """A dotted key of a record's metrics (or of a metrics dict)."""
    value: Any = obj.metrics if hasattr(obj, "metrics") else obj
    for part in key.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def num(value: Any) -> float:
    """A stored number as float: None / non-numbers → NaN, "inf" strings → ±inf."""
    if isinstance(value, str) and value in ("inf", "-inf"):
        return float(value)
    if isinstance(value, bool):
        return float(value)
    return float(value) if isinstance(value, (int, float)) else math.nan


def task_of(record: Any) -> str:
    """The task's short name: a sparse parity spec is "sparse_half", else the zoo spec."""
    spec = str(record.config.get("task", {}).get("function", "?"))
    return "sparse_half" if spec.startswith("sparse_parity") else spec


def n_of(record: Any) -> int:
    return int(record.config.get("task", {}).get("n", record.config.get("n", 0)))


def state(record: Any, budget: str) -> dict[str, Any]:
    """The measurements a run reports under `budget` (module doc)."""
    if budget == "until_fit" and isinstance(record.metrics.get("at_fit"), dict):
        return dict(record.metrics["at_fit"])
    return dict(record.metrics)


def keep(record: Any, st: dict[str, Any], how: str) -> bool:
    loss = num(st.get("test_loss"))
    if how == "all":
        return math.isfinite(loss)
    if loss < FIT_LOSS:
        return True
    return (
        how == "fitted"
        and task_of(record) not in REAL_VALUED
        and num(st.get("test_acc")) >= FIT_ACC
    )


def mechanistic(
    records: list[Any],
    choices: dict[str, Any],
    value: Callable[[Any, dict[str, Any]], float | None],
) -> tuple[list[tuple[Any, float]], str]:
    """(record, value) of the runs that pass the choices' filter, and a note counting what was kept."""
    budget, how = choices.get("budget", "fixed"), choices.get("filter", "converged")
    kept, dropped = [], 0
    for r in records:
        st = state(r, budget)
        if not keep(r, st, how):
            dropped += 1
            continue
        v = value(r, st)
        if v is not None and math.isfinite(v):
            kept.append((r, float(v)))
    return (
        kept,
        f"{len(kept)} runs kept, {dropped} left out by the '{how}' filter (budget '{budget}')",
    )


def log10(x: float) -> float | None:
    return math.log10(x) if x > 0 and math.isfinite(x) else None


def seed_unit(record: Any) -> str:
    """The independent unit of a mechanistic run: its sweep's seed or trade-off draw (the same initial
    weights at every n and task of that sweep)."""
    return f"{record.sweep.rsplit('/', 1)[-1]}:{record.config.get('seed')}"


__all__ = [
    "FIT_ACC", "LABELS", "REAL_VALUED", "keep", "log10", "mechanistic", "metric", "n_of", "num",
    "seed_unit", "state", "task_of",
]  # fmt: skip
