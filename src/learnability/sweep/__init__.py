"""Runs and sweeps: the job registry, grid/random expansion, the SQLite store, executors, the driver.

See docs/ARCHITECTURE.md ("Jobs and sweeps"). The pieces:

- `register_job(name, ConfigClass)` / `get_job(name)` / `RunContext` (jobs.py)
- `Sweep(...)`, `Sweep.expand() -> list[RunSpec]`, `load_sweep(path, overrides)` (spec.py)
- `Store(results_dir)`, `Store.records(...) -> list[RunRecord]` (store.py)
- `run_sweep(sweeps, store, backend="local"|"ray", workers=N, ...) -> SweepSummary` (runner.py)
"""

from learnability.sweep.jobs import RunContext, get_job, known_jobs, register_job
from learnability.sweep.runner import SweepSummary, run_sweep
from learnability.sweep.spec import RunSpec, Sweep, load_sweep
from learnability.sweep.store import RunRecord, Store

__all__ = [
    "RunContext",
    "RunRecord",
    "RunSpec",
    "Store",
    "Sweep",
    "SweepSummary",
    "get_job",
    "known_jobs",
    "load_sweep",
    "register_job",
    "run_sweep",
]
