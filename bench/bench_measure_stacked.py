"""Measurements of the quick plans before and after stacked sharpness passes, side by side in one run.

For every distinct measured shape of the quick plans' `sensitivity.train` runs (and the other
sensitivity jobs that measure sharpness), the model, task and measurement batch are built as the job
builds them; then the job's full measurement of a trained state (`measure_trained`: test loss, norms,
blowups, C, Gaussian sharpness, the 7-radius sphere profile, the model's own sensitivity) is timed
with the old path (`measure.sharpness.STACKED = False`: one `functional_call` per direction, every
radius drawn again) and the new (STACKED directions as members of one stacked model, directions drawn
once for all radii), interleaved and repeated (median), process CPU time, one torch thread. Every
value both paths return is compared: they must be identical (not merely close).

Printed per shape: CPU seconds per measurement old and new, their ratio, measurements per CPU-second,
and the largest difference between the two paths' numbers (0 means bit-identical).

    .venv/bin/python bench/bench_measure_stacked.py [--reps 5] [--shapes 3]
"""

from __future__ import annotations

import argparse
import importlib
import math
import statistics
import time
from typing import Any

import torch

from learnability.config import from_dict
from learnability.jobs.sensitivity import MeasuredTrainConfig, measure_trained
from learnability.studies import get_study
from learnability.sweep.jobs import get_job
from learnability.tasks import build_task
from learnability.train import seeded_model

# the module (learnability.measure re-exports its function `sharpness` under the same name)
sharp = importlib.import_module("learnability.measure.sharpness")


def flat(value: Any, prefix: str = "") -> dict[str, float]:
    if isinstance(value, dict):
        return {k: v for key, x in value.items() for k, v in flat(x, f"{prefix}{key}.").items()}
    if isinstance(value, list | tuple):
        return {k: v for i, x in enumerate(value) for k, v in flat(x, f"{prefix}{i}.").items()}
    return {prefix.rstrip("."): float(value)}


def differ(a: dict[str, float], b: dict[str, float]) -> float:
    """The largest absolute difference (0.0: identical; NaN equal to NaN)."""
    assert a.keys() == b.keys()
    worst = 0.0
    for k in a:
        x, y = a[k], b[k]
        if x == y or (math.isnan(x) and math.isnan(y)):
            continue
        worst = max(worst, abs(x - y) if math.isfinite(x - y) else math.inf)
    return worst


def shapes(limit: int) -> list[tuple[str, MeasuredTrainConfig]]:
    """One config per distinct (task, model, measurement) of the sensitivity.train quick runs."""
    study = get_study("sensitivity")
    seen: dict[str, tuple[str, MeasuredTrainConfig]] = {}
    for sweep in study.sweeps(study.plans["quick"]):
        if sweep.job != "sensitivity.train":
            continue
        for spec in sweep.expand():
            config = from_dict(get_job(spec.job).config_cls, spec.config_dict)
            key = repr((config.task, config.model, config.measure_batch, config.directions,
                        config.radii))  # fmt: skip
            if key not in seen:
                label = (f"{config.task.function} n={config.task.n} d={config.model.d_model} "
                         f"L={config.model.n_layers} ({sweep.name})")  # fmt: skip
                seen[key] = (label, config)
    return list(seen.values())[:limit]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--shapes", type=int, default=3)
    args = ap.parse_args()
    torch.set_num_threads(1)
    device = torch.device("cpu")
    print(
        f"sensitivity.train measure_trained, {args.reps} interleaved reps (median), process CPU s,"
    )
    print(
        f"1 torch thread; new = up to {sharp.STACK} sharpness directions ({sharp.STACK_ROWS} token rows) per stacked pass"
    )
    print(
        f"{'shape':48} {'old s':>7} {'new s':>7} {'ratio':>6} {'/CPU-s old':>10} {'new':>6}  max |diff|"
    )
    total_old = total_new = 0.0
    for label, config in shapes(args.shapes):
        task = build_task(config.task, config.seed)
        model = seeded_model(config.model, config.seed, device)
        times: dict[bool, list[float]] = {False: [], True: []}
        results: dict[bool, dict[str, float]] = {}
        for _ in range(args.reps):
            for stacked in (False, True):
                sharp.STACKED = stacked
                t0 = time.process_time()
                out = measure_trained(model, task, config, device)
                times[stacked].append(time.process_time() - t0)
                got = flat(out)
                if stacked in results:
                    assert differ(results[stacked], got) == 0.0, "a path is not deterministic"
                results[stacked] = got
        sharp.STACKED = True
        old, new = statistics.median(times[False]), statistics.median(times[True])
        total_old, total_new = total_old + old, total_new + new
        diff = differ(results[False], results[True])
        print(f"{label[:48]:48} {old:7.3f} {new:7.3f} {old / new:5.2f}x {1 / old:10.2f} "
              f"{1 / new:6.2f}  {diff:g}")  # fmt: skip
        assert diff == 0.0, f"{label}: the stacked path changed a measurement by {diff:g}"
    print(
        f"all shapes: {total_old / total_new:.2f}x fewer CPU seconds per measurement; "
        "every value identical"
    )


if __name__ == "__main__":
    main()
