"""Units per CPU-second of the quick plan's hottest job kind, before and after #36, side by side.

`sensitivity.train` is three quarters of the sensitivity study's run time. One unit (run) costs its
training steps (trained stacked, a group per worker) and up to three full measurements of a trained
state (`measure_trained`: at the fit, after it, at the budget). For a few of its shapes, in this one
process, interleaved and repeated (the minimum of each is kept: the least disturbed on a shared
machine), process CPU time, one torch thread:

- training, old: the plan's 24 seeds in stacked groups of 8 (`MAX_MEMBERS` was 8: 8 + 8 + 8);
  new: the fewest even groups of at most 16 (12 + 12). CPU ms per member-step.
- measurement, old: one `functional_call` per sharpness direction, the profile's directions drawn
  again at every radius (`measure.sharpness.STACKED = False`); new: stacked passes.

Checks: the measurement's every value identical between old and new; after the timed steps, each
member's parameters identical whether it trained in a group of 8 or of 12 (and to the same member
trained alone for the first steps), i.e. the numbers a run stores do not depend on either change.
A unit is priced at the plan's budget of steps plus three measurements.

    .venv/bin/python bench/bench_units.py [--reps 5] [--steps 12] [--shapes 3]
"""

from __future__ import annotations

import argparse
import importlib
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

from learnability.config import from_dict
from learnability.jobs.sensitivity import measure_trained
from learnability.studies import get_study
from learnability.sweep.ensemble import even_chunks, fit_stacked, group_key
from learnability.sweep.jobs import get_job
from learnability.sweep.runner import collect_runs
from learnability.tasks import build_task
from learnability.train import seeded_model

sys.path.insert(0, str(Path(__file__).parent))
from bench_ensemble import capture
from bench_measure_stacked import differ, flat

sharp = importlib.import_module("learnability.measure.sharpness")
OLD_MEMBERS, NEW_MEMBERS = 8, 16


def groups_of(study: str, job: str) -> list[list[Any]]:
    specs = [s for s in collect_runs(get_study(study).sweeps(get_study(study).plan("quick")))]
    keyed: dict[str, list[Any]] = {}
    for s in specs:
        key = group_key(s)
        if s.job == job and key is not None:
            keyed.setdefault(key, []).append(s)
    return list(keyed.values())


def step_cost(
    members: list[Any], chunks: list[list[Any]], steps: int, root: Path
) -> tuple[float, list]:
    """Min CPU s per member-step over the chunks' stacked steps, and every member's parameters after."""
    fits = []
    for chunk in chunks:
        caught = [capture(s, root) for s in chunk]
        trainers = [c[0] for c in caught if c is not None]
        for t in trainers:  # time steps only: no evaluation, no early stop
            t.config.__dict__.update(steps=10**9, eval_every=10**9, converge_loss=None,
                                     converge_acc=None)  # fmt: skip
        fits.append(fit_stacked(trainers, [c[1] for c in caught if c is not None]))
    per = []
    for _ in range(steps):
        t0 = time.process_time()
        for fit in fits:
            fit.stacked_step() if len(fit.runs) > 1 else fit.single_step(0)
        per.append((time.process_time() - t0) / len(members))
    params = [[p.detach().clone() for p in t.model.parameters()] for f in fits for t in f.trainers]
    for f in fits:
        f._unstack()
    return min(per[1:]), params


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--shapes", type=int, default=3)
    args = ap.parse_args()
    torch.set_num_threads(1)
    device = torch.device("cpu")
    root = Path(tempfile.mkdtemp(prefix="bench-units-"))
    groups = groups_of("sensitivity", "sensitivity.train")
    picked = [groups[i * (len(groups) - 1) // max(args.shapes - 1, 1)] for i in range(args.shapes)]
    print("sensitivity.train units: min over interleaved reps, process CPU, 1 torch thread")
    print(f"{'shape':30} {'train ms/step old':>17} {'new':>6} {'measure s old':>13} {'new':>6} "
          f"{'units/CPU-s old':>15} {'new':>6} {'ratio':>6}  identical")  # fmt: skip
    for members in picked:
        c = from_dict(get_job(members[0].job).config_cls, members[0].config_dict)
        label = f"{c.task.function} n={c.task.n} ({len(members)} seeds)"
        budget = c.budget or c.train.steps
        task = build_task(c.task, c.seed)
        model = seeded_model(c.model, c.seed, device)
        train = {"old": math.inf, "new": math.inf}
        meas = {"old": math.inf, "new": math.inf}
        params: dict[str, list] = {}
        values: dict[str, dict[str, float]] = {}
        for r in range(args.reps):
            for mode in ("old", "new") if r % 2 == 0 else ("new", "old"):
                most = OLD_MEMBERS if mode == "old" else NEW_MEMBERS
                chunks = (
                    [members[i : i + most] for i in range(0, len(members), most)]
                    if mode == "old"
                    else even_chunks(members, most)
                )
                cost, after = step_cost(members, chunks, args.steps, root)
                train[mode] = min(train[mode], cost)
                params.setdefault(mode, after)
                sharp.STACKED = mode == "new"
                t0 = time.process_time()
                got = flat(measure_trained(model, task, c, device))
                meas[mode] = min(meas[mode], time.process_time() - t0)
                values.setdefault(mode, got)
        sharp.STACKED = True
        same_params = all(
            torch.equal(a, b)
            for pa, pb in zip(params["old"], params["new"])
            for a, b in zip(pa, pb)
        )
        same_values = differ(values["old"], values["new"]) == 0.0
        unit = {m: budget * train[m] + 3 * meas[m] for m in ("old", "new")}
        print(f"{label:30} {1e3 * train['old']:17.2f} {1e3 * train['new']:6.2f} {meas['old']:13.3f} "
              f"{meas['new']:6.3f} {1 / unit['old']:15.3f} {1 / unit['new']:6.3f} "
              f"{unit['old'] / unit['new']:5.2f}x  {same_params and same_values}")  # fmt: skip
        assert same_params and same_values, f"{label}: a stored number would change"


if __name__ == "__main__":
    main()
