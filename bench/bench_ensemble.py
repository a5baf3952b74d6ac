"""Stacked ensembles against one run at a time, for the shapes the quick plans train.

For every group of runs the sweep runner would send to a worker together (`ensemble.group_runs`: runs
of one job differing only in their seeds) in the quick plans of `sensitivity`, `volume` and `random`,
the members' jobs are started until they reach `Trainer.fit`, so the benchmark trains exactly the
trainers the plan builds (model, task, batch, optimiser, freeze). Their training steps are then timed
side by side in this process, interleaved and repeated (median): every member one step alone, then all
members one stacked step. Process CPU time, one torch thread.

Printed per shape: CPU ms per member-step alone and stacked, the ratio (stacked faster when > 1: the
runner's probe would pick stacking), and independent units (runs) per CPU-second of training at the
plan's step budget, without and with ensembles (evaluations and measurements are the same in both
modes and left out). The last lines weight each shape by how many of its groups the plan has.

    .venv/bin/python bench/bench_ensemble.py [--reps 9] [--study sensitivity,volume,random]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

from learnability.config import from_dict
from learnability.studies import get_study
from learnability.sweep.ensemble import fit_stacked, group_key, stack_key, unstackable
from learnability.sweep.jobs import RunContext, get_job
from learnability.sweep.runner import collect_runs
from learnability.train import FIT_REDIRECT, Trainer


class _Captured(Exception):
    pass


def capture(spec: Any, root: Path) -> tuple[Trainer, int] | None:
    """The trainer (and data seed) `spec`'s job builds for its first fit; None if it never fits."""
    got: list[tuple[Trainer, int]] = []

    def take(trainer: Trainer, data_seed: int, init_seed: int | None) -> None:
        got.append((trainer, int(data_seed)))
        raise _Captured

    job = get_job(spec.job)
    ctx = RunContext(run_id=spec.run_id, run_dir=root / spec.run_id, device=torch.device("cpu"))
    FIT_REDIRECT.fit = take
    try:
        job.fn(from_dict(job.config_cls, spec.config_dict), ctx)
    except _Captured:
        pass
    finally:
        FIT_REDIRECT.fit = None
        ctx.close()
    return got[0] if got else None


def shape_of(spec: Any) -> str:
    m, t = spec.config.model, spec.config.train
    width = f"d {m.d_model}, {m.n_layers} layers"
    return f"{spec.job} {m.arch} {width}, batch {t.batch_size}"


def bench_group(trainers: list[Trainer], seeds: list[int], reps: int) -> tuple[float, float]:
    """(CPU s per member-step alone, stacked)."""
    for t in trainers:  # time steps only: no evaluation, no early stop, no end
        t.config = dataclasses.replace(
            t.config, steps=10**9, eval_every=10**9, converge_loss=None, converge_acc=None
        )
    fit = fit_stacked(trainers, seeds)
    k = len(trainers)
    for _ in range(2):  # warm-up: allocations, first calls, optimiser state
        for i in range(k):
            fit.single_step(i)
        fit.stacked_step()
    alone, together = [], []
    for r in range(reps):
        order = ["single", "stacked"] if r % 2 == 0 else ["stacked", "single"]
        for mode in order:
            t0 = time.process_time()
            if mode == "single":
                for i in range(k):
                    fit.single_step(i)
                alone.append((time.process_time() - t0) / k)
            else:
                fit.stacked_step()
                together.append((time.process_time() - t0) / k)
    return statistics.median(alone), statistics.median(together)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--study", default="sensitivity,volume,random")
    args = parser.parse_args()
    torch.set_num_threads(1)
    root = Path(tempfile.mkdtemp(prefix="bench-ensemble-"))
    print(
        f"quick-plan shapes: CPU ms per member-step, {args.reps} interleaved reps (median), "
        "1 torch thread, process CPU time"
    )
    head = f"{'study':<12}{'shape':<58}{'K':>3}{'groups':>7}{'alone':>8}{'stacked':>9}{'ratio':>7}"
    print(head + f"{'units/CPU-s alone':>19}{'stacked':>9}")
    for study_name in args.study.split(","):
        study = get_study(study_name)
        specs = collect_runs(study.sweeps(study.plan("quick")))
        groups: dict[str, list[Any]] = {}
        for s in specs:
            key = group_key(s)
            if key is not None:
                groups.setdefault(key, []).append(s)
        shapes: dict[str, list[list[Any]]] = {}
        for members in groups.values():
            if len(members) > 1:
                sig = json.dumps([shape_of(members[0]), len(members)])
                shapes.setdefault(sig, []).append(members)
        total = {"alone": 0.0, "stacked": 0.0, "units": 0}
        for sig, instances in shapes.items():
            members = instances[0]
            caught = [capture(s, root) for s in members]
            if any(c is None for c in caught):
                continue
            trainers = [c[0] for c in caught if c is not None]
            seeds = [c[1] for c in caught if c is not None]
            name, k = json.loads(sig)
            steps = members[0].config.train.steps
            why = unstackable(trainers[0]) or (
                None if len({stack_key(t) for t in trainers}) == 1 else "members differ"
            )
            if why is not None:
                print(f"{study_name:<12}{name:<58}{k:>3}{len(instances):>7}  not stacked: {why}")
                continue
            alone, together = bench_group(trainers, seeds, args.reps)
            print(
                f"{study_name:<12}{name:<58}{k:>3}{len(instances):>7}{1e3 * alone:>8.2f}"
                f"{1e3 * together:>9.2f}{alone / together:>6.2f}x"
                f"{1 / (steps * alone):>19.3f}{1 / (steps * min(alone, together)):>9.3f}"
            )
            runs = k * len(instances)
            total["alone"] += runs * steps * alone
            # the runner's probe picks the faster mode per group
            total["stacked"] += runs * steps * min(alone, together)
            total["units"] += runs
        if total["units"]:
            print(
                f"{study_name:<12}{'all grouped runs of the quick plan':<58}{'':>3}{'':>7}{'':>8}{'':>9}"
                f"{total['alone'] / total['stacked']:>6.2f}x"
                f"{total['units'] / total['alone']:>19.3f}{total['units'] / total['stacked']:>9.3f}"
            )


if __name__ == "__main__":
    main()
