"""Sweep machinery benchmarks, measured side by side in one run.

(a) scheduling overhead: 200 short CPU-bound runs (~50 ms each) on the local backend with 2 workers.
    ratio = wall time of run_sweep / (sum of the runs' own times / workers); target <= 1.10.
    Reported with and without the one-off pool start (forkserver + torch import).
(b) scaling: the same CPU-bound runs with 2 workers vs 1 worker, throughput ratio (target >= 1.7),
    on the local backend and on a local Ray cluster (started here with `ray start --head`).

    .venv/bin/python bench/bench_sweep.py [--runs 200] [--ms 50] [--no-ray]

The runs are the `testing.probe` job with a pure-Python busy loop calibrated to --ms on this machine.
On a machine shared with other work the absolute times inflate; the ratios are what to read.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from learnability.sweep import Store, Sweep, run_sweep
from learnability.sweep.testing import LocalRayCluster, busy_loop


def calibrate(ms: float) -> int:
    """Busy-loop iterations taking about `ms` milliseconds here."""
    n = 20_000
    while True:
        t0 = time.perf_counter()
        busy_loop(n)
        dt = time.perf_counter() - t0
        if dt > 0.05:
            return max(1, int(n * ms / 1000 / dt))
        n *= 2


def sweep(name: str, runs: int, work: int) -> Sweep:
    return Sweep(name, "testing.probe", base={"work": work, "size": 4}, seeds=list(range(runs)))


def timed(
    s: Sweep, workers: int, backend: str = "local", address: str | None = None
) -> tuple[float, float]:
    """(wall seconds of run_sweep, sum of the runs' own seconds) into a fresh store."""
    root = Path(tempfile.mkdtemp(prefix="bench_sweep_"))
    try:
        summary = run_sweep(
            s, root, backend=backend, workers=workers, address=address, progress=False
        )
        assert summary.ok == summary.total, summary.failures[:3]
        with Store(root) as store:
            own = sum(r.seconds for r in store.records())
        return summary.seconds, own
    finally:
        shutil.rmtree(root, ignore_errors=True)


def overhead(runs: int, work: int, workers: int) -> None:
    # a first tiny sweep starts the forkserver (torch import) once, as any earlier sweep would
    t0 = time.perf_counter()
    timed(sweep("bench/warm", workers, work), workers)
    warm = time.perf_counter() - t0
    wall, own = timed(sweep("bench/overhead", runs, work), workers)
    ideal = own / workers
    print(
        f"(a) scheduling overhead, {runs} runs of ~{own / runs * 1000:.0f} ms, {workers} workers:"
    )
    print(f"    wall {wall:.2f} s, sum of runs' own times / workers {ideal:.2f} s")
    print(
        f"    ratio (pool started per sweep, forkserver warm)  {wall / ideal:.3f}   target <= 1.10"
    )
    print(
        f"    ratio incl. the one-off forkserver start ({warm:.1f} s for the first sweep of a process)"
        f"  {(wall + warm) / ideal:.3f}"
    )


def scaling(runs: int, work: int, backend: str, address: str | None = None) -> None:
    w1, own1 = timed(sweep(f"bench/{backend}1", runs, work), 1, backend, address)
    w2, own2 = timed(sweep(f"bench/{backend}2", runs, work), 2, backend, address)
    print(f"(b) scaling, {backend}: {runs} runs; 1 worker {w1:.2f} s, 2 workers {w2:.2f} s")
    print(f"    throughput ratio 2 vs 1 workers  {w1 / w2:.2f}   target >= 1.7")
    print(
        f"    (per-run time 1 worker {own1 / runs * 1000:.0f} ms, 2 workers {own2 / runs * 1000:.0f} ms:"
        f" a ratio below 1 means the cores are shared with other work)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--ms", type=float, default=50.0)
    parser.add_argument("--scaling-runs", type=int, default=40)
    parser.add_argument("--scaling-ms", type=float, default=200.0)
    parser.add_argument("--no-ray", action="store_true")
    args = parser.parse_args()
    work = calibrate(args.ms)
    print(
        f"cpu count {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}; {work} loop iterations ~ {args.ms:.0f} ms"
    )
    overhead(args.runs, work, workers=2)
    big = calibrate(args.scaling_ms)
    scaling(args.scaling_runs, big, "local")
    if not args.no_ray:
        try:
            import ray  # noqa: F401
        except ImportError:
            print("(b) scaling, ray: skipped (ray not installed)")
            return
        with LocalRayCluster(num_cpus=2) as address:
            scaling(args.scaling_runs, big, "ray", address)


if __name__ == "__main__":
    main()
