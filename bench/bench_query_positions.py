"""Training steps that ask only the scored positions (`Trainer.at`) against the full forward, for the
GPT shapes the random study's quick plan trains.

For each shape (one run per distinct (sweep, width, recipe) of `random:quick`), the run's job is started
until it reaches `Trainer.fit` (`bench_ensemble.capture`), so the trainer is exactly the plan's (model,
task, batch, optimiser, freeze). Two copies of it then take training steps side by side in this process,
interleaved and repeated (median of process CPU time, one torch thread): one with its query positions,
one with `at = None` (every position through the last block, as before). Printed: CPU ms per step both
ways and their ratio (> 1: asking the scored positions is faster), then the ratio weighted by each
shape's steps in the plan.

    .venv/bin/python bench/bench_query_positions.py [--reps 7] [--steps 20]
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ensemble import capture
from learnability.studies import get_study
from learnability.sweep.runner import collect_runs
from learnability.train import Trainer


def shapes() -> dict[str, tuple[Any, int]]:
    """One run per (sweep, width, training recipe) of the quick random plan, with how many runs share it."""
    study = get_study("random")
    out: dict[str, tuple[Any, int]] = {}
    for spec in collect_runs(study.sweeps(study.plan("quick"))):
        c = spec.config_dict
        key = f"{spec.sweep} w{c['model']['d_model']} {c['train']['freeze']} {c['task'].get('target_width', '')}"
        first, count = out.get(key, (spec, 0))
        out[key] = (first, count + 1)
    return out


def step_ms(trainer: Trainer, steps: int) -> float:
    run = trainer.start(0)
    t0 = time.process_time()
    for _ in range(steps):
        if not run.active:
            run = trainer.start(0)
        trainer.step(run)
    return 1000 * (time.process_time() - t0) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    torch.set_num_threads(1)
    rows, weighted = [], [0.0, 0.0]
    with tempfile.TemporaryDirectory() as root:
        for key, (spec, count) in shapes().items():
            got = capture(spec, Path(root))
            if got is None:
                continue
            asking, _ = got
            if asking.at is None:
                continue
            full = copy.deepcopy(asking)
            full.at = None
            for t in (asking, full):
                step_ms(t, 2)  # warm-up
            times: dict[str, list[float]] = {"at": [], "full": []}
            for _ in range(args.reps):
                times["at"].append(step_ms(asking, args.steps))
                times["full"].append(step_ms(full, args.steps))
            at_ms, full_ms = (statistics.median(times[k]) for k in ("at", "full"))
            budget = count * asking.config.steps
            weighted[0] += full_ms * budget
            weighted[1] += at_ms * budget
            positions = f"{len(asking.at)} of {asking.task.seq_len}"
            rows.append((key, positions, full_ms, at_ms, full_ms / at_ms))
            print(f"{key:48} positions {positions:8} full {full_ms:7.2f} ms  asked {at_ms:7.2f} ms  "
                  f"ratio {full_ms / at_ms:5.2f}", flush=True)  # fmt: skip
    if weighted[1]:
        print(f"plan-weighted (runs × step budget): full / asked = {weighted[0] / weighted[1]:.2f}")


if __name__ == "__main__":
    main()
