"""`volume.random_profiles` before and after memoising the same-balance controls, side by side.

`decision_rows` asks `same_balance_moments` and `k0_positive_probability` once per (model, eps,
margin): 2160 times in a 360-model cell, often with counts already seen (small n has few distinct
counts). Both are pure functions of (n, counts, draws, seed) with frozen results, so the job now keeps
them in a per-worker cache (`jobs.volume._moments`, `_k0_positive`). For a few quick-plan cells the
whole job is timed with the cache off (the functions themselves) and on, starting cold each time (a
worker's first run; later runs of a worker start warm), interleaved, minimum of the reps, process
CPU time, one torch thread. The job's rows must be identical.

    .venv/bin/python bench/bench_volume_controls.py [--reps 3]
"""

from __future__ import annotations

import argparse
import json
import time

import torch

import learnability.jobs.volume as vol
from learnability.studies import get_study

CELLS = [("volume/random/L2D16/project", 0), ("volume/random/L2D16/project", 8),
         ("volume/random/L1D16/project", 16)]  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    torch.set_num_threads(1)
    cached = (vol._moments, vol._k0_positive)
    plain = (vol.same_balance_moments, vol.k0_positive_probability)
    study = get_study("volume")
    sweeps = {s.name: s for s in study.sweeps(study.plan("quick"))}
    print("volume.random_profiles, CPU s per run (min of interleaved reps, cold cache), 1 thread")
    print(f"{'cell':40} {'old':>7} {'new':>7} {'ratio':>6}  identical")
    for name, index in CELLS:
        config = sweeps[name].expand()[index].config
        best = {"old": float("inf"), "new": float("inf")}
        rows: dict[str, str] = {}
        for r in range(args.reps):
            for mode in ("old", "new") if r % 2 == 0 else ("new", "old"):
                vol._moments, vol._k0_positive = cached if mode == "new" else plain
                for f in cached:
                    f.cache_clear()
                t0 = time.process_time()
                out = vol.profile_random_models(config, "cpu")
                best[mode] = min(best[mode], time.process_time() - t0)
                rows.setdefault(mode, json.dumps(out["rows"], sort_keys=True))
        vol._moments, vol._k0_positive = cached
        same = rows["old"] == rows["new"]
        label = f"{name} n={config.n} ({config.models} models)"
        print(
            f"{label:40} {best['old']:7.2f} {best['new']:7.2f} {best['old'] / best['new']:5.2f}x  {same}"
        )
        assert same, f"{label}: the cache changed a row"


if __name__ == "__main__":
    main()
